// Package testkit holds what many packages' tests build and wait on alike: polling with a
// deadline (Poll, Eventually, in place of sleeps) and builders of the API objects tests start
// from (NodePool, NodeClaim, EC2NodeClass, Pod, Node) and the default instance-type list of the
// fake cloud provider's tests.
//
// Limits: tests only; it starts nothing (the control plane is package testenv's, the emulator
// package awsemu/emutest's) and holds no state between calls. A builder returns the plainest
// valid object; a test states what it depends on by setting it on the result.
package testkit
