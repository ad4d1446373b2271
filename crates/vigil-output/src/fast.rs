//! `fast.log`: one line of text per alert, in Suricata's format.
//!
//! ```text
//! 10/22/2015-09:12:37.480929  [**] [1:2:7] msg [**] [Classification: Potentially Bad Traffic] [Priority: 2] {TCP} 10.0.0.1:80 -> 10.0.0.2:41214
//! ```
//!
//! Lines go through an [`EveWriter`] (its whole-line writes let workers
//! share the file), so a line is never split between two workers' output.

use crate::protocol::proto_name;
use crate::writer::EveWriter;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;
use std::path::Path;
use vigil_decode::{Packet, Transport};
use vigil_types::Timestamp;
use vigil_wire::ip_proto;

/// Bytes of a packet without IP that a line shows in hex, as Suricata does.
const RAW_BYTES: usize = 32;

/// What a drop rule did to the alerting packet, written before the rule's ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FastAction {
    /// An alert rule, or a drop rule that did nothing.
    Alert,
    /// `[Drop]`: an IPS dropped the packet.
    Drop,
    /// `[wDrop]`: a drop rule matched where the engine cannot drop (IDS).
    WouldDrop,
}

/// What a fast.log line says about the signature that fired.
#[derive(Debug, Clone, Copy)]
pub struct FastAlert<'a> {
    pub action: FastAction,
    pub gid: u32,
    pub sid: u32,
    pub rev: u32,
    pub msg: &'a str,
    /// The classtype's description; empty when the rule has none.
    pub category: &'a str,
    pub priority: u32,
    /// The alert's source is the packet's destination (a transaction
    /// signature inspected the other side): written as EVE writes it.
    pub swap: bool,
}

/// The fast.log line (without its newline) for an alert on `p`.
pub fn fast_line(p: &Packet<'_>, a: &FastAlert<'_>) -> String {
    let action = match a.action {
        FastAction::Alert => "",
        FastAction::Drop => "[Drop] ",
        FastAction::WouldDrop => "[wDrop] ",
    };
    // Suricata prints a missing classtype through printf's `%s` of NULL.
    let class = if a.category.is_empty() { "(null)" } else { a.category };
    let mut line = format!(
        "{}  {action}[**] [{}:{}:{}] {} [**] [Classification: {class}] [Priority: {}]",
        fast_time(p.ts),
        a.gid,
        a.sid,
        a.rev,
        a.msg,
        a.priority
    );
    let Some(ip) = p.ip else {
        // A decoder event on a packet without IP: its first bytes stand in for the addresses.
        line.push_str(" [**] [Raw pkt: ");
        for b in p.data.iter().take(RAW_BYTES) {
            let _ = write!(line, "{b:02X} ");
        }
        if p.pcap_cnt != 0 {
            let _ = write!(line, "] [pcap file packet: {}]", p.pcap_cnt);
        } else {
            line.push(']');
        }
        return line;
    };
    let proto = match proto_name(p.proto) {
        Cow::Borrowed(name) => Cow::Borrowed(name),
        Cow::Owned(_) => Cow::Owned(format!("PROTO:{:03}", p.proto)),
    };
    // ICMP has no ports: its type and code take their place.
    let (sp, dp) = match p.transport {
        Transport::Icmp { kind, code } if matches!(p.proto, ip_proto::ICMP | ip_proto::ICMPV6) => {
            (u16::from(kind), u16::from(code))
        }
        _ => (p.sport().unwrap_or(0), p.dport().unwrap_or(0)),
    };
    let ((src, sp), (dst, dp)) = if a.swap { ((ip.dst, dp), (ip.src, sp)) } else { ((ip.src, sp), (ip.dst, dp)) };
    let _ = write!(line, " {{{proto}}} {src}:{sp} -> {dst}:{dp}");
    line
}

