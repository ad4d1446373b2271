//! Arbitrary bytes as a multipart body, cut where the input says, through
//! the shared reader: it must never panic, never hold more than a part's
//! header block and a delimiter, and give the same parts however cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_applayer::codecs::multipart::{Event, Multipart, MAX_PART_HEADERS};

fn parts(body: &[u8], cuts: &[u8]) -> Vec<(Vec<u8>, Vec<u8>, bool)> {
    let mut m = Multipart::new(b"bnd");
    let mut out: Vec<(Vec<u8>, Vec<u8>, bool)> = Vec::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let n = (usize::from(cuts.get(i).copied().unwrap_or(255)) + 1).min(rest.len());
        i += 1;
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        m.feed(chunk, &mut |e| match e {
            Event::Part(h) => {
                assert!(h.len() <= MAX_PART_HEADERS + 4);
                out.push((h.to_vec(), Vec::new(), false));
            }
            Event::Data(d) => {
                if let Some(p) = out.last_mut() {
                    p.1.extend_from_slice(d);
                }
            }
            Event::End => {
                if let Some(p) = out.last_mut() {
                    p.2 = true;
                }
            }
        });
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&ncuts, rest)) = data.split_first() else { return };
    let (cuts, body) = rest.split_at(usize::from(ncuts).min(rest.len()));
    assert_eq!(parts(body, cuts), parts(body, &[]));
});
