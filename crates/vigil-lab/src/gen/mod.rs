//! `vigil gen`: deterministic synthetic captures.
//!
//! Flows are made one after another by the profile ([`profile`]) from a
//! seeded generator; each IP datagram is fragmented to the MTU ([`frag`]),
//! wrapped ([`encap`]) and stamped by a packet clock that starts at a fixed
//! epoch and advances by each frame's time on a 1 Gbit/s wire. Malicious
//! flows replace ordinary ones at the requested share and carry markers
//! that the rules of [`truth`] find, one alert per marked datagram.

pub mod app;
pub mod encap;
pub mod flow;
pub mod frag;
pub mod options;
pub mod profile;
pub mod truth;

use crate::rng::Rng;
use encap::Encapsulator;
use options::{Amount, GenOptions, MalProto, Profile};
use serde_json::json;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use truth::Truth;
use vigil_capture::PcapWriter;
use vigil_types::{LinkType, Timestamp};

/// Where the capture's clock starts: 2023-11-14 22:13:20 UTC.
pub const EPOCH_SECS: i64 = 1_700_000_000;
/// The nominal line rate the clock advances by (bits per second).
pub const LINE_RATE_BPS: u64 = 1_000_000_000;

/// Packet time: a fixed start, then each frame's serialization time at
/// [`LINE_RATE_BPS`] (at least one microsecond, pcap's resolution).
#[derive(Debug, Clone)]
struct Clock {
    nanos: i64,
}

impl Clock {
    fn new() -> Self {
        Clock { nanos: EPOCH_SECS * 1_000_000_000 }
    }

    fn stamp(&mut self, frame_len: usize) -> Timestamp {
        let ts = Timestamp::from_micros(
            self.nanos.div_euclid(1_000_000_000),
            (self.nanos.rem_euclid(1_000_000_000) / 1000) as u32,
        );
        let wire = (frame_len as u64 * 8 * 1_000_000_000 / LINE_RATE_BPS) as i64;
        self.nanos += wire.max(1000);
        ts
    }
}

/// Makes the capture `opts` describes, handing each frame to `sink` in
/// order; what it holds comes back as [`Truth`].
pub fn generate(opts: &GenOptions, sink: &mut dyn FnMut(Timestamp, &[u8]) -> io::Result<()>) -> io::Result<Truth> {
    opts.validate().map_err(io::Error::other)?;
    let mut rng = Rng::new(opts.seed);
    // The scanner keeps one source port per capture, as nmap does per scan.
    let scan_port = 40_000 + (rng.next_u32() % 20_000) as u16;
    let mut shape = profile::Shape { rng: &mut rng, size: opts.size, ip: opts.ip, scan_port };
    let mut encap = Encapsulator::new(opts.encap);
    let mut clock = Clock::new();
    let mut truth = Truth::default();
    let (mut ident4, mut ident6) = (0u16, 0u32);
    let mut unit = 0u64;
    loop {
        match opts.amount {
            Amount::Packets(n) if truth.frames >= n => break,
            Amount::Flows(n) if unit >= n => break,
            _ => {}
        }
        let malicious = opts.malicious > 0.0 && shape.rng.percent(opts.malicious);
        let dgrams = if malicious {
            let kind = match opts.malicious_proto {
                MalProto::Tcp => truth::TCP,
                MalProto::Udp => truth::UDP,
                MalProto::Icmp => truth::ICMP,
                MalProto::All => shape.rng.range(0, 2) as usize,
            };
            truth.malicious_flows += 1;
            shape.malicious(kind, unit)
        } else {
            shape.flow(opts.profile, unit)
        };
        for d in dgrams {
            ident4 = ident4.wrapping_add(1);
            ident6 = ident6.wrapping_add(1);
            let ip = d.packet.ident(ident4).build_ip();
            let frags = frag::fragment(ip, opts.mtu, ident6);
            if frags.len() > 1 {
                truth.fragmented += 1;
                truth.fragments += frags.len() as u64;
            }
            for f in &frags {
                let frame = encap.frame(f, d.flow);
                let ts = clock.stamp(frame.len());
                sink(ts, &frame)?;
                truth.frames += 1;
                truth.bytes += frame.len() as u64;
            }
            truth.datagrams += 1;
            if let Some(k) = d.marker {
                truth.malicious[k] += 1;
            }
        }
        unit += 1;
    }
    truth.flows = unit;
    Ok(truth)
}

