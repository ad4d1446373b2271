//! The test kit every protocol of the table runs (see the tests in
//! `protocols` and vigil's `protocols` integration test): its definition
//! agrees with the rule keyword table, and its sample conversation gives
//! the same transactions whole, byte by byte and in random chunks, fed the
//! way the flow layer feeds a parser.

use serde_json::{json, Value};
use vigil_rules::keywords::{self, Kind};
use vigil_types::Direction;

use super::{ParserInit, ProtoDef, ProtoParser, ProtoTx};
use crate::config::{AppConfig, Transport};
use crate::parser::ParseResult;
use crate::protocols::ALL;

/// How a conversation's TCP data is cut before the parser sees it.
#[derive(Debug, Clone, Copy)]
pub enum Cut {
    Whole,
    Bytes,
    /// Pieces of 1 to `max` bytes from a xorshift stream started at the seed.
    Random(u64, usize),
}

/// What the definition gets wrong: names that are not rule keywords of the
/// right kind, repeated names or numbers, a probe that misses the sample.
pub fn definition_problems(def: &'static ProtoDef) -> Vec<String> {
    let mut out = Vec::new();
    let mut say = |m: String| out.push(format!("{}: {m}", def.name));
    if def.name.is_empty() || def.name != def.name.to_ascii_lowercase() {
        say("the name must be lower case".into());
    }
    if ALL.iter().filter(|d| d.name == def.name).count() != 1 {
        say("listed more than once".into());
    }
    for (i, b) in def.buffers.iter().enumerate() {
        match keywords::lookup(b.name).map(|k| k.kind) {
            Some(Kind::Buffer(name)) if name == b.name => {}
            other => say(format!("buffer {} is not a sticky buffer keyword of that name ({other:?})", b.name)),
        }
        if def.buffers[..i].iter().any(|o| o.id == b.id || o.name == b.name) {
            say(format!("buffer {} repeats a name or number", b.name));
        }
        if ALL.iter().filter(|d| d.buffers.iter().any(|o| o.name == b.name)).count() != 1 {
            say(format!("buffer {} belongs to more than one protocol", b.name));
        }
    }
    for c in def.checks {
        if keywords::lookup(c.name).map(|k| k.kind) != Some(Kind::App) {
            say(format!("check {} is not an app-layer keyword", c.name));
        }
    }
    if def.events.len() > 64 {
        say("more than 64 events".into());
    }
    for (i, e) in def.events.iter().enumerate() {
        if e.is_empty() || e.contains('.') || def.events[..i].contains(e) {
            say(format!("event {e:?} is empty, dotted or repeated"));
        }
    }
    let answers = !(def.buffers.is_empty() && def.checks.is_empty() && def.events.is_empty());
    if answers && !def.transactions {
        say("buffers, checks or events without transactions to answer them".into());
    }
    for inc in def.includes {
        if *inc == def.name || super::find(inc).is_none() {
            say(format!("includes {inc}, which is not another protocol"));
        }
    }
    let sample = (def.sample)();
    match sample.first() {
        None => say("the sample conversation is empty".into()),
        // A protocol only an expectation names is never probed.
        Some(_) if !def.detection.probed() => {}
        Some((dir, data)) => {
            let port = def.detection.ports.first().copied().unwrap_or(0);
            let cx =
                if def.detection.tcp { super::ProbeCx::tcp(40000, port) } else { super::ProbeCx::udp(40000, port) };
            if (def.detection.probe)(*dir, data, cx) != super::Probe::Match {
                say("the probe does not recognize the sample's first bytes".into());
            }
        }
    }
    out
}

/// Offers `data` to `p` on side `dir` in pieces of `chunk` bytes, as the
/// flow layer does: what the parser leaves is offered again with the next
/// bytes. The most it left held at once; a parse error panics.
pub fn feed(p: &mut dyn ProtoParser, dir: Direction, data: &[u8], chunk: usize) -> usize {
    let mut held = Vec::new();
    let mut most = 0;
    for piece in data.chunks(chunk.max(1)) {
        held.extend_from_slice(piece);
        match p.parse(dir, &held) {
            ParseResult::Incomplete { consumed, .. } => drop(held.drain(..consumed.min(held.len()))),
            ParseResult::Done => held.clear(),
            ParseResult::Error => panic!("a parse error after {} bytes held", held.len()),
        }
        most = most.max(held.len());
    }
    most
}

