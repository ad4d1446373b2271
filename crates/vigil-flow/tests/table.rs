//! The flow table driven by packets built with vigil's own builders.

use vigil_decode::{DecodeConfig, Decoder};
use vigil_flow::{EndReason, Flow, FlowConfig, FlowHandle, FlowState, FlowTable, Timeouts};
use vigil_types::{Direction, LinkType, Timestamp};
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::ethertype;
use vigil_wire::tcp::flags::{ACK, FIN, PSH, RST, SYN};

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

struct H {
    dec: Decoder,
    flows: FlowTable,
    t: Timestamp,
    ended: Vec<Flow>,
}

impl H {
    fn new(cfg: FlowConfig) -> Self {
        H {
            dec: Decoder::new(DecodeConfig::default()),
            flows: FlowTable::new(cfg, ahash::RandomState::with_seeds(9, 8, 7, 6)),
            t: Timestamp::from_micros(1_700_000_000, 0),
            ended: Vec::new(),
        }
    }

    fn at(&mut self, secs: i64) -> &mut Self {
        self.t = Timestamp::from_micros(1_700_000_000 + secs, 0);
        self
    }

    fn send(&mut self, frame: &[u8]) -> Option<FlowHandle> {
        let p = self.dec.decode(frame, self.t, LinkType::Ethernet, 1);
        self.flows.tick(self.t);
        let h = self.flows.handle_packet(&p, true);
        self.ended.extend(self.flows.drain_ended());
        h
    }

    fn tick(&mut self) {
        self.flows.tick(self.t);
        self.ended.extend(self.flows.drain_ended());
    }
}

fn tcp(from: [u8; 4], to: [u8; 4], sp: u16, dp: u16, flags: u8) -> Vec<u8> {
    PacketBuilder::ipv4(from, to).tcp(sp, dp).tcp_flags(flags).payload(b"x").build_ethernet()
}

fn udp(from: [u8; 4], to: [u8; 4], sp: u16, dp: u16) -> Vec<u8> {
    PacketBuilder::ipv4(from, to).udp(sp, dp).payload(b"hello").build_ethernet()
}

#[test]
fn both_directions_meet_in_one_flow() {
    let mut h = H::new(FlowConfig::default());
    let syn = tcp(C, S, 40000, 80, SYN);
    let a = h.send(&syn).unwrap();
    let b = h.send(&tcp(S, C, 80, 40000, SYN | ACK)).unwrap();
    let c = h.send(&tcp(C, S, 40000, 80, ACK)).unwrap();
    let d = h.send(&tcp(S, C, 80, 40000, ACK | PSH)).unwrap();
    assert!(a.created && !b.created && !c.created);
    assert_eq!((a.id, a.id, a.id), (b.id, c.id, d.id));
    assert_eq!(
        [a.dir, b.dir, c.dir, d.dir],
        [Direction::ToServer, Direction::ToClient, Direction::ToServer, Direction::ToClient]
    );
    let f = h.flows.get(d).unwrap();
    assert_eq!(f.state, FlowState::Established);
    assert_eq!((f.pkts.to_server, f.pkts.to_client), (2, 2));
    assert_eq!(f.bytes.to_server, 2 * syn.len() as u64);
    assert_eq!(f.key.src_ip(), std::net::IpAddr::from(C));
    assert_eq!(f.key.dport, 80);
    assert_eq!(h.flows.len(), 1);
    assert_eq!(h.flows.counters().tcp, 1);
    // A different client port is another flow.
    let e = h.send(&tcp(C, S, 40001, 80, SYN)).unwrap();
    assert_ne!(e.id, a.id);
    assert_eq!(h.flows.len(), 2);
}

#[test]
fn fin_and_rst_close_and_closed_flows_time_out_sooner() {
    let mut h = H::new(FlowConfig::default());
    h.send(&tcp(C, S, 40000, 80, SYN));
    h.send(&tcp(S, C, 80, 40000, SYN | ACK));
    h.send(&tcp(C, S, 40000, 80, ACK));
    h.send(&tcp(C, S, 40000, 80, FIN | ACK));
    let x = h.send(&tcp(S, C, 80, 40000, FIN | ACK)).unwrap();
    assert_eq!(h.flows.get(x).unwrap().state, FlowState::Closed);
    // tcp closed: 60 s, not established's 600.
    h.at(59).tick();
    assert!(h.ended.is_empty());
    h.at(60).tick();
    assert_eq!(h.ended.len(), 1);
    assert_eq!(h.ended[0].end_reason, Some(EndReason::Timeout));
    assert_eq!(h.ended[0].state, FlowState::Closed);

    let mut h = H::new(FlowConfig::default());
    h.send(&tcp(C, S, 1, 2, SYN));
    let x = h.send(&tcp(S, C, 2, 1, RST | ACK)).unwrap();
    assert_eq!(h.flows.get(x).unwrap().state, FlowState::Closed);
}

