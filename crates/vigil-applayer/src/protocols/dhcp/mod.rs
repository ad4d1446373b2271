//! DHCP (RFC 2131, options of RFC 2132) over UDP ports 67 and 68: each
//! message a transaction of the side that sent it, logged as EVE `dhcp` as
//! Suricata 8 writes it: by default only acknowledgements, with the fields
//! that map a MAC address to an IP address; every message and its options
//! with `- dhcp: extended: yes`. The `dhcp.leasetime`,
//! `dhcp.renewal_time` and `dhcp.rebinding_time` keywords; the events
//! `malformed_options` and `truncated_options`.
//!
//! Not yet: options overloaded into the `sname` and `file` fields
//! (option 52), which Suricata reads from 9.0 on.
//!
//! ```
//! use vigil_applayer::protocols::dhcp::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! let mut discover = vec![1u8, 1, 6, 0, 0, 0, 0, 7];
//! discover.resize(236, 0);
//! discover.extend_from_slice(&[0x63, 0x82, 0x53, 0x63, 53, 1, 1, 255]);
//! assert_eq!((PROTO.detection.probe)(ToServer, &discover, ProbeCx::udp(68, 67)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, &discover);
//! assert_eq!(p.tx(0).unwrap().eve()["dhcp_type"], "discover");
//! ```

use std::any::Any;
use std::net::Ipv4Addr;

use serde_json::{Map, Value};
use vigil_rules::{IntCmp, Value as RuleValue};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{
    CheckDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, RecordOptions, SettingDef, TxCheck,
    TxQueue,
};

/// The fixed part of a message, up to and with the magic cookie.
const FIXED: usize = 240;
const COOKIE: [u8; 4] = [0x63, 0x82, 0x53, 0x63];

/// Option codes read.
const SUBNET_MASK: u8 = 1;
const ROUTERS: u8 = 3;
const DNS_SERVERS: u8 = 6;
const HOSTNAME: u8 = 12;
const REQUESTED_IP: u8 = 50;
const LEASE_TIME: u8 = 51;
const MESSAGE_TYPE: u8 = 53;
const PARAMETERS: u8 = 55;
const RENEWAL_TIME: u8 = 58;
const REBINDING_TIME: u8 = 59;
const VENDOR_CLASS: u8 = 60;
const CLIENT_ID: u8 = 61;

pub const EVENTS: &[&str] = &["malformed_options", "truncated_options"];

/// One message: its header and options as they came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DhcpTx {
    id: u64,
    dir: Direction,
    pub op: u8,
    pub xid: u32,
    pub client_mac: Vec<u8>,
    pub ciaddr: [u8; 4],
    pub yiaddr: [u8; 4],
    pub siaddr: [u8; 4],
    pub giaddr: [u8; 4],
    pub options: Vec<(u8, Vec<u8>)>,
    events: u64,
}

fn ip(b: &[u8]) -> String {
    match <[u8; 4]>::try_from(b) {
        Ok(a) => Ipv4Addr::from(a).to_string(),
        Err(_) => String::new(),
    }
}

fn mac(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":")
}

/// Suricata's names of the message types.
fn type_name(t: u8) -> &'static str {
    match t {
        1 => "discover",
        2 => "offer",
        3 => "request",
        4 => "decline",
        5 => "ack",
        6 => "nak",
        7 => "release",
        8 => "inform",
        _ => "unknown",
    }
}

/// Suricata's names of the parameters a client asks for (others are left out).
fn parameter_name(code: u8) -> Option<&'static str> {
    Some(match code {
        1 => "subnet_mask",
        3 => "router",
        6 => "dns_server",
        15 => "domain",
        35 => "arp_timeout",
        42 => "ntp_server",
        66 => "tftp_server_name",
        150 => "tftp_server_ip",
        _ => return None,
    })
}

