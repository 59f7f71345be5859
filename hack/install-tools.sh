#!/usr/bin/env bash
# Installs the real tools meshcp's tests run: kube-apiserver and etcd, built
# from source through the Go module proxy only (no release tarballs are
# downloaded); helm, the same way; and dockerfilelint from the npm registry.
# Each lands in its own versioned folder under the tools cache, where
# test/tools finds them, and one folder of symlinks gathers kube-apiserver
# and etcd for KUBEBUILDER_ASSETS (what test/apiserver and
# controller-runtime's envtest read). The last line printed is that folder.
#
#   hack/install-tools.sh            # build what is missing, print the folder
#   KUBEBUILDER_ASSETS=$(hack/install-tools.sh | tail -n1) go test ./test/...
#
# Environment:
#   MESHCP_TOOLS_DIR     cache root (default $HOME/.cache/meshcp/tools)
#   MESHCP_BUILD_JOBS    parallel compile jobs, go build -p (default: cores,
#                        at most 4; kube-apiserver peaks near 3 GB at -p 2)
#   GOFLAGS, GOPROXY, GOCACHE, GOMODCACHE are honoured as usual.
#
# The first kube-apiserver build takes about 10 minutes on 2 cores; later
# builds reuse Go's build cache and the binary itself is kept, so a second run
# is a version check only.
set -euo pipefail

# Keep these in step with test/apiserver (KubeVersion, EtcdVersion) and
# test/tools (HelmVersion, DockerfilelintVersion).
KUBE_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
HELM_VERSION=v4.3.2
DOCKERFILELINT_VERSION=1.8.0

tools_root=${MESHCP_TOOLS_DIR:-$HOME/.cache/meshcp/tools}
assets_dir="$tools_root/assets-kube-$KUBE_VERSION-etcd-$ETCD_VERSION"

cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
jobs=${MESHCP_BUILD_JOBS:-$((cores < 4 ? cores : 4))}

# Deterministic, offline-friendly builds: static binaries, no toolchain
# download, no VCS stamping (the scratch modules have no VCS anyway).
export CGO_ENABLED=0
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOWORK=off

