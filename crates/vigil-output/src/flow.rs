//! EVE `flow` records (one per flow, when it ends) and the `flow_id` that
//! ties every other record of a flow to it.

use crate::protocol::proto_name;
use crate::time::format_timestamp;
use serde_json::{json, Map, Value};
use std::net::IpAddr;
use vigil_types::Timestamp;
use vigil_wire::ethernet::format_mac;

/// What a flow record says, gathered by the engine from the flow table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowRecord<'a> {
    pub flow_id: u64,
    /// The client (the first packet's source) and the server.
    pub src_ip: IpAddr,
    pub dest_ip: IpAddr,
    /// Ports, for protocols that have them (TCP, UDP, SCTP).
    pub ports: Option<(u16, u16)>,
    pub proto: u8,
    pub vlans: &'a [u16],
    /// ICMP type and code of the first message, and of the first reply.
    pub icmp: Option<(u8, u8)>,
    pub icmp_response: Option<(u8, u8)>,
    pub spi: Option<u32>,
    pub app_proto: Option<&'a str>,
    /// What each direction was found to speak, when it differs from `app_proto`
    /// (`failed`: nothing).
    pub app_proto_ts: Option<&'a str>,
    pub app_proto_tc: Option<&'a str>,
    /// The protocol before the flow changed protocol (HTTP before a CONNECT tunnel), when it
    /// differs from `app_proto`.
    pub app_proto_orig: Option<&'a str>,
    pub pkts_toserver: u64,
    pub pkts_toclient: u64,
    pub bytes_toserver: u64,
    pub bytes_toclient: u64,
    pub start: Timestamp,
    pub end: Timestamp,
    /// Whole seconds from start to end.
    pub age: i64,
    /// `new`, `established` or `closed`.
    pub state: &'a str,
    /// `timeout`, `forced`, `shutdown` or `tcp_reuse`.
    pub reason: &'a str,
    pub alerted: bool,
    /// `community-id-seed` when the output writes `community_id`.
    pub community_id: Option<u16>,
    /// Application-layer transactions the flow had (written when any).
    pub tx_cnt: u64,
    /// The flow ended in emergency mode.
    pub emergency: bool,
    /// TCP flags seen (to server, to client), for TCP flows.
    pub tcp_flags: Option<(u8, u8)>,
    /// The TCP session, for TCP flows the stream engine tracked.
    pub tcp_session: Option<FlowTcpSession<'a>>,
    /// `drop` or `pass` when the whole flow was dropped or passed.
    pub action: Option<&'a str>,
    /// Exception policies applied to the flow: (target, policy) names.
    pub exception_policy: &'a [(&'a str, &'a str)],
    /// The Ethernet addresses of the client's and the server's side, for an
    /// output with `ethernet: yes` (EVE `ether`).
    pub macs: Option<MacLists<'a>>,
}

/// The Ethernet addresses of a flow's client side and server side.
pub type MacLists<'a> = (&'a [[u8; 6]], &'a [[u8; 6]]);

/// EVE `ether` of a flow: the server side's addresses, then the client's
/// (`dest_macs`, `src_macs`, as Suricata orders them).
fn ether_sets(dest: &[[u8; 6]], src: &[[u8; 6]]) -> Value {
    let list = |l: &[[u8; 6]]| Value::Array(l.iter().map(|m| Value::String(format_mac(*m))).collect());
    json!({"dest_macs": list(dest), "src_macs": list(src)})
}

/// What the stream engine says of a flow's TCP session when it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowTcpSession<'a> {
    /// Suricata's name of the session state (`established`, `closed`, ...).
    pub state: &'a str,
    /// A hole the capture missed was skipped (to server, to client).
    pub gap: (bool, bool),
    /// The most disjoint regions of stream data held at once (to server, to client).
    pub max_regions: (u32, u32),
}

