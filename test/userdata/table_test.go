package userdata

// agreementTable is the rows of TestAgreement: userData seen in the field and the registration
// it gives. Every row is statically knowable (no $(...), no variable only the boot sets).
func agreementTable() []agreement {
	const (
		labelFlag = "--node-labels=team=a"
		s2Value   = `--register-with-taints="karpenter.sh/unregistered:NoExecute"`
	)
	return []agreement{
		// AL2 bootstrap.sh: every quoting style of --kubelet-extra-args.
		{
			name: "S2: one-word --kubelet-extra-args= is dropped by bootstrap.sh", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args='` + s2Value + `'`)),
			starts:   true,
		},
		{
			name: "S2 fixed: two words, inner double quotes removed by systemd", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '` + s2Value + `'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "two words, single quotes, no inner quotes", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '` + taintFlag + `'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "double quotes, labels and two taints", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args "--node-labels=team=a,tier=web ` + taintFlag + `,dedicated=ci:NoSchedule"`)),
			starts:   true, taints: []string{unregistered, "dedicated=ci:NoSchedule"}, labels: labels("team=a", "tier=web"),
			flags: []string{"--node-labels=team=a,tier=web", taintFlag + ",dedicated=ci:NoSchedule"},
		},
		{
			name: "double quotes with escaped inner double quotes", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args "--register-with-taints=\"` + unregistered + `\" --node-labels=\"team=a\""`)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{taintFlag, labelFlag},
		},
		{
			name: "backslash-escaped blank keeps one word", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args ` + taintFlag + `\ ` + labelFlag)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{taintFlag, labelFlag},
		},
		{
			name: "ANSI-C quoting with a tab between flags", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args $'` + taintFlag + `\t` + labelFlag + `'`)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{taintFlag, labelFlag},
		},
		{
			name: "quotes joined mid-word", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args --register-with-taints='karpenter.sh/unregistered'":NoExecute"`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "single quote inside double quotes reaches systemd, which unquotes it", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args "--node-labels='team=a' ` + taintFlag + `"`)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{labelFlag, taintFlag},
		},
		{
			name: "label flag with a separate value word", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '--node-labels team=a ` + taintFlag + `'`)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{"--node-labels", "team=a", taintFlag},
		},
		{
			name: "line continuations between options", family: "AL2",
			userData: al2("/etc/eks/bootstrap.sh demo \\\n  --b64-cluster-ca \"$CA\" \\\n  --apiserver-endpoint \"$URL\" \\\n  --kubelet-extra-args '" + taintFlag + "'"),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "a taint with a value and the unregistered taint", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '--register-with-taints=nvidia.com/gpu=true:NoSchedule,` + unregistered + `'`)),
			starts:   true, taints: []string{"nvidia.com/gpu=true:NoSchedule", unregistered},
			flags: []string{"--register-with-taints=nvidia.com/gpu=true:NoSchedule," + unregistered},
		},
		{
			name: "the last --register-with-taints replaces the earlier ones", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '--register-with-taints=dedicated=ci:NoSchedule ` + taintFlag + `'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{"--register-with-taints=dedicated=ci:NoSchedule", taintFlag},
		},
		{
			name: "every --node-labels adds its labels", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '--node-labels=team=a --node-labels=tier=web ` + taintFlag + `'`)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a", "tier=web"),
			flags: []string{labelFlag, "--node-labels=tier=web", taintFlag},
		},
		{
			name: "%% in the extra args is systemd's literal %", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '--eviction-hard=memory.available<5%% ` + taintFlag + `'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{"--eviction-hard=memory.available<5%", taintFlag},
		},
		// AL2: variables.
		{
			name: "extra args in a variable, quoted", family: "AL2",
			userData: al2("ARGS='" + taintFlag + " " + labelFlag + "'\n" + bootstrap(` --kubelet-extra-args "$ARGS"`)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{taintFlag, labelFlag},
		},
		{
			name: "extra args in a variable, unquoted: split, only the first word is the value", family: "AL2",
			userData: al2("ARGS='" + labelFlag + " " + taintFlag + "'\n" + bootstrap(` --kubelet-extra-args $ARGS`)),
			starts:   true, labels: labels("team=a"), flags: []string{labelFlag},
		},
		{
			name: "a variable built from another", family: "AL2",
			userData: al2("TAINTS=" + unregistered + "\nARGS=\"--register-with-taints=${TAINTS}\"\n" + bootstrap(` --kubelet-extra-args "$ARGS"`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "exported KUBELET_EXTRA_ARGS is bootstrap.sh's default", family: "AL2",
			userData: al2("export KUBELET_EXTRA_ARGS='" + taintFlag + "'\n" + bootstrap("")),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "KUBELET_EXTRA_ARGS assigned on the command itself", family: "AL2",
			userData: al2("KUBELET_EXTRA_ARGS='" + taintFlag + "' " + bootstrap("")),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "KUBELET_EXTRA_ARGS assigned but not exported does not reach bootstrap.sh", family: "AL2",
			userData: al2("KUBELET_EXTRA_ARGS='" + taintFlag + "'\n" + bootstrap("")),
			starts:   true,
		},
		{
			name: "export after assignment", family: "AL2",
			userData: al2("KUBELET_EXTRA_ARGS='" + taintFlag + "'\nexport KUBELET_EXTRA_ARGS\n" + bootstrap("")),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "--kubelet-extra-args overrides the exported default", family: "AL2",
			userData: al2("export KUBELET_EXTRA_ARGS=--max-pods=20\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		// AL2: here-documents, functions, conditionals, control flow.
		{
			name: "a bootstrap.sh line inside a here-document is data, not a call", family: "AL2",
			userData: al2("cat <<'EOF' > /root/README\n/etc/eks/bootstrap.sh other --kubelet-extra-args '--max-pods=5'\nEOF\n" +
				bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts: true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "an unquoted here-document expanding a variable into a config file", family: "AL2",
			userData: al2("TEAM=a\ncat <<EOF > /etc/team.conf\nteam=$TEAM\nEOF\n" + bootstrap(` --kubelet-extra-args "--node-labels=team=$TEAM `+taintFlag+`"`)),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{labelFlag, taintFlag},
		},
		{
			name: "a function passing \"$@\" to bootstrap.sh", family: "AL2",
			userData: al2("join_cluster() {\n  /etc/eks/bootstrap.sh \"$@\"\n}\njoin_cluster demo --b64-cluster-ca \"$CA\" --apiserver-endpoint \"$URL\" --kubelet-extra-args '" + taintFlag + "'"),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "a function with a local variable", family: "AL2",
			userData: al2("function join {\n  local args=\"" + taintFlag + " --node-labels=team=$1\"\n  " + bootstrap(` --kubelet-extra-args "$args"`) + "\n}\njoin a"),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{taintFlag, labelFlag},
		},
		{
			name: "a function defined but never called", family: "AL2",
			userData: al2("join() {\n  " + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`) + "\n}\necho not joining"),
			starts:   false,
		},
		{
			name: "if on a variable the script set: the then branch", family: "AL2",
			userData: al2("SPOT=true\nif [ \"$SPOT\" = \"true\" ]; then\n  ARGS='" + taintFlag + "'\nelse\n  ARGS='--max-pods=20'\nfi\n" + bootstrap(` --kubelet-extra-args "$ARGS"`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "if on a variable the script set: the else branch", family: "AL2",
			userData: al2("SPOT=false\nif [[ $SPOT == true ]]; then\n  ARGS='--max-pods=20'\nelse\n  ARGS='" + taintFlag + "'\nfi\n" + bootstrap(` --kubelet-extra-args "$ARGS"`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "case on a variable the script set", family: "AL2",
			userData: al2("ROLE=gpu\ncase $ROLE in\n  gpu) A=" + taintFlag + " ;;\n  *) A=--max-pods=20 ;;\nesac\n" + bootstrap(` --kubelet-extra-args "$A"`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "bootstrap.sh after a command chained with &&", family: "AL2",
			userData: al2("yum install -y amazon-ssm-agent && " + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "bootstrap.sh in a subshell", family: "AL2",
			userData: al2("( " + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`) + " )"),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "bootstrap.sh through sudo", family: "AL2",
			userData: al2("sudo " + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "two bootstrap.sh calls: the last one wins", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '--max-pods=20'`) + "\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "exit before bootstrap.sh", family: "AL2",
			userData: al2("exit 0\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   false,
		},
		{
			name: "a commented-out bootstrap.sh call", family: "AL2",
			userData: al2("# " + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`) + "\n" + bootstrap("")),
			starts:   true,
		},
		{
			name: "no bootstrap.sh at all", family: "AL2",
			userData: al2("yum install -y htop"),
			starts:   false,
		},
		{
			name: "#!/bin/sh script", family: "AL2",
			userData: "#!/bin/sh\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\n",
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "bootstrap.sh through bash -c", family: "AL2",
			userData: al2(`bash -c "/etc/eks/bootstrap.sh demo --kubelet-extra-args '` + taintFlag + `'"`),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "bootstrap.sh through eval", family: "AL2",
			userData: al2(`eval "` + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`) + `"`),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "bootstrap.sh guarded by if [ -x ]", family: "AL2",
			userData: al2("if [ -x /etc/eks/bootstrap.sh ]; then\n  " + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`) + "\nfi"),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "a default value expansion ${EXTRA:-...}", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args "${EXTRA:-` + taintFlag + `}"`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "a function that exits, never called", family: "AL2",
			userData: al2("fail() { echo failed; exit 1; }\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "an empty --register-with-taints last clears the taints", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '` + taintFlag + ` --register-with-taints='`)),
			starts:   true, flags: []string{taintFlag, "--register-with-taints="},
		},
		// AL2: MIME multi-part.
		{
			name: "MIME: Karpenter's generated part with AWS's logging idiom", family: "AL2",
			userData: mime(shellPart("#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n" +
				"/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint '" + endpoint + "' --b64-cluster-ca '" + caB64 + "' \\\n--use-max-pods false \\\n" +
				"--kubelet-extra-args '--node-labels=\"karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default\" --register-with-taints=\"karpenter.sh/unregistered:NoExecute\" --max-pods=110'")),
			starts: true, taints: []string{unregistered},
			labels: labels("karpenter.sh/capacity-type=on-demand", "karpenter.sh/nodepool=default"),
			flags:  []string{"--node-labels=karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default", taintFlag, "--max-pods=110"},
		},
		{
			name: "MIME: an operator part before the bootstrap part", family: "AL2",
			userData: mime(shellPart("#!/bin/bash\necho 'vm.max_map_count=262144' >> /etc/sysctl.conf"), shellPart(al2(bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)))),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "MIME: cloud-config beside the shell part", family: "AL2",
			userData: mime([2]string{"text/cloud-config", "#cloud-config\npackages:\n- htop\n"}, shellPart(al2(bootstrap(` --kubelet-extra-args '`+taintFlag+" "+labelFlag+`'`)))),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{taintFlag, labelFlag},
		},
		// AL2023: nodeadm NodeConfig.
		{
			name: "AL2023: registerWithTaints in the kubelet config", family: "AL2023",
			userData: mime(nodeConfigPart(nodeConfig("  kubelet:\n    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute\n"))),
			starts:   true, taints: []string{unregistered},
		},
		{
			name: "AL2023 S3: the operator's --register-with-taints flag replaces the config's taints", family: "AL2023",
			userData: mime(nodeConfigPart(userNodeConfig("  kubelet:\n    config:\n      clusterDNS: [172.20.0.10]\n    flags:\n    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute\n")),
				nodeConfigPart(nodeConfig("  kubelet:\n    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoExecute\n"))),
			starts: true, taints: []string{"node.cilium.io/agent-not-ready=true:NoExecute"},
			flags: []string{"--register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute"},
		},
		{
			name: "AL2023: flags of every document append, quotes removed", family: "AL2023",
			userData: mime(nodeConfigPart(nodeConfig("  kubelet:\n    flags:\n    - '--node-labels=\"team=a\"'\n")),
				nodeConfigPart(userNodeConfig("  kubelet:\n    flags:\n    - "+taintFlag+"\n"))),
			starts: true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{labelFlag, taintFlag},
		},
		{
			name: "AL2023: --node-labels in two documents merge", family: "AL2023",
			userData: mime(nodeConfigPart(nodeConfig("  kubelet:\n    flags:\n    - --node-labels=team=a\n")),
				nodeConfigPart(userNodeConfig("  kubelet:\n    flags:\n    - --node-labels=tier=web\n    - "+taintFlag+"\n"))),
			starts: true, taints: []string{unregistered}, labels: labels("team=a", "tier=web"),
			flags: []string{labelFlag, "--node-labels=tier=web", taintFlag},
		},
		{
			name: "AL2023: a bare NodeConfig without MIME", family: "AL2023",
			userData: nodeConfig("  kubelet:\n    flags:\n    - " + taintFlag + "\n"),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "AL2023: two documents in one part", family: "AL2023",
			userData: mime(nodeConfigPart(nodeConfig("") + "---\n" + userNodeConfig("  kubelet:\n    flags:\n    - "+taintFlag+"\n"))),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "AL2023: a shell part beside the NodeConfig changes nothing", family: "AL2023",
			userData: mime(shellPart("#!/bin/bash\necho hello"), nodeConfigPart(nodeConfig("  kubelet:\n    flags:\n    - "+taintFlag+"\n"))),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "AL2023: one flag string holding two flags, split by systemd", family: "AL2023",
			userData: nodeConfig("  kubelet:\n    flags:\n    - \"--node-labels=team=a " + taintFlag + "\"\n"),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a"), flags: []string{labelFlag, taintFlag},
		},
		// Bottlerocket TOML.
		{
			name: "Bottlerocket: taints and labels", family: "Bottlerocket",
			userData: bottlerocket("[settings.kubernetes.node-labels]\n\"karpenter.sh/nodepool\" = \"default\"\n[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\"NoExecute\"]\n"),
			starts:   true, taints: []string{unregistered}, labels: labels("karpenter.sh/nodepool=default"),
		},
		{
			name: "Bottlerocket: settings the emulator and Joiner do not know are kept and ignored", family: "Bottlerocket",
			userData: bottlerocket("max-pods = 110\n[settings.kubernetes.node-taints]\ndedicated = [\"ci:NoSchedule\", \"ci:NoExecute\"]\n\"karpenter.sh/unregistered\" = [\"NoExecute\"]\n" +
				"[settings.host-containers.admin]\nenabled = true\n[settings.kernel.sysctl]\n\"vm.max_map_count\" = \"262144\"\n[[settings.bootstrap-commands.example]]\ncommands = [[\"echo\", \"hi\"]]\n"),
			starts: true, taints: []string{"dedicated=ci:NoSchedule", "dedicated=ci:NoExecute", unregistered},
		},
		{
			name: "Bottlerocket: dotted keys and an inline table", family: "Bottlerocket",
			userData: bottlerocket("node-labels = { team = \"a\", \"tier\" = 'web' }\nnode-taints.\"karpenter.sh/unregistered\" = [\"NoExecute\"]\n"),
			starts:   true, taints: []string{unregistered}, labels: labels("team=a", "tier=web"),
		},
		{
			name: "Bottlerocket: no taints", family: "Bottlerocket",
			userData: bottlerocket("[settings.kubernetes.node-labels]\nteam = \"a\"\n"),
			starts:   true, labels: labels("team=a"),
		},
		{
			name: "Bottlerocket: a taint given as a single string", family: "Bottlerocket",
			userData: bottlerocket("[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = \":NoExecute\"\n"),
			starts:   true, taints: []string{unregistered},
		},
		// set -e (al2 starts with set -ex): a command that certainly fails ends the script.
		{
			name: "set -e and false before bootstrap.sh", family: "AL2",
			userData: al2("false\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
		},
		{
			name: "set -e and a test on known values that fails", family: "AL2",
			userData: al2("ENV=prod\n[ \"$ENV\" = staging ]\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
		},
		{
			name: "set -e and exit 1 in a function", family: "AL2",
			userData: al2("die() {\n  echo \"$1\"\n  exit 1\n}\ndie stop\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
		},
		{
			name: "set -e ignores a failure in an if condition and before ||", family: "AL2",
			userData: al2("if false; then echo no; fi\nfalse || true\n! true\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "set +e turns errexit off again", family: "AL2",
			userData: al2("set +e\nfalse\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		// A script the userData writes, then runs.
		{
			name: "bootstrap.sh called from a script the userData writes and runs by path", family: "AL2",
			userData: al2("cat <<'EOF' > /root/join.sh\n#!/bin/bash\n/etc/eks/bootstrap.sh \"$@\"\nEOF\nchmod +x /root/join.sh\n/root/join.sh demo --kubelet-extra-args '" + taintFlag + "'"),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "a written script run with bash, taking an exported variable and not a plain one", family: "AL2",
			userData: al2("export KUBELET_EXTRA_ARGS='" + taintFlag + "'\nLABELS=--node-labels=team=a\ncat > /root/join.sh <<EOF\n/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA \"\\$@\"\nEOF\nbash /root/join.sh --apiserver-endpoint \"$URL\""),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "a script written by echo and run with sh", family: "AL2",
			userData: al2("echo \"/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\" > /root/join.sh\nsh /root/join.sh"),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "a written script that is never run", family: "AL2",
			userData: al2("cat <<'EOF' > /root/join.sh\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '" + taintFlag + "'\nEOF\nchmod +x /root/join.sh"),
		},
		{
			name: "extra args from a file the script writes and sources", family: "AL2",
			userData: al2("cat <<EOF > /root/env\nARGS=" + taintFlag + "\nEOF\n. /root/env\n" + bootstrap(` --kubelet-extra-args "$ARGS"`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		// A taint the kubelet cannot parse: it refuses to start.
		{
			name: "AL2023: a misspelt taint effect in NodeConfig kubelet flags", family: "AL2023",
			userData: mime(nodeConfigPart(nodeConfig("  kubelet:\n    flags:\n    - \"--register-with-taints=team=a:NoScedule\"\n"))),
		},
		{
			name: "AL2: a taint without an effect in --kubelet-extra-args", family: "AL2",
			userData: al2(bootstrap(` --kubelet-extra-args '--register-with-taints=` + unregistered + `,team=a'`)),
		},
		// Custom.
		{
			name: "Custom: a bootstrap.sh call read as on AL2", family: "Custom",
			userData: al2(bootstrap(` --kubelet-extra-args '` + taintFlag + `'`)),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
		{
			name: "Custom: NodeConfig parts read by nodeadm", family: "Custom",
			userData: mime(nodeConfigPart(nodeConfig("  kubelet:\n    flags:\n    - " + taintFlag + "\n"))),
			starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
		},
	}
}
