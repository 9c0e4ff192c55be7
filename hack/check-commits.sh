#!/usr/bin/env bash
# check-commits.sh: every commit subject since the base commit is at most 72 characters, so that
# `git log --oneline` and the forges' one-line views show it whole. The base is the last commit
# before the rule (hack/commits-base); older history is left as it was written. A clone without
# the base (a shallow one) checks nothing and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(tr -d '[:space:]' < hack/commits-base)
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
	echo "check-commits: base commit $base is not in this clone; nothing checked"
	exit 0
fi
bad=$(git log --no-merges --format='%h %s' "$base..HEAD" | awk '{ s = substr($0, index($0, " ") + 1) } length(s) > 72 { printf "  %s (%d characters)\n", $0, length(s) }')
if [ -n "$bad" ]; then
	echo "check-commits: these commit subjects are over 72 characters; reword them (git rebase -i $base), details go in the body:"
	echo "$bad"
	exit 1
fi
