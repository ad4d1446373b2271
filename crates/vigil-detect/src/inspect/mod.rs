//! Verification of a signature's payload keywords against one buffer.
//!
//! A signature's `content`, `pcre`, `isdataat`, `byte_*` and `base64_decode` keywords are
//! compiled into a list of [`Step`]s, run in order with Suricata's semantics:
//! each step searches from where the previous relative match ended, and when
//! a later relative step fails, an earlier content or pcre is retried at its
//! next occurrence (backtracking), so `content:"a"; content:"b"; distance:0;
//! within:1;` finds "ab" in "a-ab". The work is bounded: a budget of steps
//! per inspection stops pathological rules, and PCRE has its own match limits.

pub mod asn1;
mod base64;
mod bytes;
mod content;
mod pcre;

pub use base64::{Base64Step, MAX_ENCODED};

pub use bytes::{ByteExtract, ByteJump, ByteMath, ByteTest, Endian, MathOp, NumBase, Read, TestOp, Value};
pub use content::ContentStep;
pub use pcre::{Capture, Captured, CapturedVar, PcreError, PcreFlags, PcreStep, VarKind};

/// One payload keyword, ready to run.
#[derive(Debug)]
pub enum Step {
    Content(ContentStep),
    Pcre(PcreStep),
    /// `isdataat:[!]n[,relative]`: is there a byte at `n` (from the start, or
    /// from the end of the previous match)?
    IsDataAt {
        pos: u32,
        relative: bool,
        negated: bool,
    },
    ByteTest(ByteTest),
    ByteJump(ByteJump),
    ByteExtract(ByteExtract),
    ByteMath(ByteMath),
    /// `base64_decode` and the keywords of its `base64_data`.
    Base64(Base64Step),
    /// `entropy`: the window's Shannon entropy, compared; the value goes
    /// to the flow variable `var` (the buffer's Suricata list name)
    /// whether or not it passes.
    Entropy {
        spec: vigil_rules::keywords::entropy::EntropySpec,
        var: std::sync::Arc<str>,
    },
    /// `asn1`: BER objects from an offset trip one of the checks.
    Asn1(vigil_rules::keywords::asn1::Asn1Spec),
}

impl Step {
    /// Whether the step's position depends on the previous match.
    pub fn is_relative(&self) -> bool {
        match self {
            Step::Content(c) => c.is_relative(),
            Step::Pcre(p) => p.relative,
            Step::IsDataAt { relative, .. } => *relative,
            Step::ByteTest(b) => b.relative,
            Step::ByteJump(b) => b.relative,
            Step::ByteExtract(b) => b.relative,
            Step::ByteMath(b) => b.relative,
            Step::Base64(b) => b.relative,
            Step::Entropy { .. } => false,
            Step::Asn1(a) => a.absolute_offset.is_none() && a.relative_offset.is_some(),
        }
    }
}

/// The most `byte_extract`/`byte_math` variables one signature may hold.
pub const MAX_VARS: usize = 8;

/// Per-inspection state: variables and the work budget.
#[derive(Debug, Clone)]
pub struct InspectCtx {
    pub vars: [u64; MAX_VARS],
    budget: u32,
    /// What `budget` starts at for each inspection (`u32::MAX`: no limit).
    limit: u32,
    /// Stream offset of the buffer's first byte: absolute positions
    /// (`offset`, `depth`, absolute `isdataat`) count from where it says
    /// (0: the buffer's own start, as in IDS mode's stream windows; inline,
    /// whose window reaches back over bytes already inspected, the stream's).
    base: u64,
    /// Inspections cut short by the budget (Suricata's recursion limit).
    pub budget_exhausted: u64,
    /// PCRE matches stopped by PCRE's own limits.
    pub pcre_limit_hits: u64,
    /// `base64_decode` output, reused between inspections.
    decoded: Vec<u8>,
    /// The signature just evaluated matched in the reassembled stream (not
    /// the packet alone): a drop or pass of it then covers the flow.
    pub(crate) matched_in_stream: bool,
    /// The DCE/RPC call being inspected is little-endian: what the `dce`
    /// byte order of `byte_test` and its kin reads.
    pub dce_little: bool,
    /// What the signature being evaluated captured (`pcre` groups with a
    /// variable), kept when it matches.
    pub captured: pcre::Captured,
    /// What `entropy` keywords of the signature being evaluated computed,
    /// by variable: the flow keeps them, match or not.
    pub entropy: Vec<(std::sync::Arc<str>, f64)>,
}

