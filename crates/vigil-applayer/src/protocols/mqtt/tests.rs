use super::*;
use Direction::{ToClient, ToServer};

fn parser(max_msg: u64) -> MqttParser {
    MqttParser::new(0, 64, max_msg)
}

fn records(p: &MqttParser) -> Vec<Value> {
    (0..p.tx_count()).map(|i| p.tx(i).unwrap().eve()).collect()
}

const CONNECT: &[u8] = b"\x10\x0d\x00\x04MQTT\x04\x02\x00\x3c\x00\x01c";
const CONNACK: &[u8] = b"\x20\x02\x00\x00";

#[test]
fn replies_join_their_exchange_by_packet_id() {
    let mut p = parser(1 << 20);
    p.parse(ToServer, CONNECT);
    p.parse(ToClient, CONNACK);
    // Two QoS 1 publishes, answered out of order.
    p.parse(ToServer, b"\x32\x08\x00\x01a\x00\x05one\x32\x08\x00\x01a\x00\x06two");
    p.parse(ToClient, b"\x40\x02\x00\x06\x40\x02\x00\x05");
    // QoS 2: PUBREC, PUBREL, PUBCOMP.
    p.parse(ToServer, b"\x34\x06\x00\x01b\x00\x07x");
    p.parse(ToClient, b"\x50\x02\x00\x07");
    assert!(!p.txs[3].complete);
    p.parse(ToServer, b"\x62\x02\x00\x07");
    p.parse(ToClient, b"\x70\x02\x00\x07");
    let r = records(&p);
    assert_eq!(r.len(), 4);
    assert_eq!(r[0]["connack"]["return_code"], 0);
    assert_eq!((r[1]["publish"]["message"].as_str(), r[1]["puback"]["message_id"].as_u64()), (Some("one"), Some(5)));
    assert_eq!((r[2]["publish"]["message"].as_str(), r[2]["puback"]["message_id"].as_u64()), (Some("two"), Some(6)));
    assert_eq!(r[3]["pubcomp"]["message_id"], 7);
    assert!(p.txs.iter().all(|t| t.complete));
    assert_eq!(p.txs.iter().map(|t| t.events).sum::<u64>(), 0);
}

#[test]
fn out_of_place_packets_raise_suricatas_events() {
    let mut p = parser(1 << 20);
    // Before any CONNECT: a ping, then a CONNACK nobody asked for.
    p.parse(ToServer, b"\xc0\x00");
    p.parse(ToClient, CONNACK);
    // Connected now: an acknowledgement of nothing, a reserved type, a QoS 3 publish, a second CONNECT.
    p.parse(ToClient, b"\x40\x02\x00\x09");
    p.parse(ToServer, b"\x00\x00");
    p.parse(ToServer, b"\x36\x06\x00\x01a\x00\x01z");
    p.parse(ToServer, CONNECT);
    let mut out = Vec::new();
    p.drain_events(&mut out);
    let names: Vec<&str> = out.iter().map(|e| e.name).collect();
    assert_eq!(
        names,
        [
            "mqtt.unintroduced_message",
            "mqtt.missing_connect",
            "mqtt.missing_publish",
            "mqtt.unassigned_msg_type",
            "mqtt.invalid_qos_level",
            "mqtt.double_connect"
        ]
    );
    // The reserved type's record is empty, as Suricata writes it.
    assert_eq!(p.tx(3).unwrap().eve(), serde_json::json!({}));
}

#[test]
fn a_packet_over_the_limit_is_skipped_and_logged_truncated() {
    let mut p = parser(20);
    p.parse(ToServer, CONNECT);
    p.parse(ToClient, CONNACK);
    let mut big = b"\x32\x1e\x00\x01a\x00\x02".to_vec();
    big.extend_from_slice(&[b'X'; 25]);
    big.extend_from_slice(b"\x30\x04\x00\x01ab");
    // Cut inside the skipped packet: the rest is skipped where it arrives.
    p.parse(ToServer, &big[..10]);
    p.parse(ToServer, &big[10..]);
    let r = records(&p);
    assert_eq!(r[1]["publish"], serde_json::json!({"qos": 1, "retain": false, "dup": false, "truncated": true, "skipped_length": 32}));
    assert_eq!(r[2]["publish"]["message"], "b");
}

#[test]
fn record_options_cut_strings_and_hide_passwords() {
    let mut p = parser(1 << 20);
    p.parse(ToServer, b"\x10\x18\x00\x04MQTT\x04\xc2\x00\x3c\x00\x01c\x00\x01u\x00\x06secret");
    let tx = p.tx(0).unwrap();
    assert_eq!(tx.eve()["connect"]["password"], "secret");
    let opts = RecordOptions { passwords: Some(false), string_log_limit: Some(2), ..RecordOptions::DEFAULT };
    let rec = tx.eve_with(&opts);
    assert!(rec["connect"].get("password").is_none());
    assert_eq!(rec["connect"]["protocol_string"], "MQ[truncated 2 additional bytes]");
}

#[test]
fn a_length_of_five_bytes_ends_parsing() {
    let mut p = parser(1 << 20);
    assert_eq!(p.parse(ToServer, b"\x30\xff\xff\xff\xff\x01"), ParseResult::Error);
    let mut out = Vec::new();
    p.drain_events(&mut out);
    assert_eq!(out[0].name, "mqtt.malformed_traffic");
}

#[test]
fn the_probe_wants_an_assigned_type_and_a_whole_length() {
    let cx = ProbeCx::tcp(40000, 1883);
    assert_eq!(probe(ToServer, CONNECT, cx), Probe::Match);
    assert_eq!(probe(ToServer, b"\x10", cx), Probe::NeedMore);
    assert_eq!(probe(ToServer, b"\x00\x00", cx), Probe::NoMatch);
    assert_eq!(probe(ToServer, b"\xf0\x00", cx), Probe::NoMatch);
}

#[test]
fn unacknowledged_publishes_are_dropped_past_the_flows_budget() {
    let mut p = MqttParser::new(0, 4096, 1 << 20);
    p.parse(ToServer, CONNECT);
    p.parse(ToClient, CONNACK);
    // QoS 1 publishes of 500,000 bytes each that nothing acknowledges.
    for id in 1..=60u16 {
        let body_len = 2 + 1 + 2 + 500_000;
        let mut m = vec![0x32];
        let mut n = body_len;
        loop {
            let b = (n % 128) as u8;
            n /= 128;
            m.push(if n > 0 { b | 0x80 } else { b });
            if n == 0 {
                break;
            }
        }
        m.extend_from_slice(&[0, 1, b'a']);
        m.extend_from_slice(&id.to_be_bytes());
        m.resize(m.len() + 500_000, b'x');
        p.parse(ToServer, &m);
    }
    let held: usize = p.txs.iter().flat_map(|t| t.msgs.iter()).map(MqttParser::weight).sum();
    assert!(held <= FLOW_BUDGET, "{held}");
    assert!(p.txs_evicted() > 0);
}
