#!/usr/bin/env bash
# Installs the compatibility matrix's clients that come from neither Debian nor
# npm (test/compat/README.md):
#   franz-go      downloads the Go modules of test/compat/franz-go (go.sum pinned)
#                 and builds the program into the cache
#   kafka-python    a venv with test/compat/python/requirements-kafka-python.txt (3.0.x)
#   kafka-python-2  a venv with test/compat/python/requirements-kafka-python-2.txt (2.0.2)
#   confluent-kafka a venv with test/compat/python/requirements-confluent-kafka.txt (the
#                   PyPI wheel, which bundles a current librdkafka)
#   kafka-javascript  npm @confluentinc/kafka-javascript (pinned in
#                   test/compat/kafka-javascript/pinned/), built from source: its prebuilt
#                   binary comes from GitHub, but its npm tarball ships librdkafka's source
# Idempotent: each part keeps a stamp (hash of its inputs) and is skipped when
# the stamp matches. `install.sh [franz-go|kafka-python|kafka-python-2|confluent-kafka|kafka-javascript]...` installs only those
# parts (default: all). Prints "<part> <path>" per part on stdout.
#
# Where things go (test/compat/paths.ts resolves the same way):
#   $SEDIMENT_COMPAT_CACHE                     if set
#   /work/cache/compat                         if /work/cache exists
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sediment/compat   otherwise
# Needs: go (1.26+, as franz-go v1.22 requires) and python3 with venv (Debian: python3-venv);
# kafka-javascript needs a C/C++ toolchain, Node's headers (/usr/include/node, Debian's
# nodejs) and librdkafka's -dev libraries (Debian: build-essential pkg-config libssl-dev
# libsasl2-dev zlib1g-dev libzstd-dev liblz4-dev; .ci/run installs them).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -n "${SEDIMENT_COMPAT_CACHE:-}" ]]; then
  cache="$SEDIMENT_COMPAT_CACHE"
elif [[ -d /work/cache ]]; then
  cache="/work/cache/compat"
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/sediment/compat"
fi
mkdir -p "$cache"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

install_franz_go() {
  local src="$here/franz-go" out="$cache/franz-go"
  local bin="$out/compat-franz-go" stamp="$out/.installed"
  if ! command -v go >/dev/null 2>&1; then
    echo "install.sh: franz-go: 'go' not found on PATH (Go 1.26+ is needed)" >&2
    return 1
  fi
  local sum
  sum="$(hash_of "$src/go.mod" "$src/go.sum" "$src/main.go")-$(go env GOVERSION)"
  if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$sum" ]]; then
    echo "franz-go $bin"
    return 0
  fi
  echo "install.sh: franz-go: downloading modules and building into $out" >&2
  mkdir -p "$out"
  # Called from `||`, where errexit is off: every step checks its own status.
  # GOTOOLCHAIN=local: franz-go v1.22 needs Go 1.26; an older go says so instead of fetching a toolchain.
  if ! (cd "$src" && export GOFLAGS=-mod=mod GOTOOLCHAIN=local && go mod download && go build -o "$bin.tmp" . && mv "$bin.tmp" "$bin"); then
    echo "install.sh: franz-go: module download or build failed (needs Go 1.26+ and the Go module proxy)" >&2
    return 1
  fi
  echo "$sum" > "$stamp"
  echo "franz-go $bin"
}

