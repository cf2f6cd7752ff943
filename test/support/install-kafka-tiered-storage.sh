#!/usr/bin/env bash
# Installs the remote storage manager Apache Kafka's own tiered-storage tests and its
# documented quick start use, LocalTieredStorage (KIP-405 on a local directory), for the
# Kafka side of `npm run bench:tiering`: the test jar of org.apache.kafka:kafka-storage,
# as published on Maven Central (classifier "test"), fetched with mvn like
# install-kafka.sh's jars. The broker's other jars come from install-kafka.sh.
#
#   bash test/support/install-kafka-tiered-storage.sh          the reference version (kafka-ref/pom.xml)
#   bash test/support/install-kafka-tiered-storage.sh 4.3.1
#
# Idempotent (a stamp next to the jar). Prints the jar's path on its last line.
# Where it goes (test/support/tools.ts kafkaTieredStorageJar resolves the same way):
#   <the version's libs directory of install-kafka.sh>/../tiered-storage/
# Needs: mvn and jar (Debian: apt-get install -y maven openjdk-17-jdk-headless).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/kafka-ref/pom.xml"
reference="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom" | head -n1)"
version="${1:-$reference}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "install-kafka-tiered-storage: '$version' is not a Kafka release number (like 4.3.1)" >&2
  exit 1
fi

if [[ -n "${SEDIMENT_KAFKA_LIBS:-}" && "$version" == "$reference" ]]; then
  libs="$SEDIMENT_KAFKA_LIBS"
elif [[ -d /work/cache ]]; then
  libs="/work/cache/kafka/$version/libs"
else
  libs="${XDG_CACHE_HOME:-$HOME/.cache}/sediment/kafka/$version/libs"
fi
dir="$(dirname "$libs")/tiered-storage"
jar="$dir/kafka-storage-$version-test.jar"
stamp="$dir/.installed"
artifact="org.apache.kafka:kafka-storage:$version:jar:test"

if [[ -f "$jar" && -f "$stamp" && "$(cat "$stamp")" == "$artifact" ]]; then
  echo "install-kafka-tiered-storage: $artifact already installed" >&2
  echo "$jar"
  exit 0
fi
if ! command -v mvn >/dev/null 2>&1; then
  echo "install-kafka-tiered-storage: 'mvn' not found; on Debian: apt-get install -y maven" >&2
  exit 1
fi

echo "install-kafka-tiered-storage: fetching $artifact into $dir" >&2
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# dependency:copy checks the artifact's checksum from the repository as it downloads.
mvn -B -q -Dstyle.color=never dependency:copy -Dartifact="$artifact" -DoutputDirectory="$tmp" >&2
if ! jar tf "$tmp/kafka-storage-$version-test.jar" 2>/dev/null | grep -q 'org/apache/kafka/server/log/remote/storage/LocalTieredStorage.class'; then
  echo "install-kafka-tiered-storage: LocalTieredStorage.class not found in the fetched $artifact" >&2
  exit 1
fi
echo "$artifact" > "$tmp/.installed"
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
mv "$tmp" "$dir"
trap - EXIT
echo "install-kafka-tiered-storage: done" >&2
echo "$jar"
