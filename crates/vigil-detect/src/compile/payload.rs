//! Payload keywords (`content` with its modifiers, `pcre`, `isdataat`,
//! `byte_*`, `bsize`, `urilen`, `base64_decode` with its `base64_data`) into
//! inspection steps, sorted by the buffer they inspect (the payload, or a
//! sticky buffer with its transforms), and the choice of the fast pattern.

use crate::datasets::{Datasets, SetOp};
use crate::inspect::VarKind;
use crate::inspect::{
    ByteExtract, ByteJump, ByteMath, ByteTest, ContentStep, Endian, MathOp, NumBase, PcreFlags, PcreStep, Read, Step,
    TestOp, Value as Operand, MAX_VARS,
};
use crate::prefilter::Pattern;
use crate::transform::Transform;
use vigil_rules::keywords::bytes::ByteOpt;
use vigil_rules::{ContentInfo, ContentMods, FastPattern, IntCmp, Kind, NumVar, Rule, Value};

/// A sticky buffer of the rule as written: its keyword, the transforms
/// applied to it, and the keywords that inspect it.
#[derive(Debug)]
pub(super) struct RawBuffer {
    pub name: &'static str,
    pub transforms: Vec<Transform>,
    pub steps: Vec<Step>,
    /// `bsize` (and `urilen`, which is `bsize` on the URI before transforms).
    pub len: Vec<IntCmp>,
    /// `absent` (`Some(false)`) or `absent: or_else` (`Some(true)`).
    pub absent: Option<bool>,
    /// A multi-value buffer named again (`file.data; content:"a";
    /// file.data; content:"b";`) is another instance: each may match a
    /// different value, as Suricata's multi-buffer matching has it.
    pub instance: u8,
    /// `dataset` and `datarep` on the (transformed) buffer, in rule order.
    pub sets: Vec<SetOp>,
}

/// The payload keywords of a rule, sorted by the buffer they inspect.
#[derive(Debug, Default)]
pub(super) struct Payload {
    /// Packet payload / reassembled stream.
    pub steps: Vec<Step>,
    pub buffers: Vec<RawBuffer>,
    /// The fast pattern, and the buffer it is in (`None`: the payload).
    pub fast: Option<(Option<usize>, Pattern)>,
    /// `frame:` as written: its buffer is the one named `frame`.
    pub frame: Option<String>,
}

/// The buffer `name` with `transforms` in `buffers`, added when new: the
/// same sticky buffer written twice in a rule is one buffer.
fn buffer_slot(buffers: &mut Vec<RawBuffer>, name: &'static str, transforms: &[Transform], instance: u8) -> usize {
    if let Some(i) = buffers.iter().position(|b| b.name == name && b.transforms == transforms && b.instance == instance)
    {
        return i;
    }
    buffers.push(RawBuffer {
        name,
        transforms: transforms.to_vec(),
        steps: Vec::new(),
        len: Vec::new(),
        absent: None,
        instance,
        sets: Vec::new(),
    });
    buffers.len() - 1
}

