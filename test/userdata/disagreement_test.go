package userdata

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

// disagreement is a userData where the product's static reading is known to differ from what
// the node does: the emulator is checked against the table, and the product's reading is
// reported until it is fixed (then the row moves to agreementTable).
type disagreement struct {
	agreement
	// gap says what the product reads and why the node does otherwise.
	gap string
}

func disagreementTable() []disagreement {
	return []disagreement{
		{
			agreement: agreement{
				name: "a kubelet drop-in written before bootstrap.sh", family: "AL2",
				userData: al2("mkdir -p /etc/systemd/system/kubelet.service.d\ncat <<EOF > /etc/systemd/system/kubelet.service.d/20-taints.conf\n[Service]\nEnvironment=\"KUBELET_EXTRA_ARGS=" + taintFlag + "\"\nEOF\n" + bootstrap("")),
				starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
			},
			gap: "ReadRegistration reads a known registration without the taint: it does not see that the script writes a drop-in into kubelet.service.d, which systemd reads when bootstrap.sh starts the kubelet (bootstrap.sh writes no drop-in of its own when --kubelet-extra-args is empty); it should be Unknown (or read the drop-in)",
		},
		{
			agreement: agreement{
				name: "a drop-in written after bootstrap.sh, then daemon-reload and restart", family: "AL2",
				userData: al2(bootstrap("") + "\ncat <<EOF > /etc/systemd/system/kubelet.service.d/90-taints.conf\n[Service]\nEnvironment=KUBELET_EXTRA_ARGS=" + taintFlag + "\nEOF\nsystemctl daemon-reload\nsystemctl restart kubelet"),
				starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
			},
			gap: "ReadRegistration reads a known registration without the taint; the restarted kubelet reads the new drop-in; it should be Unknown",
		},
		{
			agreement: agreement{
				name: "bootstrap.sh called from a script the userData writes and runs by path", family: "AL2",
				userData: al2("cat <<'EOF' > /root/join.sh\n#!/bin/bash\n/etc/eks/bootstrap.sh \"$@\"\nEOF\nchmod +x /root/join.sh\n/root/join.sh demo --kubelet-extra-args '" + taintFlag + "'"),
				starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
			},
			gap: "ReadRegistration reads Starts=false with no Unknown, so a check would say the userData never calls bootstrap.sh; the script it wrote calls it; running a file the script wrote should make the reading Unknown",
		},
		{
			agreement: agreement{
				name: "set -e and a failing command before bootstrap.sh", family: "AL2",
				userData: al2("false\n" + bootstrap(` --kubelet-extra-args '`+taintFlag+`'`)),
				starts:   false,
			},
			gap: "ReadRegistration reads the bootstrap.sh call as run; under set -e (set -ex in this script) bash exits at false, so no kubelet starts",
		},
	}
}

func TestKnownDisagreements(t *testing.T) {
	for _, row := range disagreementTable() {
		t.Run(row.name, func(t *testing.T) {
			want := expected(row.agreement)
			emulated := registered{}
			if row.starts {
				emulated = emulate(t, row.agreement)
			} else if reg, _, err := bootInterpret(row.agreement); err == nil {
				emulated = registered{Starts: true, Taints: taintStrings(reg.Taints), Labels: reg.Labels, Flags: reg.KubeletArgs}
			}
			if diff := cmp.Diff(want, emulated, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("emulator (awsemu/boot) differs from the table (-table +emulator):\n%s", diff)
			}
			product, err := userdata.ReadRegistration(row.family, row.userData)
			if err == nil && product.Unknown == "" && cmp.Diff(want, fromProduct(product), cmpopts.EquateEmpty()) == "" {
				t.Errorf("the product now agrees: move this row to agreementTable")
			}
			t.Logf("product gap: %s\nproduct read: %v (error %v)", row.gap, product, err)
		})
	}
}