/// An EVE `flow` record, logged at time `now` (the packet time the flow
/// ended at), with Suricata's field names and order.
pub fn flow_record(r: &FlowRecord<'_>, now: Timestamp) -> Value {
    let mut m = Map::new();
    m.insert("timestamp".into(), Value::String(format_timestamp(now)));
    m.insert("flow_id".into(), json!(r.flow_id));
    m.insert("event_type".into(), Value::String("flow".into()));
    if !r.vlans.is_empty() {
        m.insert("vlan".into(), json!(r.vlans));
    }
    m.insert("src_ip".into(), Value::String(crate::envelope::ip_text(r.src_ip)));
    if let Some((sp, _)) = r.ports {
        m.insert("src_port".into(), json!(sp));
    }
    m.insert("dest_ip".into(), Value::String(crate::envelope::ip_text(r.dest_ip)));
    if let Some((_, dp)) = r.ports {
        m.insert("dest_port".into(), json!(dp));
    }
    m.insert("ip_v".into(), json!(if r.src_ip.is_ipv4() { 4 } else { 6 }));
    m.insert("proto".into(), Value::String(proto_name(r.proto).into_owned()));
    if let Some(seed) = r.community_id {
        let id = crate::community_id(seed, r.src_ip, r.dest_ip, r.proto, r.ports, r.icmp);
        m.insert("community_id".into(), Value::String(id));
    }
    if let Some((t, c)) = r.icmp {
        m.insert("icmp_type".into(), json!(t));
        m.insert("icmp_code".into(), json!(c));
    }
    if let Some((t, c)) = r.icmp_response {
        m.insert("response_icmp_type".into(), json!(t));
        m.insert("response_icmp_code".into(), json!(c));
    }
    if let Some(spi) = r.spi {
        m.insert("spi".into(), json!(spi));
    }
    if let Some(a) = r.app_proto {
        m.insert("app_proto".into(), Value::String(a.into()));
    }
    if let Some(a) = r.app_proto_ts {
        m.insert("app_proto_ts".into(), Value::String(a.into()));
    }
    if let Some(a) = r.app_proto_tc {
        m.insert("app_proto_tc".into(), Value::String(a.into()));
    }
    if let Some(a) = r.app_proto_orig {
        m.insert("app_proto_orig".into(), Value::String(a.into()));
    }
    let mut f = Map::new();
    f.insert("pkts_toserver".into(), json!(r.pkts_toserver));
    f.insert("pkts_toclient".into(), json!(r.pkts_toclient));
    f.insert("bytes_toserver".into(), json!(r.bytes_toserver));
    f.insert("bytes_toclient".into(), json!(r.bytes_toclient));
    f.insert("start".into(), Value::String(format_timestamp(r.start)));
    f.insert("end".into(), Value::String(format_timestamp(r.end)));
    f.insert("age".into(), json!(r.age.max(0)));
    if r.emergency {
        f.insert("emergency".into(), Value::Bool(true));
    }
    f.insert("state".into(), Value::String(r.state.into()));
    if r.state == "bypassed" {
        // Bypassed by vigil itself: there is no capture bypass.
        f.insert("bypass".into(), Value::String("local".into()));
    }
    f.insert("reason".into(), Value::String(r.reason.into()));
    f.insert("alerted".into(), Value::Bool(r.alerted));
    if let Some(a) = r.action {
        f.insert("action".into(), Value::String(a.into()));
    }
    if r.tx_cnt > 0 {
        f.insert("tx_cnt".into(), json!(r.tx_cnt));
    }
    if !r.exception_policy.is_empty() {
        let list = r.exception_policy.iter().map(|(t, p)| json!({"target": t, "policy": p})).collect();
        f.insert("exception_policy".into(), Value::Array(list));
    }
    m.insert("flow".into(), Value::Object(f));
    if let Some((src, dst)) = r.macs {
        m.insert("ether".into(), ether_sets(dst, src));
    }
    if let Some((ts, tc)) = r.tcp_flags {
        m.insert("tcp".into(), tcp_object(ts, tc, r.tcp_session));
    }
    Value::Object(m)
}

/// The lowest and highest TTL seen one way, where any was.
pub type TtlRange = Option<(u8, u8)>;

