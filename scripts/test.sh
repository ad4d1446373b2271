#!/usr/bin/env bash
# Runs vigil's whole test suite. Installs the system packages the tests need
# (tshark, to cross-check decode counters) when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# tshark: the decode agreement test compares with it. libhyperscan-dev: the
# default prefilter links the system Hyperscan (build with
# --no-default-features on machines without it).
missing=()
command -v tshark >/dev/null 2>&1 || missing+=(tshark)
[ -f /usr/include/hs/hs.h ] || missing+=(libhyperscan-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    echo "installing ${missing[*]}..."
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cargo test --workspace --locked "$@"
