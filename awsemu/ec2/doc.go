// Package ec2 emulates the EC2 query API: instance types and their offerings, zones, subnets,
// security groups, images, spot prices, launch templates, fleets and instances.
//
// Each operation decodes its form with package wire, authorizes with package authz (so DryRun
// answers DryRunOperation or UnauthorizedOperation as EC2 does), reads or changes the world inside
// one state.Update, and writes the response struct as EC2's XML (`xxxSet/item` lists). Response
// element names follow the SDK's deserializers.
//
// It must not know other services' wire formats; it reads IAM state only to resolve instance
// profiles for launches.
package ec2
