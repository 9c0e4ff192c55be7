#!/usr/bin/env bash
# Runs every Go fuzz target of the module for FUZZTIME each (default 3s), one after another, and
# prints each target's executions. Targets are found, not listed, so a new Fuzz function is run
# without editing this script. A crasher fails the run; go test writes it under the package's
# testdata/fuzz/<Target>/, where it becomes a regression seed once committed.
set -euo pipefail
fuzztime="${FUZZTIME:-3s}"
cd "$(dirname "$0")/.."
failed=0
start=$SECONDS

fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" "$1" 2>&1; }

# deadline_race: the run failed with the fuzzing engine's own "context deadline exceeded" at the
# end of -fuzztime and wrote no failing input. That is a race in Go's fuzzing coordinator under
# CPU load (go.dev/issue/75804, fixed in Go 1.27; this module's Go is 1.26), not a finding: the
# target is run once more. A failing input, a panic or any other failure fails at once.
deadline_race() {
	grep -q 'context deadline exceeded' <<<"$1" && ! grep -qE 'Failing input written to|panic:|_test\.go:[0-9]+:' <<<"$1"
}
while IFS=: read -r file line; do
	pkg="./$(dirname "$file")"
	target="$(sed -n "${line}p" "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/')"
	retried=""
	if out="$(fuzz "$pkg" "$target")" || { deadline_race "$out" && retried=" (again after Go's fuzztime race)" && out="$(fuzz "$pkg" "$target")"; }; then
		execs="$(grep -oE 'execs: [0-9]+' <<<"$out" | tail -1 | grep -oE '[0-9]+' || echo 0)"
		printf '%-40s %-26s %8s execs%s\n' "$pkg" "$target" "$execs" "$retried"
	else
		printf '%-40s %-26s FAILED\n%s\n' "$pkg" "$target" "$out"
		failed=1
	fi
done < <(grep -rnE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' --include='*_test.go' . | grep -v '^./hack/' | cut -d: -f1,2 | sed 's|^\./||' | sort)
echo "fuzzing took $((SECONDS - start))s"
exit "$failed"
