//! The configured EVE outputs, each with the record kinds it was asked for.

use crate::error::EngineError;
use crate::setup::Setup;
use serde_json::Value;
use std::path::Path;
use vigil_decode::Packet;
use vigil_output::{anomaly_record, AnomalyOptions, EnvelopeOptions, EveWriter};

/// One enabled `eve-log` output.
struct EveSink {
    writer: EveWriter,
    anomaly_decode: bool,
    anomaly: AnomalyOptions,
    stats: bool,
    null_values: bool,
}

/// Every enabled EVE output.
pub(crate) struct Outputs {
    sinks: Vec<EveSink>,
}

impl Outputs {
    pub(crate) fn open(setup: &Setup) -> Result<Outputs, EngineError> {
        let stats_on = setup.config.stats.enabled;
        let mut sinks = Vec::new();
        for eve in setup.config.outputs.enabled_eve_logs() {
            let path = if Path::new(&eve.filename).is_absolute() {
                Path::new(&eve.filename).to_path_buf()
            } else {
                setup.log_dir.join(&eve.filename)
            };
            let writer = EveWriter::create(&path, false)
                .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?;
            let anomaly = eve.types.anomaly.as_ref().filter(|a| a.enabled);
            let stats = eve.types.stats.as_ref().filter(|s| s.enabled && s.totals && stats_on);
            sinks.push(EveSink {
                writer,
                anomaly_decode: anomaly.is_some_and(|a| a.decode),
                anomaly: AnomalyOptions {
                    packethdr: anomaly.is_some_and(|a| a.packethdr),
                    envelope: EnvelopeOptions { ethernet: eve.ethernet },
                },
                stats: stats.is_some(),
                null_values: stats.is_none_or(|s| s.null_values),
            });
        }
        Ok(Outputs { sinks })
    }

    /// Writes what a decoded packet produces: its decode anomalies.
    pub(crate) fn packet(&mut self, p: &Packet<'_>) -> Result<(), EngineError> {
        if p.events.is_empty() {
            return Ok(());
        }
        for sink in self.sinks.iter_mut().filter(|s| s.anomaly_decode) {
            for e in p.events.iter() {
                let rec = anomaly_record(p, e, sink.anomaly);
                write(&mut sink.writer, &rec)?;
            }
        }
        Ok(())
    }

    /// Writes a stats record to every output that logs stats; `make` builds
    /// it for the output's `null-values` setting.
    pub(crate) fn stats(&mut self, make: impl Fn(bool) -> Value) -> Result<(), EngineError> {
        for sink in self.sinks.iter_mut().filter(|s| s.stats) {
            let rec = make(sink.null_values);
            write(&mut sink.writer, &rec)?;
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) -> Result<u64, EngineError> {
        let mut records = 0;
        for sink in &mut self.sinks {
            sink.writer
                .flush()
                .map_err(|error| EngineError::Output { path: sink.writer.path().display().to_string(), error })?;
            records += sink.writer.records();
        }
        Ok(records)
    }
}

fn write(w: &mut EveWriter, rec: &Value) -> Result<(), EngineError> {
    w.write(rec).map_err(|error| EngineError::Output { path: w.path().display().to_string(), error })
}
