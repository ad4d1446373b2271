//! The SSH parser whole, byte by byte and in random chunks; banners,
//! KEXINIT and HASSH, encryption, hostile input.

use super::*;
use crate::ParseResult;
use vigil_types::Direction::{ToClient, ToServer};

use super::sample::{client_stream, packet, server_stream};

/// Feeds both streams in chunks cut by `cut`, as the flow would (keeping what the parser left).
fn run(cut: &mut dyn FnMut(usize) -> usize) -> SshParser {
    let mut p = SshParser::new(7).with_hassh(true);
    for (dir, data) in [(ToServer, client_stream()), (ToClient, server_stream())] {
        let mut held: Vec<u8> = Vec::new();
        let mut at = 0;
        while at < data.len() {
            let n = cut(data.len() - at).clamp(1, data.len() - at);
            held.extend_from_slice(&data[at..at + n]);
            at += n;
            match p.parse(dir, &held) {
                ParseResult::Done => held.clear(),
                ParseResult::Incomplete { consumed, .. } => {
                    held.drain(..consumed);
                }
                ParseResult::Error => panic!("error"),
            }
        }
    }
    p
}

fn summary(p: &SshParser) -> String {
    format!("{:?} {} {}", p.tx(0).map(|t| t.eve()), p.encrypted(ToServer), p.encrypted(ToClient))
}

#[test]
fn whole_bytewise_and_random_chunks_agree() {
    let whole = run(&mut |n| n);
    let tx = whole.tx(0).unwrap();
    assert_eq!(tx.id(), 7);
    assert_eq!(tx.buffer(ToServer, Buffer::Proto as u8, 0), Some(&b"2.0"[..]));
    assert_eq!(tx.buffer(ToServer, Buffer::Software as u8, 0), Some(&b"OpenSSH_8.9p1"[..]));
    assert_eq!(tx.buffer(ToClient, Buffer::Proto as u8, 0), Some(&b"1.99"[..]));
    assert_eq!(tx.buffer(ToClient, Buffer::Software as u8, 0), Some(&b"Cisco-1.25"[..]));
    let client = "curve25519-sha256,ext-info-c;aes128-ctr,aes256-ctr;hmac-sha2-256;none,zlib@openssh.com";
    let server = "curve25519-sha256,ext-info-c;aes256-ctr;hmac-sha1;zlib";
    assert_eq!(tx.buffer(ToServer, Buffer::HasshString as u8, 0), Some(client.as_bytes()));
    assert_eq!(tx.buffer(ToClient, Buffer::HasshServerString as u8, 0), Some(server.as_bytes()));
    // The server buffers answer whichever side a rule inspects.
    assert_eq!(tx.buffer(ToServer, Buffer::HasshServerString as u8, 0), Some(server.as_bytes()));
    let hash = tx.buffer(ToServer, Buffer::Hassh as u8, 0).unwrap();
    assert_eq!(hash.len(), 32);
    assert!(hash.iter().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert_eq!(tx.progress(ToServer), crate::Progress::Complete);
    assert!(whole.inspection_done(), "both sides sent NEWKEYS");
    let expect = summary(&whole);
    assert_eq!(summary(&run(&mut |_| 1)), expect, "byte by byte");
    let mut seed = 0x2545_f491_u64;
    for _ in 0..50 {
        let got = run(&mut |left| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            1 + (seed as usize) % left.min(64)
        });
        assert_eq!(summary(&got), expect, "random chunks");
    }
}

#[test]
fn eve_names_both_sides_as_suricata() {
    let p = run(&mut |n| n);
    let eve = p.tx(0).unwrap().eve();
    assert_eq!(eve["client"]["proto_version"], "2.0");
    assert_eq!(eve["server"]["software_version"], "Cisco-1.25");
    assert_eq!(eve["client"]["hassh"]["hash"].as_str().unwrap().len(), 32);
    assert!(eve["server"]["hassh"]["string"].as_str().unwrap().ends_with(";zlib"));
}

