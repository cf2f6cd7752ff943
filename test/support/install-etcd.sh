#!/usr/bin/env bash
# Builds the etcd server and etcdctl that the cluster-metadata suites run
# against, from etcd's Go modules at a pinned release, into a cache directory.
# A no-op when both binaries are there (or SEDIMENT_ETCD_BIN points at an etcd).
#
# `go install go.etcd.io/etcd/server/v3@VERSION` is refused because the
# server's go.mod carries replace directives, so the build goes through a
# throw-away wrapper module that requires server/v3 and etcdctl/v3 at the same
# version (the replaces only point at sibling modules of that same release).
# Only when the build is impossible (no go, or it fails) does it fall back to
# Debian's etcd-server / etcd-client packages (etcd 3.4), and says so.
# The first build takes a few minutes on 2 cores.
#
#   bash test/support/install-etcd.sh               # build if missing
#   bash test/support/install-etcd.sh --print-path  # print where the etcd binary is (or goes)
set -euo pipefail

ETCD_VERSION=v3.6.16
CACHE_DIR="${SEDIMENT_CACHE_DIR:-/work/cache}"
BIN_DIR="$CACHE_DIR/bin/etcd-$ETCD_VERSION"
BIN="$BIN_DIR/etcd"

if [ "${1:-}" = "--print-path" ]; then
  if [ -n "${SEDIMENT_ETCD_BIN:-}" ]; then echo "$SEDIMENT_ETCD_BIN"; exit 0; fi
  if [ ! -x "$BIN" ] && [ -x "$BIN_DIR/debian" ] && [ -x /usr/bin/etcd ]; then echo /usr/bin/etcd; exit 0; fi
  echo "$BIN"
  exit 0
fi

if [ -n "${SEDIMENT_ETCD_BIN:-}" ]; then
  if [ -x "$SEDIMENT_ETCD_BIN" ]; then exit 0; fi
  echo "install-etcd: SEDIMENT_ETCD_BIN=$SEDIMENT_ETCD_BIN is not an executable file" >&2
  exit 1
fi
if [ -x "$BIN" ] && [ -x "$BIN_DIR/etcdctl" ]; then exit 0; fi
# An earlier run fell back to Debian's package (remove the marker to retry the build).
if [ -x "$BIN_DIR/debian" ] && [ -x /usr/bin/etcd ]; then exit 0; fi

build() {
  command -v go >/dev/null 2>&1 || { echo "install-etcd: the go command is needed to build etcd $ETCD_VERSION" >&2; return 1; }
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  cat >"$work/go.mod" <<MOD
module sediment.local/etcdbuild

go 1.24
MOD
  cat >"$work/tools.go" <<'SRC'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/server/v3"
)
SRC
  mkdir -p "$BIN_DIR"
  echo "install-etcd: building go.etcd.io/etcd/server/v3@$ETCD_VERSION and etcdctl into $BIN_DIR (a few minutes)"
  (
    cd "$work"
    export GOFLAGS="${GOFLAGS:--buildvcs=false}"
    go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "go.etcd.io/etcd/etcdctl/v3@$ETCD_VERSION"
    go build -trimpath -o "$BIN_DIR/etcd.tmp" go.etcd.io/etcd/server/v3
    go build -trimpath -o "$BIN_DIR/etcdctl.tmp" go.etcd.io/etcd/etcdctl/v3
  )
  mv "$BIN_DIR/etcd.tmp" "$BIN"
  mv "$BIN_DIR/etcdctl.tmp" "$BIN_DIR/etcdctl"
}

if build; then
  "$BIN" --version | head -n 1
  exit 0
fi

echo "install-etcd: building etcd $ETCD_VERSION failed; falling back to Debian's etcd-server (etcd 3.4)" >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-etcd: no apt-get either: install etcd 3.4+ and set SEDIMENT_ETCD_BIN" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client
mkdir -p "$BIN_DIR"
# A marker: --print-path names /usr/bin/etcd while the pinned build is absent.
ln -sf /usr/bin/etcd "$BIN_DIR/debian"
/usr/bin/etcd --version | head -n 1
