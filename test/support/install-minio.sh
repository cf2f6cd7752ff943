#!/usr/bin/env bash
# Builds the MinIO server that the object-store suites run against, from its Go
# module at a pinned version, into a cache directory. A no-op when the binary
# is already there (or SEDIMENT_MINIO_BIN points at one).
#
# The Go module proxy serves no RELEASE.* tag of github.com/minio/minio here
# (every one tried answered 403 "not available"), but it serves the module's
# pseudo-versions; this one is the module's `latest` as of 2026-02-12. The
# first build takes about 4 minutes on 2 cores and ~150 MB of disk.
#
#   bash test/support/install-minio.sh               # build if missing
#   bash test/support/install-minio.sh --print-path  # print where the binary is (or goes)
set -euo pipefail

MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
CACHE_DIR="${SEDIMENT_CACHE_DIR:-/work/cache}"
BIN_DIR="$CACHE_DIR/bin/minio-$MINIO_VERSION"
BIN="$BIN_DIR/minio"

if [ "${1:-}" = "--print-path" ]; then
  echo "${SEDIMENT_MINIO_BIN:-$BIN}"
  exit 0
fi

if [ -n "${SEDIMENT_MINIO_BIN:-}" ]; then
  if [ -x "$SEDIMENT_MINIO_BIN" ]; then exit 0; fi
  echo "install-minio: SEDIMENT_MINIO_BIN=$SEDIMENT_MINIO_BIN is not an executable file" >&2
  exit 1
fi
if [ -x "$BIN" ]; then exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-minio: the go command is needed to build MinIO ($MINIO_MODULE@$MINIO_VERSION)" >&2
  exit 1
fi
mkdir -p "$BIN_DIR"
echo "install-minio: building $MINIO_MODULE@$MINIO_VERSION into $BIN_DIR (a few minutes)"
GOFLAGS="${GOFLAGS:--buildvcs=false}" GOBIN="$BIN_DIR" go install "$MINIO_MODULE@$MINIO_VERSION"
"$BIN" --version | head -n 1
