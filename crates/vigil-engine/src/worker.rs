//! One worker's pipeline for a decoded packet: IP reassembly, the flow
//! table, and the records both produce. The packet clock is the packet's
//! own timestamp throughout.

use crate::error::EngineError;
use crate::outputs::Outputs;
use crate::setup::Setup;
use std::sync::Arc;
use vigil_decode::{Decoder, Packet};
use vigil_defrag::Defragmenter;
use vigil_detect::{DetectScratch, Signature};
use vigil_flow::FlowTable;
use vigil_types::Timestamp;

/// Reassembled datagrams may themselves carry fragments (a fragmented
/// tunnel holding fragments): this many levels are reassembled.
const MAX_REASSEMBLY_DEPTH: usize = 3;

pub(crate) struct Worker {
    pub decoder: Decoder,
    pub defrag: Defragmenter,
    /// Each flow carries its flowbits.
    pub flows: FlowTable<vigil_detect::FlowDetect>,
    /// Per nesting level, reused across packets: the datagram reassembly
    /// writes, and the frame it is decoded from (the completing fragment's
    /// headers before IP, then the datagram, as Suricata rebuilds it).
    buffers: Vec<(Vec<u8>, Vec<u8>)>,
    /// The latest packet time seen, which flow records are stamped with.
    pub now: Timestamp,
    /// The rules, their detection engine and `threshold.config`.
    rules: Arc<crate::rules::LoadedRules>,
    scratch: DetectScratch,
    ips: bool,
    /// Alerts raised (written to the outputs).
    pub alerts: u64,
    /// Matches not logged: `noalert` signatures and thresholds (`detect.alerts_suppressed`).
    pub suppressed: u64,
    rates: vigil_detect::threshold::RateTable,
}

impl Worker {
    pub(crate) fn new(setup: &Setup) -> Self {
        Worker {
            decoder: Decoder::new(setup.decode.clone()),
            // Random seeds: flow and fragment keys are attacker-chosen.
            defrag: Defragmenter::new(setup.defrag.clone(), ahash::RandomState::new()),
            flows: FlowTable::new(setup.flow.clone(), ahash::RandomState::new()),
            buffers: (0..MAX_REASSEMBLY_DEPTH).map(|_| (Vec::new(), Vec::new())).collect(),
            now: Timestamp::default(),
            rules: setup.rules.clone(),
            scratch: DetectScratch::default(),
            ips: setup.ips,
            alerts: 0,
            suppressed: 0,
            rates: vigil_detect::threshold::RateTable::default(),
        }
    }

    /// Alerts dropped because one packet had too many.
    pub(crate) fn alert_queue_overflow(&self) -> u64 {
        self.scratch.alerts_over_limit
    }

    /// Runs detection on a packet and writes its alerts.
    fn detect(
        &mut self,
        p: &Packet<'_>,
        flow: Option<vigil_flow::FlowHandle>,
        outputs: &mut Outputs,
    ) -> Result<(), EngineError> {
        let Some(engine) = self.rules.engine.as_deref() else { return Ok(()) };
        // Filled only when something matches: no allocation on quiet packets.
        let mut matched: Vec<&Signature> = Vec::new();
        let f = flow.and_then(|h| self.flows.get_mut(h).map(|f| (h, f)));
        let info = f.as_ref().map(|(h, f)| vigil_detect::compile::FlowInfo {
            to_server: h.dir == vigil_types::Direction::ToServer,
            established: f.state == vigil_flow::FlowState::Established,
        });
        engine.inspect(p, info, f.map(|(_, f)| &mut f.ext), &mut self.scratch, &mut |sig| matched.push(sig));
        for sig in matched {
            // Pass signatures let traffic through; they raise no alert.
            if sig.action == vigil_detect::compile::RuleAction::Pass {
                continue;
            }
            if sig.noalert {
                self.suppressed += 1;
                continue;
            }
            let (src, dst) = (p.ip.map(|ip| ip.src), p.ip.map(|ip| ip.dst));
            if self.rules.thresholds.suppressed(sig.gid, sig.sid, src, dst) {
                self.suppressed += 1;
                continue;
            }
            if let Some(rule) = self.rules.thresholds.rate_for(sig.gid, sig.sid, sig.rate.as_ref()) {
                let subject =
                    vigil_detect::threshold::MatchSubject { src, dst, flow: flow.map_or(0, |h| h.id), ts: p.ts };
                if !self.rates.allow(rule, sig.sid, sig.gid, subject) {
                    self.suppressed += 1;
                    continue;
                }
            }
            self.alerts += 1;
            if let Some(f) = flow.and_then(|h| self.flows.get_mut(h)) {
                f.alerted = true;
            }
            outputs.alert(p, sig, flow.map(|h| h.id), self.ips)?;
        }
        Ok(())
    }

    /// Runs a captured, decoded packet through reassembly and the flow
    /// table, writes its records, and logs flows that ended meanwhile.
    pub(crate) fn packet(&mut self, p: &mut Packet<'_>, outputs: &mut Outputs) -> Result<(), EngineError> {
        if p.ts > self.now {
            self.now = p.ts;
        }
        // Unfinished datagrams time out by packet time, fragments or not.
        self.defrag.expire(p.ts);
        self.inspect(p, 0, outputs)?;
        self.log_ended(outputs)
    }

    fn inspect(&mut self, p: &mut Packet<'_>, depth: usize, outputs: &mut Outputs) -> Result<(), EngineError> {
        let root = depth == 0;
        // A fragment has no flow of its own, but the UDP tunnel it came in does.
        let flow = self.flows.handle_packet(p, root);
        self.detect(p, flow, outputs)?;
        if !p.fragment {
            return outputs.packet(p, flow.map(|h| h.id));
        }
        let Some((mut datagram, mut frame)) = self.buffers.get_mut(depth).map(std::mem::take) else {
            return outputs.packet(p, None);
        };
        let o = self.defrag.handle(p, &mut datagram);
        for e in o.events.iter() {
            p.events.push(e);
            self.decoder.counters.event(e);
        }
        let mut result = outputs.packet(p, None);
        if o.reassembled && result.is_ok() {
            // The datagram is inspected once, as a packet of its own in the
            // fragment's context (time, link headers, VLANs, tunnel).
            let ip_at = p.ip.map_or(0, |ip| ip.offset as usize).min(p.data.len());
            frame.clear();
            frame.extend_from_slice(&p.data[..ip_at]);
            frame.extend_from_slice(&datagram);
            let mut whole = self.decoder.decode_reassembled(&frame, p);
            result = self.inspect(&mut whole, depth + 1, outputs);
        }
        self.buffers[depth] = (datagram, frame);
        result
    }

    /// Writes the records of flows that ended.
    pub(crate) fn log_ended(&mut self, outputs: &mut Outputs) -> Result<(), EngineError> {
        let now = self.now;
        let mut result = Ok(());
        for f in self.flows.drain_ended() {
            if result.is_ok() {
                result = outputs.flow(&f, now);
            }
        }
        result
    }

    /// End of input: every open flow ends (reason "shutdown") and is logged.
    pub(crate) fn finish(&mut self, outputs: &mut Outputs) -> Result<(), EngineError> {
        self.flows.flush();
        self.log_ended(outputs)
    }
}
