// Package userdata holds the agreement table between Joiner's two readings of userData: the
// product's static reading (pkg/aws/userdata.ReadRegistration) and the emulator's run of it
// (awsemu/boot.Interpret, which runs shell userData with a bash interpreter). For every script
// in the table both must find the same taints, labels and kubelet flags, and those must be the
// ones the table states; a quoting case both get wrong the same way would otherwise pass every
// other test and fail in the field.
//
// The package has tests only. It may import both sides; product code never imports awsemu.
package userdata