#[test]
fn tcp_reuse_of_a_closed_tuple_starts_a_new_flow() {
    let mut h = H::new(FlowConfig::default());
    let a = h.send(&tcp(C, S, 5555, 80, SYN)).unwrap();
    h.send(&tcp(S, C, 80, 5555, RST | ACK));
    h.at(1);
    // A new session: its own initial sequence number.
    let syn = PacketBuilder::ipv4(C, S).tcp(5555, 80).tcp_flags(SYN).tcp_seq_ack(777, 0).payload(b"x").build_ethernet();
    let b = h.send(&syn).unwrap();
    assert!(b.created);
    assert_ne!(a.id, b.id);
    assert_eq!(h.ended.len(), 1);
    assert_eq!(h.ended[0].end_reason, Some(EndReason::TcpReuse));
    assert_eq!(h.flows.counters().tcp_reuse, 1);
}

#[test]
fn timeouts_follow_packet_time() {
    let mut h = H::new(FlowConfig::default());
    let a = h.send(&udp(C, S, 5000, 53)).unwrap();
    // udp new: 30 s. At +29 the flow is alive; a packet keeps it.
    h.at(29);
    let b = h.send(&udp(S, C, 53, 5000)).unwrap();
    assert_eq!(a.id, b.id);
    assert_eq!(h.flows.get(b).unwrap().state, FlowState::Established);
    // Established: 300 s after the last packet, to the microsecond.
    h.at(328).tick();
    h.t = Timestamp::from_micros(1_700_000_328, 999_999);
    h.tick();
    assert!(h.ended.is_empty());
    h.at(329).tick();
    assert_eq!(h.ended.len(), 1);
    let f = &h.ended[0];
    assert_eq!((f.end_reason, f.age()), (Some(EndReason::Timeout), 29));
    assert_eq!(h.flows.counters().mgr_flows_timeout, 1);

    // A packet that finds its flow timed out ends it and starts another.
    let mut h = H::new(FlowConfig::default());
    let a = h.send(&udp(C, S, 6000, 53)).unwrap();
    h.at(31);
    let b = h.send(&udp(C, S, 6000, 53)).unwrap();
    assert!(b.created && a.id != b.id);
    assert_eq!(h.ended.len(), 1);
    assert_eq!(h.ended[0].end_reason, Some(EndReason::Timeout));

    // Packet time far in the future: every flow times out in one tick.
    let mut h = H::new(FlowConfig::default());
    for port in 0..500 {
        h.send(&udp(C, S, 10_000 + port, 53));
    }
    h.at(1_000_000).tick();
    assert_eq!(h.ended.len(), 500);
    assert!(h.flows.is_empty());
}

#[test]
fn custom_timeouts() {
    let mut t = Timeouts::default();
    t.udp.new = 2;
    let mut h = H::new(FlowConfig { timeouts: t, ..FlowConfig::default() });
    h.send(&udp(C, S, 5000, 53));
    h.at(1).tick();
    assert!(h.ended.is_empty());
    h.at(2).tick();
    assert_eq!(h.ended.len(), 1);
}

#[test]
fn emergency_mode_under_a_tiny_memcap() {
    let hash_size = 1024u32;
    let memcap = hash_size as u64 * 4 + 1000 * FlowTable::<()>::flow_bytes() as u64;
    let mut h = H::new(FlowConfig { memcap, hash_size, prealloc: 100, ..FlowConfig::default() });
    assert_eq!(h.flows.capacity(), 1000);
    // 100,000 one-packet flows: 50,000 in one second (only eviction can
    // make room), then 50,000 at 50 a second (a thousand flows fill the
    // table in 20 s, before the 30 s UDP timeout; emergency timeouts prune).
    let n = 100_000u32;
    let rate = 50;
    let burst = 50_000;
    for i in 0..n {
        let sec = if i < burst { 0 } else { 1 + (i - burst) / rate };
        h.t = Timestamp::from_micros(1_700_000_000 + i64::from(sec), 0);
        let src = [10, 1, (i >> 8) as u8, i as u8];
        let f = udp(src, S, 1024 + (i >> 16) as u16, 53);
        assert!(h.send(&f).is_some(), "flow {i} has a flow");
        assert!(h.flows.len() <= 1000);
        assert!(h.flows.counters().memuse <= memcap, "memuse {}", h.flows.counters().memuse);
    }
    let c = h.flows.counters().clone();
    assert_eq!(c.total, u64::from(n));
    assert!(c.emerg_mode_entered >= 1, "{c:?}");
    assert!(c.memcap >= u64::from(burst) - 1000, "{c:?}");
    // Every flow beyond the first thousand needed room: an eviction or an
    // emergency timeout made it, and every one was logged.
    assert_eq!(h.ended.len() as u64 + c.active, u64::from(n));
    let forced = h.ended.iter().filter(|f| f.end_reason == Some(EndReason::Forced)).count() as u64;
    let timed_out = h.ended.iter().filter(|f| f.end_reason == Some(EndReason::Timeout)).count() as u64;
    assert_eq!(forced, c.get_used);
    assert_eq!(forced + timed_out, h.ended.len() as u64);
    assert!(forced > 0 && timed_out > 0, "forced {forced} timed out {timed_out}");
    assert!(h.ended.iter().all(|f| f.emergency || f.end_reason != Some(EndReason::Forced)));
    // Once traffic stops, emergency timeouts (udp: 10 s) prune the table
    // and emergency mode ends.
    let end = i64::from(1 + (n - burst) / rate);
    h.at(end + 11).tick();
    h.at(end + 12).tick();
    assert!(!h.flows.in_emergency(), "{:?}", h.flows.counters());
    assert!(h.flows.counters().emerg_mode_over >= 1);
    h.flows.flush();
    h.ended.extend(h.flows.drain_ended());
    assert_eq!(h.ended.len() as u64, u64::from(n));
}

