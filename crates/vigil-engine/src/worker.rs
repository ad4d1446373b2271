//! One worker's pipeline for a decoded packet: IP reassembly, the flow
//! table, TCP stream tracking, detection, and the records they produce.
//! The packet clock is the packet's own timestamp throughout.

use crate::error::EngineError;
use crate::outputs::Outputs;
use crate::setup::Setup;
use crate::tcp::{pseudo_packet, FlowExt};
use std::sync::Arc;
use vigil_decode::{DecodeConfig, Decoder, Packet};
use vigil_defrag::Defragmenter;
use vigil_detect::compile::FlowInfo;
use vigil_detect::{DetectScratch, FlowDetect, Signature, StreamInput};
use vigil_flow::{Flow, FlowHandle, FlowState, FlowTable};
use vigil_stream::{Segment, StreamCtx, StreamEvent, TcpState};
use vigil_types::{Direction, LinkType, Timestamp};

/// Reassembled datagrams may themselves carry fragments (a fragmented
/// tunnel holding fragments): this many levels are reassembled.
const MAX_REASSEMBLY_DEPTH: usize = 3;

pub(crate) struct Worker {
    pub decoder: Decoder,
    pub defrag: Defragmenter,
    pub flows: FlowTable<FlowExt>,
    pub stream: StreamCtx,
    /// Stream events seen, by [`StreamEvent::ALL`] index.
    pub stream_events: [u64; StreamEvent::ALL.len()],
    /// Per nesting level, reused across packets: the datagram reassembly
    /// writes, and the frame it is decoded from (the completing fragment's
    /// headers before IP, then the datagram, as Suricata rebuilds it).
    buffers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Reused for the stream bytes a packet brings to detection.
    stream_buf: Vec<u8>,
    /// Decodes pseudo packets without touching the capture's counters.
    pseudo_decoder: Decoder,
    /// The latest packet time seen, which flow records are stamped with.
    pub now: Timestamp,
    pub detector: Detector,
}

/// Detection and what it keeps per worker.
pub(crate) struct Detector {
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

impl Detector {
    /// Runs detection on a packet and writes its alerts; true when one was raised.
    fn run(
        &mut self,
        p: &Packet<'_>,
        flow: Option<(u64, FlowInfo, &mut FlowDetect)>,
        stream: StreamInput<'_>,
        outputs: &mut Outputs,
    ) -> Result<bool, EngineError> {
        let Some(engine) = self.rules.engine.as_deref() else { return Ok(false) };
        // Filled only when something matches: no allocation on quiet packets.
        let mut matched: Vec<&Signature> = Vec::new();
        let (flow_id, info, state) = match flow {
            Some((id, info, st)) => (Some(id), Some(info), Some(st)),
            None => (None, None, None),
        };
        engine.inspect_stream(p, info, state, stream, &mut self.scratch, &mut |sig| matched.push(sig));
        let mut alerted = false;
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
                let subject = vigil_detect::threshold::MatchSubject { src, dst, flow: flow_id.unwrap_or(0), ts: p.ts };
                if !self.rates.allow(rule, sig.sid, sig.gid, subject) {
                    self.suppressed += 1;
                    continue;
                }
            }
            self.alerts += 1;
            alerted = true;
            outputs.alert(p, sig, flow_id, self.ips)?;
        }
        Ok(alerted)
    }
}

/// `established`: what the TCP session said before this packet, when it is tracked.
fn flow_info<E>(f: &Flow<E>, dir: Direction, tracked: bool, established: Option<bool>) -> FlowInfo {
    FlowInfo {
        to_server: dir == Direction::ToServer,
        established: established.unwrap_or(f.state == FlowState::Established),
        tracked,
    }
}

