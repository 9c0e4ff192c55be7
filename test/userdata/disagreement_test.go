package userdata

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

// disagreement is a userData whose registration only a run can tell: the emulator is checked
// against the table, and the product must either agree or say the registration is unknown, so
// that its checks stay silent. A row with a gap is one where the product does neither today: its
// reading is reported until it is fixed (then the gap is cleared).
type disagreement struct {
	agreement
	// gap says what the product reads and why the node does otherwise; empty when the product
	// must agree or be unknown.
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
		},
		{
			agreement: agreement{
				name: "a drop-in written after bootstrap.sh, then daemon-reload and restart", family: "AL2",
				userData: al2(bootstrap("") + "\ncat <<EOF > /etc/systemd/system/kubelet.service.d/90-taints.conf\n[Service]\nEnvironment=KUBELET_EXTRA_ARGS=" + taintFlag + "\nEOF\nsystemctl daemon-reload\nsystemctl restart kubelet"),
				starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
			},
		},
		{
			agreement: agreement{
				name: "extra args set in a for loop", family: "AL2",
				userData: al2("for t in " + unregistered + "; do\n  T=$t\ndone\n" + bootstrap(` --kubelet-extra-args "--register-with-taints=$T"`)),
				starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
			},
		},
		{
			agreement: agreement{
				name: "extra args read from a here-document by while read", family: "AL2",
				userData: al2("while read -r line; do A=$line; done <<EOF\n" + taintFlag + "\nEOF\n" + bootstrap(` --kubelet-extra-args "$A"`)),
				starts:   true, taints: []string{unregistered}, flags: []string{taintFlag},
			},
		},
		{
			agreement: agreement{
				name: "a script the userData downloads and runs", family: "AL2",
				userData: al2("curl -fsSL -o /root/join.sh https://example.com/join.sh\nchmod +x /root/join.sh\n/root/join.sh demo"),
			},
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
			silentOrRight := err == nil && (product.Unknown != "" || cmp.Diff(want, fromProduct(product), cmpopts.EquateEmpty()) == "")
			switch {
			case row.gap == "" && !silentOrRight:
				t.Errorf("product (pkg/aws/userdata) reads a known registration the node does not register with: %v (error %v)", product, err)
			case row.gap != "" && silentOrRight:
				t.Errorf("the product's gap is closed (%v): clear the row's gap", product)
			case row.gap != "":
				t.Logf("product gap: %s\nproduct read: %v (error %v)", row.gap, product, err)
			}
		})
	}
}
