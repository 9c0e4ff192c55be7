package legacyboot

import (
	"encoding/base64"
	"fmt"
)

// Result is the outcome of interpreting userData.
type Result struct {
	// Kubelet is how the kubelet runs; nil when the boot failed before starting it.
	Kubelet *Kubelet
	// Err says why the kubelet never started; nil when it did.
	Err error
	// Console is what the boot printed, for GetConsoleOutput.
	Console []string
}

func (r *Result) logf(format string, args ...any) {
	r.Console = append(r.Console, fmt.Sprintf(format, args...))
}

// Interpret reads base64 userData as an instance of the AMI family ("AL2", "AL2023",
// "Bottlerocket", "Custom")
// would at boot.
func Interpret(family, userDataBase64 string) Result {
	var res Result
	res.logf("cloud-init: running modules for final (userData family %s)", family)
	raw, err := base64.StdEncoding.DecodeString(userDataBase64)
	if err != nil {
		res.Err = fmt.Errorf("cloud-init: userData is not valid base64: %w", err)
		res.logf("%v", res.Err)
		return res
	}
	ps, err := parts(raw)
	if err == nil {
		switch family {
		case "AL2", "Custom":
			err = interpretAL2(ps, &res)
		case "AL2023":
			err = interpretAL2023(ps, &res)
		case "Bottlerocket":
			err = interpretBottlerocket(ps, &res)
		default:
			err = fmt.Errorf("the emulator does not interpret %s userData yet", family)
		}
	}
	if err != nil {
		res.Kubelet, res.Err = nil, err
		res.logf("%v", err)
	}
	return res
}
