// Package apilimits holds AWS's published API request limits as data, each bucket with the page
// it comes from, and the token bucket that applies them. The emulator meters its services with
// them (awsemu, per account and Region), and the product's AWS clients pace themselves with the
// same numbers, so that a controller that keeps within them in the emulator keeps within them on
// a real account.
//
// EC2 is metered per action: each action has a request bucket sized by its category
// (non-mutating, unfiltered and unpaginated non-mutating, mutating, resource-intensive) or by its
// own row of the page's uncategorized table, and RunInstances, TerminateInstances,
// StartInstances and StopInstances have a resource bucket besides, one token per instance.
// Other services are metered where AWS publishes a number (SSM Parameter Store throughput, the
// Price List Query API) and left unmetered where it does not (IAM, STS, SQS, EKS).
//
// The package is data and arithmetic only: it imports no SDK and calls nothing, so the emulator
// may use it without sharing the product's logic.
package apilimits
