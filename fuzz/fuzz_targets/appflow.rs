//! Arbitrary bytes as a flow's two directions through the app layer of one
//! flow: detection, replay into the chosen parser, pending bytes, tunnels.
//! The first byte picks the transport, the ports and the limits; the rest is
//! a list of pieces: a header byte (top bit the direction, 0x7f a capture
//! gap, 0x7e a close, otherwise the length) then that many bytes. Nothing
//! may panic, every transaction must answer every question, ids must grow,
//! and the bytes held never exceed the pending bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_applayer::http::HttpConfig;
use vigil_applayer::{AppConfig, AppFlow, BufferId, Transport};
use vigil_types::Direction::{self, ToClient, ToServer};

/// Every protocol numbers its buffers from 0: the first 32 numbers reach
/// them all, and the file buffers are everyone's.
fn buffers() -> impl Iterator<Item = BufferId> {
    (0..32).map(BufferId::Proto).chain([BufferId::FileData, BufferId::FileName])
}

fn inspect(flow: &mut AppFlow) {
    let mut last = None;
    for tx in flow.txs() {
        assert!(last.is_none_or(|id| tx.id() > id), "transaction ids must grow");
        last = Some(tx.id());
        for dir in [ToServer, ToClient] {
            let _ = (tx.progress(dir), tx.complete(dir), tx.proto());
            for id in buffers() {
                for i in 0..2 {
                    let _ = tx.buffer(dir, id, i);
                }
            }
        }
    }
    let _ = (flow.take_events(), flow.no_inspection(), flow.proto(), flow.counters());
    let mut frames = Vec::new();
    flow.take_frames(&mut frames);
    for f in &frames {
        // What a frame keeps is bounded, whatever lengths the input claims.
        assert!(f.data.len() <= vigil_applayer::frames::MAX_FRAME_BYTES, "{f:?}");
        let _ = f.type_name();
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, mut rest)) = data.split_first() else { return };
    let transport = if setup & 1 == 0 { Transport::Tcp } else { Transport::Udp };
    let server_port = if setup & 2 == 0 { 53 } else { 8080 };
    // Frames marked on half the inputs: their offsets come from hostile lengths.
    let frames = setup & 16 != 0;
    let cfg = if setup & 4 == 0 {
        AppConfig { frames, stream_frames: frames, ..AppConfig::default() }
    } else {
        // Tight limits reach the overflow and give-up paths with small inputs.
        AppConfig {
            http: HttpConfig { max_header_bytes: 96, max_txs: 4, request_body_limit: 64, ..HttpConfig::default() },
            max_pending: 200,
            detect_limit: 12,
            frames,
            stream_frames: frames,
            ..AppConfig::default()
        }
    };
    let mut flow = AppFlow::new(&cfg, transport, 40000, server_port);
    while let [hdr, tail @ ..] = rest {
        let dir: Direction = if hdr & 0x80 == 0 { ToServer } else { ToClient };
        rest = tail;
        match hdr & 0x7f {
            0x7f => flow.gap(dir, 1 + u64::from(hdr & 0x0f)),
            0x7e => flow.close(dir),
            len => {
                let len = usize::from(len).min(rest.len());
                let (chunk, tail) = rest.split_at(len);
                flow.feed(dir, chunk);
                rest = tail;
            }
        }
        assert!(flow.pending(ToServer) <= cfg.max_pending && flow.pending(ToClient) <= cfg.max_pending);
        inspect(&mut flow);
        if setup & 8 != 0 {
            let oldest = flow.txs().next().map(|t| t.id());
            if let Some(id) = oldest {
                flow.prune(id + 1);
            }
        }
    }
    flow.close(ToServer);
    flow.close(ToClient);
    inspect(&mut flow);
});
