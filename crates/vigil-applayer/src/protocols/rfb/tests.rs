//! The parser against handshakes of each version built here.

use serde_json::json;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::*;
use crate::config::AppConfig;
use crate::proto::kit;
use crate::Transport;

fn parser() -> Box<dyn ProtoParser> {
    let app = AppConfig::default();
    new_parser(&ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None })
}

fn run(flights: &[(Direction, Vec<u8>)]) -> Box<dyn ProtoParser> {
    let mut p = parser();
    for (dir, data) in flights {
        assert_eq!(p.parse(*dir, data), ParseResult::Done);
    }
    p
}

#[test]
fn a_session_is_logged_as_suricata_logs_it() {
    let p = run(&sample());
    assert_eq!(p.tx_count(), 1);
    let t = p.tx(0).unwrap();
    assert_eq!(t.progress(ToClient), Progress::Complete);
    assert_eq!(
        t.eve(),
        json!({"server_protocol_version": {"major": "003", "minor": "008"}, "client_protocol_version": {"major": "003", "minor": "008"},
            "authentication": {"security_type": 2, "vnc": {"challenge": "11111111111111111111111111111111",
                "response": "22222222222222222222222222222222"}, "security_result": "OK"},
            "screen_shared": true,
            "framebuffer": {"width": 1280, "height": 800, "name": "desktop-1", "pixel_format": {"bits_per_pixel": 32, "depth": 24,
                "big_endian": false, "true_color": true, "red_max": 255, "green_max": 255, "blue_max": 255,
                "red_shift": 16, "green_shift": 8, "blue_shift": 0}}})
    );
    assert_eq!(t.buffer(ToClient, 0, 0), Some(&b"desktop-1"[..]));
    assert!(!p.wants_data(), "what follows the initialisation is not read");
}

#[test]
fn version_3_3_names_the_type_and_none_needs_no_result() {
    let init = [vec![0, 8, 0, 6, 8, 8, 0, 0, 0, 7, 0, 7, 0, 3, 0, 3, 6, 0, 0, 0], 1u32.to_be_bytes().to_vec(), vec![0xa0]].concat();
    let p = run(&[
        (ToClient, b"RFB 003.003\n".to_vec()),
        (ToServer, b"RFB 003.003\n".to_vec()),
        (ToClient, 1u32.to_be_bytes().to_vec()),
        (ToServer, vec![0]),
        (ToClient, init),
    ]);
    let e = p.tx(0).unwrap().eve();
    assert_eq!(e["authentication"], json!({"security_type": 1}));
    assert_eq!((e["screen_shared"].clone(), e["framebuffer"]["name"].clone()), (json!(false), json!("\\xa0")));
}

#[test]
fn an_unfollowed_security_type_is_an_event_and_ends_the_reading() {
    let mut p = run(&[
        (ToClient, b"RFB 003.889\n".to_vec()),
        (ToServer, b"RFB 003.008\n".to_vec()),
        (ToClient, vec![1, 30]),
        (ToServer, vec![30]),
        (ToClient, vec![0; 300]),
    ]);
    let t = p.tx(0).unwrap();
    assert_eq!(t.eve()["authentication"], json!({"security_type": 30}));
    assert_eq!(t.progress(ToServer), Progress::Complete, "what followed ended it");
    assert_eq!(t.events(), 1 << UNIMPLEMENTED);
    let mut ev = Vec::new();
    p.drain_events(&mut ev);
    assert_eq!(ev[0].name, "rfb.unimplemented_security_type");
}

#[test]
fn an_unfollowed_type_with_nothing_after_waits_for_the_flows_end() {
    let p = run(&[
        (ToClient, b"RFB 004.001\n".to_vec()),
        (ToServer, b"RFB 004.001\n".to_vec()),
        (ToClient, vec![2, 13, 2]),
        (ToServer, vec![13]),
    ]);
    let t = p.tx(0).unwrap();
    assert_eq!(t.eve()["authentication"], json!({"security_type": 13}), "4.1 lists its types as 3.8 does");
    assert_eq!(t.progress(ToServer), Progress::None);
}

#[test]
fn a_refusal_ends_the_handshake_and_sides_may_run_ahead() {
    // The client's choice and response come before the server's messages they answer.
    let mut reason = 6u32.to_be_bytes().to_vec();
    reason.extend_from_slice(b"denied");
    let p = run(&[
        (ToClient, b"RFB 003.008\n".to_vec()),
        (ToServer, [b"RFB 003.008\n".to_vec(), vec![2], vec![0x33; 16]].concat()),
        (ToClient, [vec![1, 2], vec![0x44; 16], 1u32.to_be_bytes().to_vec(), reason].concat()),
    ]);
    let t = p.tx(0).unwrap();
    assert_eq!(t.eve()["authentication"]["security_result"], "FAIL");
    assert_eq!(t.progress(ToClient), Progress::Complete);
}

#[test]
fn cut_anywhere_the_session_reads_the_same() {
    let whole = run(&sample()).tx(0).unwrap().eve();
    for cut in [1, 2, 5, 11] {
        let mut p = parser();
        for (dir, data) in sample() {
            kit::feed(p.as_mut(), dir, &data, cut);
        }
        assert_eq!(p.tx(0).unwrap().eve(), whole, "cut {cut}");
    }
}

#[test]
fn held_bytes_are_bounded() {
    let mut p = parser();
    p.parse(ToClient, b"RFB 003.008\n");
    // The client never gets its turn's answer: what it sends ahead is bounded.
    for _ in 0..100 {
        assert_eq!(p.parse(ToServer, &[b"RFB 003.008\n".to_vec(), vec![9; 2000]].concat()), ParseResult::Done);
    }
    assert!(!p.wants_data());
    assert!(p.tx(0).unwrap().events() != 0);
}

#[test]
fn a_gap_on_one_side_leaves_the_other_readable() {
    let mut p = run(&[
        (ToClient, b"RFB 004.001\n".to_vec()),
        (ToServer, b"RFB 004.001\n".to_vec()),
        (ToClient, vec![2, 13, 2]),
    ]);
    // The server's side loses bytes before the client's choice is read.
    assert!(p.on_gap(ToClient, 800));
    assert_eq!(p.parse(ToServer, &[13]), ParseResult::Done);
    assert_eq!(p.tx(0).unwrap().eve()["authentication"], json!({"security_type": 13}));
    // What the server says next cannot be placed: the reading ends.
    assert_eq!(p.parse(ToClient, &[0; 19]), ParseResult::Done);
    assert_eq!(p.tx(0).unwrap().progress(ToClient), Progress::Complete);
    assert!(!p.wants_data());
}