/// A flow's two EVE `netflow` records, one per direction (the second with
/// its endpoints the other way round), as Suricata's netflow output writes
/// them: that direction's packets, bytes and TTL range, the flow's start,
/// end and age, and that direction's TCP flags. `ttl`: (to server, to
/// client) lowest and highest, where seen. Logged at the flow's last packet.
pub fn netflow_records(r: &FlowRecord<'_>, ttl: (TtlRange, TtlRange)) -> [Value; 2] {
    let side = |to_server: bool| {
        let (src, dst) = if to_server { (r.src_ip, r.dest_ip) } else { (r.dest_ip, r.src_ip) };
        let ports = r.ports.map(|(a, b)| if to_server { (a, b) } else { (b, a) });
        let mut m = Map::new();
        m.insert("timestamp".into(), Value::String(format_timestamp(r.end)));
        m.insert("flow_id".into(), json!(r.flow_id));
        m.insert("event_type".into(), Value::String("netflow".into()));
        if !r.vlans.is_empty() {
            m.insert("vlan".into(), json!(r.vlans));
        }
        m.insert("src_ip".into(), Value::String(crate::envelope::ip_text(src)));
        if let Some((sp, _)) = ports {
            m.insert("src_port".into(), json!(sp));
        }
        m.insert("dest_ip".into(), Value::String(crate::envelope::ip_text(dst)));
        if let Some((_, dp)) = ports {
            m.insert("dest_port".into(), json!(dp));
        }
        m.insert("proto".into(), Value::String(proto_name(r.proto).into_owned()));
        let icmp = if to_server { r.icmp } else { r.icmp_response };
        if let Some((t, c)) = icmp {
            m.insert("icmp_type".into(), json!(t));
            m.insert("icmp_code".into(), json!(c));
        }
        if let Some(spi) = r.spi {
            m.insert("spi".into(), json!(spi));
        }
        if let Some(a) = r.app_proto {
            m.insert("app_proto".into(), Value::String(a.into()));
        }
        let mut n = Map::new();
        let (pkts, bytes) =
            if to_server { (r.pkts_toserver, r.bytes_toserver) } else { (r.pkts_toclient, r.bytes_toclient) };
        n.insert("pkts".into(), json!(pkts));
        n.insert("bytes".into(), json!(bytes));
        n.insert("start".into(), Value::String(format_timestamp(r.start)));
        n.insert("end".into(), Value::String(format_timestamp(r.end)));
        n.insert("age".into(), json!(r.age.max(0)));
        if let Some((lo, hi)) = if to_server { ttl.0 } else { ttl.1 } {
            n.insert("min_ttl".into(), json!(lo));
            n.insert("max_ttl".into(), json!(hi));
        }
        if r.tx_cnt > 0 {
            n.insert("tx_cnt".into(), json!(r.tx_cnt));
        }
        m.insert("netflow".into(), Value::Object(n));
        if let Some((ts, tc)) = r.tcp_flags {
            let flags = if to_server { ts } else { tc };
            let mut t = Map::new();
            t.insert("tcp_flags".into(), Value::String(format!("{flags:02x}")));
            for (bit, name) in TCP_FLAG_NAMES {
                if flags & bit != 0 {
                    t.insert(name.into(), Value::Bool(true));
                }
            }
            m.insert("tcp".into(), Value::Object(t));
        }
        if let Some((src, dst)) = r.macs {
            let (s, d) = if to_server { (src, dst) } else { (dst, src) };
            m.insert("ether".into(), ether_sets(d, s));
        }
        Value::Object(m)
    };
    [side(true), side(false)]
}

/// TCP flag bits by the names EVE gives them, in Suricata's order.
const TCP_FLAG_NAMES: [(u8, &str); 8] = [
    (0x02, "syn"),
    (0x01, "fin"),
    (0x04, "rst"),
    (0x08, "psh"),
    (0x10, "ack"),
    (0x20, "urg"),
    (0x40, "ecn"),
    (0x80, "cwr"),
];

