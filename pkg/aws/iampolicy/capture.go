package iampolicy

import "slices"

// CaptureSid is the Sid of the statement of the world capture's policy.
const CaptureSid = "JoinerWorldCaptureReadOnly"

// Capture is the policy of `joiner world capture`: the read-only actions it calls
// (worldcapture.Actions), on every resource, and nothing else. The reads span the account's
// roles, policies, instance profiles, VPCs and images, so they are not scoped further.
func Capture(actions []string) Document {
	a := slices.Clone(actions)
	slices.Sort(a)
	return Document{Version: "2012-10-17", Statement: []Statement{{Sid: CaptureSid, Effect: "Allow", Action: slices.Compact(a), Resource: []string{"*"}}}}
}
