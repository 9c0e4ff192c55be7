// Package ssm emulates the SSM JSON 1.1 API's GetParameter and GetParameters for the public
// parameters that resolve EKS-optimized AMIs: AL2, AL2023 and Bottlerocket, per Kubernetes
// version, architecture and variant, with a "recommended"/"latest" alias for the newest release
// and one parameter per release. Parameters are derived from the images in the world, so an image
// and its parameter never disagree on architecture.
//
// It must not store parameters of its own or serve other SSM operations.
package ssm
