#!/usr/bin/env bash
# Installs the system packages vigil needs when they are missing (Debian/Ubuntu):
#   libhyperscan-dev, pkg-config  the default prefilter links the system Hyperscan
#                                 (build with --no-default-features on machines without it);
#   make, gcc                     jemalloc, vigil's allocator, is built from its bundled source;
#   libmagic1                     filemagic/file.magic and fileinfo magic, loaded at run time
#                                 (without it those rules are refused with a warning);
#   tshark                        the decode agreement test compares vigil's counters with it
#                                 (only with --tests; it brings libpcap, which BPF filters use);
#   iproute2, iptables, ethtool   the live capture and inline tests build network namespaces,
#                                 an NFQUEUE rule and offload-free veth pairs (only with --tests);
#   redis-server                  the EVE-to-Redis tests start their own server (only with --tests);
#   prometheus                    its promtool checks the metrics endpoint's text (only with --tests);
#   default-jre-headless, maven   the EVE-to-Kafka test runs Apache Kafka's broker from its Maven
#                                 jars (only with --tests; scripts/kafka-jars.sh fetches them).
set -euo pipefail
missing=()
[ -f /usr/include/hs/hs.h ] || missing+=(libhyperscan-dev)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
ldconfig -p 2>/dev/null | grep -q 'libmagic\.so\.1' || missing+=(libmagic1)
if [ "${1:-}" = "--tests" ]; then
    command -v tshark >/dev/null 2>&1 || missing+=(tshark)
    command -v ip >/dev/null 2>&1 || missing+=(iproute2)
    command -v iptables >/dev/null 2>&1 || [ -x /usr/sbin/iptables ] || missing+=(iptables)
    command -v ethtool >/dev/null 2>&1 || [ -x /usr/sbin/ethtool ] || missing+=(ethtool)
    command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
    command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
    command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
    command -v mvn >/dev/null 2>&1 || missing+=(maven)
fi
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    echo "installing ${missing[*]}..."
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
