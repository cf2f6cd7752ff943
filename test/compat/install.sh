#!/usr/bin/env bash
# Installs the compatibility matrix's clients that come from neither Debian nor
# npm (test/compat/README.md):
#   franz-go      downloads the Go modules of test/compat/franz-go (go.sum pinned)
#                 and builds the program into the cache
#   kafka-python    a venv with test/compat/python/requirements-kafka-python.txt (3.0.x)
#   kafka-python-2  a venv with test/compat/python/requirements-kafka-python-2.txt (2.0.2)
#   confluent-kafka a venv with test/compat/python/requirements-confluent-kafka.txt (the
#                   PyPI wheel, which bundles a current librdkafka)
# Idempotent: each part keeps a stamp (hash of its inputs) and is skipped when
# the stamp matches. `install.sh [franz-go|kafka-python|kafka-python-2]...` installs only those
# parts (default: all). Prints "<part> <path>" per part on stdout.
#
# Where things go (test/compat/paths.ts resolves the same way):
#   $SEDIMENT_COMPAT_CACHE                     if set
#   /work/cache/compat                         if /work/cache exists
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sediment/compat   otherwise
# Needs: go (1.26+, as franz-go v1.22 requires) and python3 with venv (Debian: python3-venv).
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

parts=("$@")
if [[ ${#parts[@]} -eq 0 ]]; then parts=(franz-go kafka-python kafka-python-2 confluent-kafka); fi
status=0
for part in "${parts[@]}"; do
  case "$part" in
    franz-go) install_franz_go || status=1 ;;
    kafka-python | kafka-python-2)
      install_python_venv "$part" kafka 'import kafka, kafka.codec as c; assert c.has_snappy() and c.has_lz4() and c.has_zstd(), "codec modules missing"' || status=1 ;;
    confluent-kafka)
      install_python_venv "$part" confluent_kafka 'import confluent_kafka as c; print("confluent-kafka", c.__version__, "librdkafka", c.libversion()[0])' || status=1 ;;
    *) echo "install.sh: unknown part '$part' (franz-go, kafka-python, kafka-python-2, confluent-kafka)" >&2; status=2 ;;
  esac
done
exit $status