/// `sets`: where `dataset` keywords find or make their sets; what makes
/// one fail (a file that does not read) goes to `errors`.
pub(super) fn compile(
    rule: &Rule,
    missing: &mut Vec<String>,
    sets: &Datasets,
    lua: &crate::lua::LuaSettings,
    errors: &mut Vec<String>,
) -> Payload {
    let mut out = Payload::default();
    let mut vars: Vec<String> = Vec::new();
    // Candidates for the fast pattern: (explicit fast_pattern, bytes, nocase, buffer).
    let mut fast: Vec<(bool, Vec<u8>, bool, Option<usize>)> = Vec::new();
    // The sticky buffer in force and its transforms (`None`: the payload).
    let mut sticky: Option<&'static str> = None;
    // The instance of the sticky buffer in force (see [`RawBuffer::instance`]).
    let mut inst: u8 = 0;
    let mut transforms: Vec<Transform> = Vec::new();
    // Where the last content or pcre went: relative keywords follow it.
    let mut last: Option<usize> = None;
    // The last `base64_decode`: its buffer and index there. After `base64_data` (until the
    // next sticky buffer) keywords go into it, to inspect the decoded bytes.
    let mut b64: Option<(Option<usize>, usize)> = None;
    let mut in_b64 = false;
    for (i, o) in rule.options.iter().enumerate() {
        let name = o.keyword.canonical;
        match o.kind() {
            Kind::Flow
                if matches!(
                    name,
                    "flow"
                        | "decode-event"
                        | "engine-event"
                        | "stream-event"
                        | "flowbits"
                        | "flowint"
                        | "flowvar"
                        | "pktvar"
                        | "xbits"
                        | "hostbits"
                        | "app-layer-protocol"
                        | "stream_size"
                        | "flow.age"
                        | "flow.pkts"
                        | "flow.pkts_toserver"
                        | "flow.pkts_toclient"
                        | "flow.bytes"
                        | "flow.bytes_toserver"
                        | "flow.bytes_toclient"
                        | "app-layer-event"
                        | "bypass"
                ) =>
            {
                continue
            }
            Kind::Buffer("base64_data") => {
                if b64.is_none() {
                    missing.push("base64_data without base64_decode".into());
                }
                in_b64 = true;
                continue;
            }
            Kind::Buffer(b) => {
                in_b64 = false;
                sticky = (b != "pkt_data").then_some(b);
                transforms.clear();
                // A multi-value buffer named again starts another instance.
                let multi = super::buffers::lookup(b).is_some_and(|d| d.multi);
                inst = match out.buffers.iter().filter(|x| x.name == b).map(|x| x.instance).max() {
                    Some(n) if multi => n.saturating_add(1),
                    _ => 0,
                };
                if b == "frame" {
                    let Value::Text(t) = &o.value else { continue };
                    match &out.frame {
                        Some(f) if f.trim() != t.trim() => missing.push("frame: two frame types in one rule".into()),
                        _ => out.frame = Some(t.trim().to_string()),
                    }
                } else if sticky.is_some_and(|b| super::buffers::lookup(b).is_none() && !super::hdr::is_header(b)) {
                    missing.push(b.to_string());
                }
                continue;
            }
            Kind::Transform => {
                match Transform::compile_in(name, &o.value, &rule.file, lua) {
                    Ok(t) => transforms.push(t),
                    // A script that does not load fails the rule, as in Suricata.
                    Err(e) if name == "luaxform" => errors.push(e),
                    Err(e) => missing.push(format!("{name} ({e})")),
                }
                continue;
            }
            // Legacy modifiers were folded into the content they follow.
            Kind::LegacyBuffer(_) => continue,
            // `filename`/`fileext`/`filemagic`: a content on each file's name
            // (or type), without case; the extension is the name's end after
            // a dot.
            Kind::App if matches!(name, "filename" | "fileext" | "filemagic") => {
                let Value::Content(c) = &o.value else {
                    missing.push(format!("{name} value"));
                    continue;
                };
                let ext = name == "fileext";
                let bytes = if ext { [&b"."[..], &c.bytes].concat() } else { c.bytes.clone() };
                let mods = ContentMods { nocase: true, endswith: ext, ..ContentMods::default() };
                let buffer = if name == "filemagic" { "file.magic" } else { "file.name" };
                let info = ContentInfo { option: i, buffer: Some(buffer), transforms: Vec::new(), mods };
                let at = buffer_slot(&mut out.buffers, buffer, &[], 0);
                if let Some(cc) = content_step(&bytes, c.negated, &info, &vars, missing) {
                    if !c.negated {
                        fast.push((false, bytes, true, Some(at)));
                    }
                    out.buffers[at].steps.push(Step::Content(cc.step));
                }
                continue;
            }
            // Value checks on a transaction are compiled with the signature.
            Kind::App => continue,
            Kind::Flow | Kind::Snort(_) => {
                missing.push(name.to_string());
                continue;
            }
            Kind::Post if matches!(name, "dataset" | "datarep") => {
                let Value::Dataset(spec) = &o.value else { continue };
                if !spec.unsupported.is_empty() {
                    let keys: Vec<&str> = spec.unsupported.iter().map(|(k, _)| k.as_str()).collect();
                    missing.push(format!("{name} {}", keys.join(", ")));
                    continue;
                }
                match sticky {
                    None => errors.push("datasets are only supported for sticky buffers".into()),
                    Some(b) => match SetOp::of_rule(spec, sets, Some(&rule.file)) {
                        Ok(op) => {
                            let at = buffer_slot(&mut out.buffers, b, &transforms, inst);
                            out.buffers[at].sets.push(op);
                        }
                        Err(e) => errors.push(e),
                    },
                }
                continue;
            }
            Kind::Post
                if !matches!(
                    name,
                    "noalert"
                        | "alert"
                        | "threshold"
                        | "detection_filter"
                        | "config"
                        | "tag"
                        | "filestore"
                        | "lua"
                        | "luajit"
                        | "replace"
                        | "tls.store"
                ) =>
            {
                missing.push(name.to_string());
                continue;
            }
            Kind::Payload => {}
            _ => continue,
        }
        // The buffer a keyword inspects: its own (legacy modifier, pcre
        // flag), else the previous match's when relative, else the sticky one.
        let target = |own: Option<&'static str>, relative: bool, out: &mut Payload, last: Option<usize>| match own {
            Some(b) if Some(b) != sticky => Some(buffer_slot(&mut out.buffers, b, &[], 0)),
            Some(_) => Some(buffer_slot(&mut out.buffers, sticky.unwrap_or_default(), &transforms, inst)),
            None if relative && last.is_some() => last,
            None => sticky.map(|b| buffer_slot(&mut out.buffers, b, &transforms, inst)),
        };
        let (step, at) = match &o.value {
            Value::Content(c) => {
                let Some(info) = rule.contents.iter().find(|ci| ci.option == i) else {
                    missing.push("content".into());
                    continue;
                };
                let own = info.buffer.filter(|b| Some(*b) != sticky && *b != "base64_data");
                if own.is_some_and(|b| super::buffers::lookup(b).is_none()) {
                    missing.push(info.buffer.unwrap_or_default().to_string());
                    continue;
                }
                let at = match own {
                    Some(b) => Some(buffer_slot(&mut out.buffers, b, &[], 0)),
                    None => sticky.map(|b| buffer_slot(&mut out.buffers, b, &transforms, inst)),
                };
                match content_step(&c.bytes, c.negated, info, &vars, missing) {
                    Some(cc) => {
                        // Decoded bytes are not scanned by the prefilter.
                        if !c.negated && !in_b64 {
                            let bytes = cc.chop.map_or_else(|| c.bytes.clone(), |(o, l)| c.bytes[o..o + l].to_vec());
                            fast.push((cc.explicit_fast, bytes, info.mods.nocase, at));
                        }
                        last = at;
                        (Step::Content(cc.step), at)
                    }
                    None => continue,
                }
            }
            Value::Pcre(p) => {
                let listed: Vec<(VarKind, String)> = p
                    .captures
                    .iter()
                    .filter_map(|c| {
                        let (kind, name) = c.split_once(':')?;
                        let kind = match kind.trim() {
                            "flow" => VarKind::Flow,
                            "pkt" => VarKind::Pkt,
                            "alert" => VarKind::Alert,
                            _ => return None,
                        };
                        Some((kind, name.trim().to_string()))
                    })
                    .collect();
                let at = target(p.buffer(), false, &mut out, last);
                if p.buffer().is_some_and(|b| super::buffers::lookup(b).is_none()) {
                    missing.push(p.buffer().unwrap_or_default().to_string());
                    continue;
                }
                match pcre_step(&p.pattern, &p.flags, p.negated).and_then(|s| s.with_captures(&listed)) {
                    Ok(s) => {
                        last = at;
                        (Step::Pcre(s), at)
                    }
                    Err(e) => {
                        missing.push(format!("pcre ({e})"));
                        continue;
                    }
                }
            }
            Value::Isdataat(d) => match num(&d.position) {
                Some(pos) if pos >= 0 => (
                    Step::IsDataAt { pos: pos as u32, relative: d.relative, negated: d.negated },
                    target(None, d.relative, &mut out, last),
                ),
                _ => {
                    missing.push("isdataat variable".into());
                    continue;
                }
            },
            Value::ByteTest(b) => match byte_test(b, &vars) {
                Some(s) => {
                    let rel = s.is_relative();
                    (s, target(None, rel, &mut out, last))
                }
                None => {
                    missing.push(format!("{name} option"));
                    continue;
                }
            },
            Value::ByteJump(b) => match byte_jump(b, &vars) {
                Some(s) => {
                    let rel = s.is_relative();
                    (s, target(None, rel, &mut out, last))
                }
                None => {
                    missing.push(format!("{name} option"));
                    continue;
                }
            },
            Value::ByteExtract(b) => {
                let Some(var) = var_slot(&mut vars, &b.name) else {
                    missing.push("byte_extract: too many variables".into());
                    continue;
                };
                match byte_extract(b, var) {
                    Some(s) => {
                        let rel = s.is_relative();
                        (s, target(None, rel, &mut out, last))
                    }
                    None => {
                        missing.push(format!("{name} option"));
                        continue;
                    }
                }
            }
            Value::ByteMath(b) => {
                let Some(var) = var_slot(&mut vars, &b.result) else {
                    missing.push("byte_math: too many variables".into());
                    continue;
                };
                match byte_math(b, var, &vars) {
                    Some(s) => {
                        let rel = s.is_relative();
                        (s, target(None, rel, &mut out, last))
                    }
                    None => {
                        missing.push(format!("{name} option"));
                        continue;
                    }
                }
            }
            Value::Int(c) if name == "bsize" => {
                match sticky {
                    Some(b) => {
                        let at = buffer_slot(&mut out.buffers, b, &transforms, inst);
                        out.buffers[at].len.push(*c);
                    }
                    None => missing.push("bsize on the payload".into()),
                }
                continue;
            }
            Value::Int(c) | Value::IntWith(c, _) if name == "urilen" => {
                let raw = matches!(&o.value, Value::IntWith(_, w) if w.iter().any(|w| w == "raw"));
                let at = buffer_slot(&mut out.buffers, if raw { "http.uri.raw" } else { "http.uri" }, &[], 0);
                out.buffers[at].len.push(*c);
                continue;
            }
            _ if name == "absent" => {
                match sticky {
                    Some(b) => {
                        let at = buffer_slot(&mut out.buffers, b, &transforms, inst);
                        out.buffers[at].absent = Some(matches!(&o.value, Value::Text(t) if t == "or_else"));
                    }
                    None => missing.push("absent on the payload".into()),
                }
                continue;
            }
            _ if name == "base64_decode" => match super::base64::base64_decode(&o.value) {
                Ok(_) if in_b64 => {
                    missing.push("base64_decode of base64_data".into());
                    continue;
                }
                Ok(s) => {
                    let rel = s.relative;
                    (Step::Base64(s), target(None, rel, &mut out, last))
                }
                Err(e) => {
                    missing.push(format!("{name} ({e})"));
                    continue;
                }
            },
            Value::Text(t) if name == "asn1" => match vigil_rules::keywords::asn1::parse(t) {
                Ok(spec) => {
                    let rel = spec.absolute_offset.is_none() && spec.relative_offset.is_some();
                    (Step::Asn1(spec), target(None, rel, &mut out, last))
                }
                Err(e) => {
                    errors.push(format!("asn1: {}", e.reason));
                    continue;
                }
            },
            Value::Text(t) if name == "entropy" => match vigil_rules::keywords::entropy::parse(t) {
                Ok(spec) => {
                    let var = sticky.map_or_else(|| "content".to_string(), super::buffers::list_name).into();
                    (Step::Entropy { spec, var }, target(None, false, &mut out, last))
                }
                Err(e) => {
                    errors.push(format!("entropy: {}", e.reason));
                    continue;
                }
            },
            // dsize and rpc are payload keywords that the packet checks handle.
            _ if name == "dsize" || name == "rpc" => continue,
            _ => {
                missing.push(name.to_string());
                continue;
            }
        };
        let opens_b64 = matches!(step, Step::Base64(_));
        let dest = match (in_b64, b64) {
            (true, Some((slot, index))) => {
                let steps = match slot {
                    Some(b) => &mut out.buffers[b].steps,
                    None => &mut out.steps,
                };
                match steps.get_mut(index) {
                    Some(Step::Base64(decode)) => &mut decode.steps,
                    _ => continue,
                }
            }
            _ => match at {
                Some(b) => &mut out.buffers[b].steps,
                None => &mut out.steps,
            },
        };
        dest.push(step);
        if opens_b64 {
            b64 = Some((at, dest.len() - 1));
        }
    }
    // A rule with transaction buffers is found through one of them: the
    // payload is only verified on the packet that completes the transaction.
    if !out.buffers.is_empty() {
        fast.retain(|f| f.3.is_some());
    }
    // A buffer under `absent: or_else` also matches when it is missing, so
    // its contents cannot be what finds the rule.
    fast.retain(|f| f.3.is_none_or(|b| out.buffers[b].absent.is_none()));
    // An explicit fast_pattern wins; else the longest content, the first of equals.
    // (`max_by_key` keeps the last maximum, so search reversed to keep the first.)
    let pick = fast.iter().find(|f| f.0).or_else(|| fast.iter().rev().max_by_key(|f| f.1.len()));
    out.fast = pick.filter(|f| !f.1.is_empty()).map(|f| (f.3, Pattern::new(f.1.clone(), f.2)));
    out
}