/// The `tcp` object: flags in hex (both ways, to server, to client), one
/// boolean per flag seen, then the session's state, gaps and regions.
fn tcp_object(ts: u8, tc: u8, session: Option<FlowTcpSession<'_>>) -> Value {
    let all = ts | tc;
    let mut t = Map::new();
    t.insert("tcp_flags".into(), Value::String(format!("{all:02x}")));
    t.insert("tcp_flags_ts".into(), Value::String(format!("{ts:02x}")));
    t.insert("tcp_flags_tc".into(), Value::String(format!("{tc:02x}")));
    for (bit, name) in TCP_FLAG_NAMES {
        if all & bit != 0 {
            t.insert(name.into(), Value::Bool(true));
        }
    }
    if let Some(s) = session {
        t.insert("state".into(), Value::String(s.state.into()));
        if s.gap.1 {
            t.insert("tc_gap".into(), Value::Bool(true));
        }
        if s.gap.0 {
            t.insert("ts_gap".into(), Value::Bool(true));
        }
        t.insert("ts_max_regions".into(), json!(s.max_regions.0));
        t.insert("tc_max_regions".into(), json!(s.max_regions.1));
    }
    Value::Object(t)
}

/// Adds `flow_id` to a record of the flow, right after its `timestamp`
/// (where Suricata puts it).
pub fn insert_flow_id(rec: &mut Value, id: u64) {
    if let Value::Object(m) = rec {
        let at = m.keys().position(|k| k == "timestamp").map_or(0, |i| i + 1);
        m.shift_insert(at, "flow_id".into(), json!(id));
    }
}

