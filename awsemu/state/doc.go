// Package state is the emulator's one mutable world: per region its zones, VPC, subnets, security
// groups, images, launch templates and instances; globally the IAM roles, instance profiles,
// access keys and the authorization messages STS decodes.
//
// State guards the World with one mutex: services read it inside View and change it inside
// Update, so every operation is atomic. Time comes from an injected clock, and instance lifecycles
// (pending → running, shutting-down → terminated → gone) are computed from it, so a fake clock
// drives them in tests. Ids are deterministic.
//
// It must not speak HTTP or know any wire format.
package state
