//! `stats`: the global counters switch and how counters are named.

use crate::read::{Errors, Section};

/// `stats`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// `stats.enabled`. Default true; only an explicit false turns
    /// counters off (and with them every stats output).
    pub enabled: bool,
    /// `stats.interval`: seconds between stats records. Default 8.
    pub interval: u32,
    /// `stats.decoder-events`: count decoder events as counters.
    /// Default true.
    pub decoder_events: bool,
    /// `stats.decoder-events-prefix`: name prefix of those counters.
    /// Default `decoder.event`.
    pub decoder_events_prefix: String,
    /// `stats.stream-events`: count stream events as counters.
    /// Default false.
    pub stream_events: bool,
    /// `stats.exception-policy.per-app-proto-errors`: exception-policy
    /// counters per app-layer protocol. Default false.
    pub exception_policy_per_app_proto_errors: bool,
    /// `stats.prometheus` (vigil's own): the counters over HTTP for
    /// Prometheus to scrape; `None` unless `enabled`.
    pub prometheus: Option<Prometheus>,
}

/// `stats.prometheus`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prometheus {
    /// `listen`: address and port. Default `127.0.0.1:9464`.
    pub listen: String,
    /// `path`. Default `/metrics`.
    pub path: String,
    /// `threads`: each worker's counters too, labelled `thread`. Default no.
    pub threads: bool,
}

impl Default for Stats {
    /// Suricata's defaults, which the stock file does not change.
    fn default() -> Self {
        Stats {
            enabled: true,
            interval: 8,
            decoder_events: true,
            decoder_events_prefix: "decoder.event".into(),
            stream_events: false,
            exception_policy_per_app_proto_errors: false,
            prometheus: None,
        }
    }
}

impl Stats {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Stats {
        let d = Stats::default();
        Stats {
            enabled: sec.bool("enabled", d.enabled, errs),
            interval: sec
                .convert("interval", errs, |s| {
                    crate::value::parse_uint_decimal(s, u64::from(u32::MAX))
                        .map_err(|_| format!("expected an integer number of seconds, got {s:?}"))
                })
                .map_or(d.interval, |v| v as u32),
            decoder_events: sec.bool("decoder-events", d.decoder_events, errs),
            decoder_events_prefix: sec.string("decoder-events-prefix", errs).unwrap_or(d.decoder_events_prefix),
            stream_events: sec.bool("stream-events", d.stream_events, errs),
            exception_policy_per_app_proto_errors: sec.child("exception-policy").bool(
                "per-app-proto-errors",
                d.exception_policy_per_app_proto_errors,
                errs,
            ),
            prometheus: {
                let p = sec.child("prometheus");
                p.bool("enabled", false, errs).then(|| Prometheus {
                    listen: p
                        .convert("listen", errs, |s| {
                            s.parse::<std::net::SocketAddr>()
                                .map(|_| s.to_string())
                                .map_err(|_| format!("expected an address and port such as 127.0.0.1:9464, got {s:?}"))
                        })
                        .unwrap_or_else(|| "127.0.0.1:9464".into()),
                    path: p.string("path", errs).unwrap_or_else(|| "/metrics".into()),
                    threads: p.bool("threads", false, errs),
                })
            },
        }
    }
}