/// Runs `conv` through a new parser of `def`, TCP data cut as `cut`, and
/// describes every transaction: progress, each buffer (every index), its
/// events and its EVE body; then the events raised, and the parser's end state.
pub fn run(def: &'static ProtoDef, conv: &[(Direction, Vec<u8>)], cut: Cut) -> Value {
    run_with(def, conv, cut, false)
}

/// [`run`], with frames marked (`framed`): the description then has the
/// frames too, as the flow layer would hand them over.
pub fn run_with(def: &'static ProtoDef, conv: &[(Direction, Vec<u8>)], cut: Cut, framed: bool) -> Value {
    let transport = if def.detection.tcp { Transport::Tcp } else { Transport::Udp };
    // Every switch on: the kit runs all of a protocol's parsing.
    let expected = def.sample_expected.map(|f| f());
    let app = AppConfig { frames: framed, stream_frames: framed, ..AppConfig::default() };
    let mut track = match transport {
        Transport::Tcp if framed => crate::frames::FrameTrack::with_streams(),
        _ => crate::frames::FrameTrack::default(),
    };
    let mut offsets = [0u64; 2];
    let mut p = (def.new_parser)(&ParserInit {
        app: &app,
        transport,
        first_tx_id: 0,
        options: u32::MAX,
        settings: &[],
        expected: expected.as_ref(),
        client: None,
    });
    let mut held = [Vec::new(), Vec::new()];
    let mut failed = [false, false];
    let mut rng = match cut {
        Cut::Random(seed, _) => seed | 1,
        _ => 1,
    };
    let slot = |d: Direction| usize::from(d == Direction::ToClient);
    for (dir, data) in conv {
        let pieces: Vec<&[u8]> = match (transport, cut) {
            (Transport::Udp, _) | (_, Cut::Whole) => vec![data.as_slice()],
            (_, Cut::Bytes) => data.chunks(1).collect(),
            (_, Cut::Random(_, max)) => {
                let mut v = Vec::new();
                let mut rest = data.as_slice();
                while !rest.is_empty() {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let n = (1 + (rng % max.max(1) as u64) as usize).min(rest.len());
                    let (a, b) = rest.split_at(n);
                    v.push(a);
                    rest = b;
                }
                v
            }
        };
        for piece in pieces {
            let s = slot(*dir);
            if failed[s] {
                continue;
            }
            if transport == Transport::Udp {
                failed[s] = p.parse(*dir, piece) == ParseResult::Error;
                if framed {
                    track.marked(def.name, *dir, None, piece, &mut |out| p.take_frames(out));
                }
                continue;
            }
            if framed {
                track.pass(def.name, *dir, offsets[s], piece);
            }
            offsets[s] += piece.len() as u64;
            held[s].extend_from_slice(piece);
            let result = p.parse(*dir, &held[s]);
            if framed {
                let base = offsets[s] - held[s].len() as u64;
                track.marked(def.name, *dir, Some(base), &held[s], &mut |out| p.take_frames(out));
            }
            match result {
                ParseResult::Done => held[s].clear(),
                ParseResult::Error => failed[s] = true,
                ParseResult::Incomplete { consumed, .. } => {
                    held[s].drain(..consumed.min(held[s].len()));
                }
            }
        }
    }
    for dir in [Direction::ToServer, Direction::ToClient] {
        let s = slot(dir);
        if !failed[s] {
            p.close(dir, &held[s]);
            if framed && transport == Transport::Tcp {
                let base = offsets[s] - held[s].len() as u64;
                track.marked(def.name, dir, Some(base), &held[s], &mut |out| p.take_frames(out));
            }
        }
        track.end(dir);
    }
    let txs: Vec<Value> = (0..p.tx_count()).filter_map(|i| p.tx(i)).map(|tx| describe(def, tx)).collect();
    let mut events = Vec::new();
    p.drain_events(&mut events);
    let events: Vec<Value> = events.iter().map(|e| json!([e.name, e.tx_id])).collect();
    let mut out = json!({"txs": txs, "events": events, "failed": failed, "inspection_done": p.inspection_done()});
    if framed {
        let mut frames = Vec::new();
        track.take(&mut frames);
        // A side whose parsing failed passed what the chunk that failed held:
        // its whole-stream frame depends on the cut.
        frames.retain(|f| f.ftype != crate::frames::STREAM || !failed[slot(f.dir)]);
        frames.sort_by_key(|f| (f.dir == Direction::ToClient, f.offset, f.id));
        let frames: Vec<Value> = frames
            .iter()
            .map(|f| {
                json!([f.type_name(), f.dir == Direction::ToServer, f.id, f.offset, f.len, f.complete, f.tx_id, f.data])
            })
            .collect();
        out["frames"] = Value::Array(frames);
    }
    out
}

