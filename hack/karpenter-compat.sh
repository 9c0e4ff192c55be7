#!/usr/bin/env bash
# karpenter-compat.sh [VERSION...]
#
# Runs an unmodified upstream Karpenter controller (aws/karpenter-provider-aws cmd/controller,
# built from the Go module proxy) against the AWS emulator of `joiner dev`, scales a Deployment to
# 20 pods and back to 0, and reports every AWS call Karpenter saw refused or failed. It proves the
# emulator against a client Joiner did not write; docs/design/awsemu.md records the last result.
# Not part of `make test`: it builds Karpenter (a few minutes the first time) and runs a control
# plane. Run it under the shared lock: `flock /tmp/joiner-heavy.lock hack/karpenter-compat.sh`.
#
# Version: the newest tag that builds with the local Go toolchain (GOTOOLCHAIN=local), newest
# first among VERSION... (default: every tag the module proxy lists). A tag whose go.mod asks for
# a newer Go is skipped. Upstream's go.mod may require a pseudo-version of sigs.k8s.io/karpenter
# that the proxy does not serve; the throw-away build module then pins it to the release of the
# same number (v1.14.1-0.2026... -> v1.14.1). The binary is cached as bin/karpenter/VERSION/controller.
#
# The stack: `bin/joiner dev --no-controller` (its samples: an EC2NodeClass, a NodePool, the
# aws-auth mapping and the Deployment inflate), then upstream's CRDs applied over Joiner's (the
# same karpenter.sh/v1 and karpenter.k8s.aws/v1 kinds), then Karpenter with the controller's key
# (AKIDJOINERCONTROLLER) and AWS_ENDPOINT_URL at the emulator. Logs stay in WORKDIR
# (default bin/karpenter-compat): dev.log, karpenter.log, and the stack's logs/.
#
# Exit status 0 when the pods ran and were removed and no AWS call was refused or failed.
# Environment: WORKDIR; TIMEOUT (seconds per wait, default 600); KUBEBUILDER_ASSETS (default: what
# hack/install-testenv.sh bin/testenv prints).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
WORKDIR=${WORKDIR:-$ROOT/bin/karpenter-compat}
TIMEOUT=${TIMEOUT:-600}
MODULE=github.com/aws/karpenter-provider-aws
log() { echo "[karpenter-compat $(date +%H:%M:%S)] $*" >&2; }

