// Package world reads a world file: an AWS account described in one YAML or JSON document (the
// EKS cluster, the controller's role and policy, node roles, the account's other roles and users,
// instance profiles, access entries, subnets, security groups and custom AMIs), with field names
// as the AWS APIs spell them, so that an operator can fill it from `aws ... describe-*` output:
// the fields AWS assigns (createdAt, subnetArn, roleId...) are accepted and ignored, and a node
// access entry may repeat the username and groups EKS assigns it. A role or user of the
// cluster's account that only an access entry names is created with the world, as a world
// written from list-access-entries knows principals by ARN alone. docs/world.md is its
// reference.
//
// Decode refuses unknown fields and impossible worlds (a subnet outside the VPC, an access entry
// of an unknown type, an instance profile holding a role that does not exist), naming each
// offending field by its path (`subnets[1].cidrBlock`) with the reason and the fix, so that the
// emulator validates the whole world before it starts anything. SeedOptions turns a valid File
// into the state.SeedOptions the emulator seeds from; fields left out keep the demo world's
// values.
//
// It must not start servers or hold state: it is read once at start-up.
package world
