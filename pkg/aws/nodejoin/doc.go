// Package nodejoin turns what is known about an EC2NodeClass before any launch into findings
// about whether its nodes can join the cluster: each with a severity, the object at fault, a
// CamelCase reason, a message and the exact fix (the mapRoles entry, the aws eks command, the
// corrected userData line).
//
// Check is the one entry point, for the EC2NodeClass status controller and for `joiner doctor`
// alike. It takes plain observations (the class, the NodePools that use it, the node role's ARN,
// the cluster's authentication mode and access entries, kube-system/aws-auth, the resolved AMIs,
// the instance types, the IAM validation's result) and returns findings ranked by severity. What
// the caller could not observe (aws-auth without RBAC, access entries offline) is passed as not
// visible, and a role is then never called unmapped at Error severity: Error means the nodes
// certainly cannot join or register as Joiner requires.
//
// The checks, in the order of the scenarios they come from (docs/design/nodejoin.md):
//   - the node role can authenticate and register, as aws-iam-authenticator and the Node
//     authorizer decide it for the cluster's authentication mode (S1);
//   - the userData, read statically with pkg/aws/userdata as the kubelet would receive it: options
//     bootstrap.sh ignores, invalid --register-with-taints values, literal quotes, the
//     unregistered taint missing, agent taints that belong in startupTaints (S2, S3);
//   - AMIs whose architecture no instance type a NodePool allows can boot (S5);
//   - the IAM dry-run validation's denial, per class (S4).
//
// After a launch, ReadConsole and ReadConsoleOf read an instance's console output (what
// instance.Provider.Diagnose fetches with GetConsoleOutput) into the cause a kubelet that does
// not register printed: refused credentials, a role not mapped, a flag the kubelet rejects.
//
// The package is pure: it must not call AWS or the API server, read the clock, or write status.
package nodejoin