#[test]
fn flush_logs_every_open_flow_as_shutdown() {
    let mut h = H::new(FlowConfig::default());
    for port in 0..10 {
        h.send(&tcp(C, S, 30000 + port, 443, SYN));
    }
    h.flows.flush();
    let ended: Vec<_> = h.flows.drain_ended().collect();
    assert_eq!(ended.len(), 10);
    assert!(ended.iter().all(|f| f.end_reason == Some(EndReason::Shutdown) && f.state == FlowState::New));
    assert!(h.flows.is_empty());
    assert_eq!(h.flows.counters().end_new, 10);
}

#[test]
fn vlans_and_tunnel_depth_keep_flows_apart() {
    let f = udp(C, S, 7000, 53);
    let mut h = H::new(FlowConfig::default());
    let a = h.send(&build::vlan_tag(&f, ethertype::VLAN, &[10])).unwrap();
    let b = h.send(&build::vlan_tag(&f, ethertype::VLAN, &[20])).unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!(h.flows.get(a).unwrap().vlan_ids(), &[10]);
    let mut h = H::new(FlowConfig { vlan_tracking: false, ..FlowConfig::default() });
    let a = h.send(&build::vlan_tag(&f, ethertype::VLAN, &[10])).unwrap();
    let b = h.send(&build::vlan_tag(&f, ethertype::VLAN, &[20])).unwrap();
    assert_eq!(a.id, b.id);
    // Still logged with the first packet's VLAN.
    assert_eq!(h.flows.get(a).unwrap().vlan_ids(), &[10]);

    // The same inner packet in and out of a tunnel: two flows unless
    // recursion tracking is off. The VXLAN datagram has a flow of its own.
    let inner = PacketBuilder::ipv4(C, S).udp(7000, 53).payload(b"hello").build_ethernet();
    let vx = PacketBuilder::ipv4([192, 168, 1, 1], [192, 168, 1, 2])
        .udp(40000, 4789)
        .payload(&build::vxlan(1, &inner))
        .build_ethernet();
    for (recursion, flows) in [(true, 3), (false, 2)] {
        let mut h = H::new(FlowConfig { recursion_tracking: recursion, ..FlowConfig::default() });
        h.send(&f);
        h.send(&vx);
        assert_eq!(h.flows.len(), flows, "recursion {recursion}");
    }
}

#[test]
fn icmp_echo_and_errors() {
    let mut h = H::new(FlowConfig::default());
    let req = PacketBuilder::ipv4(C, S).icmp(8, 0).build_ethernet();
    let rep = PacketBuilder::ipv4(S, C).icmp(0, 0).build_ethernet();
    let a = h.send(&req).unwrap();
    let b = h.send(&rep).unwrap();
    assert_eq!(a.id, b.id);
    let f = h.flows.get(b).unwrap();
    assert_eq!((f.icmp.to_server, f.icmp.to_client), (Some((8, 0)), Some((0, 0))));
    assert_eq!(f.state, FlowState::Established);
    assert_eq!(h.flows.counters().icmpv4, 1);

    // Port unreachable for a UDP query joins the query's flow, toward the client.
    let q = udp(C, S, 5353, 53);
    let quoted = PacketBuilder::ipv4(C, S).udp(5353, 53).payload(b"hello").build_ip();
    let err = PacketBuilder::ipv4(S, C).icmp(3, 3).payload(&quoted).build_ethernet();
    let q1 = h.send(&q).unwrap();
    let e = h.send(&err).unwrap();
    assert_eq!(q1.id, e.id);
    assert_eq!(e.dir, Direction::ToClient);
    // An error quoting nothing we know creates no flow.
    let other = PacketBuilder::ipv4([10, 9, 9, 9], S).udp(5353, 53).payload(b"hello").build_ip();
    let stray = PacketBuilder::ipv4(S, [10, 9, 9, 9]).icmp(3, 1).payload(&other).build_ethernet();
    assert!(h.send(&stray).is_none());
    let ttl = PacketBuilder::ipv4(S, C).icmp(11, 0).payload(&quoted).build_ethernet();
    assert!(h.send(&ttl).is_none());
}

