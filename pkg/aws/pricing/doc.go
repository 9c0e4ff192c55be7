// Package pricing keeps the hourly prices of instance types in one region: on-demand prices from
// the Price List API (GetProducts) and current spot prices per zone from EC2
// DescribeSpotPriceHistory, each refreshed when due on an injected clock, and a built-in estimate
// (Estimate) for types neither source priced, so that every offering can be ordered by price
// even when the Price List API is unreachable or denied.
//
// It depends on two small interfaces the SDK's pricing and EC2 clients satisfy. It must not
// decide what to launch.
package pricing
