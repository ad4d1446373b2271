#!/usr/bin/env bash
# Fetches Apache Kafka's broker jars (KRaft mode, packaging/kafka-broker/pom.xml) from Maven
# Central into target/kafka-broker/lib, once, for the EVE-to-Kafka test
# (`cargo test -p vigil-output --features kafka --test kafka`); prints that directory.
# Needs java and mvn (scripts/deps.sh --tests installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
lib="$PWD/target/kafka-broker/lib"
if [ ! -f "$lib/.complete" ]; then
    mvn -q -B -Dstyle.color=never -f packaging/kafka-broker/pom.xml dependency:copy-dependencies -DoutputDirectory="$lib" >&2
    touch "$lib/.complete"
fi
echo "$lib"
