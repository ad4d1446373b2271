//! vigil's traffic lab: synthetic captures whose content is known exactly,
//! and an offline benchmark of the pipeline.
//!
//! This crate owns traffic generation (through `vigil-wire`'s builders,
//! written with `vigil-capture`'s `PcapWriter`) and measurement (through
//! `vigil-engine`). Nothing in the pipeline depends on it.
//!
//! ## `vigil gen`: deterministic synthetic traffic
//!
//! A seeded SplitMix64 generator ([`rng`]) drives everything; there is no
//! wall clock: packet times start at a fixed epoch and advance by each
//! frame's serialization time at 1 Gbit/s. The same seed and options give a
//! byte-identical pcap. Addresses are benchmarking ones only: IPv4
//! 198.18.0.0/15, IPv6 2001:db8::/32.
//!
//! ```text
//! vigil gen -o out.pcap                          # 10,000+ packets, mixed, IPv4, IMIX sizes
//! vigil gen -o out.pcap --seed 7 --flows 500 --ip mix --size uniform:64-9000 --mtu 1500
//! vigil gen -o out.pcap --profile enterprise --encap vxlan --packets 100000
//! vigil gen -o scan.pcap --profile synscan --flows 1000
//! vigil gen -o mal.pcap --malicious 5 --malicious-proto all   # + mal.rules, mal.truth.json
//! ```
//!
//! - `--profile mixed` (default): HTTP/1.1 and TLS (ClientHello with SNI,
//!   ServerHello, records) over TCP with real handshakes and FIN closes, DNS
//!   query/answer over UDP, plain UDP, ICMP echo. `enterprise`: flows chosen
//!   so the IP bytes follow the mix of the 60 Gbit/s Suricata study
//!   (HTTP/HTTPS 77.5 %, RTP 13.2 %, Exchange 4.3 %, Citrix 2.2 %, SMTP 1.1 %,
//!   DNS 1.1 %, Oracle 0.7 %; RTP on even UDP ports from 16384 with G.711
//!   frames, Exchange as TLS to 443 and, for a fifth of its flows, DCE/RPC
//!   binds to 135, Citrix TCP 1494/2598, SMTP dialogues on 25, Oracle TNS on
//!   1521); approximate: the
//!   share is aimed at per flow kind from mean flow sizes. `synscan`: one
//!   source SYN-scans every port of a host (scrambled order) then the next:
//!   RST-ACK from closed ports, SYN-ACK then the scanner's RST from open
//!   ones; `--flows` counts probes. `udp`, `icmp`: only those flows.
//! - `--size fixed:N | uniform:A-B | imix` (40..=65000): the IP size of the
//!   datagrams carrying bulk data (HTTP bodies, TLS records, UDP, ICMP echo);
//!   handshakes, requests, DNS and RTP keep their natural sizes. IMIX is
//!   40/576/1500 bytes in the ratio 7:4:1.
//! - `--mtu N` (256..=9000, default 1500): datagrams over it are fragmented
//!   as a sending host would (any protocol, TCP included): IPv4 with MF and
//!   offsets, DF cleared; IPv6 with a Fragment header and a fresh
//!   identification. Tunnel headers come on top of the MTU.
//! - `--encap none|vlan|gre|erspan2|erspan3|vxlan`: each frame plain, tagged
//!   (VLAN 100) or tunneled between 198.19.255.1 and 198.19.255.2.
//! - `--packets N` (at least N frames; the last flow is completed) or
//!   `--flows N`.
//! - `--malicious P --malicious-proto tcp|udp|icmp|all`: P percent of the
//!   flows are replaced by malicious ones carrying a marker: TCP, an HTTP
//!   request with the marker in its path after the handshake (one marker per
//!   flow); UDP, one datagram; ICMP, an echo request and its reply (two
//!   marked packets). `out.rules` (or `--rules`) has one rule per marker
//!   kind (sids 9000001 tcp, 9000002 udp, 9000003 icmp) and `out.truth.json`
//!   (or `--truth`) the number of marked datagrams per sid, which is the
//!   exact alert count of `vigil -r out.pcap -S out.rules -k none`.
//!
//! ## `vigil bench offline`
//!
//! ```text
//! vigil bench offline -r out.pcap -S out.rules --repeat 5 [--json] [-c suricata.yaml] [--set k=v]
//! ```
//!
//! Reads the capture into memory once and runs it `--repeat` times through
//! the engine on one thread ([`offline`]): packets/s and Gbit/s per wall
//! second and per CPU second (user + system), alerts, and the time split
//! between decode, flow+stream, app-layer and detection, measured by
//! running the same input with those stages switched off and subtracting.
//!
//! ## From Rust
//!
//! ```
//! use vigil_lab::gen::{self, options::{Amount, GenOptions, Profile}};
//! let opts = GenOptions { seed: 42, amount: Amount::Flows(10), profile: Profile::Mixed, ..Default::default() };
//! let (frames, truth) = gen::frames(&opts).unwrap();
//! assert_eq!(frames.len() as u64, truth.frames);
//! assert_eq!(gen::frames(&opts).unwrap().0, frames); // same seed, same bytes
//! ```

#[cfg(target_os = "linux")]
pub mod capacity;
pub mod compare;
pub mod cpu;
pub mod gen;
pub mod offline;
pub mod rng;
