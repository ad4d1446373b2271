//! `defrag` (IP reassembly limits and timeout) and `host-os-policy` (which
//! target operating system each address block runs, for overlap policies).

use crate::read::{Errors, Section};
use std::net::IpAddr;

/// `defrag`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Defrag {
    /// `defrag.memcap`: bytes fragments and trackers may use. Stock 32 MiB
    /// (built-in 16 MiB).
    pub memcap: u64,
    /// `defrag.hash-size`: rows of the tracker hash. Stock 65536 (built-in 4096).
    pub hash_size: u32,
    /// `defrag.trackers`: datagrams reassembled at once. Default 65535.
    pub trackers: u32,
    /// `defrag.max-frags`: fragments held at once. Default 65535.
    pub max_frags: u32,
    /// `defrag.prealloc`. Default true.
    pub prealloc: bool,
    /// `defrag.timeout`: seconds a datagram may take to complete (1-86400).
    /// Default 60.
    pub timeout: u32,
}

impl Default for Defrag {
    /// The stock `suricata.yaml` values.
    fn default() -> Self {
        Defrag { memcap: 32 * 1024 * 1024, hash_size: 65536, ..Defrag::builtin() }
    }
}

impl Defrag {
    /// Suricata's values when the keys are absent (`defrag-hash.h`, `defrag.c`).
    pub(crate) fn builtin() -> Self {
        Defrag {
            memcap: 16 * 1024 * 1024,
            hash_size: 4096,
            trackers: 65535,
            max_frags: 65535,
            prealloc: true,
            timeout: 60,
        }
    }

    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Defrag {
        let d = Defrag::builtin();
        let uint = |key: &str, errs: &mut Errors| {
            sec.convert(key, errs, |s| crate::value::parse_uint_decimal(s, u64::from(u32::MAX)))
        };
        // Suricata treats 0 trackers or frags as "use the default".
        let nonzero = |v: Option<u64>, dv: u32| v.filter(|&v| v != 0).map_or(dv, |v| v as u32);
        Defrag {
            memcap: sec.size_max("memcap", u64::MAX, errs).unwrap_or(d.memcap),
            hash_size: nonzero(uint("hash-size", errs), d.hash_size),
            trackers: nonzero(uint("trackers", errs), d.trackers),
            max_frags: nonzero(uint("max-frags", errs), d.max_frags),
            prealloc: sec.bool("prealloc", d.prealloc, errs),
            timeout: sec.int_in("timeout", 1, 86_400, errs).map_or(d.timeout, |v| v as u32),
        }
    }
}

/// A host operating system, as `host-os-policy` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OsPolicy {
    Bsd,
    BsdRight,
    OldLinux,
    Linux,
    OldSolaris,
    Solaris,
    Hpux10,
    Hpux11,
    Irix,
    Macos,
    Windows,
    Vista,
    Windows2k3,
    First,
    Last,
}

impl OsPolicy {
    const NAMES: &'static [(&'static str, OsPolicy)] = &[
        ("bsd", OsPolicy::Bsd),
        ("bsd-right", OsPolicy::BsdRight),
        ("old-linux", OsPolicy::OldLinux),
        ("linux", OsPolicy::Linux),
        ("old-solaris", OsPolicy::OldSolaris),
        ("solaris", OsPolicy::Solaris),
        ("hpux10", OsPolicy::Hpux10),
        ("hpux11", OsPolicy::Hpux11),
        ("irix", OsPolicy::Irix),
        ("macos", OsPolicy::Macos),
        ("windows", OsPolicy::Windows),
        ("vista", OsPolicy::Vista),
        ("windows2k3", OsPolicy::Windows2k3),
        ("first", OsPolicy::First),
        ("last", OsPolicy::Last),
    ];

    pub fn parse(s: &str) -> Option<OsPolicy> {
        Self::NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)).map(|&(_, p)| p)
    }

    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, p)| *p == self).map_or("", |(n, _)| n)
    }
}

