//! The teardown states, moved on as Suricata's stream engine moves them so
//! that EVE `tcp.state` reads the same. Suricata names them from the
//! server's side whoever closes first: the client's FIN puts the session in
//! `close_wait` (then `last_ack` once the server closes too), the server's
//! FIN in `fin_wait1` (then `fin_wait2` once acknowledged, `time_wait` once
//! the client closes).

use crate::session::{flags::*, Segment, TcpSession, TcpState};
use vigil_types::Direction;

impl TcpSession {
    /// Moves the teardown state on after a segment that was not a reset.
    /// `off`: its sequence number as an offset of its sender's stream;
    /// `new_fin`: it carried its sender's first FIN.
    pub(crate) fn advance_close(&mut self, seg: &Segment<'_>, off: i64, new_fin: bool) {
        use TcpState::*;
        let to_server = seg.dir == Direction::ToServer;
        let ack = seg.flags & ACK != 0;
        let pure_ack = ack && seg.flags & FIN == 0;
        let (client, server) = (&self.dirs.to_server, &self.dirs.to_client);
        self.state = match self.state {
            SynRecv | Established if new_fin && to_server => CloseWait,
            SynRecv | Established if new_fin => FinWait1,
            // The client closes too: with its acknowledgement of the
            // server's FIN, or before it (both FINs in flight).
            FinWait1 if new_fin && ack => TimeWait,
            FinWait1 if new_fin => Closing,
            FinWait1 if pure_ack && to_server && server.fin.is_some_and(|f| server.offset(seg.ack) > f as i64) => {
                FinWait2
            }
            // Suricata also takes the server's own ACK sent from its FIN's
            // sequence number as the end of the half close.
            FinWait1 if pure_ack && !to_server && server.fin.is_some_and(|f| off == f as i64) => FinWait2,
            FinWait2 if new_fin => TimeWait,
            Closing if pure_ack => TimeWait,
            CloseWait if new_fin && !to_server => LastAck,
            // The client's last ACK; one from before its FIN changes nothing.
            LastAck if pure_ack && to_server && client.fin.is_some_and(|f| off >= f as i64) => Closed,
            TimeWait if pure_ack => Closed,
            s => s,
        };
    }
}
