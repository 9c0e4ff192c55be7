// Package boot makes an emulated EC2 instance boot the way an EKS node does, so that the
// emulator's instances join a cluster, or fail to, for the same reasons real ones do.
//
// A boot has four steps, each a separate function that can be tested alone:
//
//  1. Interpret: the instance's userData is read as its AMI family reads it (AL2's bootstrap.sh
//     with shell quoting and bootstrap.sh's own option loop, AL2023's nodeadm NodeConfig merge,
//     Bottlerocket's TOML settings, or a Custom shell script) and turned into a
//     [KubeletRegistration]: what the kubelet will register, or a [*BootError] with the console
//     lines a real instance prints when its bootstrap fails.
//  2. Authorize: the instance profile's role is looked up in kube-system/aws-auth mapRoles and in
//     the cluster's EKS access entries ([Authorize]); an unmapped role is Unauthorized, a mapping
//     without the node username or group is Forbidden.
//  3. Build: [NodeFor] makes the corev1.Node a kubelet would create for the instance.
//  4. Register: a [Registrar] creates it through a controller-runtime client, keeps it Ready
//     ([Registrar.Heartbeat]) and reports the pods bound to it Running ([Registrar.RunPods]).
//
// [Booter.Boot] runs the steps in order and returns an [Outcome] whose console lines are what
// GetConsoleOutput shows.
//
// The package owns the emulated node-side behaviour only. It must not import Joiner's product
// code other than pkg/apis, must not sleep or read the wall clock (the caller injects a clock and
// decides when a boot happens), must not hold package-level mutable state, and must not decide
// anything about EC2 or IAM state: the caller passes the instance, the cluster and the access
// entries in.
package boot