fn num(v: &NumVar) -> Option<i64> {
    match v {
        NumVar::Num(n) => Some(*n),
        NumVar::Var(_) => None,
    }
}

fn var_slot(vars: &mut Vec<String>, name: &str) -> Option<u8> {
    if let Some(i) = vars.iter().position(|v| v == name) {
        return Some(i as u8);
    }
    if vars.len() == MAX_VARS {
        return None;
    }
    vars.push(name.to_string());
    Some((vars.len() - 1) as u8)
}

/// A compiled content and what it says about the fast pattern.
struct CompiledContent {
    step: ContentStep,
    /// `fast_pattern` was given.
    explicit_fast: bool,
    /// `fast_pattern:o,l`: the part of the content the prefilter looks for.
    chop: Option<(usize, usize)>,
}

fn content_step(
    bytes: &[u8],
    negated: bool,
    info: &ContentInfo,
    vars: &[String],
    missing: &mut Vec<String>,
) -> Option<CompiledContent> {
    let m = &info.mods;
    let mut s = ContentStep::new(bytes.to_vec(), m.nocase);
    s.negated = negated;
    // A modifier given as a variable must name an earlier byte_extract; the
    // step then reads it at inspection, and holds 0 as a placeholder.
    let mut get = |v: &Option<NumVar>, slot: usize, what: &str, missing: &mut Vec<String>| match v {
        None => Some(None),
        Some(NumVar::Num(n)) => Some(Some(*n)),
        Some(NumVar::Var(name)) => match vars.iter().position(|x| x == name) {
            Some(i) => {
                s.var_slots[slot] = Some(i as u8);
                Some(Some(0))
            }
            None => {
                missing.push(format!("{what} variable"));
                None
            }
        },
    };
    let offset = get(&m.offset, 0, "offset", missing)?;
    let depth = get(&m.depth, 1, "depth", missing)?;
    let distance = get(&m.distance, 2, "distance", missing)?;
    let within = get(&m.within, 3, "within", missing)?;
    if let Some(o) = offset {
        s.offset = o.max(0) as u32;
    }
    if let Some(d) = depth {
        s.depth = Some(d.max(0) as u32);
    }
    if m.startswith {
        s.offset = 0;
        s.depth = Some(bytes.len() as u32);
    }
    s.distance = distance.map(|d| d as i32);
    s.within = within.map(|w| w.max(0) as u32);
    if m.startswith && (s.distance.is_some() || s.within.is_some()) {
        // startswith after a relative content anchors at the previous match.
        s.distance = Some(s.distance.unwrap_or(0));
        s.within = Some(bytes.len() as u32);
    }
    s.endswith = m.endswith;
    let (explicit, chop) = match m.fast_pattern {
        None => (false, None),
        Some(FastPattern::Plain | FastPattern::Only) => (true, None),
        Some(FastPattern::Chop { offset, length }) => {
            let (o, l) = (offset as usize, length as usize);
            (true, (o + l <= bytes.len() && l > 0).then_some((o, l)))
        }
    };
    Some(CompiledContent { step: s, explicit_fast: explicit, chop })
}

