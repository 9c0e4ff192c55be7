package localstack

import "os"

// featureGatesArgs passes FEATURE_GATES of the environment of the process running the stack
// (`joiner dev`) to the controller as --feature-gates, as an operator sets Karpenter's gates:
// the controller would read the inherited variable anyway, but as a flag the gates show in the
// first line of its log, and ControllerArgs, given after, may override them.
func featureGatesArgs() []string {
	gates, ok := os.LookupEnv("FEATURE_GATES")
	if !ok {
		return nil
	}
	return []string{"--feature-gates", gates}
}