impl DhcpTx {
    fn option(&self, code: u8) -> Option<&[u8]> {
        self.options.iter().find(|(c, _)| *c == code).map(|(_, d)| &d[..])
    }

    pub fn message_type(&self) -> Option<u8> {
        self.option(MESSAGE_TYPE).and_then(|d| d.first().copied())
    }

    /// A four-byte time option, in seconds.
    pub fn time(&self, code: u8) -> Option<u64> {
        self.option(code).and_then(|d| <[u8; 4]>::try_from(d).ok()).map(|b| u32::from_be_bytes(b).into())
    }

    fn record(&self, extended: bool) -> Value {
        let mut m = Map::new();
        let op = match self.op {
            1 => "request",
            2 => "reply",
            _ => "<unknown>",
        };
        m.insert("type".into(), op.into());
        m.insert("id".into(), self.xid.into());
        m.insert("client_mac".into(), mac(&self.client_mac).into());
        m.insert("assigned_ip".into(), ip(&self.yiaddr).into());
        if extended {
            m.insert("client_ip".into(), ip(&self.ciaddr).into());
            if self.op == 2 {
                m.insert("relay_ip".into(), ip(&self.giaddr).into());
                m.insert("next_server_ip".into(), ip(&self.siaddr).into());
            }
        }
        let addrs = |d: &[u8]| Value::Array(d.chunks_exact(4).map(|a| Value::from(ip(a))).collect());
        for (code, data) in &self.options {
            let time = || <[u8; 4]>::try_from(&data[..]).ok().map(u32::from_be_bytes);
            match *code {
                CLIENT_ID if data.len() >= 2 => {
                    m.insert("client_id".into(), mac(&data[1..]).into());
                }
                LEASE_TIME if extended => {
                    if let Some(t) = time() {
                        m.insert("lease_time".into(), t.into());
                    }
                }
                REBINDING_TIME if extended => {
                    if let Some(t) = time() {
                        m.insert("rebinding_time".into(), t.into());
                    }
                }
                // Suricata writes the renewal time in the short form too.
                RENEWAL_TIME => {
                    if let Some(t) = time() {
                        m.insert("renewal_time".into(), t.into());
                    }
                }
                SUBNET_MASK if extended => {
                    m.insert("subnet_mask".into(), ip(data).into());
                }
                HOSTNAME if !data.is_empty() => {
                    m.insert("hostname".into(), crate::proto::escaped_text(data).into());
                }
                MESSAGE_TYPE => {
                    if let Some(&t) = data.first() {
                        m.insert("dhcp_type".into(), type_name(t).into());
                    }
                }
                REQUESTED_IP if extended => {
                    m.insert("requested_ip".into(), ip(data).into());
                }
                PARAMETERS if extended => {
                    let names = data.iter().filter_map(|&c| parameter_name(c)).map(Value::from).collect();
                    m.insert("params".into(), Value::Array(names));
                }
                DNS_SERVERS if extended => {
                    m.insert("dns_servers".into(), addrs(data));
                }
                ROUTERS if extended => {
                    m.insert("routers".into(), addrs(data));
                }
                VENDOR_CLASS if extended && !data.is_empty() => {
                    m.insert("vendor_class_identifier".into(), crate::proto::escaped_text(data).into());
                }
                _ => {}
            }
        }
        Value::Object(m)
    }
}

impl ProtoTx for DhcpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        if dir == self.dir {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn finished(&self) -> bool {
        true
    }

    fn buffer(&self, _dir: Direction, _id: u8, _index: usize) -> Option<&[u8]> {
        None
    }

    fn eve(&self) -> Value {
        self.record(false)
    }

    fn eve_with(&self, opts: &RecordOptions) -> Value {
        self.record(opts.extended)
    }

    /// The short form logs acknowledgements only.
    fn logs_with(&self, opts: &RecordOptions) -> bool {
        opts.extended || self.message_type() == Some(5)
    }