# install_python_venv <part name> <module> <check>: a venv at $cache/<part> from
# requirements-<part>.txt, up to date when its interpreter imports <module>, and
# accepted after install when it runs <check>.
install_python_venv() {
  local part="$1" module="$2" check="$3"
  local req="$here/python/requirements-$part.txt"
  local venv="$cache/$part" stamp="$cache/$part/.installed"
  local sum
  sum="$(hash_of "$req")"
  # Up to date: same requirements, and the venv's interpreter still imports kafka.
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" ]] && "$venv/bin/python" -c "import $module" >/dev/null 2>&1; then
    echo "$part $venv/bin/python"
    return 0
  fi
  # Debian's interpreter first (python3-venv), then whichever python3 is on PATH.
  local candidates=() python made=""
  [[ -x /usr/bin/python3 ]] && candidates+=(/usr/bin/python3)
  python="$(command -v python3 || true)"
  [[ -n "$python" && "$python" != /usr/bin/python3 ]] && candidates+=("$python")
  if [[ ${#candidates[@]} -eq 0 ]]; then
    echo "install.sh: $part: python3 not found" >&2
    return 1
  fi
  echo "install.sh: $part: creating $venv" >&2
  for python in "${candidates[@]}"; do
    rm -rf "$venv"
    if "$python" -m venv "$venv" >&2; then
      made="$python"
      break
    fi
  done
  if [[ -z "$made" ]]; then
    echo "install.sh: $part: 'python3 -m venv' failed with ${candidates[*]}; on Debian: apt-get install -y python3-venv" >&2
    rm -rf "$venv"
    return 1
  fi
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2; then
    echo "install.sh: $part: pip install -r $req failed (needs PyPI)" >&2
    return 1
  fi
  if ! "$venv/bin/python" -c "$check" >&2; then
    echo "install.sh: $part: installed, but its check failed: $check" >&2
    return 1
  fi
  echo "$sum" > "$stamp"
  echo "$part $venv/bin/python"
}

# @confluentinc/kafka-javascript from its npm tarball, compiled here. The package's
# install script is node-pre-gyp, which would download a prebuilt binary from GitHub;
# npm_config_build_from_source makes it build instead. Its default (static) build runs
# librdkafka's configure with --install-deps --source-deps-only, which downloads
# OpenSSL, zstd, ... sources; CKJS_LINKING=dynamic runs that configure with no flags,
# so librdkafka links the system's libssl, libsasl2, zlib, zstd and lz4 and nothing is
# fetched but the npm packages. node-gyp takes Node's headers from nodedir (/usr:
# /usr/include/node) rather than downloading them. No JOBS for node-gyp: its parallel
# make races the librdkafka configure action (seen: "No rule to make target config.h");
# librdkafka's own make runs -j inside that action anyway. librdkafka is installed next to the
# addon (build/deps, found through its rpath), all inside the cache directory.
install_kafka_javascript() {
  local src="$here/kafka-javascript/pinned" out="$cache/kafka-javascript"
  local stamp="$out/.installed"
  local check='const k = require("@confluentinc/kafka-javascript"); const v = require("@confluentinc/kafka-javascript/package.json").version; console.log("kafka-javascript", v, "librdkafka", k.librdkafkaVersion, "features", k.features.join(","))'
  local sum
  sum="$(hash_of "$src/package.json" "$src/package-lock.json")-node$(node -p 'process.versions.modules + "-" + process.arch')"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" ]] && (cd "$out" && node -e "$check") >/dev/null 2>&1; then
    echo "kafka-javascript $out/node_modules"
    return 0
  fi
  local nodedir="${npm_config_nodedir:-/usr}"
  if [[ ! -f "$nodedir/include/node/node.h" ]]; then
    echo "install.sh: kafka-javascript: Node's headers not found in $nodedir/include/node (Debian: nodejs ships them; or set npm_config_nodedir)" >&2
    return 1
  fi
  local tool
  for tool in cc c++ make pkg-config; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "install.sh: kafka-javascript: '$tool' not found (Debian: apt-get install -y build-essential pkg-config libssl-dev libsasl2-dev zlib1g-dev libzstd-dev liblz4-dev)" >&2
      return 1
    fi
  done
  echo "install.sh: kafka-javascript: building @confluentinc/kafka-javascript and its librdkafka from source into $out (minutes)" >&2
  rm -rf "$out"
  mkdir -p "$out"
  cp "$src/package.json" "$src/package-lock.json" "$out/"
  if ! (cd "$out" && export CKJS_LINKING=dynamic npm_config_build_from_source=true npm_config_nodedir="$nodedir" && npm ci --no-audit --no-fund --foreground-scripts >&2); then
    echo "install.sh: kafka-javascript: npm ci (download from the npm registry, or the librdkafka/addon build) failed; the log is above" >&2
    return 1
  fi
  if ! (cd "$out" && node -e "$check") >&2; then
    echo "install.sh: kafka-javascript: built, but it does not load: $check" >&2
    return 1
  fi
  echo "$sum" > "$stamp"
  echo "kafka-javascript $out/node_modules"
}

parts=("$@")
if [[ ${#parts[@]} -eq 0 ]]; then parts=(franz-go kafka-python kafka-python-2 confluent-kafka kafka-javascript); fi
status=0
for part in "${parts[@]}"; do
  case "$part" in
    franz-go) install_franz_go || status=1 ;;
    kafka-python | kafka-python-2)
      install_python_venv "$part" kafka 'import kafka, kafka.codec as c; assert c.has_snappy() and c.has_lz4() and c.has_zstd(), "codec modules missing"' || status=1 ;;
    confluent-kafka)
      install_python_venv "$part" confluent_kafka 'import confluent_kafka as c; print("confluent-kafka", c.__version__, "librdkafka", c.libversion()[0])' || status=1 ;;
    kafka-javascript) install_kafka_javascript || status=1 ;;
    *) echo "install.sh: unknown part '$part' (franz-go, kafka-python, kafka-python-2, confluent-kafka, kafka-javascript)" >&2; status=2 ;;
  esac
done
exit $status