impl Worker {
    pub(crate) fn new(setup: &Setup) -> Self {
        Worker {
            decoder: Decoder::new(setup.decode.clone()),
            // Random seeds: flow and fragment keys are attacker-chosen.
            defrag: Defragmenter::new(setup.defrag.clone(), ahash::RandomState::new()),
            flows: FlowTable::new(setup.flow.clone(), ahash::RandomState::new()),
            stream: StreamCtx::new(setup.stream.clone()),
            stream_events: [0; StreamEvent::ALL.len()],
            buffers: (0..MAX_REASSEMBLY_DEPTH).map(|_| (Vec::new(), Vec::new())).collect(),
            stream_buf: Vec::new(),
            pseudo_decoder: Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() }),
            now: Timestamp::default(),
            detector: Detector {
                rules: setup.rules.clone(),
                scratch: DetectScratch::default(),
                ips: setup.ips,
                alerts: 0,
                suppressed: 0,
                rates: vigil_detect::threshold::RateTable::default(),
            },
        }
    }

    /// Alerts dropped because one packet had too many.
    pub(crate) fn alert_queue_overflow(&self) -> u64 {
        self.detector.scratch.alerts_over_limit
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

    /// Tracks the packet's TCP session: returns whether its payload went
    /// into the stream, the stream range now ready for inspection (its
    /// bytes in `stream_buf`), and whether the session was established
    /// when the packet came (a packet that closes it still belongs to it,
    /// as in Suricata).
    fn track(&mut self, p: &Packet<'_>, h: FlowHandle) -> (bool, Option<(u64, u64)>, Option<bool>) {
        let Some(seg) = Segment::from_packet(p, h.dir) else { return (false, None, None) };
        let Some(f) = self.flows.get_mut(h) else { return (false, None, None) };
        if f.ext.tcp.is_none() {
            f.ext.tcp = self.stream.start(&seg).map(Box::new);
        }
        let Some(ssn) = f.ext.tcp.as_deref_mut() else { return (false, None, None) };
        let before = ssn.state;
        let established = Some(before >= TcpState::Established && before < TcpState::Closed);
        let mut events = Vec::new();
        let handled = ssn.handle(&mut self.stream, &seg, &mut |e| events.push(e));
        for e in events {
            if let Some(i) = StreamEvent::ALL.iter().position(|&x| x == e) {
                self.stream_events[i] += 1;
            }
        }
        // A reset ends the session: what was sent is inspected, acknowledged or not.
        let ready = ssn.raw_ready(&mut self.stream, h.dir, ssn.reset);
        if let Some((start, end)) = ready {
            self.stream_buf.clear();
            ssn.read(h.dir, start, end, &mut self.stream_buf);
        }
        (handled.stream_added, ready, established)
    }

    fn inspect(&mut self, p: &mut Packet<'_>, depth: usize, outputs: &mut Outputs) -> Result<(), EngineError> {
        let root = depth == 0;
        // A fragment has no flow of its own, but the UDP tunnel it came in does.
        let flow = self.flows.handle_packet(p, root);
        let (in_stream, ready, established) = match flow {
            Some(h) => self.track(p, h),
            None => (false, None, None),
        };
        let buf = std::mem::take(&mut self.stream_buf);
        let stream = StreamInput {
            chunk: ready.map(|(start, end)| (&buf[..(end - start) as usize], start)),
            payload_in_stream: in_stream,
            pseudo: false,
        };
        let f = flow.and_then(|h| self.flows.get_mut(h).map(|f| (h, f)));
        let result = match f {
            Some((h, f)) => {
                let info = flow_info(f, h.dir, f.ext.tcp.is_some(), established);
                let alerted = self.detector.run(p, Some((h.id, info, &mut f.ext.detect)), stream, outputs);
                if matches!(alerted, Ok(true)) {
                    f.alerted = true;
                }
                if let (Some((_, end)), Some(ssn)) = (ready, f.ext.tcp.as_deref_mut()) {
                    ssn.raw_done(&mut self.stream, h.dir, end);
                }
                alerted.map(|_| ())
            }
            None => self.detector.run(p, None, stream, outputs).map(|_| ()),
        };
        self.stream_buf = buf;
        result?;
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

    /// Inspects what is left of an ended flow's streams (through pseudo
    /// packets, as Suricata does) and frees its session.
    fn flush_streams(&mut self, f: &mut Flow<FlowExt>, outputs: &mut Outputs) -> Result<(), EngineError> {
        let Some(mut ssn) = f.ext.tcp.take() else { return Ok(()) };
        let mut result = Ok(());
        for dir in [Direction::ToServer, Direction::ToClient] {
            while let Some((start, end)) = ssn.raw_ready(&mut self.stream, dir, true) {
                self.stream_buf.clear();
                ssn.read(dir, start, end, &mut self.stream_buf);
                ssn.raw_done(&mut self.stream, dir, end);
                if result.is_err() || self.stream_buf.is_empty() {
                    continue;
                }
                self.stream.counters.pseudo += 1;
                let frame = pseudo_packet(f, dir);
                let p = self.pseudo_decoder.decode(&frame, self.now, LinkType::Raw, 0);
                let stream =
                    StreamInput { chunk: Some((&self.stream_buf, start)), payload_in_stream: true, pseudo: true };
                let info = flow_info(f, dir, true, None);
                match self.detector.run(&p, Some((f.id, info, &mut f.ext.detect)), stream, outputs) {
                    Ok(true) => f.alerted = true,
                    Ok(false) => {}
                    Err(e) => result = Err(e),
                }
            }
        }
        self.stream.end(&mut ssn);
        result
    }

    /// Writes the records of flows that ended.
    pub(crate) fn log_ended(&mut self, outputs: &mut Outputs) -> Result<(), EngineError> {
        let now = self.now;
        let mut result = Ok(());
        let ended: Vec<Flow<FlowExt>> = self.flows.drain_ended().collect();
        for mut f in ended {
            if result.is_ok() {
                result = self.flush_streams(&mut f, outputs);
            }
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