fn pcre_step(pattern: &str, flags: &str, negated: bool) -> Result<PcreStep, String> {
    let mut f = PcreFlags::default();
    let mut relative = false;
    let mut pattern = pattern.to_string();
    for c in flags.chars() {
        match c {
            'i' => f.caseless = true,
            's' => f.dotall = true,
            'm' => f.multi_line = true,
            'x' => f.extended = true,
            'A' => f.anchored = true,
            'G' => f.ungreedy = true,
            'R' => relative = true,
            // rawbytes, and PCRE limits overridden: no effect on what matches.
            'B' | 'O' => {}
            // The buffer flags (`U`, `H`, ...) chose the buffer already.
            c if vigil_rules::pcre::flag_buffer(c).is_some() => {}
            'E' => {
                // `$` only at the very end: spell the final `$` as `\z`.
                if pattern.ends_with('$') && !pattern.ends_with("\\$") {
                    pattern.pop();
                    pattern.push_str("\\z");
                } else if pattern.contains('$') {
                    return Err("E flag with an inner $".into());
                }
            }
            other => return Err(format!("flag {other}")),
        }
    }
    PcreStep::new(&pattern, f, relative, negated)
}

struct ReadOpts {
    read: Read,
    relative: bool,
    multiplier: u64,
    align: bool,
    align_to: u8,
    from_beginning: bool,
    from_end: bool,
    post_offset: i64,
}

