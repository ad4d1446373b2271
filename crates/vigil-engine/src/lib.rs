//! The engine: puts vigil's stages together and runs them.
//!
//! A run starts from [`RunOptions`] (what the command line said), loads and
//! validates the configuration ([`setup`]), then reads every capture in turn
//! ([`run_offline`]): each frame is decoded; IP fragments go to reassembly
//! (`vigil-defrag`) and a completed datagram is decoded and inspected as a
//! packet of its own; every packet is looked up in the flow table
//! (`vigil-flow`), its decode events go to the EVE `anomaly` output (with
//! its `flow_id`) when enabled, and flows that end (timeout, eviction, end
//! of input) go to the EVE `flow` output. In IPS mode (`--simulate-ips`) a
//! drop rule drops the packet, or the rest of its flow, as its kind of
//! signature says (module `verdict`), and the EVE `drop` output records each
//! dropped packet. Time is packet time throughout.
//! Counters accumulate; stats records are written periodically and once at
//! the end. The [`Summary`] says what was read, inspected and dropped.
//!
//! With the `autofp` runmode ([`Runmode`]) the reading thread spreads the
//! frames over worker threads by a symmetric hash of their IP addresses
//! (`vigil_decode::dispatch_hash`); each worker runs the whole pipeline for
//! the flows it owns and writes to the same outputs. Offline, a full worker
//! ring makes the reader wait, so no packet is ever lost.
//!
//! ```no_run
//! use vigil_engine::{run_offline, RunOptions};
//! let opts = RunOptions { inputs: vec!["input.pcap".into()], log_dir: Some("out".into()), ..Default::default() };
//! let summary = run_offline(&opts, &mut |_| {}).unwrap();
//! println!("{} packets", summary.packets);
//! ```

mod affinity;
mod analysis;
mod app;
mod autofp;
mod checksum;
mod control;
mod detector;
mod error;
mod exception;
mod expect;
mod files;
mod frame_filter;
mod inputs;
mod lane;
#[cfg(target_os = "linux")]
mod live;
mod log;
mod memory;
mod metrics;
mod notify;
mod options;
mod outputs;
mod ranges;
mod reject;
mod rules;
mod run;
mod runmode;
mod setup;
mod simulate;
mod socket;
mod socket_commands;
mod stats;
mod summary;
mod tag;
mod tcp;
mod unix_runmode;
mod unwritten;
mod verdict;
mod worker;
mod workers;

pub use affinity::Affinity;
pub use control::Control;
pub use error::EngineError;
#[cfg(target_os = "linux")]
pub use live::{run_live, LiveStatus};
pub use log::LogRecord;
pub use memory::{run_frames, MemFrame, MemRun};
pub use options::{LiveInput, RunOptions};
pub use rules::{rule_files, LoadedRules};
pub use run::{run_offline, run_setup, Progress};
pub use runmode::Runmode;
pub use setup::{config_tree, setup, write_rules_json, Setup};
pub use simulate::Simulation;
pub use summary::Summary;
pub use unix_runmode::{run_unix_socket, unix_socket_path};
pub use vigil_config::DEFAULT_YAML;

/// The Suricata release whose rules, configuration, outputs and control
/// socket vigil follows.
pub const SURICATA_VERSION: &str = "8.0.6";
