#!/usr/bin/env bash
# install-testenv.sh DIR
#
# Builds the real control-plane binaries that Joiner's tests and local stack run (etcd,
# kube-apiserver, kube-scheduler, kube-controller-manager) from the Go module proxy alone, at pinned
# versions, into DIR/k8s/<k8s-version>-<os>-<arch>/, and prints that absolute directory on stdout so
# callers can `export KUBEBUILDER_ASSETS="$(hack/install-testenv.sh bin/testenv)"`. Progress goes to
# stderr. Idempotent: a binary that already reports the wanted version is kept, so a re-run takes
# about a second; with a warm Go build cache a fresh DIR takes well under a minute.
#
# Why not `go install`: k8s.io/kubernetes and go.etcd.io/etcd/server/v3 carry replace directives in
# their go.mod, which `go install pkg@version` refuses. We build them from a throw-away module of our
# own that requires the upstream module and pins every replaced staging module to its release.
#
# Environment: K8S_VERSION, ETCD_VERSION (defaults below, kept in step with the Makefile);
# KUBECTL_FROM_PATH=1 links a kubectl found on PATH instead of building one (default 1).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.33.13}
ETCD_VERSION=${ETCD_VERSION:-3.5.35}
KUBECTL_FROM_PATH=${KUBECTL_FROM_PATH:-1}
ROOT=${1:?usage: $0 DIR}

log() { echo "[install-testenv $(date +%H:%M:%S)] $*" >&2; }
has_version() { local out; [ -x "$1" ] && out=$("$1" --version 2>/dev/null) && grep -qxF "$2" <<<"$out"; }

mkdir -p "$ROOT/k8s/$K8S_VERSION-$(go env GOOS)-$(go env GOARCH)"
DEST=$(cd "$ROOT/k8s/$K8S_VERSION-$(go env GOOS)-$(go env GOARCH)" && pwd)
# The build modules are throw-away: never the project's go.work, always resolvable, static binaries.
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local
WORK=$(mktemp -d "${TMPDIR:-/tmp}/joiner-testenv.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# etcd: a main that calls etcdmain.Main, which is all that upstream's server/main.go does.
if has_version "$DEST/etcd" "etcd Version: $ETCD_VERSION"; then
  log "etcd $ETCD_VERSION present"
else
  log "building etcd $ETCD_VERSION"; SECONDS=0
  mkdir "$WORK/etcd"; cd "$WORK/etcd"
  go mod init joiner.local/etcd-build 2>/dev/null
  printf '%s\n' 'package main' 'import ("os"; "go.etcd.io/etcd/server/v3/etcdmain")' \
    'func main() { etcdmain.Main(os.Args) }' >main.go
  go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  go build -trimpath -ldflags="-s -w" -o "$DEST/etcd.tmp" .
  mv -f "$DEST/etcd.tmp" "$DEST/etcd"
  log "etcd built in ${SECONDS}s"
fi

KUBE_MODULE_READY=0
prepare_kube_module() {
  [ "$KUBE_MODULE_READY" = 1 ] && return 0
  mkdir "$WORK/kube"; cd "$WORK/kube"
  go mod init joiner.local/kube-build 2>/dev/null
  local gomod module kv args=("-require=k8s.io/kubernetes@v$K8S_VERSION")
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | awk -F'"' '$2=="GoMod"{print $4}')
  for module in $(awk '$2=="=>" && $3 ~ /^\.\/staging\// {print $1}' "$gomod"); do
    args+=("-replace=$module=$module@v0.${K8S_VERSION#1.}")
  done
  # Upstream's godebug defaults change runtime behaviour; keep them.
  for kv in $(awk '/^godebug \(/{b=1;next} b&&/^\)/{b=0;next} b{print $1} /^godebug [^(]/{print $2}' "$gomod"); do
    args+=("-godebug=$kv")
  done
  go mod edit "${args[@]}"
  KUBE_MODULE_READY=1
}

LDFLAGS="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION") -X $p.gitTreeState=clean"
done

build_kube() {
  local name=$1
  if has_version "$DEST/$name" "Kubernetes v$K8S_VERSION"; then
    log "$name v$K8S_VERSION present"; return 0
  fi
  log "building $name v$K8S_VERSION"; SECONDS=0
  prepare_kube_module
  go get "k8s.io/kubernetes/cmd/$name@v$K8S_VERSION"
  go build -trimpath -ldflags="$LDFLAGS" -o "$DEST/$name.tmp" "k8s.io/kubernetes/cmd/$name"
  mv -f "$DEST/$name.tmp" "$DEST/$name"
  log "$name built in ${SECONDS}s"
}

build_kube kube-apiserver
build_kube kube-scheduler
build_kube kube-controller-manager

if [ -e "$DEST/kubectl" ] && "$DEST/kubectl" version --client >/dev/null 2>&1; then
  log "kubectl present"
elif [ "$KUBECTL_FROM_PATH" = 1 ] && K=$(command -v kubectl); then
  ln -sfn "$K" "$DEST/kubectl"; log "kubectl linked from $K"
else
  build_kube kubectl
fi

log "$("$DEST/etcd" --version | sed -n 1p); $("$DEST/kube-apiserver" --version)"
echo "$DEST"
