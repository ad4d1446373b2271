//! `-V` and `--build-info`, laid out as Suricata's so the tools that read
//! them (suricata-update: the version line, `Features:`, the `--prefix`,
//! `--sysconfdir`, `--localstatedir` and `--datarootdir` lines) find what
//! they look for. The version line names the Suricata release vigil
//! follows first, so a tool choosing rules by version chooses 8.0's, then
//! vigil's own version.

pub use vigil_engine::SURICATA_VERSION;

/// The prefix vigil's default paths hang from (`default-rule-path`,
/// `classification-file`, ... in its built-in configuration).
const PREFIX: &str = "/usr/local";

pub fn version_line() -> String {
    format!("This is Suricata version {SURICATA_VERSION} compatible (vigil {})", env!("CARGO_PKG_VERSION"))
}

/// What this build can do, under Suricata's feature names where vigil has
/// the same feature (`HAVE_LUA`: Lua rules, transforms and output
/// scripts). libmagic is
/// loaded at run time: `MAGIC` is claimed only where it loads here.
/// `LIBNET1.1` is how Suricata says it can send `reject` refusals; vigil
/// sends them itself (raw sockets, or layer 2 on a bridge).
fn features() -> Vec<&'static str> {
    let mut f = vec![
        "NFQ",
        "AF_PACKET",
        "HAVE_PACKET_FANOUT",
        "PCRE_JIT",
        "HAVE_LUA",
        "HAVE_JA3",
        "HAVE_JA4",
        "TLS",
        "RUST",
        "LIBNET1.1",
    ];
    if cfg!(target_pointer_width = "64") {
        f.push("POPCNT64");
    }
    if vigil_capture::magic_available().is_ok() {
        f.push("MAGIC");
    }
    f
}

pub fn build_info() -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let endian = if cfg!(target_endian = "little") { "Little-endian" } else { "Big-endian" };
    let bits = if cfg!(target_pointer_width = "64") { "64-bits" } else { "32-bits" };
    let rows = [
        ("AF_PACKET support", yes(true)),
        ("NFQueue support", yes(true)),
        ("PF_RING support", yes(false)),
        ("DPDK support", yes(false)),
        ("Unix socket enabled", yes(true)),
        ("Detection enabled", yes(true)),
        ("Hyperscan support", yes(cfg!(feature = "hyperscan"))),
        ("Libmagic support", yes(vigil_capture::magic_available().is_ok())),
        ("Lua support", yes(false)),
        ("JA3 support", yes(true)),
        ("JA4 support", yes(false)),
        ("GeoIP2 support", yes(false)),
        ("jemalloc", yes(cfg!(feature = "jemalloc"))),
    ];
    let mut out = String::new();
    out.push_str(&version_line());
    out.push('\n');
    out.push_str(&format!("Features: {} \n", features().join(" ")));
    out.push_str(&format!("{bits}, {endian} architecture\n\nvigil Configuration:\n"));
    for (k, v) in rows {
        out.push_str(&format!("  {:<41}{v}\n", format!("{k}:")));
    }
    out.push_str("\nGeneric build parameters:\n");
    out.push_str(&format!("  {:<41}{PREFIX}\n", "Installation prefix:"));
    out.push_str(&format!("  {:<41}{PREFIX}/etc/suricata/\n", "Configuration directory:"));
    out.push_str(&format!("  {:<41}{PREFIX}/var/log/suricata/\n\n", "Log directory:"));
    for (flag, dir) in
        [("--prefix", ""), ("--sysconfdir", "/etc"), ("--localstatedir", "/var"), ("--datarootdir", "/share")]
    {
        out.push_str(&format!("  {flag:<41}{PREFIX}{dir}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What suricata-update reads: the first version number on the line,
    /// the feature words, and the four directory flags.
    #[test]
    fn tools_find_what_they_read() {
        let v = version_line();
        let first = v.split(|c: char| !(c.is_ascii_digit() || c == '.')).find(|w| w.contains('.')).unwrap();
        assert_eq!(first, SURICATA_VERSION);
        let info = build_info();
        assert!(info.starts_with("This is Suricata version 8.0.6 compatible (vigil "));
        let features = info.lines().find(|l| l.starts_with("Features:")).unwrap();
        assert!(features.split_whitespace().any(|w| w == "AF_PACKET"));
        assert!(features.split_whitespace().any(|w| w == "HAVE_LUA"));
        let magic = vigil_capture::magic_available().is_ok();
        assert_eq!(features.split_whitespace().any(|w| w == "MAGIC"), magic);
        for flag in ["--prefix", "--sysconfdir", "--localstatedir", "--datarootdir"] {
            let line = info.lines().map(str::trim).find(|l| l.starts_with(flag)).unwrap();
            assert!(line.split_whitespace().last().unwrap().starts_with("/usr/local"), "{line}");
        }
    }
}
