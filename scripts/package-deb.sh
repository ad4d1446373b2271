#!/usr/bin/env bash
# Builds vigil's Debian package: the binary, a configuration for the service
# (/etc/vigil/vigil.yaml, the built-in one with Debian's paths), a systemd
# unit, logrotate's configuration, /etc/default/vigil and the man page.
#   scripts/package-deb.sh [BINARY] [OUTDIR]
# BINARY defaults to target/release/vigil (built when missing); OUTDIR to target/deb.
# Needs dpkg-deb (Debian's dpkg); prints the package's path.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/vigil}
out=${2:-target/deb}
if [ ! -x "$bin" ]; then
    cargo build --release --locked -p vigil >&2
fi
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT
src=packaging/deb
# Debug symbols stay out of the package.
install -D -s -m 0755 "$bin" "$stage/usr/bin/vigil"
install -d "$stage/etc/vigil"
"$bin" --dump-default-config |
    sed -e 's|^default-log-dir: .*|default-log-dir: /var/log/vigil/|' \
        -e 's|^default-rule-path: .*|default-rule-path: /var/lib/vigil/rules|' \
        -e 's|/usr/local/etc/suricata/|/etc/vigil/|' >"$stage/etc/vigil/vigil.yaml"
install -D -m 0644 "$src/vigil.service" "$stage/lib/systemd/system/vigil.service"
install -D -m 0644 "$src/vigil.logrotate" "$stage/etc/logrotate.d/vigil"
install -D -m 0644 "$src/vigil.default" "$stage/etc/default/vigil"
install -d "$stage/usr/share/man/man8"
gzip -9n <"$src/vigil.8" >"$stage/usr/share/man/man8/vigil.8.gz"
install -d "$stage/usr/share/doc/vigil"
gzip -9n <README.md >"$stage/usr/share/doc/vigil/README.md.gz"
install -d "$stage/DEBIAN"
install -m 0755 "$src/postinst" "$src/prerm" "$src/postrm" "$stage/DEBIAN/"
printf '/etc/vigil/vigil.yaml\n/etc/logrotate.d/vigil\n/etc/default/vigil\n' >"$stage/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CONTROL
Package: vigil
Version: $version
Architecture: $arch
Maintainer: vigil developers <vigil@localhost>
Installed-Size: $size
Depends: libc6, libhyperscan5 | libvectorscan5, libmagic1, passwd
Recommends: logrotate
Section: net
Priority: optional
Homepage: https://localhost/vigil
Description: network intrusion detection and prevention engine
 vigil reads traffic from capture files, live interfaces or an NFQUEUE
 queue, matches Suricata and Snort syntax rules and writes
 Suricata-compatible EVE JSON. It runs as a systemd service (vigil.service)
 capturing through AF_PACKET or inline through NFQUEUE.
CONTROL
mkdir -p "$out"
deb="$out/vigil_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$stage" "$deb" >&2
echo "$deb"
