//! `stream`: TCP session tracking and reassembly limits.

use crate::read::{Errors, Section};

/// `stream` (its `checksum-validation` is typed in [`crate::Checksum`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    /// `stream.memcap`: bytes of session state. Stock 64 MiB.
    pub memcap: u64,
    /// `stream.midstream`: pick up sessions whose handshake was missed. Default false.
    pub midstream: bool,
    /// `stream.async-oneside`: track sessions seen in one direction only. Default false.
    pub async_oneside: bool,
    /// `stream.bypass`: bypass a session once both directions reached the
    /// reassembly depth. Default false.
    pub bypass: bool,
    /// `stream.inline`: `Some(true)`/`Some(false)` as set, `None` for `auto`
    /// (inline exactly when running as an IPS). Stock `auto`.
    pub inline: Option<bool>,
    /// `stream.reassembly.memcap`: bytes of segment data. Stock 256 MiB.
    pub reassembly_memcap: u64,
    /// `stream.reassembly.depth`: bytes reassembled per direction (0: no limit). Stock 1 MiB.
    pub reassembly_depth: u64,
    /// `stream.reassembly.toserver-chunk-size`. Stock 2560.
    pub toserver_chunk_size: u32,
    /// `stream.reassembly.toclient-chunk-size`. Stock 2560.
    pub toclient_chunk_size: u32,
    /// `stream.reassembly.urgent.policy`: what becomes of the data a TCP
    /// urgent pointer marks. Suricata's default when absent is `inline`
    /// (the stock file says `oob`).
    pub urgent_policy: Urgent,
    /// `stream.reassembly.urgent.oob-limit-policy`: what becomes of a
    /// segment whose urgent pointer points past its data. Default `drop`.
    pub urgent_oob_limit: Urgent,
}

/// A TCP urgent data policy (`stream.reassembly.urgent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Urgent {
    /// The urgent data stays in the stream.
    Inline,
    /// The segment is dropped (IPS) and its data left out of the stream.
    Drop,
    /// The urgent byte (the one before the pointer, RFC 6093 3.1) is taken
    /// out of the stream; the data after it closes up.
    Oob,
    /// The urgent byte is left out of the stream as a hole.
    Gap,
}

impl Urgent {
    fn parse(v: &str, oob: bool) -> Option<Urgent> {
        match v {
            "inline" => Some(Urgent::Inline),
            "drop" => Some(Urgent::Drop),
            "oob" if oob => Some(Urgent::Oob),
            "gap" => Some(Urgent::Gap),
            _ => None,
        }
    }
}

impl Default for Stream {
    /// The stock `suricata.yaml` values (Suricata's built-ins when absent).
    fn default() -> Self {
        Stream {
            memcap: 64 << 20,
            midstream: false,
            async_oneside: false,
            bypass: false,
            inline: None,
            reassembly_memcap: 256 << 20,
            reassembly_depth: 1 << 20,
            toserver_chunk_size: 2560,
            toclient_chunk_size: 2560,
            urgent_policy: Urgent::Inline,
            urgent_oob_limit: Urgent::Drop,
        }
    }
}

impl Stream {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Stream {
        let d = Stream::default();
        let r = sec.child("reassembly");
        let chunk = |key: &str, errs: &mut Errors| r.int_in(key, 1, 1 << 24, errs).map(|v| v as u32);
        let u = r.child("urgent");
        let urgent = |key: &str, oob: bool, default: Urgent, errs: &mut Errors| match u.string(key, errs) {
            None => default,
            Some(v) => Urgent::parse(&v, oob).unwrap_or_else(|| {
                let allowed = if oob { "inline, drop, oob or gap" } else { "inline, drop or gap" };
                // Suricata refuses to start on it.
                u.error(key, errs, format!("invalid value '{v}' (expected {allowed})"));
                if let Some(e) = errs.pop() {
                    errs.push(e.fatal());
                }
                default
            }),
        };
        let urgent_policy = urgent("policy", true, d.urgent_policy, errs);
        let urgent_oob_limit = urgent("oob-limit-policy", false, d.urgent_oob_limit, errs);
        Stream {
            urgent_policy,
            urgent_oob_limit,
            memcap: sec.size_max("memcap", u64::MAX, errs).unwrap_or(d.memcap),
            midstream: sec.bool("midstream", d.midstream, errs),
            async_oneside: sec.bool("async-oneside", d.async_oneside, errs),
            bypass: sec.bool("bypass", d.bypass, errs),
            inline: match sec.scalar("inline", errs) {
                Some((v, _)) if v.eq_ignore_ascii_case("auto") => None,
                Some(_) => sec.opt_bool("inline", errs),
                None => d.inline,
            },
            reassembly_memcap: r.size_max("memcap", u64::MAX, errs).unwrap_or(d.reassembly_memcap),
            reassembly_depth: r.size_max("depth", u64::MAX, errs).unwrap_or(d.reassembly_depth),
            toserver_chunk_size: chunk("toserver-chunk-size", errs).unwrap_or(d.toserver_chunk_size),
            toclient_chunk_size: chunk("toclient-chunk-size", errs).unwrap_or(d.toclient_chunk_size),
        }
    }
}