    fn record_dir(&self) -> Direction {
        self.dir
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Operation, transaction id, client hardware address, and the client's,
/// assigned, next server's and relay's addresses.
type Header = (u8, u32, Vec<u8>, [[u8; 4]; 4]);

/// A message's fixed part; `None` when short or without the magic cookie.
fn header(data: &[u8]) -> Option<Header> {
    if data.len() < FIXED || data[236..240] != COOKIE {
        return None;
    }
    let addr = |at: usize| -> [u8; 4] { [data[at], data[at + 1], data[at + 2], data[at + 3]] };
    let hlen = usize::from(data[2]).min(16);
    let xid = u32::from_be_bytes(addr(4));
    Some((data[0], xid, data[28..28 + hlen].to_vec(), [addr(12), addr(16), addr(20), addr(24)]))
}

/// The options after the cookie, up to the end option; the event an option
/// running past the end raises.
fn options(mut data: &[u8]) -> (Vec<(u8, Vec<u8>)>, Option<&'static str>) {
    let mut out = Vec::new();
    while let Some((&code, rest)) = data.split_first() {
        match code {
            0 => data = rest,
            255 => break,
            _ => {
                let Some((&len, rest)) = rest.split_first() else { return (out, Some("truncated_options")) };
                let Some(value) = rest.get(..usize::from(len)) else { return (out, Some("truncated_options")) };
                out.push((code, value.to_vec()));
                data = &rest[usize::from(len)..];
            }
        }
    }
    (out, None)
}

/// Options whose length their format fixes, given another.
fn malformed(options: &[(u8, Vec<u8>)]) -> bool {
    options.iter().any(|(code, d)| match *code {
        SUBNET_MASK | REQUESTED_IP | LEASE_TIME | RENEWAL_TIME | REBINDING_TIME => d.len() != 4,
        ROUTERS | DNS_SERVERS => d.is_empty() || d.len() % 4 != 0,
        MESSAGE_TYPE => d.len() != 1,
        CLIENT_ID => d.len() < 2,
        _ => false,
    })
}

#[derive(Debug)]
pub struct DhcpParser {
    txs: TxQueue<DhcpTx>,
    events: Vec<AppEvent>,
}

impl ProtoParser for DhcpParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let Some((op, xid, client_mac, [ciaddr, yiaddr, siaddr, giaddr])) = header(data) else {
            return ParseResult::Error;
        };
        let (options, cut) = options(&data[FIXED..]);
        let mut events = 0u64;
        let mut raised = Vec::new();
        if let Some(e) = cut {
            raised.push(e);
        }
        if malformed(&options) {
            raised.push("malformed_options");
        }
        for e in &raised {
            events |= 1 << EVENTS.iter().position(|n| n == e).unwrap_or(0);
        }
        let at = self.txs.push_with(|id| DhcpTx {
            id,
            dir,
            op,
            xid,
            client_mac,
            ciaddr,
            yiaddr,
            siaddr,
            giaddr,
            options,
            events,
        });
        let tx_id = self.txs.get(at).map(|t| t.id);
        for e in raised {
            let name = if e == "truncated_options" { "dhcp.truncated_options" } else { "dhcp.malformed_options" };
            self.events.push(AppEvent { name, tx_id });
        }
        ParseResult::Done
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(DhcpParser { txs: TxQueue::new(init.first_tx_id, max_tx), events: Vec::new() })
}

/// A BOOTP request or reply with the DHCP magic cookie.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    match header(data) {
        Some((1 | 2, ..)) => Probe::Match,
        _ => Probe::NoMatch,
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    let message = |op: u8, yiaddr: [u8; 4], options: &[u8]| {
        let mut m = vec![op, 1, 6, 0, 0xde, 0xad, 0xbe, 0xef];
        m.resize(16, 0);
        m.extend_from_slice(&yiaddr);
        m.resize(28, 0);
        m.extend_from_slice(&[0x00, 0x11, 0x32, 0x17, 0x49, 0xf0]);
        m.resize(236, 0);
        m.extend_from_slice(&COOKIE);
        m.extend_from_slice(options);
        m
    };
    vec![
        (Direction::ToServer, message(1, [0; 4], b"\x35\x01\x03\x3d\x07\x01\x00\x11\x32\x17\x49\xf0\x37\x02\x01\x03\xff")),
        (
            Direction::ToClient,
            message(2, [10, 16, 1, 4], b"\x35\x01\x05\x33\x04\x00\x00\x0e\x10\x01\x04\xff\xff\x00\x00\x03\x04\x0a\x10\x01\x01\xff"),
        ),
    ]
}