/// Steps one inspection may take, backtracking included (Suricata's
/// `inspection-recursion-limit` default).
pub const DEFAULT_BUDGET: u32 = 3000;

impl InspectCtx {
    /// Steps each inspection may take from now on; 0: no limit.
    pub fn set_limit(&mut self, limit: u32) {
        self.limit = if limit == 0 { u32::MAX } else { limit };
    }
}

impl Default for InspectCtx {
    fn default() -> Self {
        InspectCtx {
            vars: [0; MAX_VARS],
            budget: DEFAULT_BUDGET,
            limit: DEFAULT_BUDGET,
            base: 0,
            budget_exhausted: 0,
            pcre_limit_hits: 0,
            decoded: Vec::new(),
            matched_in_stream: false,
            dce_little: false,
            captured: Vec::new(),
            entropy: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Match,
    NoMatch,
    /// Stop: the budget ran out (treated as no match, and counted).
    Abort,
}

/// True when `steps` all match `buf`.
pub fn inspect(steps: &[Step], buf: &[u8], ctx: &mut InspectCtx) -> bool {
    inspect_at(steps, buf, 0, ctx)
}

/// True when `steps` all match `buf`, a piece of a stream that starts at
/// stream offset `base`.
pub fn inspect_at(steps: &[Step], buf: &[u8], base: u64, ctx: &mut InspectCtx) -> bool {
    ctx.budget = ctx.limit;
    ctx.base = base;
    match run(steps, 0, buf, 0, ctx) {
        Outcome::Match => true,
        Outcome::NoMatch => false,
        Outcome::Abort => {
            ctx.budget_exhausted += 1;
            false
        }
    }
}

fn run(steps: &[Step], i: usize, buf: &[u8], prev_end: usize, ctx: &mut InspectCtx) -> Outcome {
    let Some(step) = steps.get(i) else { return Outcome::Match };
    if ctx.budget == 0 {
        return Outcome::Abort;
    }
    ctx.budget -= 1;
    // Only a relative step further on can make an earlier match worth retrying.
    let retry = steps.get(i + 1).is_some_and(Step::is_relative);
    match step {
        Step::Content(c) => {
            let mut from = None;
            loop {
                match c.find(buf, prev_end, from, ctx.base, &ctx.vars) {
                    None => return if c.negated { run(steps, i + 1, buf, prev_end, ctx) } else { Outcome::NoMatch },
                    Some(_) if c.negated => return Outcome::NoMatch,
                    Some((start, end)) => match run(steps, i + 1, buf, end, ctx) {
                        Outcome::NoMatch if retry => from = Some(start + 1),
                        other => return other,
                    },
                }
                if ctx.budget == 0 {
                    return Outcome::Abort;
                }
                ctx.budget -= 1;
            }
        }
        Step::Pcre(p) => {
            let mut from = if p.relative { prev_end } else { 0 };
            let mark = ctx.captured.len();
            let outcome = loop {
                // Groups of an attempt the rest of the rule refuses are dropped.
                ctx.captured.truncate(mark);
                let found = if p.captures.is_empty() {
                    p.find(buf, from)
                } else {
                    p.find_capturing(buf, from, &mut ctx.captured)
                };
                let found = match found {
                    Ok(f) => f,
                    Err(PcreError::Limit) => {
                        ctx.pcre_limit_hits += 1;
                        None
                    }
                };
                match found {
                    None => break if p.negated { run(steps, i + 1, buf, prev_end, ctx) } else { Outcome::NoMatch },
                    Some(_) if p.negated => break Outcome::NoMatch,
                    Some((start, end)) => match run(steps, i + 1, buf, end, ctx) {
                        Outcome::NoMatch if retry && start < buf.len() => from = start + 1,
                        other => break other,
                    },
                }
                if ctx.budget == 0 {
                    break Outcome::Abort;
                }
                ctx.budget -= 1;
            };
            if outcome != Outcome::Match {
                ctx.captured.truncate(mark);
            }
            outcome
        }
        Step::IsDataAt { pos, relative, negated } => {
            let present = if *relative {
                // Relative counts bytes left after the match: `isdataat:32,relative`
                // holds when 32 bytes remain, one more than the absolute form.
                prev_end.checked_add(*pos as usize).is_some_and(|at| at <= buf.len())
            } else {
                // Bytes before the buffer's start exist in the stream.
                (*pos as u64) < ctx.base + buf.len() as u64
            };
            if present != *negated {
                run(steps, i + 1, buf, prev_end, ctx)
            } else {
                Outcome::NoMatch
            }
        }
        Step::ByteTest(b) => match b.eval(buf, prev_end, &ctx.vars, ctx.dce_little) {
            Some(true) => run(steps, i + 1, buf, prev_end, ctx),
            _ => Outcome::NoMatch,
        },
        Step::ByteJump(b) => match b.eval(buf, prev_end, &ctx.vars, ctx.dce_little) {
            Some(next) => run(steps, i + 1, buf, next, ctx),
            None => Outcome::NoMatch,
        },
        Step::ByteExtract(b) => match b.eval(buf, prev_end, ctx.dce_little) {
            Some((value, next)) => {
                ctx.vars[b.var as usize % MAX_VARS] = value;
                run(steps, i + 1, buf, next, ctx)
            }
            None => Outcome::NoMatch,
        },
        Step::ByteMath(b) => match b.eval(buf, prev_end, &ctx.vars, ctx.dce_little) {
            Some(value) => {
                ctx.vars[b.var as usize % MAX_VARS] = value;
                run(steps, i + 1, buf, prev_end, ctx)
            }
            None => Outcome::NoMatch,
        },
        Step::Entropy { spec, var } => {
            let start = usize::try_from(spec.offset).unwrap_or(0);
            let Some(rest) = buf.get(start..) else { return Outcome::NoMatch };
            let window = match usize::try_from(spec.bytes) {
                Ok(n) if n > 0 => match rest.get(..n) {
                    Some(w) => w,
                    None => return Outcome::NoMatch,
                },
                _ => rest,
            };
            let value = vigil_rules::keywords::entropy::shannon(window);
            match ctx.entropy.iter_mut().find(|(n, _)| n == var) {
                Some(slot) => slot.1 = value,
                None => ctx.entropy.push((var.clone(), value)),
            }
            if spec.value.matches(value) {
                run(steps, i + 1, buf, prev_end, ctx)
            } else {
                Outcome::NoMatch
            }
        }
        Step::Asn1(spec) => {
            if asn1::matches(spec, buf, prev_end) {
                run(steps, i + 1, buf, prev_end, ctx)
            } else {
                Outcome::NoMatch
            }
        }
        Step::Base64(b) => {
            // Out of `ctx` while its keywords run with it; put back for reuse.
            let mut decoded = std::mem::take(&mut ctx.decoded);
            let outcome = if b.decode_into(buf, prev_end, &mut decoded) {
                // The decoded bytes are a buffer of their own: positions count from 0.
                let base = std::mem::replace(&mut ctx.base, 0);
                let inner = run(&b.steps, 0, &decoded, 0, ctx);
                ctx.base = base;
                match inner {
                    Outcome::Match => run(steps, i + 1, buf, prev_end, ctx),
                    other => other,
                }
            } else {
                Outcome::NoMatch
            };
            ctx.decoded = decoded;
            outcome
        }
    }
}