/// An address block: an address and how many leading bits of it count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl Cidr {
    /// `192.0.2.0/24`, `2001:db8::/32`, or a bare address (a host).
    pub fn parse(s: &str) -> Result<Cidr, String> {
        let s = s.trim();
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a.trim().parse().map_err(|_| format!("expected an address or address/prefix, got {s:?}"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            None => max,
            Some(p) => match p.trim().parse::<u8>() {
                Ok(v) if v <= max => v,
                _ => return Err(format!("prefix length must be 0-{max}, got {p:?}")),
            },
        };
        Ok(Cidr { addr, prefix })
    }

    /// True when `ip` lies in the block (never across address families).
    pub fn contains(&self, ip: IpAddr) -> bool {
        vigil_types::in_block(self.addr, self.prefix, ip)
    }
}

/// `host-os-policy`: for each OS named, the address blocks that run it, in
/// file order. Lists that are empty are left out.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HostOsPolicy {
    pub entries: Vec<(OsPolicy, Vec<Cidr>)>,
}

impl HostOsPolicy {
    /// The stock `suricata.yaml` value: every IPv4 host runs Windows.
    pub fn stock() -> Self {
        HostOsPolicy {
            entries: vec![(
                OsPolicy::Windows,
                vec![Cidr { addr: IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), prefix: 0 }],
            )],
        }
    }

    /// The OS of `ip` by longest-prefix match, as Suricata's host table
    /// answers it; `None` when no block holds it.
    pub fn lookup(&self, ip: IpAddr) -> Option<OsPolicy> {
        let mut best: Option<(u8, OsPolicy)> = None;
        for (os, blocks) in &self.entries {
            for b in blocks.iter().filter(|b| b.contains(ip)) {
                if best.is_none_or(|(p, _)| b.prefix > p) {
                    best = Some((b.prefix, *os));
                }
            }
        }
        best.map(|(_, os)| os)
    }

    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> HostOsPolicy {
        let mut entries = Vec::new();
        for child in sec.children() {
            let Some(node) = child.node else { continue };
            let Some(os) = OsPolicy::parse(node.name()) else {
                sec.error(node.name(), errs, "unknown host OS policy (bsd, bsd-right, old-linux, linux, old-solaris, solaris, hpux10, hpux11, irix, macos, windows, vista, windows2k3)");
                continue;
            };
            let mut blocks = Vec::new();
            let items: Vec<Section<'_>> = if node.is_sequence() {
                child.children().collect()
            } else if node.value().is_some() {
                // A single address written without brackets.
                vec![child.clone()]
            } else {
                Vec::new()
            };
            for item in items {
                let Some((v, n)) = item.own_scalar(errs) else { continue };
                // Suricata also accepts a comma-separated string.
                for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    match Cidr::parse(part) {
                        Ok(c) => blocks.push(c),
                        Err(reason) => errs.push(crate::error::ConfigError::key(
                            n.value_position().clone(),
                            item.path.clone(),
                            reason,
                        )),
                    }
                }
            }
            if !blocks.is_empty() {
                entries.push((os, blocks));
            }
        }
        HostOsPolicy { entries }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_parse_and_contains() {
        let c = Cidr::parse("192.168.1.0/24").unwrap();
        assert!(c.contains("192.168.1.77".parse().unwrap()));
        assert!(!c.contains("192.168.2.1".parse().unwrap()));
        assert!(!c.contains("::1".parse().unwrap()));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains("8.8.8.8".parse().unwrap()));
        assert!(Cidr::parse("10.0.0.0/7").unwrap().contains("11.1.1.1".parse().unwrap()));
        assert_eq!(Cidr::parse("::1").unwrap().prefix, 128);
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert!(Cidr::parse("nope").is_err());
    }

    #[test]
    fn longest_prefix_wins() {
        let p = HostOsPolicy {
            entries: vec![
                (OsPolicy::Windows, vec![Cidr::parse("0.0.0.0/0").unwrap()]),
                (OsPolicy::Linux, vec![Cidr::parse("10.1.0.0/16").unwrap()]),
            ],
        };
        assert_eq!(p.lookup("10.1.2.3".parse().unwrap()), Some(OsPolicy::Linux));
        assert_eq!(p.lookup("10.2.2.3".parse().unwrap()), Some(OsPolicy::Windows));
        assert_eq!(p.lookup("2001:db8::1".parse().unwrap()), None);
    }
}