fn describe(def: &'static ProtoDef, tx: &dyn ProtoTx) -> Value {
    let mut buffers = Vec::new();
    for b in def.buffers {
        for dir in [Direction::ToServer, Direction::ToClient] {
            let values: Vec<String> = (0..256)
                .map_while(|i| tx.buffer(dir, b.id, i))
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect();
            if !values.is_empty() {
                buffers.push(json!([b.name, format!("{dir:?}"), values]));
            }
        }
    }
    let progress = [Direction::ToServer, Direction::ToClient].map(|d| format!("{:?}", tx.progress(d)));
    let siblings: serde_json::Map<String, Value> =
        tx.eve_siblings(Default::default()).into_iter().map(|(name, v)| (name.to_string(), v)).collect();
    json!({"id": tx.id(), "progress": progress, "finished": tx.finished(), "buffers": buffers,
           "events": tx.events(), "type": tx.record_type().unwrap_or(def.eve_type()), "eve": tx.eve(),
           "siblings": siblings})
}

/// Runs the sample whole, byte by byte and in random chunks: every cut must
/// describe the same transactions. The whole run's description, or where
/// two cuts part.
pub fn cuts_agree(def: &'static ProtoDef) -> Result<Value, String> {
    let conv = (def.sample)();
    let whole = run(def, &conv, Cut::Whole);
    for cut in [Cut::Bytes, Cut::Random(7, 5), Cut::Random(99, 23), Cut::Random(12345, 700)] {
        let other = run(def, &conv, cut);
        if other != whole {
            return Err(format!("{}: cut {cut:?} differs\nwhole: {whole}\nother: {other}", def.name));
        }
    }
    // Frames too are the same however the stream is cut, and marking them
    // changes nothing else.
    let framed = run_with(def, &conv, Cut::Whole, true);
    for (key, v) in whole.as_object().into_iter().flatten() {
        if framed[key] != *v {
            return Err(format!("{}: with frames, {key} differs\nwithout: {v}\nwith: {}", def.name, framed[key]));
        }
    }
    if !def.frames.is_empty() && framed["frames"].as_array().is_none_or(|f| f.iter().all(|x| x[0] == "stream")) {
        return Err(format!("{}: the sample marks none of its frame types", def.name));
    }
    for cut in [Cut::Bytes, Cut::Random(7, 5), Cut::Random(99, 23)] {
        let other = run_with(def, &conv, cut, true);
        if other["frames"] != framed["frames"] {
            return Err(format!(
                "{}: frames of cut {cut:?} differ\nwhole: {}\nother: {}",
                def.name, framed["frames"], other["frames"]
            ));
        }
    }
    Ok(whole)
}

/// Runs `rounds` damaged copies of the sample (bytes flipped, cut short,
/// repeated, spliced across messages, chosen by `seed`) in random chunks:
/// hostile bytes must not make a parser panic, and every transaction must
/// still answer its buffers and EVE body, and the frames it marks must lie
/// where its bytes are. Where fuzzing starts, in CI.
pub fn survives_damage(def: &'static ProtoDef, seed: u64, rounds: usize) {
    let sample = (def.sample)();
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..rounds {
        let mut conv = sample.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % conv.len() as u64) as usize;
            let data = &mut conv[i].1;
            if data.is_empty() {
                continue;
            }
            let at = (next() % data.len() as u64) as usize;
            match next() % 5 {
                0 => data[at] ^= 1 << (next() % 8),
                1 => data[at] = [0, 0xff, b'\n', b'\r', b' ', b'.', b':', b'-'][(next() % 8) as usize],
                2 => data.truncate(at),
                3 => {
                    let piece = data[at..].to_vec();
                    data.extend_from_slice(&piece);
                }
                _ => {
                    let j = (next() % conv.len() as u64) as usize;
                    let other = conv[j].1.clone();
                    let data = &mut conv[i].1;
                    data.splice(at..at, other.into_iter().take(64));
                }
            }
        }
        // Every other round with frames marked: their offsets come from hostile lengths too.
        let framed = next() % 2 == 0;
        let _ = run_with(def, &conv, Cut::Random(next(), 1 + (next() % 64) as usize), framed);
    }
}
