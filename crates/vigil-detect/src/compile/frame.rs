//! `frame:` signatures: the payload keywords after a `frame` sticky buffer
//! inspect each frame of that type a flow's parser marks ([`vigil_applayer::frames`]),
//! once, when the frame is whole (or cut by its direction's end).

use super::payload::Payload;
use crate::inspect::Step;
use crate::transform::Transform;
use vigil_rules::IntCmp;
use vigil_types::AppProto;

/// What a signature inspects in a frame.
#[derive(Debug)]
pub struct FrameSig {
    pub proto: AppProto,
    /// The frame type, by its place in the protocol's frame types
    /// ([`vigil_applayer::frames::STREAM`] for the whole stream).
    pub ftype: u8,
    pub transforms: Vec<Transform>,
    pub steps: Vec<Step>,
    /// `bsize` on the (transformed) frame.
    pub len: Vec<IntCmp>,
}

/// Takes the frame buffer out of `payload`: the signature it makes, or why
/// it cannot be run (`header`: the protocol the rule's header names).
pub(super) fn take(payload: &mut Payload, header: Option<AppProto>, missing: &mut Vec<String>) -> Option<FrameSig> {
    let name = payload.frame.take()?;
    let Some(at) = payload.buffers.iter().position(|b| b.name == "frame") else {
        missing.push(format!("frame:{name} without payload keywords"));
        return None;
    };
    let raw = payload.buffers.remove(at);
    // Frame signatures are few and are not prefiltered.
    payload.fast = match payload.fast.take() {
        Some((Some(i), _)) if i == at => None,
        Some((Some(i), p)) if i > at => Some((Some(i - 1), p)),
        other => other,
    };
    if !payload.buffers.is_empty() || !payload.steps.is_empty() {
        missing.push("frame: with other buffers or payload keywords".into());
        return None;
    }
    if raw.absent.is_some() || !raw.sets.is_empty() {
        missing.push("frame: with absent or datasets".into());
        return None;
    }
    let rule_def = header.and_then(vigil_applayer::proto::of);
    match vigil_applayer::proto::frame_type(&name, rule_def) {
        Ok((def, ftype)) => {
            Some(FrameSig { proto: def.app_proto(), ftype, transforms: raw.transforms, steps: raw.steps, len: raw.len })
        }
        Err(e) => {
            missing.push(format!("frame:{name} ({e})"));
            None
        }
    }
}
