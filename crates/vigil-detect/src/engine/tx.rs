//! Transaction signatures: grouped by application protocol and by the
//! progress they wait for, each group with one prefilter per buffer (with
//! its transforms). A transaction is offered with the progress it had at its
//! previous inspection and the progress it has now; only the groups whose
//! wait ends between the two run, so each signature runs once per
//! transaction.

use crate::compile::{BufferMatch, Signature, TxSig};
use crate::inspect::{inspect, InspectCtx};
use crate::prefilter::{Algo, Pattern, Prefilter, PrefilterError, Scratch};
use crate::transform::{apply_chain, Transform, TransformScratch};
use std::collections::HashMap;
use std::net::IpAddr;
use vigil_applayer::{BufferId, Progress, TxRef};
use vigil_types::{AppProto, Direction, PerDir};

/// A transaction offered to detection.
#[derive(Clone, Copy)]
pub struct TxInput<'a> {
    pub tx: TxRef<'a>,
    /// Its progress when it was last inspected (`None`/`None` the first time).
    pub from: PerDir<Progress>,
    /// Its progress now.
    pub to: PerDir<Progress>,
    /// Its protocol counts the changes detection sees
    /// ([`vigil_applayer::proto::ProtoTx::detect_updates`]): a signature
    /// matches it once, however often it is inspected.
    pub counted: bool,
    /// One of those counts changed since it was last inspected.
    pub updated: bool,
}

/// The transactions of the packet's flow that progressed, and the flow's
/// endpoints, which transaction signatures' headers are matched against.
#[derive(Clone, Copy)]
pub struct AppInput<'a> {
    pub txs: &'a [TxInput<'a>],
    pub client: (IpAddr, u16),
    pub server: (IpAddr, u16),
    /// Packet time in seconds, for certificate validity.
    pub now_secs: i64,
    /// The flow's frames handed over with this packet (`frame:` signatures).
    pub frames: &'a [vigil_applayer::Frame],
    /// The flow's transactions, when there are frames: those a frame
    /// belongs to, for the alerts on it.
    pub frame_txs: &'a [TxRef<'a>],
}

/// A buffer as prefiltered and inspected: which one, from which side, through which transforms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BufKey {
    id: BufferId,
    dir: Direction,
    multi: bool,
    transforms: Vec<Transform>,
}

struct BufPrefilter {
    key: BufKey,
    prefilter: Prefilter,
    pattern_sigs: Vec<Vec<u32>>,
}

/// Signatures of one protocol that wait for the same progress.
struct TxGroup {
    proto: AppProto,
    need: PerDir<Progress>,
    buffers: Vec<BufPrefilter>,
    /// Without a fast pattern: verified on every transaction that reaches `need`.
    always: Vec<u32>,
}

/// Every transaction signature, grouped.
#[derive(Default)]
pub(crate) struct TxEngine {
    groups: Vec<TxGroup>,
}

fn reached(need: &PerDir<Progress>, p: &PerDir<Progress>) -> bool {
    [Direction::ToServer, Direction::ToClient].into_iter().all(|d| p.get(d) >= need.get(d))
}

