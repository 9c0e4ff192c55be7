// Package kubelet is the emulated kubelets of booted instances: a Registrar that, against a real
// API server, registers a Node for every instance whose boot started a kubelet its role may join
// with (boot.Booter, phase kubelet-running), with what a kubelet registers — name = private DNS
// name, providerID aws:///ZONE/ID, well-known labels plus --node-labels, taints from
// --register-with-taints/registerWithTaints, capacity and allocatable from the catalogue — keeps it
// Ready, marks pods bound to it Running and Ready, deletes the Nodes of terminated instances (as
// the cloud node lifecycle controller does), and feeds the kube-system/aws-auth ConfigMap to the
// Booter's join checks.
//
// It must not decide whether an instance may join (package boot does) nor change AWS state.
// Not yet done: pod IPs from the subnet, pods finishing or being killed on termination, lease
// renewal, NotReady on stop (KWOK does these for real clusters; it was not needed so far).
package kubelet
