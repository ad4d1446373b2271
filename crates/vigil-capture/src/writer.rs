//! Writes classic pcap files (microsecond, little-endian): demo captures,
//! test fixtures and the traffic lab's output.

use std::io::{self, Write};
use vigil_types::{LinkType, Timestamp};

/// The snap length of the files written: frames longer are cut to it.
pub const SNAPLEN: u32 = 262_144;

/// A pcap file being written.
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header for `linktype` with a 256 KiB snap length.
    pub fn new(mut out: W, linktype: LinkType) -> io::Result<Self> {
        let snaplen = SNAPLEN;
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&linktype.dlt().to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, snaplen })
    }

    /// Appends one frame; frames over the snap length are cut to it, as a capture would.
    pub fn write_packet(&mut self, ts: Timestamp, data: &[u8]) -> io::Result<()> {
        let caplen = data.len().min(self.snaplen as usize);
        let secs = u32::try_from(ts.secs()).map_err(|_| io::Error::other("timestamp outside pcap's range"))?;
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&ts.subsec_micros().to_le_bytes());
        h[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(data.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&data[..caplen])
    }

    /// Sends what `W` buffers to where it writes.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}
