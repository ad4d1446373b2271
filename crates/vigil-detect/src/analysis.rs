//! `--engine-analysis`: the kind of signature each rule compiled into, in
//! Suricata's terms (`ip_only`, `pkt`, `stream`, `app_tx`, ...), for the
//! `rules.json` report. The kind says when Suricata inspects a signature,
//! and vigil's engine follows it: an IP-only signature sees the first packet
//! of each direction of a flow, a `pkt_stream` one packets and the stream, a
//! `stream` one the stream alone. One difference: an IP-only signature with
//! a keyword (setting bits, `iprep`, `threshold`, `tag`, ...) is inspected by
//! vigil on every packet, as a packet signature.

use crate::compile::{Proto, Signature};
use vigil_rules::keywords::flow::BitCmd;
use vigil_rules::keywords::Kind;
use vigil_rules::{Rule, Value};

/// Suricata's signature types, as its engine analysis names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleType {
    /// Addresses and protocol only: the first packet of each direction.
    IpOnly,
    /// As IP-only, but an address is negated: every packet.
    LikeIpOnly,
    /// `app-layer-protocol` alone: once protocol detection is done.
    PdOnly,
    /// `decode-event` alone.
    DeOnly,
    Pkt,
    PktStream,
    Stream,
    /// An application protocol without transaction keywords.
    AppLayer,
    /// Transaction buffers and keywords.
    AppTx,
}

impl RuleType {
    pub fn name(self) -> &'static str {
        match self {
            RuleType::IpOnly => "ip_only",
            RuleType::LikeIpOnly => "like_ip_only",
            RuleType::PdOnly => "pd_only",
            RuleType::DeOnly => "de_only",
            RuleType::Pkt => "pkt",
            RuleType::PktStream => "pkt_stream",
            RuleType::Stream => "stream",
            RuleType::AppLayer => "app_layer",
            RuleType::AppTx => "app_tx",
        }
    }
}

/// The kind of `sig`, compiled from `rule`.
pub fn rule_type(rule: &Rule, sig: &Signature) -> RuleType {
    // The keywords that do something at inspection (not `msg`, `sid`, ...).
    let active: Vec<&vigil_rules::RuleOption> = rule.options.iter().filter(|o| o.keyword.kind.needs_engine()).collect();
    let named = |names: &[&str]| active.iter().all(|o| names.contains(&o.keyword.canonical));
    let has = |name: &str| active.iter().any(|o| o.keyword.canonical == name);
    if sig.proto == Proto::PktHdr && !active.is_empty() && named(&["decode-event"]) {
        return RuleType::DeOnly;
    }
    if has("app-layer-protocol") && named(&["app-layer-protocol", "flow"]) {
        return RuleType::PdOnly;
    }
    if header_only_keywords(&active) && sig.app_proto.is_none() && sig.tx.is_none() {
        let ports_any = sig.sport.is_full() && sig.dport.is_full();
        if ports_any && sig.proto != Proto::PktHdr {
            let negated = rule.resolved.as_ref().is_some_and(|r| r.negated);
            return if negated { RuleType::LikeIpOnly } else { RuleType::IpOnly };
        }
    }
    if sig.tx.is_some() || has("app-layer-event") {
        return RuleType::AppTx;
    }
    if sig.payload.is_empty() {
        // A packet keyword (`iprep` among them) makes it a packet rule.
        let packet = !sig.checks.is_empty() || !sig.iprep.is_empty();
        return if sig.app_proto.is_some() && !packet { RuleType::AppLayer } else { RuleType::Pkt };
    }
    if sig.stream_only {
        RuleType::Stream
    } else if sig.require_packet {
        RuleType::PktStream
    } else if sig.require_stream {
        RuleType::Stream
    } else {
        RuleType::Pkt
    }
}

/// Only keywords an IP-only signature may have: setting (not testing) bits,
/// IP reputation, and what acts after a match.
fn header_only_keywords(active: &[&vigil_rules::RuleOption]) -> bool {
    active.iter().all(|o| match (&o.value, o.keyword.canonical) {
        (Value::Bits(b), "flowbits" | "hostbits" | "xbits") => {
            matches!(b.cmd, BitCmd::Set | BitCmd::Unset | BitCmd::Toggle | BitCmd::NoAlert)
        }
        (_, "iprep") => true,
        _ => matches!(o.keyword.kind, Kind::Post),
    })
}