/// A time option compared (`dhcp.leasetime` and the others).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TimeCheck {
    code: u8,
    cmp: IntCmp,
}

impl TxCheck for TimeCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(tx) = tx.as_any().downcast_ref::<DhcpTx>() else { return false };
        tx.time(self.code).is_some_and(|t| self.cmp.matches(t))
    }
}

fn time_check(code: u8, v: &RuleValue) -> Result<Box<dyn TxCheck>, String> {
    match v {
        RuleValue::Int(cmp) => Ok(Box::new(TimeCheck { code, cmp: *cmp })),
        _ => Err("expects an integer comparison".into()),
    }
}

const fn time(name: &'static str, compile: fn(&RuleValue) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "dhcp",
    eve_name: None,
    detection: Detection { tcp: false, udp: true, ports: &[67, 68], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[],
    checks: &[
        time("dhcp.leasetime", |v| time_check(LEASE_TIME, v)),
        time("dhcp.rebinding_time", |v| time_check(REBINDING_TIME, v)),
        time("dhcp.renewal_time", |v| time_check(RENEWAL_TIME, v)),
    ],
    events: EVENTS,
    event: crate::proto::no_other_events,
    options: &[],
    settings: SETTINGS,
    sample,
    sample_expected: None,
    files: false,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(i: usize) -> DhcpTx {
        let (dir, data) = sample().swap_remove(i);
        let mut p = DhcpParser { txs: TxQueue::new(0, 8), events: Vec::new() };
        assert_eq!(p.parse(dir, &data), ParseResult::Done);
        p.txs.pop_front().unwrap()
    }

    #[test]
    fn the_short_form_maps_a_mac_to_an_address_on_acks_only() {
        let (request, ack) = (parsed(0), parsed(1));
        let short = RecordOptions::default();
        assert!(!request.logs_with(&short) && ack.logs_with(&short));
        assert_eq!(
            ack.eve(),
            serde_json::json!({"type": "reply", "id": 0xdeadbeef_u32, "client_mac": "00:11:32:17:49:f0",
                "assigned_ip": "10.16.1.4", "dhcp_type": "ack"})
        );
        let long = RecordOptions { extended: true, ..RecordOptions::default() };
        let e = ack.eve_with(&long);
        assert_eq!((e["lease_time"].as_u64(), e["subnet_mask"].as_str()), (Some(3600), Some("255.255.0.0")));
        assert_eq!(e["routers"], serde_json::json!(["10.16.1.1"]));
        let e = request.eve_with(&long);
        assert_eq!((e["client_id"].as_str(), e["params"].clone()), (Some("00:11:32:17:49:f0"), serde_json::json!(["subnet_mask", "router"])));
        assert_eq!(ack.time(LEASE_TIME), Some(3600));
    }

    #[test]
    fn options_past_the_end_or_of_the_wrong_size_raise_events() {
        assert_eq!(options(b"\x35\x01\x05\x33\x04\x00").1, Some("truncated_options"));
        assert_eq!(options(b"\x35").1, Some("truncated_options"));
        let (opts, cut) = options(b"\x00\x33\x02\x00\x01\xff\x35\x01\x01");
        assert_eq!((opts.len(), cut), (1, None));
        assert!(malformed(&opts));
    }
}
