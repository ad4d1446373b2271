//! What the engine's end-to-end tests share: a scratch directory per case,
//! a pcap from built frames, and the EVE records of an offline run.

// Each test binary uses its own subset.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use vigil_capture::PcapWriter;
use vigil_engine::{run_offline, RunOptions};
use vigil_types::{LinkType, Timestamp};

/// A fresh directory for one case of one test binary.
pub fn tempdir(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An Ethernet pcap of `frames`, each with its time.
pub fn write_pcap(path: &Path, frames: impl IntoIterator<Item = (Timestamp, Vec<u8>)>) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap(), LinkType::Ethernet).unwrap();
    for (ts, data) in frames {
        w.write_packet(ts, &data).unwrap();
    }
}

/// Frames one microsecond apart.
pub fn spaced(frames: &[Vec<u8>]) -> impl Iterator<Item = (Timestamp, Vec<u8>)> + '_ {
    frames.iter().enumerate().map(|(i, f)| (Timestamp::from_micros(1_700_000_000, i as u32), f.clone()))
}

/// Runs `opts` (its log directory is `dir`), returns the EVE records and removes `dir`.
pub fn run_eve(dir: &Path, opts: &RunOptions) -> Vec<Value> {
    run_offline(opts, &mut |_| {}).unwrap();
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    let recs = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    std::fs::remove_dir_all(dir).unwrap();
    recs
}

pub fn of_type<'a>(recs: &'a [Value], t: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["event_type"] == t).collect()
}

/// An offline run of `dir/in.pcap` with the rules of `dir/test.rules`,
/// checksums not validated, records written to `dir`.
/// Writes `frames` as a capture and `rules` beside it under `suite`/`name`,
/// runs them with the built-in configuration (checksums not checked); the
/// EVE records.
pub fn run_rules(suite: &str, name: &str, frames: &[Vec<u8>], rules: &str) -> Vec<Value> {
    let dir = tempdir(suite, name);
    write_pcap(&dir.join("in.pcap"), spaced(frames));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let opts = RunOptions {
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.clone()),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        ..Default::default()
    };
    run_eve(&dir, &opts)
}

pub fn offline_opts(dir: &Path) -> RunOptions {
    RunOptions {
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.to_path_buf()),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        ..Default::default()
    }
}

/// The client and server of the built TCP sessions.
pub const CLIENT: [u8; 4] = [198, 18, 0, 1];
pub const SERVER: [u8; 4] = [198, 18, 0, 2];

/// One TCP segment between [`CLIENT`]:40000 and [`SERVER`]:80.
pub fn tcp_seg(to_server: bool, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    use vigil_wire::build::PacketBuilder;
    let (b, sp, dp) = if to_server {
        (PacketBuilder::ipv4(CLIENT, SERVER), 40000, 80)
    } else {
        (PacketBuilder::ipv4(SERVER, CLIENT), 80, 40000)
    };
    b.tcp(sp, dp).tcp_flags(flags).tcp_seq_ack(seq, ack).payload(payload).build_ethernet()
}

/// A whole short session: handshake, "hello" and "hi", FIN both ways.
/// Eight packets, five of them without payload (three from the client).
pub fn short_session() -> Vec<Vec<u8>> {
    use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};
    vec![
        tcp_seg(true, SYN, 1000, 0, b""),
        tcp_seg(false, SYN | ACK, 5000, 1001, b""),
        tcp_seg(true, ACK, 1001, 5001, b""),
        tcp_seg(true, ACK | PSH, 1001, 5001, b"hello"),
        tcp_seg(false, ACK | PSH, 5001, 1006, b"hi"),
        tcp_seg(true, ACK | FIN, 1006, 5003, b""),
        tcp_seg(false, ACK | FIN, 5003, 1007, b""),
        tcp_seg(true, ACK, 1007, 5004, b""),
    ]
}

/// A TCP session from `client` to `server` (address, port): handshake, each
/// message in one segment (`true`: the client's), FIN both ways. A
/// server's message is acknowledged at once; a client's by the server's
/// answer when one follows, else at once.
pub fn tcp_conversation(client: ([u8; 4], u16), server: ([u8; 4], u16), messages: &[(bool, &[u8])]) -> Vec<Vec<u8>> {
    use vigil_wire::build::PacketBuilder;
    use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};
    let seg = |to_server: bool, flags: u8, seq: u32, ack: u32, data: &[u8]| {
        let b = if to_server {
            PacketBuilder::ipv4(client.0, server.0).tcp(client.1, server.1)
        } else {
            PacketBuilder::ipv4(server.0, client.0).tcp(server.1, client.1)
        };
        b.tcp_flags(flags).tcp_seq_ack(seq, ack).payload(data).build_ethernet()
    };
    let (mut c, mut s) = (1000u32, 9000u32);
    let mut f =
        vec![seg(true, SYN, c, 0, b""), seg(false, SYN | ACK, s, c + 1, b""), seg(true, ACK, c + 1, s + 1, b"")];
    c += 1;
    s += 1;
    for (i, (to_server, data)) in messages.iter().enumerate() {
        if *to_server {
            f.push(seg(true, ACK | PSH, c, s, data));
            c += data.len() as u32;
            if messages.get(i + 1).is_none_or(|(next, _)| *next) {
                f.push(seg(false, ACK, s, c, b""));
            }
        } else {
            f.push(seg(false, ACK | PSH, s, c, data));
            s += data.len() as u32;
            f.push(seg(true, ACK, c, s, b""));
        }
    }
    f.push(seg(true, FIN | ACK, c, s, b""));
    f.push(seg(false, FIN | ACK, s, c + 1, b""));
    f.push(seg(true, ACK, c + 1, s + 1, b""));
    f
}

/// A TCP session between [`CLIENT`]:40000 and [`SERVER`]:`port`: the client
/// sends each request, the server answers each in one segment, each
/// acknowledged; FIN both ways.
pub fn tcp_session(port: u16, exchanges: &[(&[u8], &[u8])]) -> Vec<Vec<u8>> {
    let messages: Vec<(bool, &[u8])> =
        exchanges.iter().flat_map(|(req, resp)| [(true, *req), (false, *resp)]).collect();
    tcp_conversation((CLIENT, 40000), (SERVER, port), &messages)
}
