#!/usr/bin/env bash
# Installs the Apache Kafka reference broker and CLI tools (jars only, from Maven
# Central) used by the compatibility tests and the side-by-side benchmark.
#
#   bash test/support/install-kafka.sh            the reference version (the pom's kafka.version)
#   bash test/support/install-kafka.sh 4.4.0      another release, in its own directory (the
#                                                 compat matrix's other Java client/tool rows)
#
# Idempotent: a second run with the same pom finds the stamp file and exits.
# Prints the library directory on its last line, ready for `java -cp "<dir>/*"`.
#
# Where the jars go (test/support/tools.ts resolves the same way):
#   $SEDIMENT_KAFKA_LIBS                       if set
#   /work/cache/kafka/<version>/libs           if /work/cache exists
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sediment/kafka/<version>/libs   otherwise
# Needs: java (17+) and mvn on PATH (Debian: apt-get install openjdk-17-jre-headless maven).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/kafka-ref/pom.xml"
reference="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom" | head -n1)"
version="${1:-$reference}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "install-kafka: '$version' is not a Kafka release number (like 4.4.0)" >&2
  exit 1
fi
if [[ -z "$reference" ]]; then
  echo "install-kafka: cannot read <kafka.version> from $pom" >&2
  exit 1
fi

if [[ -n "${SEDIMENT_KAFKA_LIBS:-}" && "$version" == "$reference" ]]; then
  libs="$SEDIMENT_KAFKA_LIBS"
elif [[ -d /work/cache ]]; then
  libs="/work/cache/kafka/$version/libs"
else
  libs="${XDG_CACHE_HOME:-$HOME/.cache}/sediment/kafka/$version/libs"
fi

stamp="$libs/.installed"
pom_sum="$(sha256sum "$pom" | cut -d' ' -f1)-$version"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$pom_sum" ]]; then
  echo "install-kafka: Kafka $version already installed" >&2
  echo "$libs"
  exit 0
fi

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "install-kafka: '$tool' not found; on Debian: apt-get install -y openjdk-17-jre-headless maven" >&2
    exit 1
  fi
done

echo "install-kafka: resolving Kafka $version into $libs" >&2
tmp="$libs.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
mvn -B -q -Dstyle.color=never -f "$pom" -Dkafka.version="$version" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$tmp" >&2
if ! ls "$tmp"/kafka_2.13-"$version".jar >/dev/null 2>&1; then
  echo "install-kafka: kafka_2.13-$version.jar missing after mvn run" >&2
  exit 1
fi
echo "$pom_sum" > "$tmp/.installed"
rm -rf "$libs"
mkdir -p "$(dirname "$libs")"
mv "$tmp" "$libs"
trap - EXIT
echo "install-kafka: done" >&2
echo "$libs"
