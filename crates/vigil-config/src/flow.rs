//! `flow` (table size and memcap) and `flow-timeouts` (per protocol and state).

use crate::read::{Errors, Section};

/// `flow`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    /// `flow.memcap`: bytes the flow table may use. Stock 128 MiB
    /// (Suricata's built-in default is 32 MiB).
    pub memcap: u64,
    /// `flow.hash-size`: rows of the flow hash. Default 65536.
    pub hash_size: u32,
    /// `flow.prealloc`: flows allocated at start. Default 10000.
    pub prealloc: u32,
    /// `flow.emergency-recovery`: the share of flows (percent, 1-100) that
    /// must be pruned before emergency mode ends. Default 30.
    pub emergency_recovery: u8,
}

impl Default for Flow {
    /// The stock `suricata.yaml` values.
    fn default() -> Self {
        Flow { memcap: 128 * 1024 * 1024, ..Flow::builtin() }
    }
}

impl Flow {
    /// Suricata's values when the keys are absent.
    pub(crate) fn builtin() -> Self {
        Flow { memcap: 32 * 1024 * 1024, hash_size: 65536, prealloc: 10000, emergency_recovery: 30 }
    }

    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Flow {
        let d = Flow::builtin();
        let uint = |key: &str, max: u64, errs: &mut Errors| {
            sec.convert(key, errs, |s| crate::value::parse_uint_decimal(s, max))
        };
        Flow {
            memcap: sec.size_max("memcap", u64::MAX, errs).unwrap_or(d.memcap),
            hash_size: uint("hash-size", u64::from(u32::MAX), errs).map_or(d.hash_size, |v| v as u32),
            prealloc: uint("prealloc", u64::from(u32::MAX), errs).map_or(d.prealloc, |v| v as u32),
            emergency_recovery: match sec.int_in("emergency-recovery", 1, 100, errs) {
                Some(v) => v as u8,
                None => d.emergency_recovery,
            },
        }
    }
}

/// Timeouts, in seconds, for one protocol's flows in each state, and the
/// shorter ones used in emergency mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtoTimeouts {
    pub new: u32,
    pub established: u32,
    pub closed: u32,
    pub bypassed: u32,
    pub emergency_new: u32,
    pub emergency_established: u32,
    pub emergency_closed: u32,
    pub emergency_bypassed: u32,
}

/// `flow-timeouts`: `default` covers protocols without their own entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowTimeouts {
    pub default: ProtoTimeouts,
    pub tcp: ProtoTimeouts,
    pub udp: ProtoTimeouts,
    pub icmp: ProtoTimeouts,
}

impl Default for FlowTimeouts {
    /// The stock `suricata.yaml` values (UDP and ICMP have no `closed`
    /// there and keep the built-in 0).
    fn default() -> Self {
        let b = FlowTimeouts::builtin();
        FlowTimeouts {
            default: b.default,
            tcp: ProtoTimeouts {
                new: 60,
                established: 600,
                closed: 60,
                bypassed: 100,
                emergency_new: 5,
                emergency_established: 100,
                emergency_closed: 10,
                emergency_bypassed: 50,
            },
            udp: b.udp,
            icmp: b.icmp,
        }
    }
}

impl FlowTimeouts {
    /// Suricata's built-in values (`flow-private.h`).
    pub(crate) fn builtin() -> Self {
        let generic = ProtoTimeouts {
            new: 30,
            established: 300,
            closed: 0,
            bypassed: 100,
            emergency_new: 10,
            emergency_established: 100,
            emergency_closed: 0,
            emergency_bypassed: 50,
        };
        FlowTimeouts { default: generic, tcp: ProtoTimeouts { closed: 10, ..generic }, udp: generic, icmp: generic }
    }

    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> FlowTimeouts {
        let b = FlowTimeouts::builtin();
        let proto = |name: &str, d: ProtoTimeouts, errs: &mut Errors| {
            let s = sec.child(name);
            let mut get = |key: &str, dv: u32| {
                s.convert(key, errs, |v| crate::value::parse_uint_decimal(v, u64::from(u32::MAX)))
                    .map_or(dv, |v| v as u32)
            };
            ProtoTimeouts {
                new: get("new", d.new),
                established: get("established", d.established),
                closed: get("closed", d.closed),
                bypassed: get("bypassed", d.bypassed),
                emergency_new: get("emergency-new", d.emergency_new),
                emergency_established: get("emergency-established", d.emergency_established),
                emergency_closed: get("emergency-closed", d.emergency_closed),
                emergency_bypassed: get("emergency-bypassed", d.emergency_bypassed),
            }
        };
        FlowTimeouts {
            default: proto("default", b.default, errs),
            tcp: proto("tcp", b.tcp, errs),
            udp: proto("udp", b.udp, errs),
            icmp: proto("icmp", b.icmp, errs),
        }
    }
}
