// Package awsemu is a local, stateful AWS that the real aws-sdk-go-v2 clients talk to. One
// http.Handler, Server, serves every emulated service: it reads the caller, region and service
// from the SigV4 Authorization header and routes to the service's handler (ec2, iam, sts), each
// of which speaks that service's wire protocol.
//
// Point a client at it with BaseEndpoint (or AWS_ENDPOINT_URL) and static credentials whose
// access key id is registered in the world (state.World.IAM.AccessKeys); see
// docs/design/awsemu.md. Product code must never import this package: the product and the
// emulator meet only over HTTP. This package holds no service logic.
//
// Kubelets is the node side: it boots every running instance with package boot once its boot
// delay has passed, records the outcome and console in the instance, retries refused kubelets on
// the clock and, with an API server, keeps the joined instances' Nodes Ready and their pods
// Running and deletes the Nodes of terminated instances. Whether a node joins is package boot's
// decision, never this package's.
package awsemu
