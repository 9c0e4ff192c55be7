// Package legacyboot is the emulator branch's first boot model, kept only until the server is
// moved onto awsemu/boot (the fuller model); nothing new may use it.
//
// It is what an emulated instance does when it boots: today, reading its userData the
// way the AMI family's boot agent does and deriving the kubelet's flags, taints and labels, with
// the console lines a real instance would print. AL2 (`/etc/eks/bootstrap.sh` with shell quoting,
// bootstrap.sh's own `--name value` option parsing, and systemd's word splitting of
// KUBELET_EXTRA_ARGS), AL2023 (nodeadm NodeConfig documents in MIME parts) and Bottlerocket
// (settings TOML) are interpreted.
//
// It must not talk to AWS or Kubernetes: the boot controller that registers Nodes (planned) calls
// Interpret and acts on its Result. Not yet interpreted: Bottlerocket TOML, Custom scripts beyond
// their bootstrap.sh call, shell constructs other than simple assignments, quotes and escapes.
package legacyboot
