//! TLS through the streaming parser in both directions. The input is a list of chunks: a
//! header byte (top bit the direction, 0x7f a capture gap, otherwise the length) then that
//! many bytes. Chunks are fed the way the flow layer does (unconsumed bytes kept and offered
//! again). Nothing may panic, and the bytes kept never exceed one record plus one chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_applayer::tls::{probe, record::MAX_RECORD_LEN, Buffer, TlsEveOptions, TlsParser};
use vigil_applayer::ParseResult;
use vigil_types::Direction::{ToClient, ToServer};

fuzz_target!(|data: &[u8]| {
    let _ = probe(data);
    let mut p = TlsParser::with_max_handshake(16 * 1024);
    let mut pending = [Vec::new(), Vec::new()];
    let mut failed = [false, false];
    let mut rest = data;
    while let [hdr, tail @ ..] = rest {
        let (dir, side) = if hdr & 0x80 == 0 { (ToServer, 0) } else { (ToClient, 1) };
        if hdr & 0x7f == 0x7f {
            p.on_gap(dir, 1);
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
        assert!(pending[side].len() <= 5 + MAX_RECORD_LEN + 0x7f);
        for e in p.take_events() {
            assert!(e.name.starts_with("tls."));
        }
    }
    let _ = p.encrypted();
    for tx in p.txs() {
        let _ = tx.eve_with(TlsEveOptions::fields(u32::MAX));
        for id in (0..=u8::MAX).map_while(Buffer::from_id) {
            for i in 0..3 {
                let _ = tx.buffer(id, i);
                let _ = tx.buffer_dir(ToServer, id, i);
                let _ = tx.buffer_dir(ToClient, id, i);
            }
        }
        let _ = (tx.cert_expired(0), tx.cert_valid(0), tx.version_name(), tx.complete(ToClient));
    }
});