/// `MM/DD/YYYY-HH:MM:SS.uuuuuu`, in UTC like the EVE timestamps.
pub(crate) fn fast_time(ts: Timestamp) -> String {
    ts.legacy()
}

/// Appends fast.log lines to a file that several workers may share.
pub struct FastWriter {
    lines: EveWriter,
}

impl FastWriter {
    /// Opens (creating or, with `append`, extending) the file.
    pub fn create(path: impl AsRef<Path>, append: bool) -> io::Result<Self> {
        Ok(FastWriter { lines: EveWriter::create(path, append)? })
    }

    /// Another writer on the same file, with its own buffer.
    pub fn share(&self) -> FastWriter {
        FastWriter { lines: self.lines.share() }
    }

    pub fn write(&mut self, p: &Packet<'_>, a: &FastAlert<'_>) -> io::Result<()> {
        self.lines.write_line(&fast_line(p, a))
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.lines.flush()
    }

    /// The writer the lines go through: its flush policy, polling and
    /// reopening serve fast.log as they serve EVE files.
    pub fn writer_mut(&mut self) -> &mut EveWriter {
        &mut self.lines
    }

    pub fn path(&self) -> &Path {
        self.lines.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_decode::{DecodeConfig, Decoder};
    use vigil_types::LinkType;
    use vigil_wire::build::PacketBuilder;

    const ALERT: FastAlert<'static> = FastAlert {
        action: FastAction::Alert,
        gid: 1,
        sid: 2,
        rev: 7,
        msg: "GPL ATTACK_RESPONSE id check returned root",
        category: "Potentially Bad Traffic",
        priority: 2,
        swap: false,
    };

    fn line_for(frame: &[u8], a: &FastAlert<'_>) -> String {
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = dec.decode(frame, Timestamp::from_micros(1_445_505_157, 480_929), LinkType::Ethernet, 4);
        fast_line(&p, a)
    }

    #[test]
    fn tcp_alert_line() {
        let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).tcp(80, 41214).payload(b"x").build_ethernet();
        assert_eq!(
            line_for(&frame, &ALERT),
            "10/22/2015-09:12:37.480929  [**] [1:2:7] GPL ATTACK_RESPONSE id check returned root [**] \
             [Classification: Potentially Bad Traffic] [Priority: 2] {TCP} 10.0.0.1:80 -> 10.0.0.2:41214"
        );
    }

    #[test]
    fn a_swapped_alert_is_written_the_other_way_round() {
        // A response completing a request-side signature: EVE and fast.log
        // both give the client as the source.
        let frame = PacketBuilder::ipv4([10, 0, 0, 2], [10, 0, 0, 1]).tcp(80, 41214).payload(b"x").build_ethernet();
        let line = line_for(&frame, &FastAlert { swap: true, ..ALERT });
        assert!(line.ends_with("{TCP} 10.0.0.1:41214 -> 10.0.0.2:80"), "{line}");
    }

    #[test]
    fn drop_and_missing_classtype() {
        let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).udp(53, 1053).payload(b"x").build_ethernet();
        let a = FastAlert { action: FastAction::Drop, category: "", priority: 3, ..ALERT };
        let line = line_for(&frame, &a);
        assert!(line.contains("  [Drop] [**] [1:2:7] "), "{line}");
        assert!(line.ends_with("[Classification: (null)] [Priority: 3] {UDP} 10.0.0.1:53 -> 10.0.0.2:1053"), "{line}");
        let w = line_for(&frame, &FastAlert { action: FastAction::WouldDrop, ..ALERT });
        assert!(w.contains("  [wDrop] [**] "), "{w}");
    }

    #[test]
    fn packet_without_ip_shows_raw_bytes() {
        let frame = [0xffu8; 40];
        let line = line_for(&frame, &ALERT);
        let raw = "FF ".repeat(RAW_BYTES);
        assert!(line.ends_with(&format!("[Priority: 2] [**] [Raw pkt: {raw}] [pcap file packet: 4]")), "{line}");
    }
}
