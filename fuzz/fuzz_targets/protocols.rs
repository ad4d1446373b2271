//! Every protocol of the application layer's table (`vigil_applayer::protocols::ALL`),
//! through its probe and its parser in both directions: a new protocol is fuzzed as soon as
//! it is listed. The first byte picks the protocol, the rest is a list of chunks: a header
//! byte (top bit the direction, 0x7f a capture gap, otherwise the length) then that many
//! bytes, fed the way the flow layer does (unconsumed bytes kept and offered again). Nothing
//! may panic, a parser that asks for more must have consumed what it could, every buffer
//! and EVE body may be asked for, and event names carry the protocol's prefix.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_applayer::proto::{ParserInit, ProbeCx};
use vigil_applayer::protocols::ALL;
use vigil_applayer::{AppConfig, ParseResult, Transport};
use vigil_types::Direction::{ToClient, ToServer};

/// Bytes a parser may leave unconsumed between calls before the flow would cut them.
const MAX_HELD: usize = 256 * 1024;

fuzz_target!(|data: &[u8]| {
    let [pick, rest @ ..] = data else { return };
    if ALL.is_empty() {
        return;
    }
    let def = ALL[usize::from(*pick) % ALL.len()];
    let port = def.detection.ports.first().copied().unwrap_or(0);
    let _ = (def.detection.probe)(ToServer, rest, ProbeCx::tcp(40000, port));
    let _ = (def.detection.probe)(ToClient, rest, ProbeCx::udp(port, 40000));
    // A protocol of both transports gets each, by the picking byte's next digit.
    let transport = match (def.detection.tcp, def.detection.udp) {
        (true, true) if usize::from(*pick) / ALL.len() % 2 == 1 => Transport::Udp,
        (true, _) => Transport::Tcp,
        _ => Transport::Udp,
    };
    // Every switch on: all of the protocol's parsing is fuzzed.
    // A protocol only an expectation names gets the one of its sample.
    let expected = def.sample_expected.map(|f| f());
    let mut p = (def.new_parser)(&ParserInit {
        app: &AppConfig::default(),
        transport,
        first_tx_id: 0,
        options: u32::MAX,
        settings: &[],
        expected: expected.as_ref(),
        client: Some(std::net::IpAddr::from([198, 18, 0, 1])),
    });
    let mut pending = [Vec::new(), Vec::new()];
    let mut failed = [false, false];
    let mut rest = rest;
    let mut events = Vec::new();
    while let [hdr, tail @ ..] = rest {
        let (dir, side) = if hdr & 0x80 == 0 { (ToServer, 0) } else { (ToClient, 1) };
        if hdr & 0x7f == 0x7f {
            if !p.on_gap(dir, 1) {
                failed[side] = true;
            }
            pending[side].clear();
            rest = tail;
            continue;
        }
        let len = usize::from(hdr & 0x7f).min(tail.len());
        rest = &tail[len..];
        if failed[side] {
            continue;
        }
        pending[side].extend_from_slice(&tail[..len]);
        match p.parse(dir, &pending[side]) {
            ParseResult::Done => pending[side].clear(),
            ParseResult::Incomplete { consumed, needed } => {
                assert!(consumed <= pending[side].len() && needed > 0);
                pending[side].drain(..consumed);
            }
            ParseResult::Error => failed[side] = true,
        }
        if pending[side].len() > MAX_HELD {
            pending[side].clear();
            let _ = p.on_gap(dir, 1);
        }
        p.drain_events(&mut events);
        for e in events.drain(..) {
            assert!(e.name.starts_with(def.name) && e.name.as_bytes().get(def.name.len()) == Some(&b'.'));
        }
    }
    let _ = (p.wants_data(), p.take_raw_trigger(ToServer), p.take_raw_trigger(ToClient));
    p.close(ToServer, &pending[0]);
    p.close(ToClient, &pending[1]);
    let _ = p.inspection_done();
    for i in 0..p.tx_count() {
        let tx = p.tx(i).expect("tx_count transactions");
        let _ = (tx.id(), tx.finished(), tx.progress(ToServer), tx.progress(ToClient), tx.eve());
        for b in def.buffers {
            for index in 0..3 {
                let _ = tx.buffer(ToServer, b.id, index);
                let _ = tx.buffer(ToClient, b.id, index);
            }
        }
    }
    p.prune(u64::MAX);
    assert_eq!(p.tx_count(), 0, "pruning below every id frees every transaction");
});
