#!/usr/bin/env bash
# Runs vigil's whole test suite, installing the system packages it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh --tests
cargo test --workspace --locked "$@"
# EVE to Kafka (a feature of its own: it builds librdkafka) against a real broker.
cargo test -p vigil-output --features kafka --test kafka --locked "$@"
# The build without Hyperscan (for machines that lack it) must keep compiling.
cargo check -p vigil --no-default-features --locked
# The fuzz targets (a crate of their own) must keep compiling against the parsers they drive.
cargo check --manifest-path fuzz/Cargo.toml --locked