fn read_opts(nbytes: u8, offset: i64, opts: &[ByteOpt]) -> Option<ReadOpts> {
    let mut r = ReadOpts {
        read: Read { nbytes, offset: offset as i32, endian: Endian::Big, base: NumBase::Binary, bitmask: None },
        relative: false,
        multiplier: 1,
        align: false,
        align_to: 0,
        from_beginning: false,
        from_end: false,
        post_offset: 0,
    };
    let mut string = false;
    for o in opts {
        match o {
            ByteOpt::Relative => r.relative = true,
            ByteOpt::Big => r.read.endian = Endian::Big,
            ByteOpt::Little => r.read.endian = Endian::Little,
            ByteOpt::Dce => r.read.endian = Endian::Dce,
            ByteOpt::Str => string = true,
            ByteOpt::Hex => r.read.base = NumBase::Hex,
            ByteOpt::Dec => r.read.base = NumBase::Dec,
            ByteOpt::Oct => r.read.base = NumBase::Oct,
            ByteOpt::Align => r.align = true,
            ByteOpt::AlignTo(n) => r.align_to = *n,
            ByteOpt::FromBeginning => r.from_beginning = true,
            ByteOpt::FromEnd => r.from_end = true,
            ByteOpt::Multiplier(m) => r.multiplier = *m,
            ByteOpt::PostOffset(p) => r.post_offset = *p,
            ByteOpt::Bitmask(m) => r.read.bitmask = Some(*m),
        }
    }
    if string && r.read.base == NumBase::Binary {
        r.read.base = NumBase::Dec;
    }
    Some(r)
}

