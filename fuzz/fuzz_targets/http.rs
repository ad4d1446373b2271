//! Arbitrary bytes as the two directions of an HTTP flow, cut into chunks,
//! gaps and closes driven by the input, through the parser under tight
//! limits: it must never panic, and every kept buffer (and every file's
//! held copy) must stay within the configured bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_applayer::http::{probe, HttpConfig, HttpParser};
use vigil_applayer::http::Buffer;
use vigil_applayer::{FileConfig, MagicFn, ParseResult};
use vigil_types::Direction;


fuzz_target!(|data: &[u8]| {
    let Some((&sel, mut rest)) = data.split_first() else { return };
    let cfg = HttpConfig {
        request_body_limit: 512,
        response_body_limit: 512,
        max_header_bytes: 64 + usize::from(sel & 0x3f) * 8,
        max_headers: 16,
        max_txs: 4,
        decompress_limit: 4096,
        decompress_ratio_cap: 64,
        // Bodies as files, with every digest and a small store bound.
        request_file_limit: 0,
        response_file_limit: 0,
        files: FileConfig {
            md5: true,
            sha1: true,
            sha256: true,
            keep: true,
            store_all: sel & 0x40 != 0,
            hold: sel & 0x20 != 0,
            hold_budget: None,
            depth: if sel & 0x80 != 0 { 300 } else { 0 },
            unstored_depth: if sel & 0x10 != 0 { 500 } else { 0 },
            max_kept: 1024,
            // A describer that reads every byte it is given, as libmagic may.
            magic: Some(MagicFn(|d| Some(d.iter().map(|&b| u64::from(b)).sum::<u64>().to_string()))),
        },
    };
    let max = cfg.max_header_bytes;
    // Generous: the table may hold the budget plus three framing headers,
    // and each line of `http.start`/`http.header` adds a few separator bytes.
    let header_cap = 4 * max + 8 * (cfg.max_headers + 4) + max;
    let mut p = HttpParser::new(cfg);
    let mut held: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    // Each record: a control byte (bit 7: direction, bits 0..=6: chunk
    // length; 0 means "an operation byte follows"), then the chunk.
    while let Some((&ctl, tail)) = rest.split_first() {
        rest = tail;
        let (dir, slot) = if ctl & 0x80 == 0 { (Direction::ToServer, 0) } else { (Direction::ToClient, 1) };
        let n = usize::from(ctl & 0x7f);
        if n == 0 {
            let Some((&op, tail)) = rest.split_first() else { break };
            rest = tail;
            match op % 4 {
                0 => {
                    held[slot].clear();
                    p.on_gap(dir, u64::from(op >> 2));
                }
                1 => {
                    let kept = std::mem::take(&mut held[slot]);
                    p.close(dir, &kept);
                }
                2 => {
                    let first = p.txs().first().map(|t| t.id()).unwrap_or(0);
                    p.prune(first + u64::from(op >> 6));
                }
                _ => {
                    let _ = p.take_events();
                }
            }
            continue;
        }
        let (chunk, tail) = rest.split_at(n.min(rest.len()));
        rest = tail;
        let _ = probe(chunk, dir);
        let h = &mut held[slot];
        h.extend_from_slice(chunk);
        match p.parse(dir, h) {
            ParseResult::Done | ParseResult::Error => h.clear(),
            ParseResult::Incomplete { consumed, .. } => {
                assert!(consumed <= h.len());
                h.drain(..consumed);
            }
        }
        // What an engine does: it bounds what it keeps for the parser. Only
        // a CONNECT awaiting its answer may make the parser wait for more.
        if h.len() > 4 * max {
            h.clear();
        }
        assert!(p.txs().len() <= cfg.max_txs);
        assert!(p.take_events().len() <= 1024);
        for tx in p.txs() {
            for (dir, id) in (0..=u8::MAX).map_while(Buffer::from_id).flat_map(|b| [(Direction::ToServer, b), (Direction::ToClient, b)]) {
                let Some(b) = tx.buffer(dir, id, 0) else { continue };
                let cap = match id {
                    Buffer::RequestBody => cfg.request_body_limit,
                    Buffer::ResponseBody => cfg.response_body_limit,
                    Buffer::HeaderRaw => max,
                    Buffer::Uri | Buffer::UriRaw | Buffer::RequestLine | Buffer::ResponseLine | Buffer::Method => max,
                    _ => header_cap,
                };
                assert!(b.len() <= cap, "{id:?} holds {} bytes, cap {cap}", b.len());
            }
            assert!(tx.buffer(Direction::ToServer, Buffer::Uri, 1).is_none());
            for dir in [Direction::ToServer, Direction::ToClient] {
                let files = tx.files(dir);
                assert!(files.len() <= 256);
                for f in files {
                    assert!(f.kept.len() as u64 <= cfg.files.max_kept);
                    assert!(cfg.files.depth == 0 || f.size <= cfg.files.depth || f.gaps);
                    let _ = f.settled(tx.complete(dir));
                }
            }
            let _ = tx.eve_with_headers();
        }
    }
});