#[test]
fn stale_handles_do_not_reach_new_flows() {
    let mut h = H::new(FlowConfig::default());
    let a = h.send(&udp(C, S, 1, 2)).unwrap();
    h.at(100).tick();
    let b = h.send(&udp(C, [10, 0, 0, 3], 1, 2)).unwrap();
    assert!(h.flows.get(a).is_none());
    assert!(h.flows.get(b).is_some());
}

#[test]
fn a_state_set_from_the_session_moves_the_timeout() {
    // No SYN: the flags leave the flow new; its session says otherwise.
    let mut h = H::new(FlowConfig::default());
    let x = h.send(&tcp(C, S, 40000, 80, ACK | PSH)).unwrap();
    assert_eq!(h.flows.get(x).unwrap().state, FlowState::New);
    h.flows.set_state(x, FlowState::Established);
    assert_eq!(h.flows.get(x).unwrap().state, FlowState::Established);
    // Past new's timeout, the timer fires and finds the longer one.
    h.at(61).tick();
    assert!(h.ended.is_empty());
    // Closed (60 s after the last packet) is sooner than the established
    // timer already set: it gets a timer of its own.
    h.flows.set_state(x, FlowState::Closed);
    h.at(62).tick();
    assert_eq!(h.ended.len(), 1);
    assert_eq!((h.ended[0].end_reason, h.ended[0].state), (Some(EndReason::Timeout), FlowState::Closed));
}

#[test]
fn flush_in_steps_ends_at_most_so_many_flows_each_time() {
    let mut h = H::new(FlowConfig::default());
    for port in 0..10 {
        h.send(&tcp(C, S, 30000 + port, 443, SYN));
    }
    let (mut from, mut steps) = (0, Vec::new());
    while let Some(next) = h.flows.flush_some(from, 4) {
        steps.push(h.flows.take_ended().len());
        from = next;
    }
    steps.push(h.flows.take_ended().len());
    assert_eq!(steps, [4, 4, 2]);
    assert!(h.flows.is_empty());
    // The ended flows are handed over whole, and an emptied vector comes back for reuse.
    h.send(&tcp(C, S, 40000, 443, SYN));
    h.flows.flush();
    let mut ended = h.flows.take_ended();
    assert_eq!(ended.len(), 1);
    ended.clear();
    h.flows.give_back_ended(ended);
    assert_eq!(h.flows.drain_ended().count(), 0);
}

/// A SYN on a closed session's tuple starts a new flow, unless it carries
/// the session's own first sequence number: that is its first SYN again
/// (retransmitted or replayed), which Suricata keeps in the session.
#[test]
fn a_syn_reuses_a_closed_tuple_unless_it_is_the_first_syn_again() {
    let syn = |seq: u32| PacketBuilder::ipv4(C, S).tcp(40000, 80).tcp_flags(SYN).tcp_seq_ack(seq, 0).build_ethernet();
    let rst = PacketBuilder::ipv4(S, C).tcp(80, 40000).tcp_flags(RST | ACK).tcp_seq_ack(0, 101).build_ethernet();
    let mut h = H::new(FlowConfig::default());
    let first = h.send(&syn(100)).unwrap();
    h.send(&rst).unwrap();
    let f = h.flows.get_mut(first).unwrap();
    f.state = FlowState::Closed;
    // The same SYN again, a second later: the same flow.
    h.at(1);
    let again = h.send(&syn(100)).unwrap();
    assert!(!again.created);
    assert_eq!(again.id, first.id);
    assert_eq!(h.flows.counters().tcp_reuse, 0);
    // A new sequence number: a new session, a new flow.
    h.flows.get_mut(again).unwrap().state = FlowState::Closed;
    let reused = h.send(&syn(5000)).unwrap();
    assert!(reused.created);
    assert_ne!(reused.id, first.id);
    assert_eq!(h.flows.counters().tcp_reuse, 1);
}
