// Package sts emulates the STS query API operations the product needs: GetCallerIdentity, and
// DecodeAuthorizationMessage for the encoded messages package authz records on EC2 denials.
//
// It must not evaluate policies beyond authorizing sts:DecodeAuthorizationMessage.
package sts
