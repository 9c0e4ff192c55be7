// Package emutest is the test kit for the product's tests against the AWS emulator: one call,
// Start, gives a test a fake clock, an emulated world seeded from state.SeedOptions (or a world
// file), the emulator served on 127.0.0.1 for the test's lifetime, and the product's own SDK
// configuration and clients (package pkg/aws/sdk) pointed at it with the controller's
// credentials. The small edits tests repeat on the world (the controller role's policy, the
// cluster's CA) are methods of Emulator.
//
// Limits: it is for tests only, and it is the one awsemu package that imports the product
// (pkg/aws/sdk, pkg/aws/userdata), because the clients it builds are the product's; it must not
// import anything that itself uses it (pkg/aws/provider and the packages under it), or their tests
// could not use it. It serves the emulator over HTTP and nothing else: it starts no kubelets, no
// control plane and no controller (awsemu's own tests build their kubelets over State and Clock).
// Package awsemu's tests use it from the external test package awsemu_test: a test inside
// package awsemu, or inside any other package emutest imports, could not (an import cycle).
package emutest