fn byte_test(b: &vigil_rules::keywords::bytes::ByteTest, vars: &[String]) -> Option<Step> {
    let r = read_opts(num(&b.nbytes)? as u8, num(&b.offset)?, &b.opts)?;
    let op = match b.op.as_str() {
        "<" => TestOp::Lt,
        ">" => TestOp::Gt,
        "=" => TestOp::Eq,
        "<=" => TestOp::Le,
        ">=" => TestOp::Ge,
        "&" => TestOp::And,
        "^" => TestOp::Xor,
        _ => return None,
    };
    let value = match &b.value {
        NumVar::Num(n) => Operand::Lit(*n as u64),
        NumVar::Var(v) => Operand::Var(vars.iter().position(|x| x == v)? as u8),
    };
    Some(Step::ByteTest(ByteTest { read: r.read, relative: r.relative, negated: b.negated, op, value }))
}

fn byte_jump(b: &vigil_rules::keywords::bytes::ByteJump, vars: &[String]) -> Option<Step> {
    // The byte count may name an earlier byte_extract; it is read at inspection.
    let (nbytes, nbytes_var) = match &b.nbytes {
        NumVar::Num(n) => (*n as u8, None),
        NumVar::Var(v) => (0, Some(vars.iter().position(|x| x == v)? as u8)),
    };
    let r = read_opts(nbytes, num(&b.offset)?, &b.opts)?;
    Some(Step::ByteJump(ByteJump {
        read: r.read,
        nbytes_var,
        relative: r.relative,
        multiplier: r.multiplier,
        align: r.align,
        from_beginning: r.from_beginning,
        from_end: r.from_end,
        post_offset: r.post_offset,
    }))
}

