//! The other direction of a TCP flow once its protocol is known: Suricata
//! detects each direction on its own, and says so when they disagree. A
//! direction whose first bytes match no protocol raises
//! `applayer_detect_protocol_only_one_direction` (and the flow records it
//! as `app_proto_ts`/`app_proto_tc: failed`); one that matches another
//! protocol raises `applayer_mismatch_protocol_both_directions` (and is
//! recorded under that protocol's name). The flow keeps the protocol found
//! first; nothing here changes what is parsed.

use crate::detect::{Detect, Probes};
use vigil_types::{AppProto, Direction};

pub(crate) const ONLY_ONE_DIRECTION: &str = "applayer_detect_protocol_only_one_direction";
pub(crate) const MISMATCH_BOTH_DIRECTIONS: &str = "applayer_mismatch_protocol_both_directions";

/// Where the other direction's detection stands.
#[derive(Debug, Default)]
pub(crate) enum OtherSide {
    /// Not started (UDP, or the protocol is not yet known).
    #[default]
    Off,
    /// Waiting for more of `dir`'s first bytes.
    Waiting { dir: Direction, kept: Vec<u8> },
    /// Decided: what `dir` was found to speak.
    Decided { dir: Direction, proto: AppProto },
}

/// What the flow does on a decision: the event to raise, if any.
pub(crate) type Raised = Option<&'static str>;

impl OtherSide {
    /// The protocol `proto` was found on `found_by`; `other_failed`: the
    /// other direction's first bytes already matched nothing; `other_kept`:
    /// what it sent so far, still undecided.
    pub(crate) fn start(
        found_by: Direction,
        proto: AppProto,
        other_failed: bool,
        other_kept: &[u8],
        probes: Probes,
        limit: usize,
    ) -> (OtherSide, Raised) {
        let dir = found_by.flip();
        if other_failed {
            return (OtherSide::Decided { dir, proto: AppProto::Failed }, Some(ONLY_ONE_DIRECTION));
        }
        let mut side = OtherSide::Waiting { dir, kept: Vec::new() };
        let raised = side.feed(dir, other_kept, proto, probes, limit);
        (side, raised)
    }

    /// More first bytes of `dir`.
    pub(crate) fn feed(
        &mut self,
        dir: Direction,
        data: &[u8],
        proto: AppProto,
        probes: Probes,
        limit: usize,
    ) -> Raised {
        let OtherSide::Waiting { dir: waiting, kept } = self else { return None };
        if *waiting != dir || data.is_empty() {
            return None;
        }
        let take = limit.saturating_sub(kept.len()).min(data.len());
        kept.extend_from_slice(&data[..take]);
        let (found, raised) = match probes.tcp(dir, kept) {
            Detect::Match(p) if p == proto => (p, None),
            Detect::Match(p) => (p, Some(MISMATCH_BOTH_DIRECTIONS)),
            Detect::NoMatch => (AppProto::Failed, Some(ONLY_ONE_DIRECTION)),
            Detect::NeedMore if kept.len() >= limit => (AppProto::Failed, Some(ONLY_ONE_DIRECTION)),
            Detect::NeedMore => return None,
        };
        *self = OtherSide::Decided { dir, proto: found };
        raised
    }

    /// `dir` ended: bytes that never decided matched nothing.
    pub(crate) fn close(&mut self, dir: Direction) -> Raised {
        let OtherSide::Waiting { dir: waiting, kept } = self else { return None };
        if *waiting != dir {
            return None;
        }
        let raised = (!kept.is_empty()).then_some(ONLY_ONE_DIRECTION);
        *self = if kept.is_empty() { OtherSide::Off } else { OtherSide::Decided { dir, proto: AppProto::Failed } };
        raised
    }

    /// What `dir` speaks as far as detection knows, where that is not the
    /// flow's protocol: `Unknown` while its first bytes are still awaited.
    pub(crate) fn dir_proto(&self, dir: Direction, flow_proto: AppProto) -> Option<AppProto> {
        match self {
            OtherSide::Waiting { dir: d, .. } if *d == dir => Some(AppProto::Unknown),
            _ => self.differs(dir, flow_proto),
        }
    }

    /// What `dir` was found to speak when it is not what the flow speaks.
    pub(crate) fn differs(&self, dir: Direction, flow_proto: AppProto) -> Option<AppProto> {
        match self {
            OtherSide::Decided { dir: d, proto } if *d == dir && *proto != flow_proto => Some(*proto),
            _ => None,
        }
    }
}
