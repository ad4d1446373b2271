//! The paced sender: replays frames out of an interface at a set bit rate
//! for a set time, looping over the capture, and counts exactly what the
//! kernel accepted. It runs as `vigil bench send` inside the sending
//! namespace.

use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use vigil_capture::{AfPacketTx, PcapFile, Source};

/// What a sender did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sent {
    pub packets: u64,
    pub bytes: u64,
    /// Frames the interface refused (too big for its MTU, queue full).
    pub refused: u64,
    pub secs: f64,
}

impl Sent {
    pub fn to_json(&self) -> serde_json::Value {
        json!({"packets": self.packets, "bytes": self.bytes, "refused": self.refused, "secs": self.secs})
    }

    pub fn from_json(v: &serde_json::Value) -> Option<Sent> {
        Some(Sent {
            packets: v["packets"].as_u64()?,
            bytes: v["bytes"].as_u64()?,
            refused: v["refused"].as_u64()?,
            secs: v["secs"].as_f64()?,
        })
    }
}

/// Every frame of a capture, in order.
pub fn load_frames(pcap: &Path) -> Result<Vec<Vec<u8>>, String> {
    let mut src = PcapFile::open(pcap).map_err(|e| e.to_string())?;
    let mut frames = Vec::new();
    while let Some(next) = src.next_packet() {
        frames.push(next.map_err(|e| e.to_string())?.data.to_vec());
    }
    if frames.is_empty() {
        return Err(format!("{}: no packets", pcap.display()));
    }
    Ok(frames)
}

/// Sends `frames` out of `iface` at `mbps` (0: as fast as possible) for `duration`.
pub fn send(iface: &str, frames: &[Vec<u8>], mbps: f64, duration: Duration) -> Result<Sent, String> {
    let tx = AfPacketTx::open(iface).map_err(|e| e.to_string())?;
    let mut sent = Sent::default();
    let start = Instant::now();
    let bits_per_sec = mbps * 1e6;
    'outer: loop {
        for f in frames {
            let now = start.elapsed();
            if now >= duration {
                break 'outer;
            }
            if bits_per_sec > 0.0 {
                // Where this frame is due: the bits sent so far at the rate.
                let due = Duration::from_secs_f64(sent.bytes as f64 * 8.0 / bits_per_sec);
                if due > now {
                    let ahead = due - now;
                    if ahead > Duration::from_micros(200) {
                        std::thread::sleep(ahead - Duration::from_micros(100));
                    }
                    while start.elapsed() < due {
                        std::hint::spin_loop();
                    }
                }
            }
            match tx.send(f) {
                Ok(()) => {
                    sent.packets += 1;
                    sent.bytes += f.len() as u64;
                }
                Err(_) => sent.refused += 1,
            }
        }
    }
    sent.secs = start.elapsed().as_secs_f64();
    Ok(sent)
}