export GOWORK=off GOTOOLCHAIN=local
GOVERSION=$(go env GOVERSION); GOVERSION=${GOVERSION#go}

# newer A B: A is a newer Go version than B.
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$1" ]; }

build() { # build VERSION DEST: builds upstream's controller at VERSION into DEST.
  local v=$1 dest=$2 gomod want work
  gomod=$(GOFLAGS=-mod=mod go mod download -json "$MODULE@$v" | awk -F'"' '$2=="GoMod"{print $4}')
  want=$(awk '$1=="go"{print $2; exit}' "$gomod")
  if newer "$want" "$GOVERSION"; then
    log "$v needs go $want (have $GOVERSION): skipped"; return 1
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/karpenter-build.XXXXXX")
  (
    cd "$work"
    export GOFLAGS=-mod=mod CGO_ENABLED=0
    go mod init joiner.local/karpenter-build >/dev/null 2>&1
    args=(-require="$MODULE@$v")
    core=$(awk '$1=="sigs.k8s.io/karpenter"{print $2; exit}' "$gomod")
    if ! go mod download "sigs.k8s.io/karpenter@$core" 2>/dev/null; then
      release=${core%%-*}
      log "sigs.k8s.io/karpenter@$core is not on the proxy: pinning $release"
      args+=(-replace="sigs.k8s.io/karpenter=sigs.k8s.io/karpenter@$release")
    fi
    go mod edit "${args[@]}"
    go build -trimpath -ldflags="-s -w" -o "$dest.tmp" "$MODULE/cmd/controller"
  ) || { rm -rf "$work"; return 1; }
  rm -rf "$work"
  mv -f "$dest.tmp" "$dest"
}

versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  read -r -a versions <<<"$(go list -m -versions "$MODULE" | cut -d' ' -f2-)"
fi
KARPENTER=""
for v in $(printf '%s\n' "${versions[@]}" | grep -v -- '-' | sort -rV); do
  dest=$ROOT/bin/karpenter/$v/controller
  mkdir -p "$(dirname "$dest")"
  if [ -x "$dest" ] || { log "building Karpenter $v"; build "$v" "$dest"; }; then
    KARPENTER=$dest VERSION=$v; break
  fi
  log "Karpenter $v does not build with go $GOVERSION"
done
[ -n "$KARPENTER" ] || { log "no Karpenter version builds with go $GOVERSION"; exit 2; }
log "Karpenter $VERSION: $KARPENTER"

log "building joiner and awsemu"
go build -o bin/joiner ./cmd/joiner
go build -o bin/awsemu ./cmd/awsemu
ASSETS=${KUBEBUILDER_ASSETS:-$(hack/install-testenv.sh "$ROOT/bin/testenv")}

rm -rf "$WORKDIR"; mkdir -p "$WORKDIR"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

bin/joiner dev --no-controller --assets "$ASSETS" --workdir "$WORKDIR/stack" >"$WORKDIR/dev.log" 2>&1 &
PIDS+=($!)
wait_for() { # wait_for WHAT COMMAND...: polls COMMAND each 2s until it succeeds or TIMEOUT.
  local what=$1 deadline=$((SECONDS + TIMEOUT)); shift
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then log "timed out waiting for $what"; return 1; fi
    sleep 2
  done
}
wait_for "joiner dev" grep -q "runs until interrupted" "$WORKDIR/dev.log" || { cat "$WORKDIR/dev.log" >&2; exit 1; }
export KUBECONFIG; KUBECONFIG=$(awk '/export KUBECONFIG=/{sub(/.*KUBECONFIG=/,""); print; exit}' "$WORKDIR/dev.log")
ENDPOINT=$(grep -o 'AWS_ENDPOINT_URL=[^ ]*' "$WORKDIR/dev.log" | head -1 | cut -d= -f2)
REGION=$(grep -o 'AWS_REGION=[^ ]*' "$WORKDIR/dev.log" | head -1 | cut -d= -f2)
log "stack up: KUBECONFIG=$KUBECONFIG emulator $ENDPOINT ($REGION)"

CRDS=$(go env GOMODCACHE)/$MODULE@$VERSION/pkg/apis/crds
kubectl apply --server-side --force-conflicts -f "$CRDS" >"$WORKDIR/crds.log"
log "applied upstream's CRDs from $CRDS"

env -u AWS_PROFILE -u AWS_SESSION_TOKEN KUBECONFIG="$KUBECONFIG" \
  AWS_ENDPOINT_URL="$ENDPOINT" AWS_REGION="$REGION" AWS_ACCESS_KEY_ID=AKIDJOINERCONTROLLER \
  AWS_SECRET_ACCESS_KEY=local-stack AWS_EC2_METADATA_DISABLED=true \
  CLUSTER_NAME=demo INTERRUPTION_QUEUE=demo SYSTEM_NAMESPACE=kube-system DISABLE_LEADER_ELECTION=true \
  METRICS_PORT=0 HEALTH_PROBE_PORT=18081 LOG_LEVEL=debug \
  "$KARPENTER" >"$WORKDIR/karpenter.log" 2>&1 &
PIDS+=($!)
log "Karpenter $VERSION running (pid $!), log $WORKDIR/karpenter.log"

running() { [ "$(kubectl get pods -l app=inflate --field-selector=status.phase=Running -o name | wc -l)" -ge "$1" ]; }
gone() { [ "$(kubectl get nodeclaims -o name | wc -l)" -eq 0 ] && [ "$(kubectl get nodes -o name | wc -l)" -eq 0 ]; }
none() { [ "$(kubectl get pods -l app=inflate -o name | wc -l)" -eq 0 ]; }
RESULT=0
kubectl scale deployment inflate --replicas 20 >/dev/null
if wait_for "20 Running pods" running 20; then log "20 pods Running on $(kubectl get nodes -o name | wc -l) nodes"; else RESULT=1; fi
kubectl get nodeclaims -o wide >"$WORKDIR/nodeclaims.txt" 2>&1 || true
kubectl scale deployment inflate --replicas 0 >/dev/null
if wait_for "the pods to go" none && wait_for "the nodes to go" gone; then log "pods, NodeClaims and Nodes gone"; else RESULT=1; fi

# Every AWS call the SDK saw refused or failed is logged by Karpenter as "operation error SERVICE:
# ACTION, https response error StatusCode: N, RequestID: ..., CODE: message".
grep -o 'operation error [A-Za-z0-9 ]*: [A-Za-z]*, https response error StatusCode: [0-9]*[^"]*' "$WORKDIR/karpenter.log" |
  sed -E 's/RequestID: [^,]*, //; s/ \(aws-error-code=.*//' | sort | uniq -c | sort -rn >"$WORKDIR/refused.txt" || true
curl -fsS "$ENDPOINT/_awsemu/calls" >"$WORKDIR/calls.json" || true
echo "Karpenter $VERSION against joiner dev's emulator (go $GOVERSION)"
echo "AWS calls served (action: count): $(tr -d '\n ' <"$WORKDIR/calls.json")"
if [ -s "$WORKDIR/refused.txt" ]; then
  echo "Refused or failed AWS calls (count, call, answer):"; cat "$WORKDIR/refused.txt"; RESULT=1
else
  echo "Refused or failed AWS calls: none"
fi
[ $RESULT -eq 0 ] && echo "PASS: 20 pods ran and were removed, no AWS call refused" || echo "FAIL: see $WORKDIR"
exit $RESULT
