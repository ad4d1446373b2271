//! `alert-debug.log`: a block of text per alert for rule writers, laid out
//! as Suricata's (the packet and its flow, the alert, hex dumps of the
//! packet, its payload and the stream data the rule matched).

use crate::alert::AlertInfo;
use crate::writer::EveWriter;
use std::fmt::Write as _;
use std::io;
use std::path::Path;
use vigil_decode::{Packet, Transport};
use vigil_types::Timestamp;

/// What the block says of the alert: the signature as the EVE record has
/// it (its stream bytes, for a stream match), and where it matched.
pub struct DebugAlert<'a> {
    pub info: &'a AlertInfo<'a>,
    /// `PACKET`, `STREAM` or `STATE` (a transaction's buffers).
    pub found_in: &'static str,
    pub tx_id: Option<u64>,
}

/// What the block says of the packet's flow.
pub struct DebugFlow<'a> {
    pub to_server: bool,
    pub start: Timestamp,
    pub pkts_toserver: u64,
    pub pkts_toclient: u64,
    pub bytes: u64,
    pub dropped: bool,
    /// The application protocol, when detected.
    pub app_proto: Option<&'a str>,
}

/// Appends alert-debug blocks to a file that several workers may share.
pub struct AlertDebugWriter {
    lines: EveWriter,
}

impl AlertDebugWriter {
    pub fn create(path: impl AsRef<Path>, append: bool) -> io::Result<Self> {
        Ok(AlertDebugWriter { lines: EveWriter::create(path, append)? })
    }

    pub fn share(&self) -> AlertDebugWriter {
        AlertDebugWriter { lines: self.lines.share() }
    }

    pub fn write(&mut self, p: &Packet<'_>, flow: Option<&DebugFlow<'_>>, alert: &DebugAlert<'_>) -> io::Result<()> {
        self.lines.write_line(alert_debug_block(p, flow, alert).trim_end_matches('\n'))
    }

    /// The writer the blocks go through (flush policy, polling, reopening).
    pub fn writer_mut(&mut self) -> &mut EveWriter {
        &mut self.lines
    }

    pub fn path(&self) -> &Path {
        self.lines.path()
    }
}

/// One alert's block.
pub fn alert_debug_block(p: &Packet<'_>, flow: Option<&DebugFlow<'_>>, a: &DebugAlert<'_>) -> String {
    let yes = |b: bool| if b { "TRUE" } else { "FALSE" };
    let mut s = String::from("+================\n");
    let _ = writeln!(s, "TIME:              {}", crate::fast::fast_time(p.ts));
    let _ = writeln!(s, "PCAP PKT NUM:      {}", p.pcap_cnt);
    let _ = writeln!(s, "PKT SRC:           {}", p.src.name());
    if let Some(ip) = &p.ip {
        let _ = writeln!(s, "SRC IP:            {}", ip.src);
        let _ = writeln!(s, "DST IP:            {}", ip.dst);
        let _ = writeln!(s, "PROTO:             {}", p.proto);
    }
    if let (Some(sp), Some(dp)) = (p.sport(), p.dport()) {
        let _ = writeln!(s, "SRC PORT:          {sp}");
        let _ = writeln!(s, "DST PORT:          {dp}");
    }
    if let Transport::Tcp { seq, ack, .. } = p.transport {
        let _ = writeln!(s, "TCP SEQ:           {seq}");
        let _ = writeln!(s, "TCP ACK:           {ack}");
    }
    if let Some(f) = flow {
        let _ = writeln!(s, "FLOW:              to_server: {}, to_client: {}", yes(f.to_server), yes(!f.to_server));
        let _ = writeln!(s, "FLOW Start TS:     {}", crate::fast::fast_time(f.start));
        let _ = writeln!(s, "FLOW PKTS TODST:   {}", f.pkts_toserver);
        let _ = writeln!(s, "FLOW PKTS TOSRC:   {}", f.pkts_toclient);
        let _ = writeln!(s, "FLOW Total Bytes:  {}", f.bytes);
        let _ = writeln!(s, "FLOW ACTION:       DROP: {}", yes(f.dropped));
        match f.app_proto {
            Some(name) => {
                let _ = writeln!(s, "FLOW APP_LAYER:    DETECTED: TRUE, PROTO {name}");
            }
            None => s.push_str("FLOW APP_LAYER:    DETECTED: FALSE\n"),
        }
    }
    let _ = writeln!(s, "PACKET LEN:        {}", p.data.len());
    s.push_str("PACKET:\n");
    crate::hexdump::hexdump(&mut s, p.data);
    s.push_str("ALERT CNT:           1\n");
    let _ = writeln!(s, "ALERT MSG [00]:      {}", a.info.msg);
    let _ = writeln!(s, "ALERT GID [00]:      {}", a.info.gid);
    let _ = writeln!(s, "ALERT SID [00]:      {}", a.info.sid);
    let _ = writeln!(s, "ALERT REV [00]:      {}", a.info.rev);
    let _ = writeln!(s, "ALERT CLASS [00]:    {}", if a.info.category.is_empty() { "<none>" } else { a.info.category });
    let _ = writeln!(s, "ALERT PRIO [00]:     {}", a.info.severity);
    let _ = writeln!(s, "ALERT FOUND IN [00]: {}", a.found_in);
    if let Some(id) = a.tx_id {
        let _ = writeln!(s, "ALERT IN TX [00]:    {id}");
    }
    let payload = p.payload();
    let _ = writeln!(s, "PAYLOAD LEN:         {}", payload.len());
    s.push_str("PAYLOAD:\n");
    crate::hexdump::hexdump(&mut s, payload);
    if let Some(data) = a.info.stream_payload {
        let _ = writeln!(s, "STREAM DATA LEN:     {}", data.len());
        s.push_str("STREAM DATA:\n");
        crate::hexdump::hexdump(&mut s, data);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_without_flow_or_ports() {
        let data = [0u8; 20];
        let p = Packet::new(&data, Timestamp::default(), vigil_types::LinkType::Raw, 3);
        let info = AlertInfo {
            action: "allowed",
            gid: 1,
            sid: 2,
            rev: 3,
            msg: "m",
            category: "",
            severity: 3,
            metadata: &[],
            references: &[],
            stream_payload: None,
            verdict: crate::alert::Verdict::Alert,
        };
        let a = DebugAlert { info: &info, found_in: "PACKET", tx_id: None };
        let text = alert_debug_block(&p, None, &a);
        assert!(text.contains("PCAP PKT NUM:      3\n") && text.contains("ALERT CLASS [00]:    <none>\n"));
        assert!(!text.contains("FLOW") && !text.contains("PORT") && !text.contains("STREAM DATA"));
        assert!(text.contains("PACKET LEN:        20\n"));
    }
}
