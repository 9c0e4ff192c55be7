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
while IFS=: read -r file line; do
	pkg="./$(dirname "$file")"
	target="$(sed -n "${line}p" "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/')"
	if out="$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1)"; then
		execs="$(grep -oE 'execs: [0-9]+' <<<"$out" | tail -1 | grep -oE '[0-9]+' || echo 0)"
		printf '%-40s %-26s %8s execs\n' "$pkg" "$target" "$execs"
	else
		printf '%-40s %-26s FAILED\n%s\n' "$pkg" "$target" "$out"
		failed=1
	fi
done < <(grep -rnE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' --include='*_test.go' . | grep -v '^./hack/' | cut -d: -f1,2 | sed 's|^\./||' | sort)
echo "fuzzing took $((SECONDS - start))s"
exit "$failed"
