//! Session tracking as Suricata does it: split handshakes, teardown state
//! names, TCP Fast Open data waiting for its acknowledgement, which
//! skipped holes count as gaps, handshake replies checked against the
//! client's timestamp, and resets refusing the SYN.

use vigil_stream::flags::*;
use vigil_stream::{Segment, StreamConfig, StreamCtx, StreamEvent, TcpSession, TcpState};
use vigil_types::Direction::{self, ToClient, ToServer};

const CISN: u32 = 1000;
const SISN: u32 = 3000;

fn seg(dir: Direction, flags: u8, seq: u32, ack: u32, payload: &'static [u8]) -> Segment<'static> {
    Segment { dir, flags, seq, ack, payload, dst: "198.18.0.2".parse().unwrap(), ts: None, tfo: false, urg: None }
}

/// Runs `segs` through a new session; returns it with the events raised.
fn run(ctx: &mut StreamCtx, segs: &[Segment<'static>]) -> (TcpSession, Vec<StreamEvent>) {
    let mut ssn = ctx.start(&segs[0]).expect("a session");
    let mut events = Vec::new();
    for s in segs {
        ssn.handle(ctx, s, &mut |e| events.push(e));
    }
    (ssn, events)
}

fn handshake() -> Vec<Segment<'static>> {
    vec![
        seg(ToServer, SYN, CISN, 0, b""),
        seg(ToClient, SYN | ACK, SISN, CISN + 1, b""),
        seg(ToServer, ACK, CISN + 1, SISN + 1, b""),
    ]
}

/// The states after each segment of `segs`, following a handshake.
fn states(segs: &[Segment<'static>]) -> Vec<TcpState> {
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let (mut ssn, _) = run(&mut ctx, &handshake());
    segs.iter()
        .map(|s| {
            ssn.handle(&mut ctx, s, &mut |_| {});
            ssn.state
        })
        .collect()
}

#[test]
fn split_handshakes_establish_the_session() {
    // SYN, SYN back, the client's SYN/ACK, the server's ACK (the 5-way
    // variant adds a stray server ACK before the server's SYN).
    let four = [
        seg(ToServer, SYN, CISN, 0, b""),
        seg(ToClient, SYN, SISN, 0, b""),
        seg(ToServer, SYN | ACK, CISN, SISN + 1, b""),
        seg(ToClient, ACK, SISN + 1, CISN + 1, b""),
        seg(ToServer, ACK, CISN + 1, SISN + 1, b"EVIL"),
        seg(ToClient, ACK, SISN + 1, CISN + 5, b""),
    ];
    let mut five = four.to_vec();
    five.insert(1, seg(ToClient, ACK, 2000, CISN + 1, b""));
    for segs in [&four[..], &five[..]] {
        let mut ctx = StreamCtx::new(StreamConfig::default());
        let (mut ssn, events) = run(&mut ctx, segs);
        assert_eq!(ssn.state, TcpState::Established);
        assert!(events.is_empty(), "{events:?}");
        let (start, end) = ssn.raw_ready(&mut ctx, ToServer, true).expect("the data reached the stream");
        let mut buf = Vec::new();
        ssn.read(ToServer, start, end, &mut buf);
        assert_eq!(buf, b"EVIL");
    }
}

#[test]
fn split_handshake_synack_is_checked() {
    let mut ctx = StreamCtx::new(StreamConfig::default());
    // Without the server's SYN, a SYN/ACK from the client is in the wrong direction.
    let (ssn, events) = run(&mut ctx, &[seg(ToServer, SYN, CISN, 0, b""), seg(ToServer, SYN | ACK, CISN, 1, b"")]);
    assert_eq!((ssn.state, events), (TcpState::SynSent, vec![StreamEvent::SynAckInWrongDirection]));
    let syns = [seg(ToServer, SYN, CISN, 0, b""), seg(ToClient, SYN, SISN, 0, b"")];
    for (bad, want) in [
        (seg(ToServer, SYN | ACK, CISN, SISN + 9, b""), StreamEvent::FourWhsSynAckWithWrongAck),
        (seg(ToServer, SYN | ACK, CISN + 7, SISN + 1, b""), StreamEvent::FourWhsSynAckWithWrongSyn),
    ] {
        let (ssn, events) = run(&mut ctx, &[syns[0], syns[1], bad]);
        assert_eq!((ssn.state, events), (TcpState::SynSent, vec![want]));
    }
}

#[test]
fn teardown_states_are_named_from_the_server_side() {
    let c_fin = seg(ToServer, FIN | ACK, CISN + 1, SISN + 1, b"");
    let s_ack = seg(ToClient, ACK, SISN + 1, CISN + 2, b"");
    let s_fin = seg(ToClient, FIN | ACK, SISN + 1, CISN + 2, b"");
    let c_ack = seg(ToServer, ACK, CISN + 2, SISN + 2, b"");
    // The client closes first.
    use TcpState::*;
    assert_eq!(states(&[c_fin, s_ack, s_fin, c_ack]), [CloseWait, CloseWait, LastAck, Closed]);
    // The server closes first.
    let s_fin = seg(ToClient, FIN | ACK, SISN + 1, CISN + 1, b"");
    let c_ack = seg(ToServer, ACK, CISN + 1, SISN + 2, b"");
    let c_fin = seg(ToServer, FIN | ACK, CISN + 1, SISN + 2, b"");
    let s_ack = seg(ToClient, ACK, SISN + 2, CISN + 2, b"");
    assert_eq!(states(&[s_fin, c_ack, c_fin, s_ack]), [FinWait1, FinWait2, TimeWait, Closed]);
    // ... and its FIN is never acknowledged.
    assert_eq!(states(&[s_fin, seg(ToServer, ACK, CISN + 1, SISN + 1, b"")]), [FinWait1, FinWait1]);
    // Both FINs cross: the client's acknowledges the server's.
    assert_eq!(states(&[s_fin, c_fin, s_ack]), [FinWait1, TimeWait, Closed]);
    // A client FIN without ACK while the server's is in flight.
    let c_fin_only = seg(ToServer, FIN, CISN + 1, 0, b"");
    assert_eq!(states(&[s_fin, c_fin_only, s_ack]), [FinWait1, Closing, TimeWait]);
    // A resent FIN moves nothing; a reset closes.
    assert_eq!(states(&[c_fin, c_fin, seg(ToClient, RST, SISN + 1, 0, b"")]), [CloseWait, CloseWait, Closed]);
}

#[test]
fn fast_open_data_waits_for_its_acknowledgement() {
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let syn = Segment { tfo: true, ..seg(ToServer, SYN, CISN, 0, b"GET /d1d2") };
    let mut ssn = ctx.start(&syn).unwrap();
    ssn.handle(&mut ctx, &syn, &mut |_| {});
    // The SYN's data is not inspected on its own, before anyone acknowledged it.
    assert_eq!(ssn.raw_ready(&mut ctx, ToServer, false), None);
    for s in [
        seg(ToClient, SYN | ACK, SISN, CISN + 10, b""),
        seg(ToServer, ACK, CISN + 10, SISN + 1, b"d3 HTTP/1.1\r\n\r\n"),
        seg(ToClient, ACK, SISN + 1, CISN + 26, b""),
        seg(ToServer, FIN | ACK, CISN + 26, SISN + 1, b""),
    ] {
        ssn.handle(&mut ctx, &s, &mut |_| {});
    }
    // One chunk from the SYN's first byte on: "d2d3" is there to match.
    let (start, end) = ssn.raw_ready(&mut ctx, ToServer, false).unwrap();
    let mut buf = Vec::new();
    ssn.read(ToServer, start, end, &mut buf);
    assert_eq!(buf, b"GET /d1d2d3 HTTP/1.1\r\n\r\n");
}

#[test]
fn syn_data_without_the_fast_open_option_is_not_stream_data() {
    // A receiver that did not negotiate Fast Open throws the SYN's data away.
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let mut segs = vec![seg(ToServer, SYN, CISN, 0, b"GET /syn")];
    segs.extend(handshake().into_iter().skip(1));
    segs.push(seg(ToServer, ACK, CISN + 1, SISN + 1, b"data"));
    segs.push(seg(ToClient, ACK, SISN + 1, CISN + 5, b""));
    segs.push(seg(ToServer, FIN | ACK, CISN + 5, SISN + 1, b""));
    let (mut ssn, _) = run(&mut ctx, &segs);
    let (start, end) = ssn.raw_ready(&mut ctx, ToServer, false).unwrap();
    let mut buf = Vec::new();
    ssn.read(ToServer, start, end, &mut buf);
    assert_eq!(buf, b"data");
}

#[test]
fn only_acknowledged_holes_are_gaps() {
    // "AAAA", a 4-byte hole, "BBBB"; the server acknowledges `ack` bytes.
    for (ack, gap) in [(4, false), (12, true)] {
        let mut ctx = StreamCtx::new(StreamConfig::default());
        let mut segs = handshake();
        segs.push(seg(ToServer, ACK, CISN + 1, SISN + 1, b"AAAA"));
        segs.push(seg(ToServer, ACK, CISN + 9, SISN + 1, b"BBBB"));
        segs.push(seg(ToClient, ACK, SISN + 1, CISN + 1 + ack, b""));
        segs.push(seg(ToClient, RST | ACK, SISN + 1, CISN + 1 + ack, b""));
        let (mut ssn, _) = run(&mut ctx, &segs);
        let mut read = Vec::new();
        while let Some((start, end)) = ssn.raw_ready(&mut ctx, ToServer, true) {
            ssn.read(ToServer, start, end, &mut read);
            ssn.raw_done(&mut ctx, ToServer, end);
        }
        // Both halves are inspected either way.
        assert_eq!(read, b"AAAABBBB");
        assert_eq!(ctx.counters.reassembly_gap, u64::from(gap), "ack {ack}");
        let summary = ssn.summary();
        assert_eq!((summary.gap.to_server, summary.gap.to_client), (gap, false));
        assert_eq!(summary.state, TcpState::Closed);
    }
}

#[test]
fn summary_counts_regions_of_far_apart_data() {
    let mut ctx = StreamCtx::new(StreamConfig { depth: 0, ..StreamConfig::default() });
    let mut segs = handshake();
    segs.push(seg(ToServer, ACK, CISN + 1, SISN + 1, b"near"));
    let (mut ssn, _) = run(&mut ctx, &segs);
    assert_eq!(ssn.summary().max_regions.to_server, 1);
    // Data a megabyte ahead of the rest is a region of its own.
    ssn.handle(&mut ctx, &seg(ToServer, ACK, CISN + 1 + (1 << 20), SISN + 1, b"far"), &mut |_| {});
    let s = ssn.summary();
    assert_eq!((s.max_regions.to_server, s.max_regions.to_client, s.state), (2, 1, TcpState::Established));
}

#[test]
fn a_synack_first_is_picked_up_from_the_server_side() {
    let synack = seg(ToClient, SYN | ACK, SISN, CISN + 1, b"");
    for (midstream, async_oneside) in [(false, false), (true, false), (false, true)] {
        let mut ctx = StreamCtx::new(StreamConfig { midstream, async_oneside, ..StreamConfig::default() });
        let picks = midstream || async_oneside;
        assert_eq!(ctx.starts_from_server(&synack), picks);
        if !picks {
            assert!(ctx.start(&synack).is_none());
            continue;
        }
        // The handshake is completed by whichever side speaks next.
        let (ssn, events) = run(&mut ctx, &[synack, seg(ToClient, ACK | PSH, SISN + 1, CISN + 1, b"* OK")]);
        assert_eq!((ssn.state, ssn.async_oneside, events), (TcpState::Established, async_oneside, vec![]));
        assert_eq!(ctx.counters.midstream_pickups, 1);
    }
    // A SYN/ACK is never the client's: it starts nothing from that side.
    let ctx = StreamCtx::new(StreamConfig { midstream: true, ..StreamConfig::default() });
    assert!(!ctx.starts_from_server(&seg(ToServer, SYN, CISN, 0, b"")));
}

#[test]
fn one_sided_streams_are_inspected_a_chunk_at_a_time() {
    let cfg = StreamConfig { async_oneside: true, toclient_chunk: 4, ..StreamConfig::default() };
    let mut ctx = StreamCtx::new(cfg);
    let synack = seg(ToClient, SYN | ACK, SISN, CISN + 1, b"");
    let (mut ssn, _) = run(&mut ctx, &[synack, seg(ToClient, ACK | PSH, SISN + 1, CISN + 1, b"ab")]);
    // Nobody acknowledges: what came before the latest segment counts as received.
    assert_eq!(ssn.raw_ready(&mut ctx, ToClient, false), None);
    for s in [seg(ToClient, ACK | PSH, SISN + 3, CISN + 1, b"cd"), seg(ToClient, ACK | PSH, SISN + 5, CISN + 1, b"ef")]
    {
        ssn.handle(&mut ctx, &s, &mut |_| {});
    }
    // "bc" spans two packets and is in one chunk.
    assert_eq!(ssn.raw_ready(&mut ctx, ToClient, false), Some((0, 4)));
    assert_eq!(ssn.raw_ready(&mut ctx, ToClient, true), Some((0, 6)));
}

#[test]
fn handshake_replies_must_echo_the_clients_timestamp() {
    let with_ts = |s: Segment<'static>, val, echo| Segment { ts: Some((val, echo)), ..s };
    let syn = with_ts(seg(ToServer, SYN, CISN, 0, b""), 500, 0);
    let synack = seg(ToClient, SYN | ACK, SISN, CISN + 1, b"");
    // The evasion: a FIN or RST in the server's name that the client would
    // drop for its wrong echo; it is rejected, and the handshake goes on.
    for bad in [seg(ToClient, RST | ACK, SISN, CISN + 1, b""), seg(ToClient, FIN | ACK, SISN, CISN + 1, b"")] {
        let mut ctx = StreamCtx::new(StreamConfig::default());
        let (ssn, events) = run(&mut ctx, &[syn, with_ts(bad, 100, 100), with_ts(synack, 900, 500)]);
        assert_eq!((ssn.state, events), (TcpState::SynRecv, vec![StreamEvent::PktInvalidTimestamp]));
    }
    // A SYN without timestamps: any echo is wrong, none is fine.
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let plain = seg(ToServer, SYN, CISN, 0, b"");
    let (_, events) = run(&mut ctx, &[plain, with_ts(synack, 900, 7)]);
    assert_eq!(events, [StreamEvent::PktInvalidTimestamp]);
    let (ssn, events) = run(&mut ctx, &[plain, with_ts(synack, 900, 0)]);
    assert_eq!((ssn.state, events), (TcpState::SynRecv, vec![]));
}

#[test]
fn a_reset_answering_the_syn_closes_the_session() {
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let syn = seg(ToServer, SYN, CISN, 0, b"");
    let (ssn, events) = run(&mut ctx, &[syn, seg(ToClient, RST | ACK, 0, CISN + 1, b"")]);
    assert_eq!((ssn.state, ssn.reset, events), (TcpState::Closed, true, vec![]));
    // One acknowledging something else is not believed.
    let (ssn, _) = run(&mut ctx, &[syn, seg(ToClient, RST | ACK, 0, CISN + 77, b"")]);
    assert_eq!((ssn.state, ssn.reset), (TcpState::SynSent, false));
}

#[test]
fn stream_size_counts_the_syn_as_suricata_does() {
    let mut ctx = StreamCtx::new(StreamConfig::default());
    // Only the client's SYN: its side is one (the SYN), the server's unseen.
    let (ssn, _) = run(&mut ctx, &handshake()[..1]);
    assert_eq!((ssn.stream_size(ToServer), ssn.stream_size(ToClient)), (1, 0));
    let mut segs = handshake();
    segs.push(seg(ToServer, ACK | PSH, CISN + 1, SISN + 1, b"GET / HTTP/1.0\r\n\r\n"));
    segs.push(seg(ToClient, ACK | PSH, SISN + 1, CISN + 19, b"HTTP/1.0 200 OK\r\n"));
    let (ssn, _) = run(&mut ctx, &segs);
    assert_eq!((ssn.stream_size(ToServer), ssn.stream_size(ToClient)), (19, 18));
    // Midstream, the first byte seen is the stream's start, one after its "ISN".
    let mut ctx = StreamCtx::new(StreamConfig { midstream: true, ..StreamConfig::default() });
    let (ssn, _) = run(&mut ctx, &[seg(ToServer, ACK, 5000, 9000, b"abcd")]);
    assert_eq!((ssn.stream_size(ToServer), ssn.stream_size(ToClient)), (5, 1));
}

#[test]
fn the_logged_stream_marks_its_holes() {
    let mut segs = handshake();
    // "[4 missing]GOOD" then a hole of 4, then "DATA": the first bytes never came.
    segs.push(seg(ToServer, ACK | PSH, CISN + 5, SISN + 1, b"GOOD"));
    segs.push(seg(ToServer, ACK | PSH, CISN + 13, SISN + 1, b"DATA"));
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let (mut ssn, _) = run(&mut ctx, &segs);
    let mut logged = Vec::new();
    ssn.read_logged(ToServer, &mut logged);
    assert_eq!(String::from_utf8_lossy(&logged), "[4 bytes missing]GOOD[4 bytes missing]DATA");
    // What raw inspection saw, but has not released, stays logged.
    while let Some((_, end)) = ssn.raw_ready(&mut ctx, ToServer, true) {
        ssn.raw_seen(ToServer, end);
    }
    let mut again = Vec::new();
    ssn.read_logged(ToServer, &mut again);
    assert_eq!(again, logged);
    let mut empty = Vec::new();
    ssn.read_logged(ToClient, &mut empty);
    assert!(empty.is_empty());
}

#[test]
fn paws_discards_segments_with_old_timestamps() {
    let ts =
        |dir, flags, seq, ack, payload, val: u32| Segment { ts: Some((val, 0)), ..seg(dir, flags, seq, ack, payload) };
    let segs = vec![
        ts(ToServer, SYN, CISN, 0, b"", 100),
        ts(ToClient, SYN | ACK, SISN, CISN + 1, b"", 500),
        ts(ToServer, ACK, CISN + 1, SISN + 1, b"", 101),
        ts(ToServer, ACK | PSH, CISN + 1, SISN + 1, b"GOOD", 102),
    ];
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let (mut ssn, events) = run(&mut ctx, &segs);
    assert!(events.is_empty(), "{events:?}");
    assert!(ssn.timestamps);
    let mut events = Vec::new();
    // Older than the sender's latest: discarded, its data never reaches the stream.
    let old = ts(ToServer, ACK | PSH, CISN + 5, SISN + 1, b"EVIL", 90);
    assert!(!ssn.handle(&mut ctx, &old, &mut |e| events.push(e)).stream_added);
    // A reset with TSval 0 is not believed (the default receiver policy).
    ssn.handle(&mut ctx, &ts(ToClient, RST | ACK, SISN + 1, CISN + 5, b"", 0), &mut |e| events.push(e));
    assert_eq!(events, [StreamEvent::PktInvalidTimestamp, StreamEvent::PktInvalidTimestamp]);
    assert!(!ssn.reset);
    // A current one goes on.
    assert!(ssn.handle(&mut ctx, &ts(ToServer, ACK | PSH, CISN + 5, SISN + 1, b"MORE", 103), &mut |_| {}).stream_added);
    // Without timestamps in the handshake, nothing is checked.
    let (mut plain, _) = run(&mut ctx, &handshake());
    let mut none = Vec::new();
    plain.handle(&mut ctx, &ts(ToServer, ACK | PSH, CISN + 1, SISN + 1, b"X", 0), &mut |e| none.push(e));
    assert!(none.is_empty() && !plain.timestamps);
}

#[test]
fn a_reset_whose_sender_goes_on_is_suspected_injected() {
    // The client's "reset" is followed by the client's request from the same
    // sequence number: the server took it, so the session is followed on.
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let mut segs = handshake();
    segs.push(seg(ToServer, RST | ACK, CISN + 1, SISN + 1, b""));
    segs.push(seg(ToServer, PSH | ACK, CISN + 1, SISN + 1, b"GET /x"));
    segs.push(seg(ToClient, ACK, SISN + 1, CISN + 7, b""));
    let (mut ssn, events) = run(&mut ctx, &segs);
    assert_eq!(events, [StreamEvent::SuspectedRstInject]);
    assert_eq!(ssn.state, TcpState::Established);
    let (start, end) = ssn.raw_ready(&mut ctx, ToServer, true).expect("the request is there");
    let mut buf = Vec::new();
    ssn.read(ToServer, start, end, &mut buf);
    assert_eq!(buf, b"GET /x");
    // The other side answering a reset it received is no sign of injection.
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let mut segs = handshake();
    segs.push(seg(ToServer, RST | ACK, CISN + 1, SISN + 1, b""));
    segs.push(seg(ToClient, PSH | ACK, SISN + 1, CISN + 1, b"late"));
    let (ssn, events) = run(&mut ctx, &segs);
    assert_eq!((ssn.state, events), (TcpState::Closed, vec![StreamEvent::DataAfterRst]));
}

#[test]
fn a_record_trigger_skips_the_chunk_wait_once_and_only_up_to_its_offset() {
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let mut segs = handshake();
    segs.push(seg(ToServer, ACK | PSH, CISN + 1, SISN + 1, b"ab"));
    segs.push(seg(ToClient, ACK, SISN + 1, CISN + 3, b""));
    let (mut ssn, _) = run(&mut ctx, &segs);
    // Less than a chunk, acknowledged: it waits.
    assert_eq!(ssn.raw_ready(&mut ctx, ToServer, false), None);
    // A record ends at 2: the two bytes go now, and the trigger is spent.
    ssn.dirs.get_mut(ToServer).raw_trigger = Some(2);
    assert_eq!(ssn.raw_ready(&mut ctx, ToServer, false), Some((0, 2)));
    assert_eq!(ssn.dirs.get(ToServer).raw_trigger, None);
    ssn.raw_done(&mut ctx, ToServer, 2);
    // A trigger inspection already covered is dropped without effect.
    ssn.dirs.get_mut(ToServer).raw_trigger = Some(1);
    assert_eq!(ssn.raw_ready(&mut ctx, ToServer, false), None);
    assert_eq!(ssn.dirs.get(ToServer).raw_trigger, None);
    // A trigger past the acknowledged data waits for it.
    for s in [seg(ToServer, ACK | PSH, CISN + 3, SISN + 1, b"cdef"), seg(ToClient, ACK, SISN + 1, CISN + 5, b"")] {
        ssn.handle(&mut ctx, &s, &mut |_| {});
    }
    ssn.dirs.get_mut(ToServer).raw_trigger = Some(6);
    assert_eq!(ssn.raw_ready(&mut ctx, ToServer, false), None, "only 2..4 is acknowledged");
    assert_eq!(ssn.dirs.get(ToServer).raw_trigger, Some(6));
}

#[test]
fn a_session_is_untouched_until_data_or_a_fin() {
    let mut ctx =
        StreamCtx { cfg: StreamConfig { midstream: true, ..StreamConfig::default() }, ..StreamCtx::default() };
    let ack = seg(ToServer, ACK, CISN, SISN, b"");
    let mut ssn = ctx.start(&ack).unwrap();
    ssn.handle(&mut ctx, &ack, &mut |_| {});
    assert!(ssn.midstream && ssn.untouched());
    let mut fin = ssn.clone();
    fin.handle(&mut ctx, &seg(ToClient, FIN | ACK, SISN, CISN, b""), &mut |_| {});
    assert!(!fin.untouched(), "a FIN decided the state's sides");
    ssn.handle(&mut ctx, &seg(ToServer, ACK | PSH, CISN, SISN, b"x"), &mut |_| {});
    assert!(!ssn.untouched());
}

#[test]
fn urgent_segments_and_open_sessions_are_counted() {
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let mut segs = handshake();
    segs.push(seg(ToServer, ACK | PSH | URG, CISN + 1, SISN + 1, b"x"));
    let (mut one, _) = run(&mut ctx, &segs);
    let (mut two, _) = run(&mut ctx, &handshake());
    assert_eq!((ctx.counters.urg, ctx.counters.active_sessions, ctx.counters.sessions), (1, 2, 2));
    ctx.end(&mut one);
    assert_eq!(ctx.counters.active_sessions, 1);
    ctx.end(&mut two);
    assert_eq!((ctx.counters.active_sessions, ctx.counters.sessions), (0, 2), "a gauge, the total stays");
}

#[test]
fn data_the_reassembly_memcap_refuses_is_counted_by_kind() {
    // Room for the first segment only: new bytes of its retransmission with
    // more, and the next segment, find none.
    let first = seg(ToServer, ACK | PSH, CISN + 1, SISN + 1, b"hello");
    let mut probe = StreamCtx::new(StreamConfig::default());
    let mut segs = handshake();
    segs.push(first);
    run(&mut probe, &segs);
    let room = probe.reassembly_memuse;
    let mut ctx = StreamCtx::new(StreamConfig { reassembly_memcap: room, ..StreamConfig::default() });
    segs.push(seg(ToServer, ACK | PSH, CISN + 1, SISN + 1, b"hello world"));
    segs.push(seg(ToServer, ACK | PSH, CISN + 12, SISN + 1, b"more"));
    run(&mut ctx, &segs);
    assert_eq!((ctx.counters.insert_data_overlap_fail, ctx.counters.insert_data_normal_fail), (1, 1));
}

/// The client's stream after "GET /malic", the urgent "X" (pointer 1) and
/// "ious" under `policy`, and its counters of urgent data.
fn urgent_stream(policy: vigil_stream::UrgentPolicy, ptr: u16) -> (Vec<u8>, u64, u64, bool, u64) {
    let cfg = StreamConfig { urgent: policy, ..StreamConfig::default() };
    let mut ctx = StreamCtx::new(cfg);
    let (mut ssn, _) = run(&mut ctx, &handshake());
    let urgent = Segment { urg: Some(ptr), ..seg(ToServer, ACK | PSH | URG, CISN + 11, SISN + 1, b"X") };
    let mut dropped = false;
    for s in [
        seg(ToServer, ACK | PSH, CISN + 1, SISN + 1, b"GET /malic"),
        urgent,
        seg(ToServer, ACK | PSH, CISN + 12, SISN + 1, b"ious"),
    ] {
        dropped |= ssn.handle(&mut ctx, &s, &mut |_| {}).urgent_drop;
    }
    // The server acknowledges all it got, urgent byte included.
    ssn.handle(&mut ctx, &seg(ToClient, ACK, SISN + 1, CISN + 16, b""), &mut |_| {});
    let mut out = Vec::new();
    let s = ssn.dirs.get(ToServer);
    ssn.read(ToServer, 0, s.seen_end, &mut out);
    (out, ctx.counters.urgent_oob_data, ctx.counters.urgent_oob_limit_reached, dropped, s.seen_end)
}

#[test]
fn urgent_data_follows_the_urgent_policy() {
    use vigil_stream::UrgentPolicy::*;
    // Inline (Suricata's default): the urgent byte is data like any other.
    assert_eq!(urgent_stream(Inline, 1), (b"GET /malicXious".to_vec(), 0, 0, false, 15));
    // OOB: the byte before the pointer leaves the stream, which closes up,
    // and the acknowledgement after it still covers the rest.
    assert_eq!(urgent_stream(Oob, 1), (b"GET /malicious".to_vec(), 1, 0, false, 14));
    // Gap: the byte is a hole; drop: the segment is left out and the packet to be dropped.
    // (What is read stops at the hole; the bytes after it keep their places.)
    assert_eq!(urgent_stream(Gap, 1), (b"GET /malic".to_vec(), 1, 0, false, 15));
    assert_eq!(urgent_stream(Drop, 1), (b"GET /malic".to_vec(), 0, 0, true, 15));
    // A pointer past the segment's data falls to the OOB limit policy (drop by default).
    let (_, oob, limit, dropped, _) = urgent_stream(Oob, 9);
    assert_eq!((oob, limit, dropped), (0, 1, true));
}

#[test]
fn past_the_depth_the_application_gets_no_more() {
    // A depth of 8: "AAAA" acknowledged and read, "BBBB" within the depth
    // but not yet acknowledged when "CCCC" passes the depth.
    let mut ctx = StreamCtx::new(StreamConfig { depth: 8, ..StreamConfig::default() });
    let mut segs = handshake();
    segs.push(seg(ToServer, ACK, CISN + 1, SISN + 1, b"AAAA"));
    segs.push(seg(ToClient, ACK, SISN + 1, CISN + 5, b""));
    let (mut ssn, _) = run(&mut ctx, &segs);
    ssn.app_enabled = true;
    let (_, start, end) = ssn.app_ready(&ctx, ToServer, false).expect("acknowledged data");
    assert_eq!((start, end), (0, 4));
    ssn.app_done(&mut ctx, ToServer, end);
    let mut events = Vec::new();
    for s in [
        seg(ToServer, ACK, CISN + 5, SISN + 1, b"BBBB"),
        seg(ToServer, ACK, CISN + 9, SISN + 1, b"CCCC"),
        seg(ToClient, ACK, SISN + 1, CISN + 13, b""),
    ] {
        ssn.handle(&mut ctx, &s, &mut |e| events.push(e));
    }
    assert!(events.contains(&StreamEvent::DepthReached));
    // Suricata stops the application's reassembly at the depth: "BBBB"
    // never reaches it, even at the end.
    assert_eq!(ssn.app_ready(&ctx, ToServer, true), None);
    // Inline, data goes to the application as it comes, so none waits.
    let mut ctx = StreamCtx::new(StreamConfig { depth: 8, inline: true, ..StreamConfig::default() });
    let mut segs = handshake();
    segs.push(seg(ToServer, ACK, CISN + 1, SISN + 1, b"AAAABBBB"));
    let (mut ssn, _) = run(&mut ctx, &segs);
    ssn.app_enabled = true;
    assert_eq!(ssn.app_ready(&ctx, ToServer, false).map(|r| (r.1, r.2)), Some((0, 8)));
}