impl TxEngine {
    pub(crate) fn build(sigs: &[Signature], algo: Algo) -> Result<TxEngine, PrefilterError> {
        type Patterns = (Vec<Pattern>, HashMap<Pattern, u32>, Vec<Vec<u32>>);
        // (proto, need) -> (buffer key -> patterns, always)
        type Building = (AppProto, PerDir<Progress>, Vec<(BufKey, Patterns)>, Vec<u32>);
        let mut groups: Vec<Building> = Vec::new();
        for (i, s) in sigs.iter().enumerate() {
            let Some(tx) = &s.tx else { continue };
            // A fast pattern read through another protocol's view is
            // prefiltered with that protocol's transactions.
            let fast = tx.fast.and_then(|b| tx.buffers.get(b));
            let proto = fast.and_then(|b| b.via).unwrap_or(tx.proto);
            let gi = match groups.iter().position(|g| g.0 == proto && g.1 == tx.need) {
                Some(g) => g,
                None => {
                    groups.push((proto, tx.need, Vec::new(), Vec::new()));
                    groups.len() - 1
                }
            };
            let g = &mut groups[gi];
            match (fast, &s.fast_pattern) {
                (Some(b), Some(p)) => {
                    let key = key_of(b);
                    let ki = match g.2.iter().position(|(k, _)| *k == key) {
                        Some(k) => k,
                        None => {
                            g.2.push((key, (Vec::new(), HashMap::new(), Vec::new())));
                            g.2.len() - 1
                        }
                    };
                    let (patterns, index, pattern_sigs) = &mut g.2[ki].1;
                    let id = *index.entry(p.clone()).or_insert_with(|| {
                        patterns.push(p.clone());
                        pattern_sigs.push(Vec::new());
                        (patterns.len() - 1) as u32
                    });
                    pattern_sigs[id as usize].push(i as u32);
                }
                _ => g.3.push(i as u32),
            }
        }
        let mut out = Vec::with_capacity(groups.len());
        for (proto, need, bufs, always) in groups {
            let mut buffers = Vec::with_capacity(bufs.len());
            for (key, (patterns, _, pattern_sigs)) in bufs {
                buffers.push(BufPrefilter { key, prefilter: Prefilter::build(&patterns, algo)?, pattern_sigs });
            }
            out.push(TxGroup { proto, need, buffers, always });
        }
        Ok(TxEngine { groups: out })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Adds `(signature, transaction slot)` for every signature that may
    /// match a transaction of `app` whose wait just ended.
    pub(crate) fn candidates(&self, app: &AppInput<'_>, s: &mut TxScratch, out: &mut Vec<(u32, u32)>) {
        for (slot, t) in app.txs.iter().enumerate() {
            for g in &self.groups {
                // A wait that just ended, or, for a counted transaction, a change after it.
                if !reached(&g.need, &t.to) || (reached(&g.need, &t.from) && !t.updated) {
                    continue;
                }
                // The transaction, or the one of the group's protocol it carries.
                let Some(tx) = t.tx.as_proto(g.proto) else { continue };
                out.extend(g.always.iter().map(|&i| (i, slot as u32)));
                for b in &g.buffers {
                    for index in 0.. {
                        let Some(raw) = tx.buffer(b.key.dir, b.key.id, index) else { break };
                        let data = apply_chain(&b.key.transforms, raw, &mut s.transform);
                        let sigs = &b.pattern_sigs;
                        b.prefilter.scan(&mut s.prefilter, data, &mut |pat| {
                            out.extend(sigs[pat as usize].iter().map(|&i| (i, slot as u32)));
                        });
                        if !b.key.multi {
                            break;
                        }
                    }
                }
            }
        }
    }
}

fn key_of(b: &BufferMatch) -> BufKey {
    BufKey { id: b.id, dir: b.dir, multi: b.multi, transforms: b.transforms.clone() }
}

/// A worker's scratch space for transaction inspection.
#[derive(Default)]
pub(crate) struct TxScratch {
    prefilter: Scratch,
    transform: TransformScratch,
}

/// Whether the buffers and value checks of `tx_sig` match `tx`.
pub(crate) fn tx_matches(
    tx_sig: &TxSig,
    tx: TxRef<'_>,
    now_secs: i64,
    s: &mut TxScratch,
    ictx: &mut InspectCtx,
) -> bool {
    // A rule for a protocol the transaction's carries runs on the carried one
    // (unless it names that protocol alone).
    if tx_sig.exact && tx.proto() != tx_sig.proto {
        return false;
    }
    let Some(tx) = tx.as_proto(tx_sig.proto) else { return false };
    let checks_ok = tx_sig.checks.iter().all(|c| match tx_sig.mixed {
        false => c.matches(tx, tx_sig.side, now_secs),
        true => tx.as_proto(c.proto()).is_some_and(|t| c.matches(t, tx_sig.side, now_secs)),
    });
    ictx.dce_little = tx.dce_little_endian();
    checks_ok
        && tx_sig.buffers.iter().all(|b| match b.via {
            None => buffer_matches(b, tx, s, ictx),
            Some(p) => tx.as_proto(p).is_some_and(|t| buffer_matches(b, t, s, ictx)),
        })
}

/// Whether a `frame:` signature's keywords match a frame's bytes.
pub(crate) fn frame_matches(
    fs: &crate::compile::FrameSig,
    data: &[u8],
    s: &mut TxScratch,
    ictx: &mut InspectCtx,
) -> bool {
    ictx.dce_little = false;
    let data = apply_chain(&fs.transforms, data, &mut s.transform);
    fs.len.iter().all(|c| c.matches(data.len() as u64)) && (fs.steps.is_empty() || inspect(&fs.steps, data, ictx))
}

fn buffer_matches(b: &BufferMatch, tx: TxRef<'_>, s: &mut TxScratch, ictx: &mut InspectCtx) -> bool {
    match (b.absent, tx.buffer(b.dir, b.id, 0)) {
        (Some(_), None) => return true,
        (Some(false), Some(_)) => return false,
        _ => {}
    }
    for index in 0.. {
        let Some(raw) = tx.buffer(b.dir, b.id, index) else { return false };
        let data = apply_chain(&b.transforms, raw, &mut s.transform);
        if b.len.iter().all(|c| c.matches(data.len() as u64))
            && (b.steps.is_empty() || inspect(&b.steps, data, ictx))
            && b.sets.iter().all(|s| s.matches(data))
        {
            return true;
        }
        if !b.multi {
            return false;
        }
    }
    false
}