fn byte_extract(b: &vigil_rules::keywords::bytes::ByteExtract, var: u8) -> Option<Step> {
    let r = read_opts(b.nbytes, b.offset, &b.opts)?;
    Some(Step::ByteExtract(ByteExtract {
        read: r.read,
        relative: r.relative,
        multiplier: r.multiplier,
        align: r.align_to,
        var,
    }))
}

fn byte_math(b: &vigil_rules::keywords::bytes::ByteMath, var: u8, vars: &[String]) -> Option<Step> {
    let mut opts = Vec::new();
    for o in &b.opts {
        let (k, v) = o.split_once(' ').unwrap_or((o.as_str(), ""));
        let opt = match (k, v) {
            ("relative", _) => ByteOpt::Relative,
            ("endian", "big") => ByteOpt::Big,
            ("endian", "little") => ByteOpt::Little,
            ("endian", "dce") | ("dce", _) => ByteOpt::Dce,
            ("string", base) => {
                opts.push(ByteOpt::Str);
                match base {
                    "hex" => ByteOpt::Hex,
                    "oct" => ByteOpt::Oct,
                    _ => ByteOpt::Dec,
                }
            }
            ("bitmask", m) => ByteOpt::Bitmask(parse_mask(m)?),
            _ => return None,
        };
        opts.push(opt);
    }
    let r = read_opts(num(&b.nbytes)? as u8, b.offset, &opts)?;
    let op = match b.oper.as_str() {
        "+" => MathOp::Add,
        "-" => MathOp::Sub,
        "*" => MathOp::Mul,
        "/" => MathOp::Div,
        "<<" => MathOp::Shl,
        ">>" => MathOp::Shr,
        _ => return None,
    };
    let rvalue = match &b.rvalue {
        NumVar::Num(n) => Operand::Lit(*n as u64),
        NumVar::Var(v) => Operand::Var(vars.iter().position(|x| x == v)? as u8),
    };
    Some(Step::ByteMath(ByteMath { read: r.read, relative: r.relative, op, rvalue, var }))
}

fn parse_mask(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}
