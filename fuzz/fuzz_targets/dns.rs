//! DNS through the UDP and TCP parsers. UDP: the input is a list of datagrams (2-byte header:
//! top bit the direction, the rest the length). TCP: the input is the byte stream of both
//! directions, cut into chunks the selector byte seeds and fed the way the flow layer does
//! (unconsumed bytes kept and offered again). Nothing may panic, UDP never answers
//! `Incomplete`, and what is held (transactions, pending bytes) stays within its bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_applayer::dns::{probe_tcp, probe_udp, Buffer, DnsParser};
use vigil_applayer::ParseResult;
use vigil_types::Direction::{ToClient, ToServer};

const MAX_TXS: usize = 16;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let _ = probe_udp(rest);
    let _ = probe_tcp(rest);
    if sel & 1 == 0 {
        udp(rest);
    } else {
        tcp(sel, rest);
    }
});

fn udp(mut rest: &[u8]) {
    let mut p = DnsParser::udp().with_max_txs(MAX_TXS);
    while let [hi, lo, tail @ ..] = rest {
        let hdr = u16::from_be_bytes([*hi, *lo]);
        let dir = if hdr & 0x8000 == 0 { ToServer } else { ToClient };
        let len = usize::from(hdr & 0x7fff).min(tail.len());
        let r = p.parse(dir, &tail[..len]);
        assert!(!matches!(r, ParseResult::Incomplete { .. }));
        rest = &tail[len..];
        inspect(&mut p);
    }
}

fn tcp(sel: u8, stream: &[u8]) {
    let mut p = DnsParser::tcp().with_max_txs(MAX_TXS);
    let mut rng = u64::from(sel) | 1;
    let mut next = move || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        rng >> 33
    };
    // Both directions carry the same bytes, cut differently.
    for dir in [ToServer, ToClient] {
        let mut pending: Vec<u8> = Vec::new();
        let mut off = 0;
        while off < stream.len() {
            let n = (next() % 48 + 1) as usize;
            let n = n.min(stream.len() - off);
            pending.extend_from_slice(&stream[off..off + n]);
            off += n;
            if sel & 2 != 0 && next() % 64 == 0 {
                pending.clear();
                p.on_gap(dir, 1);
            }
            match p.parse(dir, &pending) {
                ParseResult::Done => pending.clear(),
                ParseResult::Incomplete { consumed, needed } => {
                    assert!(consumed <= pending.len() && needed > 0);
                    pending.drain(..consumed);
                }
                ParseResult::Error => break,
            }
            // One message plus its prefix, plus one chunk, is the most ever kept.
            assert!(pending.len() <= 65_537 + 48);
            inspect(&mut p);
        }
    }
}

fn inspect(p: &mut DnsParser) {
    assert!(p.txs().len() <= MAX_TXS);
    for tx in p.txs() {
        let _ = tx.eve();
        let _ = tx.eve_with(false);
        for i in 0..4 {
            for id in (0..=u8::MAX).map_while(Buffer::from_id) {
                let _ = tx.buffer(id, i);
            }
            let _ = tx.response_rrname(i);
        }
        assert!(tx.complete(ToServer) && tx.complete(ToClient));
    }
    for e in p.take_events() {
        assert!(e.name.starts_with("dns."));
    }
    if let Some(last) = p.txs().last() {
        let id = last.id();
        p.prune(id);
        assert!(p.txs().len() <= 1);
    }
}
