#!/usr/bin/env bash
# Runs vigil's whole test suite. Installs the system packages the tests need
# (tshark, to cross-check decode counters) when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tshark >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    echo "installing tshark (used by the decode agreement test)..."
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tshark >/dev/null
fi

cargo test --workspace --locked "$@"