/// Adds `parent_id` (the flow that announced this one, as an FTP control
/// channel announces its data channels) right after `flow_id`.
pub fn insert_parent_id(rec: &mut Value, parent: u64) {
    if let Value::Object(m) = rec {
        let at = m.keys().position(|k| k == "flow_id").map_or(0, |i| i + 1);
        m.shift_insert(at, "parent_id".into(), json!(parent));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> FlowRecord<'static> {
        FlowRecord {
            flow_id: 1234567,
            src_ip: "10.0.0.1".parse().unwrap(),
            dest_ip: "10.0.0.2".parse().unwrap(),
            ports: Some((40000, 80)),
            proto: 6,
            vlans: &[6],
            icmp: None,
            icmp_response: None,
            spi: None,
            app_proto: None,
            app_proto_ts: None,
            app_proto_tc: None,
            app_proto_orig: None,
            pkts_toserver: 3,
            pkts_toclient: 2,
            bytes_toserver: 180,
            bytes_toclient: 120,
            start: Timestamp::from_micros(1_474_943_159, 446_587),
            end: Timestamp::from_micros(1_474_943_161, 5),
            age: 2,
            state: "closed",
            reason: "shutdown",
            alerted: false,
            community_id: None,
            tx_cnt: 0,
            emergency: false,
            tcp_flags: Some((0x1b, 0x1f)),
            tcp_session: Some(FlowTcpSession { state: "closed", gap: (false, true), max_regions: (1, 2) }),
            action: None,
            exception_policy: &[],
            macs: None,
        }
    }

    #[test]
    fn netflow_is_two_records_one_each_way() {
        let [ts, tc] = netflow_records(&record(), (Some((60, 64)), None));
        assert_eq!(ts["event_type"], "netflow");
        assert_eq!((ts["src_port"].as_u64(), ts["dest_port"].as_u64()), (Some(40000), Some(80)));
        assert_eq!((tc["src_ip"].as_str(), tc["src_port"].as_u64()), (Some("10.0.0.2"), Some(80)));
        assert_eq!(ts["netflow"]["pkts"], 3);
        assert_eq!(tc["netflow"]["bytes"], 120);
        assert_eq!((ts["netflow"]["min_ttl"].as_u64(), ts["netflow"]["max_ttl"].as_u64()), (Some(60), Some(64)));
        assert!(tc["netflow"].get("min_ttl").is_none(), "no TTL seen that way");
        assert_eq!(ts["netflow"]["age"], 2);
        assert_eq!(ts["timestamp"], ts["netflow"]["end"], "logged at the last packet");
        // Each way its own flags.
        assert_eq!((ts["tcp"]["tcp_flags"].as_str(), tc["tcp"]["tcp_flags"].as_str()), (Some("1b"), Some("1f")));
        assert!(tc["tcp"]["rst"].as_bool().unwrap() && ts["tcp"].get("rst").is_none());
        assert!(ts.get("flow").is_none() && ts.get("ip_v").is_none());
    }

    #[test]
    fn action_and_exception_policies() {
        let r = FlowRecord { action: Some("drop"), exception_policy: &[("stream_midstream", "drop_flow")], ..record() };
        let v = flow_record(&r, Timestamp::from_micros(1, 0));
        assert_eq!(v["flow"]["action"], "drop");
        assert_eq!(v["flow"]["exception_policy"][0]["target"], "stream_midstream");
        assert_eq!(v["flow"]["exception_policy"][0]["policy"], "drop_flow");
        let plain = flow_record(&record(), Timestamp::from_micros(1, 0));
        assert!(plain["flow"].get("action").is_none() && plain["flow"].get("exception_policy").is_none());
    }

    #[test]
    fn fields_and_order() {
        let v = flow_record(&record(), Timestamp::from_micros(1_474_943_200, 0));
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "timestamp",
                "flow_id",
                "event_type",
                "vlan",
                "src_ip",
                "src_port",
                "dest_ip",
                "dest_port",
                "ip_v",
                "proto",
                "flow",
                "tcp"
            ]
        );
        assert_eq!(v["flow"]["start"], "2016-09-27T02:25:59.446587+0000");
        assert_eq!(v["flow"]["pkts_toserver"], 3);
        assert_eq!(v["flow"]["reason"], "shutdown");
        assert_eq!(v["tcp"]["tcp_flags"], "1f");
        assert_eq!(v["tcp"]["rst"], true);
        assert!(v["tcp"].get("urg").is_none());
        let tcp: Vec<&str> = v["tcp"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            tcp[tcp.len() - 4..],
            ["state", "tc_gap", "ts_max_regions", "tc_max_regions"],
            "the session's fields close the object, as Suricata writes them"
        );
        assert_eq!((&v["tcp"]["state"], &v["tcp"]["tc_max_regions"]), (&json!("closed"), &json!(2)));
        // No session: flags only.
        let v = flow_record(&FlowRecord { tcp_session: None, ..record() }, Timestamp::from_micros(1, 0));
        assert!(v["tcp"].get("state").is_none() && v["tcp"].get("ts_max_regions").is_none());
    }

    #[test]
    fn app_proto_orig_follows_app_proto() {
        let r = FlowRecord { app_proto: Some("tls"), app_proto_orig: Some("http"), ..record() };
        let v = flow_record(&r, Timestamp::from_micros(1_474_943_200, 0));
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys[9..12], ["proto", "app_proto", "app_proto_orig"]);
        assert_eq!((v["app_proto"].as_str(), v["app_proto_orig"].as_str()), (Some("tls"), Some("http")));
    }

    #[test]
    fn flow_id_goes_after_timestamp() {
        let mut v = json!({"timestamp": "t", "pcap_cnt": 1, "event_type": "anomaly"});
        insert_flow_id(&mut v, 42);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["timestamp", "flow_id", "pcap_cnt", "event_type"]);
    }

    #[test]
    fn records_are_schema_valid() {
        let Some(v) = crate::schema_check::validator() else { return };
        let icmp = FlowRecord {
            ports: None,
            proto: 1,
            vlans: &[],
            icmp: Some((8, 0)),
            icmp_response: Some((0, 0)),
            tcp_flags: None,
            emergency: true,
            reason: "forced",
            ..record()
        };
        let esp = FlowRecord { ports: None, proto: 50, spi: Some(123), tcp_flags: None, ..record() };
        let tunnel = FlowRecord { app_proto: Some("failed"), app_proto_orig: Some("http"), ..record() };
        for r in [record(), icmp, esp, tunnel] {
            let rec = flow_record(&r, Timestamp::from_micros(1_474_943_200, 0));
            let errors: Vec<String> = v.iter_errors(&rec).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{errors:?}\n{rec}");
        }
    }
}
