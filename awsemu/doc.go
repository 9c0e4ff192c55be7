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
// The node side, the kubelets of the world's instances, is package kubelets (awsemu/kubelets).
package awsemu