/// The files `vigil gen` writes.
#[derive(Debug, Clone)]
pub struct OutputPaths {
    pub pcap: PathBuf,
    pub rules: PathBuf,
    pub truth: PathBuf,
}

impl OutputPaths {
    /// `out.pcap` → `out.rules` and `out.truth.json` beside it, unless given.
    pub fn beside(pcap: &Path, rules: Option<PathBuf>, truth: Option<PathBuf>) -> OutputPaths {
        let stem = pcap.with_extension("");
        let with = |ext: &str| PathBuf::from(format!("{}.{ext}", stem.display()));
        OutputPaths {
            pcap: pcap.to_path_buf(),
            rules: rules.unwrap_or_else(|| with("rules")),
            truth: truth.unwrap_or_else(|| with("truth.json")),
        }
    }
}

/// The options as recorded in the truth file.
pub fn options_json(opts: &GenOptions) -> serde_json::Value {
    let amount = match opts.amount {
        Amount::Packets(n) => json!({"packets": n}),
        Amount::Flows(n) => json!({"flows": n}),
    };
    json!({
        "seed": opts.seed,
        "amount": amount,
        "ip": format!("{:?}", opts.ip).to_lowercase(),
        "size": opts.size.to_string(),
        "mtu": opts.mtu,
        "encap": format!("{:?}", opts.encap).to_lowercase(),
        "profile": format!("{:?}", opts.profile).to_lowercase(),
        "malicious_percent": opts.malicious,
        "malicious_proto": format!("{:?}", opts.malicious_proto).to_lowercase(),
        "line_rate_bps": LINE_RATE_BPS,
        "epoch_secs": EPOCH_SECS,
    })
}

/// Writes the capture (classic pcap, Ethernet), its rules and its truth.
pub fn write_files(opts: &GenOptions, paths: &OutputPaths) -> io::Result<Truth> {
    let file = io::BufWriter::new(std::fs::File::create(&paths.pcap)?);
    let mut w = PcapWriter::new(file, LinkType::Ethernet)?;
    let truth = generate(opts, &mut |ts, frame| w.write_packet(ts, frame))?;
    w.into_inner().into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::write(&paths.rules, truth::rules_text())?;
    let mut t = serde_json::to_string_pretty(&truth.to_json(options_json(opts))).map_err(io::Error::other)?;
    t.push('\n');
    std::fs::File::create(&paths.truth)?.write_all(t.as_bytes())?;
    Ok(truth)
}

/// A frame with its capture time.
pub type Frame = (Timestamp, Vec<u8>);

/// The capture in memory (frames with their times), for tests and benchmarks.
pub fn frames(opts: &GenOptions) -> io::Result<(Vec<Frame>, Truth)> {
    let mut out = Vec::new();
    let truth = generate(opts, &mut |ts, f| {
        out.push((ts, f.to_vec()));
        Ok(())
    })?;
    Ok((out, truth))
}

impl Profile {
    /// The profile's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Mixed => "mixed",
            Profile::Enterprise => "enterprise",
            Profile::Synscan => "synscan",
            Profile::Udp => "udp",
            Profile::Icmp => "icmp",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_starts_at_the_epoch_and_advances_by_wire_time() {
        let mut c = Clock::new();
        assert_eq!(c.stamp(1250), Timestamp::from_micros(EPOCH_SECS, 0));
        // 1250 bytes = 10,000 bits = 10 µs at 1 Gbit/s; a tiny frame still takes 1 µs.
        assert_eq!(c.stamp(10), Timestamp::from_micros(EPOCH_SECS, 10));
        assert_eq!(c.stamp(10), Timestamp::from_micros(EPOCH_SECS, 11));
    }

    #[test]
    fn packets_and_flows_bound_the_amount() {
        let opts = GenOptions { amount: Amount::Flows(25), ..Default::default() };
        let (_, t) = frames(&opts).unwrap();
        assert_eq!(t.flows, 25);
        let opts = GenOptions { amount: Amount::Packets(300), ..Default::default() };
        let (f, t) = frames(&opts).unwrap();
        assert!(t.frames >= 300 && f.len() as u64 == t.frames);
    }

    #[test]
    fn paths_sit_beside_the_capture() {
        let p = OutputPaths::beside(Path::new("/tmp/x/out.pcap"), None, None);
        assert_eq!(p.rules, Path::new("/tmp/x/out.rules"));
        assert_eq!(p.truth, Path::new("/tmp/x/out.truth.json"));
    }
}
