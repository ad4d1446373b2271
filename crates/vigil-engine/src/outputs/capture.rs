//! The outputs of packets and stream bytes: `pcap-log` (which packets
//! each writes, and their BPF filter), `tcp-data` and `http-body-data`.

use super::{flush_policy, output_error, OutputMode, Outputs};
use crate::error::EngineError;
use crate::log::log_path;
use crate::setup::Setup;
use vigil_applayer::http::HttpTx;
use vigil_decode::Packet;
use vigil_output::{DataLog, DataLogKind, PcapLog, PcapLogOptions};
use vigil_types::Direction;

/// Which packets a `pcap-log` output writes.
#[derive(Clone)]
pub(crate) struct PcapWhich {
    conditional: vigil_config::PcapCondition,
    use_stream_depth: bool,
    honor_pass_rules: bool,
    /// `bpf-filter`: only the frames it keeps.
    filter: Option<crate::frame_filter::FrameFilter>,
}

/// What a pcap-log output asks of a packet.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PcapMark {
    /// The packet alerted, or its flow did before.
    pub alerted: bool,
    /// The `tag` keyword tagged it.
    pub tagged: bool,
    /// A `pass` rule matched its flow.
    pub passed: bool,
    /// Its direction of the stream is past the reassembly depth.
    pub past_depth: bool,
}

/// The `tcp-data` or `http-body-data` outputs, their `dir` files under `sub`.
pub(super) fn data_logs(
    setup: &Setup,
    mode: OutputMode,
    confs: &[vigil_config::DataLog],
    sub: &str,
) -> Result<Vec<DataLog>, EngineError> {
    confs
        .iter()
        .map(|conf| {
            let kind = match conf.kind {
                vigil_config::DataLogType::File => DataLogKind::File,
                vigil_config::DataLogType::Dir => DataLogKind::Dir,
                vigil_config::DataLogType::Both => DataLogKind::Both,
            };
            let path = log_path(&setup.log_dir, &conf.filename);
            let mut log = DataLog::open(kind, &path, &setup.log_dir.join(sub))
                .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?;
            if let Some(w) = log.writer_mut() {
                w.set_flush(flush_policy(setup, mode, None));
            }
            Ok(log)
        })
        .collect()
}

/// The `pcap-log` outputs.
pub(super) fn pcap_logs(setup: &Setup) -> Result<Vec<(PcapLog, PcapWhich)>, EngineError> {
    let mut pcap_logs = Vec::new();
    for log in &setup.config.outputs.pcap_log {
        let dir = log.dir.as_deref().map_or_else(|| setup.log_dir.clone(), |d| log_path(&setup.log_dir, d));
        let opts = PcapLogOptions {
            dir,
            filename: log.filename.clone(),
            limit: log.limit,
            max_files: log.max_files as usize,
            multi: log.multi,
            usec: log.usec,
        };
        let filter = match &log.bpf_filter {
            Some(expr) => {
                // A mistake is found at start-up, not at the first frame.
                let mut f = crate::frame_filter::FrameFilter::new(expr);
                f.accepts(vigil_types::LinkType::Ethernet, &[])?;
                Some(f)
            }
            None => None,
        };
        let which = PcapWhich {
            conditional: log.conditional,
            use_stream_depth: log.use_stream_depth,
            honor_pass_rules: log.honor_pass_rules,
            filter,
        };
        pcap_logs.push((PcapLog::new(opts), which));
    }
    Ok(pcap_logs)
}

impl Outputs {
    /// Pieces of a flow's streams, as its parser was given them.
    pub(crate) fn tcp_data(
        &mut self,
        flow: &str,
        pieces: impl Iterator<Item = (Direction, Vec<u8>)>,
    ) -> Result<(), EngineError> {
        for (dir, data) in pieces {
            for log in &mut self.tcp_data {
                log.write(flow, None, dir == Direction::ToServer, &data)
                    .map_err(|error| output_error(&log.path(), error))?;
            }
        }
        Ok(())
    }

    pub(crate) fn wants_http_bodies(&self) -> bool {
        !self.http_bodies.is_empty()
    }

    /// The bodies of an HTTP transaction being logged; `p` is a packet of
    /// its flow going `dir`.
    pub(crate) fn http_bodies(&mut self, p: &Packet<'_>, dir: Direction, tx: &HttpTx) -> Result<(), EngineError> {
        let (Some(ip), Some(sp), Some(dp)) = (p.ip, p.sport(), p.dport()) else { return Ok(()) };
        let flow = match dir {
            Direction::ToServer => vigil_output::data_flow_name(ip.src, sp, ip.dst, dp),
            Direction::ToClient => vigil_output::data_flow_name(ip.dst, dp, ip.src, sp),
        };
        for side in [Direction::ToServer, Direction::ToClient] {
            for log in &mut self.http_bodies {
                log.write(&flow, Some(tx.id()), side == Direction::ToServer, tx.body(side))
                    .map_err(|error| output_error(&log.path(), error))?;
            }
        }
        Ok(())
    }

    /// Whether any pcap-log output is on (the worker then marks its packets).
    pub(crate) fn pcap_logging(&self) -> bool {
        !self.pcap_logs.is_empty()
    }

    /// Writes the packet to every pcap-log output that wants it.
    pub(crate) fn pcap_log(&mut self, p: &Packet<'_>, mark: PcapMark) -> Result<(), EngineError> {
        for (log, which) in &mut self.pcap_logs {
            let wanted = match which.conditional {
                vigil_config::PcapCondition::All => true,
                vigil_config::PcapCondition::Alerts => mark.alerted,
                vigil_config::PcapCondition::Tag => mark.tagged,
            };
            if !wanted || (which.honor_pass_rules && mark.passed) || (which.use_stream_depth && mark.past_depth) {
                continue;
            }
            if let Some(f) = which.filter.as_mut() {
                if !f.accepts(p.linktype, p.data)? {
                    continue;
                }
            }
            log.write(p.ts, p.linktype, p.data).map_err(|error| output_error(&log.path(), error))?;
        }
        Ok(())
    }

    pub(super) fn flush_pcap_logs(&mut self) -> Result<(), EngineError> {
        for (log, _) in &mut self.pcap_logs {
            log.flush().map_err(|error| output_error(&log.path(), error))?;
        }
        Ok(())
    }
}