#[test]
fn banner_progress_and_close() {
    let mut p = SshParser::new(0).with_hassh(true);
    assert_eq!(p.parse(ToServer, b"SSH-2.0-Go"), ParseResult::Incomplete { consumed: 0, needed: 1 });
    assert_eq!(p.tx(0).unwrap().progress(ToServer), crate::Progress::None);
    assert_eq!(p.parse(ToServer, b"SSH-2.0-Go\n"), ParseResult::Done);
    assert_eq!(p.tx(0).unwrap().progress(ToServer), crate::Progress::Headers);
    assert_eq!(p.tx(0).unwrap().buffer(ToServer, Buffer::Hassh as u8, 0), None);
    p.close(ToServer, &[]);
    assert_eq!(p.tx(0).unwrap().progress(ToServer), crate::Progress::Complete);
    assert!(!p.tx(0).unwrap().finished());
    p.close(ToClient, &[]);
    assert!(p.tx(0).unwrap().finished());
    p.prune(1);
    assert_eq!(p.tx_count(), 0);
}

#[test]
fn hostile_input_raises_events_and_stays_bounded() {
    // A client line that is not a banner; an over-long banner; a huge packet length.
    let mut p = SshParser::new(0).with_hassh(true);
    assert_eq!(p.parse(ToServer, b"GET / HTTP/1.0\r\n"), ParseResult::Done);
    let mut long = b"SSH-2.0-".to_vec();
    long.extend(std::iter::repeat_n(b'A', 10_000));
    assert_eq!(p.parse(ToClient, &long), ParseResult::Done);
    let mut events = Vec::new();
    p.drain_events(&mut events);
    let names: Vec<_> = events.iter().map(|e| e.name).collect();
    assert_eq!(names, ["ssh.invalid_banner", "ssh.long_banner"]);
    // Each is also on the transaction, for `app-layer-event` rules.
    let bits = |names: &[&str]| names.iter().map(|n| 1u64 << EVENTS.iter().position(|e| e == n).unwrap()).sum::<u64>();
    assert_eq!(p.tx(0).unwrap().events(), bits(&["invalid_banner", "long_banner"]));
    assert_eq!(p.tx(0).unwrap().buffer(ToClient, Buffer::Software as u8, 0).unwrap().len(), 247);
    let mut q = SshParser::new(0).with_hassh(true);
    let mut data = b"SSH-2.0-x\r\n".to_vec();
    data.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 4, 20]);
    assert_eq!(q.parse(ToServer, &data), ParseResult::Done);
    q.drain_events(&mut events);
    assert_eq!(events.last().unwrap().name, "ssh.invalid_record");
    // A KEXINIT that claims more lists than it holds is an event, not a panic.
    let mut r = SshParser::new(0).with_hassh(true);
    let mut data = b"SSH-2.0-x\r\n".to_vec();
    data.extend(packet(&[20, 1, 2, 3]));
    assert_eq!(r.parse(ToServer, &data), ParseResult::Done);
    r.drain_events(&mut events);
    assert_eq!(events.last().unwrap().name, "ssh.invalid_record");
}

#[test]
fn gaps_before_encryption_are_errors_after_it_not() {
    let mut p = SshParser::new(0).with_hassh(true);
    assert!(!p.on_gap(ToServer, 10), "banner lost");
    let mut q = SshParser::new(0).with_hassh(true);
    let mut data = b"SSH-2.0-x\r\n".to_vec();
    data.extend(packet(&[21]));
    q.parse(ToServer, &data);
    assert!(q.on_gap(ToServer, 1000));
}

#[test]
fn probe_wants_the_version_string() {
    let probe = |dir, data: &[u8]| (PROTO.detection.probe)(dir, data, crate::proto::ProbeCx::default());
    assert_eq!(probe(ToServer, b"SS"), crate::proto::Probe::NeedMore);
    assert_eq!(probe(ToClient, b"SSH-2.0"), crate::proto::Probe::Match);
    assert_eq!(probe(ToServer, b"GET /"), crate::proto::Probe::NoMatch);
}

#[test]
fn without_hassh_a_side_is_complete_at_its_banner() {
    let mut p = SshParser::new(0);
    assert_eq!(p.parse(ToServer, b"SSH-2.0-Go\r\n"), ParseResult::Done);
    assert_eq!(p.tx(0).unwrap().progress(ToServer), crate::Progress::Complete);
    assert_eq!(p.parse(ToClient, b"SSH-2.0-OpenSSH_9.6\r\n"), ParseResult::Done);
    assert!(p.tx(0).unwrap().finished(), "logged once both banners are read, as Suricata does");
    let eve = p.tx(0).unwrap().eve();
    assert!(eve["client"].get("hassh").is_none() && eve["server"]["software_version"] == "OpenSSH_9.6");
}
