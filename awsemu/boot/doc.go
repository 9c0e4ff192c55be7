// Package boot makes an emulated EC2 instance boot the way an EKS node does, so that the
// emulator's instances join a cluster, or fail to, for the same reasons real ones do.
//
// A boot has four steps, each a separate function that can be tested alone:
//
//  1. Interpret: the instance's userData is run or read as its AMI family does and turned into a
//     [KubeletRegistration]: what the kubelet will register, or a [*BootError] with the console
//     lines a real instance prints when its bootstrap fails. Shell userData (AL2, Custom, and
//     AL2023's shell parts) is run by mvdan.cc/sh's bash interpreter, as cloud-init runs it: the
//     shell's own semantics (quoting, expansion, functions, conditionals, set -e, here-documents,
//     redirections) are the interpreter's; programs are the node's exec handler, which models
//     /etc/eks/bootstrap.sh (its option loop, the drop-in it writes, systemd's reading of it),
//     nodeadm init, systemctl and the few file commands userData uses (cat, tee, logger, mkdir,
//     chmod, cp, base64), and records and succeeds every other command; files live in an
//     in-memory file system seeded with the AMI's files, never the host's. AL2023's NodeConfig
//     is merged as nodeadm merges it, and Bottlerocket's settings are read with go-toml.
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