log() { echo "install-tools: $*" >&2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# has_version BINARY WANT [ARGS...]: true when BINARY exists and what it
# prints when run with ARGS (default --version) contains WANT. (The output is captured first: grep -q closing the pipe
# early would kill the binary with SIGPIPE and fail the check under
# pipefail.)
has_version() {
  local bin=$1 want=$2 out
  shift 2
  [ $# -gt 0 ] || set -- --version
  [ -x "$bin" ] && out=$("$bin" "$@" 2>/dev/null) && grep -qF -- "$want" <<<"$out"
}

# build_in_scratch NAME PKG OUT LDFLAGS: builds PKG from the scratch module in
# $work/NAME into OUT, atomically (a half-written binary never appears).
build_in_scratch() {
  local name=$1 pkg=$2 out=$3 ldflags=$4 log_file="$work/$1.build.log"
  mkdir -p "$(dirname "$out")"
  if ! (cd "$work/$name" &&
        go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$out.tmp.$$" "$pkg") >"$log_file" 2>&1; then
    log "building $name failed:"; tail -n 50 "$log_file" >&2; rm -f "$out.tmp.$$"; return 1
  fi
  mv -f "$out.tmp.$$" "$out"
}

# resolve NAME PKG@VERSION: fills the scratch module's requirements and
# go.sum for PKG (go get resolves the whole import graph of the package).
resolve() {
  local name=$1 query=$2
  if ! (cd "$work/$name" && go get "$query") >"$work/$name.get.log" 2>&1; then
    log "resolving $query failed:"; tail -n 50 "$work/$name.get.log" >&2; return 1
  fi
}

install_kube_apiserver() {
  local dir="$tools_root/kube-apiserver-$KUBE_VERSION" bin
  bin="$dir/kube-apiserver"
  if has_version "$bin" "Kubernetes $KUBE_VERSION"; then
    log "kube-apiserver $KUBE_VERSION already built"; return
  fi
  log "building kube-apiserver $KUBE_VERSION from the Go module proxy"
  log "  (first build: about 10 min and 3 GB of memory on 2 cores; cached rebuilds: about a minute)"
  local start=$SECONDS m="$work/kube-apiserver"
  mkdir -p "$m"
  # k8s.io/kubernetes points its staging modules (k8s.io/api, ...) at
  # ./staging/src, which a module download does not contain: replace each of
  # them with its published v0.MINOR.PATCH release, read from its own go.mod.
  local staging=v0.${KUBE_VERSION#v1.}
  cat >"$m/go.mod" <<EOF
module meshcp.local/tools/kube-apiserver

go 1.26.0

require k8s.io/kubernetes $KUBE_VERSION
EOF
  local info mod_file
  info=$(cd "$m" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION")
  mod_file=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$info")
  {
    echo
    echo "replace ("
    sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) => \./staging/src/.*#\t\1 => \1 '"$staging"'#p' "$mod_file"
    echo ")"
  } >>"$m/go.mod"
  resolve kube-apiserver "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION"

  # Without these stamps the binary reports v0.0.0-master and clients that
  # gate on the server version misbehave. The build date is the release's
  # module time, so rebuilds are byte-identical and hit the build cache.
  local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
  local date commit
  date=$(sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' "${mod_file%.mod}.info" | sed 's/\.[0-9]*Z$/Z/')
  commit=$(sed -n 's/.*"Hash": *"\([0-9a-f]*\)".*/\1/p' "${mod_file%.mod}.info")
  local ldflags="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=${date:-1970-01-01T00:00:00Z}"
    if [ -n "$commit" ]; then ldflags+=" -X $p.gitCommit=$commit"; fi
  done
  build_in_scratch kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$bin" "$ldflags"
  has_version "$bin" "Kubernetes $KUBE_VERSION" || { log "built kube-apiserver reports: $("$bin" --version)"; return 1; }
  log "kube-apiserver $KUBE_VERSION built in $((SECONDS - start))s"
}

install_etcd() {
  local dir="$tools_root/etcd-$ETCD_VERSION" bin
  bin="$dir/etcd"
  if has_version "$bin" "etcd Version: ${ETCD_VERSION#v}"; then
    log "etcd $ETCD_VERSION already built"; return
  fi
  log "building etcd $ETCD_VERSION from the Go module proxy (about a minute)"
  local start=$SECONDS m="$work/etcd"
  mkdir -p "$m"
  printf 'module meshcp.local/tools/etcd\n\ngo 1.26.0\n' >"$m/go.mod"
  # The etcd main package is the root of go.etcd.io/etcd/server/v3 (3.5+).
  resolve etcd "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  build_in_scratch etcd go.etcd.io/etcd/server/v3 "$bin" "-s -w"
  has_version "$bin" "etcd Version: ${ETCD_VERSION#v}" || { log "built etcd reports: $("$bin" --version)"; return 1; }
  log "etcd $ETCD_VERSION built in $((SECONDS - start))s"
}

install_helm() {
  local dir="$tools_root/helm-$HELM_VERSION" bin
  bin="$dir/helm"
  if has_version "$bin" "Version:\"$HELM_VERSION\"" version; then
    log "helm $HELM_VERSION already built"; return
  fi
  log "building helm $HELM_VERSION from the Go module proxy (a few minutes the first time)"
  local start=$SECONDS
  mkdir -p "$dir"
  # go install builds a module at a version on its own (helm has no replace
  # directives); GOBIN puts the binary in the versioned folder.
  if ! GOBIN="$work/helm-bin" go install -p "$jobs" -trimpath \
      -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
      "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >"$work/helm.log" 2>&1; then
    log "building helm failed:"; tail -n 50 "$work/helm.log" >&2; return 1
  fi
  mv -f "$work/helm-bin/helm" "$bin"
  has_version "$bin" "Version:\"$HELM_VERSION\"" version || { log "built helm reports: $("$bin" version)"; return 1; }
  log "helm $HELM_VERSION built in $((SECONDS - start))s"
}

install_dockerfilelint() {
  local dir="$tools_root/dockerfilelint-$DOCKERFILELINT_VERSION"
  if [ -x "$dir/node_modules/.bin/dockerfilelint" ]; then
    log "dockerfilelint $DOCKERFILELINT_VERSION already installed"; return
  fi
  command -v npm >/dev/null || { log "npm is missing: it installs dockerfilelint"; return 1; }
  log "installing dockerfilelint $DOCKERFILELINT_VERSION from the npm registry"
  mkdir -p "$dir"
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-save "dockerfilelint@$DOCKERFILELINT_VERSION" >"$work/npm.log" 2>&1; then
    log "installing dockerfilelint failed:"; tail -n 50 "$work/npm.log" >&2; return 1
  fi
}

install_etcd
install_kube_apiserver
install_helm
install_dockerfilelint

# One folder holding both binaries, as KUBEBUILDER_ASSETS expects.
mkdir -p "$assets_dir"
ln -sfn "../kube-apiserver-$KUBE_VERSION/kube-apiserver" "$assets_dir/kube-apiserver"
ln -sfn "../etcd-$ETCD_VERSION/etcd" "$assets_dir/etcd"
log "binaries are in (use as KUBEBUILDER_ASSETS):"
echo "$assets_dir"
