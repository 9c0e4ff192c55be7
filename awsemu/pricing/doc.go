// Package pricing emulates the Price List API's GetProducts for EC2 on-demand Linux prices, built
// from the catalogue: one price-list document per (instance type, region), filtered by TERM_MATCH
// on the attributes Karpenter-style callers use (regionCode, instanceType, operatingSystem,
// tenancy, preInstalledSw, capacitystatus, marketoption, licenseModel, location).
//
// It must not serve other services' prices or other operating systems.
package pricing
