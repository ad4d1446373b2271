//! What the options mean together: content modifiers attach to the content
//! before them, legacy `http_*` modifiers move that content into a buffer,
//! sticky buffers and transforms set what later keywords inspect. Mistakes
//! that only show in combination are found here: a modifier without a
//! content, absolute and relative modifiers on one content, `depth` shorter
//! than the content, unknown `byte_extract` variables, a missing `sid`, and
//! Snort-only constructs.

use crate::content::{ContentModifier, FastPattern, NumVar};
use crate::error::ErrorKind;
use crate::header::ProtoClass;
use crate::intcmp::IntCmp;
use crate::keywords::flow::BitCmd;
use crate::keywords::Kind;
use crate::options::Value;
use crate::rule::{Dialect, Rule};

/// Value keywords Suricata refuses to see twice in one rule.
const ONCE_PER_RULE: &[&str] = &["smb.version"];

/// The modifiers of one content, folded from the options after it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ContentMods {
    pub nocase: bool,
    pub rawbytes: bool,
    pub depth: Option<NumVar>,
    pub offset: Option<NumVar>,
    pub distance: Option<NumVar>,
    pub within: Option<NumVar>,
    pub startswith: bool,
    pub endswith: bool,
    pub fast_pattern: Option<FastPattern>,
}

/// A content of a rule with everything that applies to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ContentInfo {
    /// Index of the `content`/`uricontent` option in [`Rule::options`].
    pub option: usize,
    /// The buffer it inspects (`None`: the packet payload or stream).
    pub buffer: Option<&'static str>,
    /// Indices of the transform options applied to that buffer first.
    pub transforms: Vec<usize>,
    pub mods: ContentMods,
}

pub(crate) struct SemError {
    /// The option the problem is at (`None`: the rule as a whole).
    pub option: Option<usize>,
    pub kind: ErrorKind,
    pub keyword: Option<String>,
    pub reason: String,
}

fn err<T>(option: Option<usize>, kind: ErrorKind, keyword: &str, reason: impl Into<String>) -> Result<T, SemError> {
    Err(SemError {
        option,
        kind,
        keyword: if keyword.is_empty() { None } else { Some(keyword.to_string()) },
        reason: reason.into(),
    })
}

/// Working state of the walk over the options.
struct Walk {
    /// The sticky buffer in force (`None`: payload).
    buffer: Option<&'static str>,
    /// Transforms given since the sticky buffer; a transform after a
    /// content applies to the contents after it only (ET writes
    /// `dns.query; content:"a"; dotprefix; content:".b.com"; endswith;`).
    transforms: Vec<usize>,
    contents: Vec<ContentInfo>,
    /// Per content: the sticky buffer in force when it was written, and
    /// whether a legacy modifier moved it.
    ctx: Vec<(Option<&'static str>, bool)>,
    /// Variables `byte_extract`/`byte_math` set, with the buffer they were
    /// set in (Suricata scopes them to it).
    vars: Vec<(String, Option<&'static str>)>,
    fast_patterns: usize,
}

fn is_snort3(rule: &Rule) -> bool {
    rule.header.endpoints.is_none()
        || rule.header.protocol.class == ProtoClass::Snort
        || rule.options.iter().any(|o| match &o.value {
            Value::Content(c) => !c.inline.is_empty(),
            _ => o.keyword.name == "service",
        })
}

pub(crate) fn check(rule: &mut Rule) -> Result<(), SemError> {
    rule.dialect = if is_snort3(rule) { Dialect::Snort3 } else { Dialect::Suricata };
    if rule.header.endpoints.is_none() {
        return err(
            None,
            ErrorKind::Snort,
            "",
            "Snort 3 header-less rule: Suricata needs addresses, ports and a direction in the header",
        );
    }
    if rule.header.protocol.class == ProtoClass::Snort {
        return err(None, ErrorKind::Snort, "", format!("protocol '{}' is Snort 3 only", rule.header.protocol.name));
    }
    let mut w = Walk {
        buffer: None,
        transforms: Vec::new(),
        contents: Vec::new(),
        ctx: Vec::new(),
        vars: Vec::new(),
        fast_patterns: 0,
    };
    let mut counts = [0usize; 4];
    let mut once: Vec<&str> = Vec::new();
    let snort3 = rule.dialect == Dialect::Snort3;
    for (i, opt) in rule.options.iter().enumerate() {
        let name = opt.keyword.name;
        let at = Some(i);
        match opt.keyword.kind {
            Kind::Snort(hint) => return err(at, ErrorKind::Snort, name, hint),
            Kind::Buffer(b) => {
                w.buffer = if b == "pkt_data" { None } else { Some(b) };
                w.transforms.clear();
            }
            Kind::LegacyBuffer(b) => {
                if snort3 {
                    return err(
                        at,
                        ErrorKind::Snort,
                        name,
                        format!("Snort 3 sticky-buffer use; in Suricata write '{b};' before the content"),
                    );
                }
                let Some(last) = w.contents.len().checked_sub(1) else {
                    return err(
                        at,
                        ErrorKind::Semantic,
                        name,
                        format!("needs a preceding content (or use the sticky buffer '{b};' before the content)"),
                    );
                };
                let (ctx, moved) = w.ctx[last];
                if let Some(sticky) = ctx {
                    return err(
                        at,
                        ErrorKind::Semantic,
                        name,
                        format!("the content before it is in sticky buffer '{sticky}'; use one or the other"),
                    );
                }
                if moved && w.contents[last].buffer != Some(b) {
                    let prev = w.contents[last].buffer.unwrap_or("");
                    return err(at, ErrorKind::Semantic, name, format!("the content before it is already in '{prev}'"));
                }
                w.contents[last].buffer = Some(b);
                w.ctx[last].1 = true;
            }
            Kind::Transform => {
                if w.buffer.is_none() {
                    return err(at, ErrorKind::Semantic, name, "needs a sticky buffer before it");
                }
                w.transforms.push(i);
            }
            Kind::Modifier => {
                if let Value::Modifier(m) = &opt.value {
                    apply_modifier(&mut w, rule, i, m, name)?;
                }
            }
            Kind::Payload => {
                match &opt.value {
                    Value::Content(c) => {
                        let buffer = if name == "uricontent" { Some("http.uri") } else { w.buffer };
                        w.contents.push(ContentInfo {
                            option: i,
                            buffer,
                            transforms: w.transforms.clone(),
                            mods: ContentMods::default(),
                        });
                        w.ctx.push((w.buffer, name == "uricontent"));
                        if !c.inline.is_empty() {
                            let shown: Vec<String> = c
                                .inline
                                .iter()
                                .map(|m| match m.value_text() {
                                    Some(v) => format!("{} {v}", m.name()),
                                    None => m.name().to_string(),
                                })
                                .collect();
                            return err(
                                at,
                                ErrorKind::Snort,
                                name,
                                format!(
                                    "Snort 3 inline modifiers (,{}) are not Suricata syntax; write them as options after the content",
                                    shown.join(",")
                                ),
                            );
                        }
                    }
                    Value::ByteMath(b) if b.opts.iter().any(|o| o == "relative") && !matched_before(rule, i) => {
                        return err(at, ErrorKind::Semantic, name, "relative specified without previous pattern match");
                    }
                    // A buffer flag (`/U`, `/P`, ...) names the buffer the
                    // sticky one in force already names, or it conflicts.
                    Value::Pcre(p) if p.buffer().is_some_and(|b| w.buffer.is_some_and(|s| !same_list(s, b))) => {
                        // Suricata's words, with its description of the flag's buffer.
                        let described = match p.buffer().unwrap_or_default() {
                            "http.uri" => "http request uri",
                            "http.uri.raw" => "raw http uri",
                            "http.request_body" => "http request body",
                            "http.response_body" => "data from tracked files",
                            "http.header" => "http headers",
                            "http.header.raw" => "raw http headers",
                            "http.method" => "http request method",
                            "http.cookie" => "http cookie header",
                            "http.stat_code" => "http response status code",
                            "http.stat_msg" => "http response status message",
                            "http.user_agent" => "http user agent",
                            "http.host" => "http host",
                            other => other,
                        };
                        return err(
                            at,
                            ErrorKind::Semantic,
                            name,
                            format!(
                                "Expression seen with a sticky buffer still set; either (1) reset sticky buffer with pkt_data or (2) use a sticky buffer providing \"{described}\"."
                            ),
                        );
                    }
                    other => check_vars(&w, other, at, name)?,
                }
                match &opt.value {
                    Value::ByteExtract(b) => w.vars.push((b.name.clone(), w.buffer)),
                    Value::ByteMath(b) => w.vars.push((b.result.clone(), w.buffer)),
                    _ => {}
                }
            }
            Kind::Meta => {
                let slot = match name {
                    "sid" => 0,
                    "rev" => 1,
                    "gid" => 2,
                    "msg" => 3,
                    _ => continue,
                };
                counts[slot] += 1;
                if counts[slot] > 1 {
                    return err(at, ErrorKind::Semantic, name, "given more than once");
                }
            }
            Kind::App if ONCE_PER_RULE.contains(&name) => {
                if once.contains(&name) {
                    return err(
                        at,
                        ErrorKind::Semantic,
                        name,
                        format!("Can't use 2 or more {name} declarations in the same sig"),
                    );
                }
                once.push(name);
            }
            _ => {}
        }
    }
    if counts[0] == 0 {
        return err(None, ErrorKind::Semantic, "", "rule has no sid");
    }
    check_protocols(rule)?;
    check_tx_bits(rule)?;
    check_dsize(rule, &w.contents)?;
    check_bsize(rule, &w.contents)?;
    check_transformed_contents(rule, &w.contents)?;
    // base64_data is decoded at inspection: no prefilter can look into it.
    if let Some(c) = w.contents.iter().find(|c| c.buffer == Some("base64_data") && c.mods.fast_pattern.is_some()) {
        return err(
            Some(c.option),
            ErrorKind::Semantic,
            "fast_pattern",
            "fast_pattern cannot be used with base64_data",
        );
    }
    check_host_nocase(rule, &w.contents)?;
    check_fingerprint_length(rule, &w.contents)?;
    rule.contents = w.contents;
    Ok(())
}

/// `xbits` kept per transaction (`track tx`) belong to the state a rule's
/// hook names, and only set or test, as Suricata 8 has them.
fn check_tx_bits(rule: &Rule) -> Result<(), SemError> {
    for (i, opt) in rule.options.iter().enumerate() {
        let Value::Bits(b) = &opt.value else { continue };
        if opt.keyword.name != "xbits" || !crate::keywords::flow::tracks_tx(b) {
            continue;
        }
        if !matches!(b.cmd, BitCmd::Set | BitCmd::IsSet) {
            return err(Some(i), ErrorKind::Semantic, "xbits", "tx xbits only support set and isset");
        }
        if rule.header.protocol.hook.is_none() {
            return err(Some(i), ErrorKind::Semantic, "xbits", "tx xbits require an explicit rule hook");
        }
    }
    Ok(())
}

/// Whether two buffers are one list in Suricata (`file.data` is the
/// response body `/Q` names).
fn same_list(a: &str, b: &str) -> bool {
    fn list(x: &str) -> &str {
        if x == "http.response_body" {
            "file.data"
        } else {
            x
        }
    }
    list(a) == list(b)
}

/// The host buffer is lowercased; `nocase` on it says the writer expected
/// otherwise, and Suricata refuses the rule rather than guess.
fn check_host_nocase(rule: &Rule, contents: &[ContentInfo]) -> Result<(), SemError> {
    let Some(c) = contents.iter().find(|c| c.buffer == Some("http.host") && c.mods.nocase) else { return Ok(()) };
    let sid = rule.sid();
    err(
        Some(c.option),
        ErrorKind::Semantic,
        "nocase",
        format!(
            "rule {sid}: http.host keyword specified along with \"nocase\". The hostname buffer is normalized to lowercase, specifying nocase is redundant."
        ),
    )
}

/// A `tls.cert_fingerprint` content (untransformed) must be a whole SHA-1
/// fingerprint, 59 characters with colons: Suricata refuses any other
/// length, as it could never match.
fn check_fingerprint_length(rule: &Rule, contents: &[ContentInfo]) -> Result<(), SemError> {
    for c in contents.iter().filter(|c| c.buffer == Some("tls.cert_fingerprint") && c.transforms.is_empty()) {
        let Value::Content(content) = &rule.options[c.option].value else { continue };
        if content.bytes.len() != 59 {
            return err(
                Some(c.option),
                ErrorKind::Semantic,
                "content",
                format!(
                    "rule {}: Invalid length of the specified fingerprint. This rule will therefore never match.",
                    rule.sid()
                ),
            );
        }
    }
    Ok(())
}

/// A negated content placed by position, or a `fast_pattern:only` content
/// placed by position, cannot be the fast pattern: Suricata refuses both,
/// whichever of the two keywords comes first.
fn fast_pattern_conflict(mods: &ContentMods, negated: bool, name: &str, at: Option<usize>) -> Result<(), SemError> {
    let positional = mods.depth.is_some() || mods.offset.is_some() || mods.distance.is_some() || mods.within.is_some();
    if !positional {
        return Ok(());
    }
    match mods.fast_pattern {
        Some(FastPattern::Only) => {
            err(at, ErrorKind::Semantic, name, "can't have a relative keyword set along with 'fast_pattern:only;'.")
        }
        Some(_) if negated => {
            err(at, ErrorKind::Semantic, name, "can't have a relative negated keyword set along with 'fast_pattern'.")
        }
        _ => Ok(()),
    }
}

/// A `dsize` that caps the payload below what the payload contents need
/// can never match: Suricata refuses the rule, and so does vigil. The need
/// is counted along each chain of relative contents: where the chain
/// starts (its first content's offset and length), then each relative
/// content's distance and length, or the whole window of a negated one
/// with `within`, as Suricata counts it.
fn check_dsize(rule: &Rule, contents: &[ContentInfo]) -> Result<(), SemError> {
    let Some((i, cmp)) = rule.options.iter().enumerate().find_map(|(i, o)| match (&o.value, o.keyword.canonical) {
        (Value::Int(c), "dsize") => Some((i, c)),
        _ => None,
    }) else {
        return Ok(());
    };
    // The right edge as Suricata takes it (`<` by its value too).
    let max = match *cmp {
        IntCmp::Eq(n) | IntCmp::Lt(n) | IntCmp::Range(_, n) => n as i64,
        _ => return Ok(()),
    };
    let num = |v: &Option<NumVar>| match v {
        None => Some(0),
        Some(NumVar::Num(n)) => Some(*n),
        Some(NumVar::Var(_)) => None,
    };
    // Each content that is not relative starts a chain at its offset; a
    // relative one extends the chain before it.
    let (mut need, mut chain) = (0i64, 0i64);
    for c in contents.iter().filter(|c| c.buffer.is_none()) {
        let Value::Content(content) = &rule.options[c.option].value else { continue };
        let len = content.bytes.len() as i64;
        let (Some(distance), Some(within), Some(offset)) =
            (num(&c.mods.distance), num(&c.mods.within), num(&c.mods.offset))
        else {
            return Ok(());
        };
        let relative = c.mods.distance.is_some() || c.mods.within.is_some();
        chain = match (relative, content.negated && c.mods.within.is_some()) {
            (false, _) => offset + len,
            (true, true) if within == len => chain,
            (true, true) => chain + within,
            (true, false) => chain + distance + len,
        };
        need = need.max(chain);
    }
    if need > max {
        return err(
            Some(i),
            ErrorKind::Semantic,
            "dsize",
            format!("signature can't match as required content length {need} exceeds dsize value {max}"),
        );
    }
    Ok(())
}

/// Whether a keyword before option `i` matches somewhere (a content, a
/// `pcre`, a `byte_*`, an `isdataat`): what a relative `byte_math` counts from.
fn matched_before(rule: &Rule, i: usize) -> bool {
    rule.options[..i].iter().any(|o| {
        matches!(
            o.value,
            Value::Content(_)
                | Value::Pcre(_)
                | Value::ByteTest(_)
                | Value::ByteJump(_)
                | Value::ByteExtract(_)
                | Value::ByteMath(_)
        ) || o.keyword.canonical == "isdataat"
    })
}

/// A content its buffer's transforms can never produce (upper case after
/// `to_lowercase`, lower case after `to_uppercase`, whitespace after
/// `strip_whitespace`, two whitespace bytes in a row after
/// `compress_whitespace`) can never match: Suricata refuses the rule, and
/// so does vigil. A case-blind or negated content is left alone.
fn check_transformed_contents(rule: &Rule, contents: &[ContentInfo]) -> Result<(), SemError> {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    for c in contents.iter().filter(|c| !c.mods.nocase) {
        let Value::Content(content) = &rule.options[c.option].value else { continue };
        if content.negated {
            continue;
        }
        let b = &content.bytes[..];
        for &t in &c.transforms {
            let name = rule.options[t].keyword.canonical;
            let why = match name {
                "to_lowercase" if b.iter().any(u8::is_ascii_uppercase) => "it holds upper case",
                "to_uppercase" if b.iter().any(u8::is_ascii_lowercase) => "it holds lower case",
                "strip_whitespace" if b.iter().any(space) => "it holds whitespace",
                "compress_whitespace" if b.windows(2).any(|w| space(&w[0]) && space(&w[1])) => {
                    "it holds whitespace bytes in a row"
                }
                _ => continue,
            };
            return err(
                Some(c.option),
                ErrorKind::Semantic,
                "content",
                format!("\"{}\" is incompatible with {name} transform: {why}", String::from_utf8_lossy(b)),
            );
        }
    }
    Ok(())
}

/// A `bsize` that caps its buffer below what one of the buffer's contents
/// needs (its length, or with `depth` where its window ends) can never
/// match: Suricata refuses the rule, and so does vigil.
fn check_bsize(rule: &Rule, contents: &[ContentInfo]) -> Result<(), SemError> {
    let mut buffer = None;
    for (i, o) in rule.options.iter().enumerate() {
        match (o.keyword.kind, &o.value, o.keyword.canonical) {
            (Kind::Buffer(b) | Kind::LegacyBuffer(b), _, _) => buffer = Some(b),
            (_, Value::Int(cmp), "bsize") => {
                let (max, range) = match *cmp {
                    IntCmp::Eq(n) | IntCmp::Lt(n) | IntCmp::Le(n) => (n as i64, None),
                    IntCmp::Range(lo, hi) => (hi as i64, Some(lo)),
                    _ => continue,
                };
                let num = |v: &Option<NumVar>| match v {
                    Some(NumVar::Num(n)) => Some(*n),
                    _ => None,
                };
                let need = contents
                    .iter()
                    .filter(|c| c.buffer.is_some() && c.buffer == buffer)
                    .filter_map(|c| match &rule.options[c.option].value {
                        Value::Content(content) if !content.negated => Some(match num(&c.mods.depth) {
                            Some(depth) => num(&c.mods.offset).unwrap_or(0) + depth,
                            None => content.bytes.len() as i64,
                        }),
                        _ => None,
                    })
                    .max()
                    .unwrap_or(0);
                if need > max {
                    let what = match range {
                        Some(lo) => format!("range {lo}-{max}"),
                        None => format!("value {max}"),
                    };
                    return err(
                        Some(i),
                        ErrorKind::Semantic,
                        "bsize",
                        format!("signature can't match as required content length {need} exceeds bsize {what}"),
                    );
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The application protocols a buffer exists for, by its name; `None` for
/// buffers of the packet or of several protocols (`file.data`).
fn buffer_protocols(buffer: &str) -> Option<&'static [&'static str]> {
    let prefix = buffer.split('.').next().unwrap_or(buffer);
    Some(match prefix {
        "http" => &["http", "http1", "http2", "doh2"],
        "http2" => &["http2", "doh2"],
        "dns" => &["dns", "doh2"],
        "mdns" => &["mdns"],
        "llmnr" => &["llmnr"],
        "tls" => &["tls"],
        "ja3" | "ja3s" | "ja4" => &["tls", "quic"],
        "quic" => &["quic"],
        "ssh" => &["ssh"],
        "smb" => &["smb"],
        "dcerpc" => &["dcerpc", "smb"],
        "krb5" => &["krb5"],
        "sip" | "sdp" => &["sip"],
        "mqtt" => &["mqtt"],
        "ike" => &["ike", "ikev2"],
        "rfb" => &["rfb"],
        "snmp" => &["snmp"],
        "smtp" | "email" => &["smtp"],
        "ftp" => &["ftp"],
        "ldap" => &["ldap"],
        "websocket" => &["websocket"],
        "pgsql" => &["pgsql"],
        "enip" => &["enip"],
        "dnp3" => &["dnp3"],
        "ntp" => &["ntp"],
        "tftp" => &["tftp"],
        _ => return None,
    })
}

/// The header protocol as the buffer table names it.
fn header_app(rule: &Rule) -> Option<&'static str> {
    let p = &rule.header.protocol;
    if p.class != ProtoClass::App {
        return None;
    }
    Some(match p.name {
        "ssl" => "tls",
        "ikev2" => "ike",
        n => n,
    })
}

/// Buffers of different application protocols in one rule, or a buffer of
/// another protocol than the header's, can never match: Suricata refuses
/// such rules ("conflicting keywords").
fn check_protocols(rule: &Rule) -> Result<(), SemError> {
    let header = header_app(rule);
    let mut first: Option<(&'static str, &'static [&'static str])> = None;
    for (i, o) in rule.options.iter().enumerate() {
        let buffer = match o.keyword.kind {
            Kind::Buffer(b) | Kind::LegacyBuffer(b) => b,
            // The `dce` byte order makes a rule a DCE/RPC one, as its buffers do.
            _ if dce_byte_order(&o.value) => "dcerpc.stub_data",
            _ => continue,
        };
        let Some(protos) = buffer_protocols(buffer) else { continue };
        if let Some(h) = header {
            if !protos.contains(&h) {
                // Suricata's words for a keyword of several protocols, none the header's.
                let is_buffer = matches!(o.keyword.kind, Kind::Buffer(_) | Kind::LegacyBuffer(_));
                let msg = if protos.len() > 1 && is_buffer {
                    format!(
                        "rule contains conflicting protocols: {} is for {}, the rule for '{}'",
                        o.keyword.name,
                        protos.join("/"),
                        rule.header.protocol.name
                    )
                } else {
                    format!("is a {} buffer, but the rule is for protocol '{}'", protos[0], rule.header.protocol.name)
                };
                return err(Some(i), ErrorKind::Semantic, o.keyword.name, msg);
            }
        }
        match first {
            Some((b, p)) if !p.iter().any(|x| protos.contains(x)) => {
                return err(
                    Some(i),
                    ErrorKind::Semantic,
                    o.keyword.name,
                    format!("conflicts with '{b}': no protocol has both buffers"),
                );
            }
            None => first = Some((buffer, protos)),
            _ => {}
        }
    }
    Ok(())
}

/// A `byte_*` keyword reading in the byte order of the DCE/RPC data.
fn dce_byte_order(v: &Value) -> bool {
    use crate::keywords::bytes::ByteOpt;
    match v {
        Value::ByteTest(b) => b.opts.contains(&ByteOpt::Dce),
        Value::ByteJump(b) => b.opts.contains(&ByteOpt::Dce),
        Value::ByteExtract(b) => b.opts.contains(&ByteOpt::Dce),
        Value::ByteMath(b) => b.opts.iter().any(|o| o == "endian dce" || o == "dce"),
        _ => false,
    }
}

/// A variable must have been set earlier (for `byte_jump`, in the same
/// buffer: Suricata looks it up there only); Suricata's words for one that
/// was not.
fn check_var(w: &Walk, v: &NumVar, at: Option<usize>, name: &str) -> Result<(), SemError> {
    if let NumVar::Var(v) = v {
        let same_buffer = name == "byte_jump";
        if !w.vars.iter().any(|(x, b)| x == v && (!same_buffer || *b == w.buffer)) {
            let msg = if name == "byte_math" {
                format!("unknown byte_ keyword var seen in byte_math - {v}")
            } else {
                format!("Unknown byte_extract var seen in {name} - {v}")
            };
            return err(at, ErrorKind::Semantic, name, msg);
        }
    }
    Ok(())
}

fn check_vars(w: &Walk, v: &Value, at: Option<usize>, name: &str) -> Result<(), SemError> {
    match v {
        Value::ByteTest(b) => {
            check_var(w, &b.nbytes, at, name)?;
            check_var(w, &b.value, at, name)?;
            check_var(w, &b.offset, at, name)
        }
        Value::ByteJump(b) => {
            check_var(w, &b.nbytes, at, name)?;
            check_var(w, &b.offset, at, name)
        }
        Value::ByteMath(b) => {
            check_var(w, &b.nbytes, at, name)?;
            check_var(w, &b.rvalue, at, name)
        }
        Value::Isdataat(b) => check_var(w, &b.position, at, name),
        _ => Ok(()),
    }
}

fn apply_modifier(w: &mut Walk, rule: &Rule, i: usize, m: &ContentModifier, name: &str) -> Result<(), SemError> {
    let at = Some(i);
    let Some(last) = w.contents.len().checked_sub(1) else {
        return err(at, ErrorKind::Semantic, name, "needs a preceding content");
    };
    if w.ctx[last].0 != w.buffer {
        return err(at, ErrorKind::Semantic, name, "needs a preceding content in the same buffer");
    }
    let (content_len, negated) = match &rule.options[w.contents[last].option].value {
        Value::Content(c) => (c.bytes.len() as i64, c.negated),
        _ => (0, false),
    };
    let mods = &mut w.contents[last].mods;
    let twice = || err(at, ErrorKind::Semantic, name, "given twice for the same content");
    let conflict = |other: &str| {
        err(at, ErrorKind::Semantic, name, format!("cannot be combined with '{other}' on the same content"))
    };
    // Suricata's words for these two mistakes, which operators know.
    let twice_positional =
        || err(at, ErrorKind::Semantic, name, format!("can't use multiple {name}s for the same content."));
    let abs_and_rel = || {
        err(
            at,
            ErrorKind::Semantic,
            name,
            "can't use a relative keyword like within/distance with a absolute relative keyword like depth/offset for the same content.",
        )
    };
    let mixes_abs_and_rel = match m {
        ContentModifier::Depth(_) | ContentModifier::Offset(_) => mods.distance.is_some() || mods.within.is_some(),
        ContentModifier::Distance(_) | ContentModifier::Within(_) => mods.depth.is_some() || mods.offset.is_some(),
        _ => false,
    };
    if mixes_abs_and_rel {
        return abs_and_rel();
    }
    let positional = matches!(
        m,
        ContentModifier::Depth(_)
            | ContentModifier::Offset(_)
            | ContentModifier::Distance(_)
            | ContentModifier::Within(_)
    );
    if positional && mods.startswith {
        return conflict("startswith");
    }
    match m {
        ContentModifier::Nocase if mods.nocase => return twice(),
        ContentModifier::Nocase => mods.nocase = true,
        ContentModifier::Rawbytes => mods.rawbytes = true,
        ContentModifier::Startswith => {
            if mods.startswith {
                return twice();
            }
            for (set, n) in [
                (mods.depth.is_some(), "depth"),
                (mods.offset.is_some(), "offset"),
                (mods.distance.is_some(), "distance"),
                (mods.within.is_some(), "within"),
            ] {
                if set {
                    return conflict(n);
                }
            }
            mods.startswith = true;
        }
        ContentModifier::Endswith if mods.endswith => return twice(),
        ContentModifier::Endswith => mods.endswith = true,
        ContentModifier::Depth(v)
        | ContentModifier::Offset(v)
        | ContentModifier::Distance(v)
        | ContentModifier::Within(v) => {
            if let NumVar::Var(var) = v {
                if !w.vars.iter().any(|(x, _)| x == var) {
                    return err(
                        at,
                        ErrorKind::Semantic,
                        name,
                        format!("unknown byte_ keyword var seen in {name} - {var}."),
                    );
                }
            }
            let mods = &mut w.contents[last].mods;
            let slot = match m {
                ContentModifier::Depth(_) => &mut mods.depth,
                ContentModifier::Offset(_) => &mut mods.offset,
                ContentModifier::Distance(_) => &mut mods.distance,
                _ => &mut mods.within,
            };
            if slot.is_some() {
                return twice_positional();
            }
            if let NumVar::Num(n) = v {
                let n = *n;
                match m {
                    ContentModifier::Depth(_) if n == 0 => {
                        return err(at, ErrorKind::Semantic, name, "must be at least 1")
                    }
                    ContentModifier::Depth(_) | ContentModifier::Within(_) if n < content_len => {
                        return err(
                            at,
                            ErrorKind::Semantic,
                            name,
                            format!("{n} is smaller than the content length ({content_len} bytes): it can never match"),
                        );
                    }
                    _ => {}
                }
            }
            *slot = Some(v.clone());
            fast_pattern_conflict(&w.contents[last].mods, negated, name, at)?;
        }
        ContentModifier::FastPattern(fp) => {
            if mods.fast_pattern.is_some() {
                return twice();
            }
            if let FastPattern::Chop { offset, length } = fp {
                if *offset as i64 + *length as i64 > content_len {
                    return err(
                        at,
                        ErrorKind::Semantic,
                        name,
                        format!("offset {offset} + length {length} run past the content ({content_len} bytes)"),
                    );
                }
            }
            mods.fast_pattern = Some(*fp);
            fast_pattern_conflict(mods, negated, name, at)?;
            w.fast_patterns += 1;
            if w.fast_patterns > 1 {
                return err(at, ErrorKind::Semantic, name, "used on more than one content");
            }
        }
        ContentModifier::FastPatternOffset(_) | ContentModifier::FastPatternLength(_) => {
            return err(at, ErrorKind::Snort, name, "Snort 3 modifier; Suricata uses fast_pattern:offset,length");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::content::{FastPattern, NumVar};
    use crate::rule::{Dialect, Rule};

    fn rule(opts: &str) -> Result<Rule, String> {
        Rule::parse(&format!("alert http any any -> any any ({opts} sid:1;)")).map_err(|e| e.reason)
    }

    #[test]
    fn modifiers_fold_onto_their_content() {
        let r = rule(r#"content:"GET "; depth:4; nocase; content:"/x"; distance:0; within:10; fast_pattern;"#).unwrap();
        assert_eq!(r.contents.len(), 2);
        let (a, b) = (&r.contents[0].mods, &r.contents[1].mods);
        assert!(a.nocase && a.depth == Some(NumVar::Num(4)) && a.fast_pattern.is_none());
        assert_eq!((b.distance.clone(), b.within.clone()), (Some(NumVar::Num(0)), Some(NumVar::Num(10))));
        assert_eq!(b.fast_pattern, Some(FastPattern::Plain));
        assert_eq!(r.dialect, Dialect::Suricata);
    }

    #[test]
    fn buffers_legacy_modifiers_and_transforms() {
        let r = rule(r#"content:"a"; http_uri; uricontent:"b"; http.host; to_lowercase; content:".c"; endswith; pkt_data; content:"d";"#)
            .unwrap();
        let bufs: Vec<_> = r.contents.iter().map(|c| c.buffer).collect();
        assert_eq!(bufs, vec![Some("http.uri"), Some("http.uri"), Some("http.host"), None]);
        assert_eq!(r.contents[2].transforms.len(), 1);
        assert!(r.contents[3].transforms.is_empty());
        // A transform after a content applies to the contents after it.
        let r =
            Rule::parse(r#"alert dns any any -> any any (dns.query; content:"a"; dotprefix; content:".b"; sid:1;)"#)
                .unwrap();
        assert_eq!((r.contents[0].transforms.len(), r.contents[1].transforms.len()), (0, 1));
    }

    #[test]
    fn mistakes() {
        assert_eq!(
            rule(r#"content:"a"; http.uri; nocase;"#).unwrap_err(),
            "needs a preceding content in the same buffer"
        );
        assert_eq!(rule("dotprefix;").unwrap_err(), "needs a sticky buffer before it");
        assert_eq!(
            rule(r#"http.uri; content:"a"; http_header;"#).unwrap_err(),
            "the content before it is in sticky buffer 'http.uri'; use one or the other"
        );
        assert_eq!(
            rule(r#"content:"a"; http_uri; http_header;"#).unwrap_err(),
            "the content before it is already in 'http.uri'"
        );
        assert_eq!(
            rule(r#"content:"abc"; startswith; offset:1;"#).unwrap_err(),
            "cannot be combined with 'startswith' on the same content"
        );
        assert_eq!(
            rule(r#"content:"a"; fast_pattern; content:"b"; fast_pattern;"#).unwrap_err(),
            "used on more than one content"
        );
        assert_eq!(
            rule(r#"content:"ab"; fast_pattern:1,2;"#).unwrap_err(),
            "offset 1 + length 2 run past the content (2 bytes)"
        );
        assert_eq!(rule(r#"msg:"a"; msg:"b";"#).unwrap_err(), "given more than once");
        assert_eq!(
            rule("smb.version:1; smb.version:2;").unwrap_err(),
            "Can't use 2 or more smb.version declarations in the same sig"
        );
        assert_eq!(
            rule(r#"dns.query; content:"a";"#).unwrap_err(),
            "rule contains conflicting protocols: dns.query is for dns/doh2, the rule for 'http'"
        );
        let smb = Rule::parse(r#"alert smb any any -> any any (ja4.hash; content:"q"; sid:1;)"#);
        assert!(smb.unwrap_err().reason.starts_with("rule contains conflicting protocols"));
        let tls = Rule::parse(r#"alert smb any any -> any any (tls.sni; content:"q"; sid:1;)"#);
        assert_eq!(tls.unwrap_err().reason, "is a tls buffer, but the rule is for protocol 'smb'");
        let r = Rule::parse(r#"alert tcp any any -> any any (http.uri; content:"a"; tls.sni; content:"b"; sid:1;)"#);
        assert_eq!(r.unwrap_err().reason, "conflicts with 'http.uri': no protocol has both buffers");
        assert!(Rule::parse(r#"alert smb any any -> any any (dcerpc.stub_data; content:"a"; sid:1;)"#).is_ok());
        assert!(rule(r#"content:"a"; byte_extract:1,0,len,relative; content:"b"; within:len;"#).is_ok());
        // The `dce` byte order makes a rule a DCE/RPC one.
        let dns = Rule::parse(r#"alert dns any any -> any any (content:"a"; byte_test:2,=,1,0,relative,dce; sid:1;)"#);
        assert_eq!(dns.unwrap_err().reason, "is a dcerpc buffer, but the rule is for protocol 'dns'");
        assert!(Rule::parse(
            r#"alert smb any any -> any any (dce_stub_data; content:"a"; byte_jump:4,0,relative,dce; sid:1;)"#
        )
        .is_ok());
        let both = Rule::parse(
            r#"alert tcp any any -> any any (dce_stub_data; content:"a"; byte_test:2,=,1,0,relative,dce,little; sid:1;)"#,
        );
        assert!(both.unwrap_err().reason.contains("'dce' takes the byte order"));
    }

    #[test]
    fn snort3_is_recognised() {
        let r = Rule::parse(r#"alert tcp any any -> any any (content:"a",nocase; service:http; sid:1;)"#).unwrap_err();
        assert_eq!(r.kind, crate::ErrorKind::Snort);
        let r = Rule::parse(r#"alert http (msg:"x"; http_uri; content:"/a"; sid:1;)"#).unwrap_err();
        assert!(r.reason.starts_with("Snort 3 header-less rule"));
        let r = Rule::parse(r#"alert tcp any any -> any any (msg:"x"; service:http; http_uri; content:"/a"; sid:1;)"#)
            .unwrap_err();
        assert_eq!(r.keyword.as_deref(), Some("service"));
    }

    fn tcp(opts: &str) -> Result<Rule, String> {
        Rule::parse(&format!("alert tcp any any -> any any ({opts} sid:1;)")).map_err(|e| e.reason)
    }

    #[test]
    fn base64_data_has_no_fast_pattern() {
        let http =
            |opts: &str| Rule::parse(&format!("alert http any any -> any any ({opts} sid:1;)")).err().map(|e| e.reason);
        let head = r#"http.request_body; base64_decode:bytes 28; base64_data;"#;
        assert_eq!(
            http(&format!(r#"{head} content:"something"; fast_pattern;"#)).unwrap(),
            "fast_pattern cannot be used with base64_data"
        );
        assert!(http(&format!(r#"{head} content:"something";"#)).is_none());
    }

    #[test]
    fn transaction_xbits_set_or_test_in_a_hooked_rule() {
        let reason = |r: &str| Rule::parse(r).err().map(|e| e.reason);
        assert_eq!(
            reason("alert http any any -> any any (xbits:isset,a,track tx; sid:1;)").unwrap(),
            "tx xbits require an explicit rule hook"
        );
        assert_eq!(
            reason("accept:hook http1:request_headers any any -> any any (xbits:unset,a,track tx; sid:1;)").unwrap(),
            "tx xbits only support set and isset"
        );
        assert!(reason("accept:hook smtp:request_data any any -> any any (xbits:isset,a,track tx; sid:1;)").is_none());
        assert!(reason("alert tcp any any -> any any (xbits:unset,a,track ip_src; sid:1;)").is_none());
    }

    #[test]
    fn a_relative_byte_math_needs_a_match_before_it() {
        let tcp =
            |opts: &str| Rule::parse(&format!("alert tcp any any -> any any ({opts} sid:1;)")).err().map(|e| e.reason);
        let math = "byte_math:bytes 1, offset 1, oper <<, rvalue 2, result r, relative;";
        assert_eq!(tcp(&format!("ipv4.hdr; {math}")).unwrap(), "relative specified without previous pattern match");
        assert!(tcp(&format!("content:\"a\"; {math}")).is_none());
        assert!(tcp("byte_math:bytes 1, offset 1, oper <<, rvalue 2, result r;").is_none(), "not relative");
    }

    #[test]
    fn contents_a_transform_cannot_produce_are_refused() {
        let http =
            |opts: &str| Rule::parse(&format!("alert http any any -> any any ({opts} sid:1;)")).err().map(|e| e.reason);
        assert!(http(r#"file.data; to_lowercase; content:"AT PAT";"#)
            .unwrap()
            .contains("incompatible with to_lowercase"));
        assert!(http(r#"file.data; to_uppercase; content:"at";"#).unwrap().contains("incompatible with to_uppercase"));
        assert!(http(r#"file.data; strip_whitespace; content:"a b";"#)
            .unwrap()
            .contains("incompatible with strip_whitespace"));
        assert!(http(r#"file.data; strip_whitespace; content:"|61 0d|";"#).is_some(), "CR is whitespace");
        assert!(http(r#"file.data; strip_whitespace; content:"|00 61|";"#).is_none());
        assert!(http(r#"file.data; compress_whitespace; content:"a  b";"#)
            .unwrap()
            .contains("incompatible with compress_whitespace"));
        assert!(http(r#"file.data; compress_whitespace; content:"a b";"#).is_none());
        assert!(http(r#"file.data; to_lowercase; content:"AT"; nocase;"#).is_none(), "case-blind");
        assert!(http(r#"file.data; to_lowercase; content:!"AT";"#).is_none(), "negated");
        assert!(http(r#"file.data; content:"AT";"#).is_none(), "no transform");
    }

    #[test]
    fn contents_a_bsize_leaves_no_room_for_are_refused() {
        let http =
            |opts: &str| Rule::parse(&format!("alert http any any -> any any ({opts} sid:1;)")).err().map(|e| e.reason);
        assert_eq!(
            http(r#"http.uri; content:"abcdefgh123456"; bsize:2;"#).unwrap(),
            "signature can't match as required content length 14 exceeds bsize value 2"
        );
        assert!(http(r#"http.uri; content:"abcdefgh123456"; bsize:10<>13;"#)
            .unwrap()
            .ends_with("exceeds bsize range 10-13"));
        assert!(http(r#"http.uri; content:"abc"; offset:3; depth:3; bsize:3;"#).unwrap().contains("length 6 exceeds"));
        assert!(http(r#"http.uri; content:"abcef"; content:"g"; bsize:4;"#).is_some());
        assert!(http(r#"http.uri; content:"abcdefgh123456"; bsize:15<>25;"#).is_none());
        assert!(http(r#"http.uri; content:"/index.php"; bsize:>1024;"#).is_none());
        assert!(http(r#"http.uri; content:!"abcdefgh"; bsize:2;"#).is_none(), "a negated content needs no room");
        assert!(http(r#"http.uri; content:"abcdefgh"; http.host; bsize:2;"#).is_none(), "another buffer's bsize");
    }

    #[test]
    fn contents_a_dsize_leaves_no_room_for_are_refused() {
        let need = |opts: &str| tcp(opts).err();
        assert_eq!(
            need(r#"dsize:10; content:"thisstringisgreaterthan10bytes";"#).unwrap(),
            "signature can't match as required content length 30 exceeds dsize value 10"
        );
        // A chain of relative contents adds up; each unanchored content starts a new chain.
        assert!(need(r#"dsize:10; content:"boom"; content:"loom"; distance:10;"#).is_some());
        assert!(need(r#"dsize:10; content:"boom"; content:"loom"; distance:-10;"#).is_none());
        assert!(need(r#"dsize:300; content:"AAAAAAAAAAAAAAAAAAAA"; content:"BBBBBBBBBB";"#).is_none());
        // The furthest offset counts with its own content only.
        assert!(need(r#"dsize:10; content:"|05 01 00 01|"; depth:4; content:"|00 19|"; offset:8; depth:2;"#).is_none());
        assert!(need(r#"dsize:5<>10; content:"AAAA"; offset:8;"#)
            .unwrap()
            .ends_with("length 12 exceeds dsize value 10"));
        // A negated content with a window takes the whole window.
        assert!(need(r#"dsize:16; content:"abcdef"; startswith; content:!"a"; distance:0; content:"789"; distance:0; content:!"c"; distance:1; within:10;"#)
            .unwrap()
            .ends_with("length 20 exceeds dsize value 16"));
        // `<` is taken by its value, as Suricata does; `<=` is not checked.
        assert!(need(r#"dsize:<10; content:"0123456789";"#).is_none());
        assert!(need(r#"dsize:<10; content:"0123456789A";"#).is_some());
        assert!(need(r#"dsize:<=10; content:"thisstringisgreaterthan10bytes";"#).is_none());
        // Lower bounds and variables leave the rule alone.
        assert!(need(r#"dsize:>10; content:"thisstringisgreaterthan10bytes";"#).is_none());
    }

    #[test]
    fn fast_pattern_on_a_positioned_negation_or_only_is_refused() {
        assert_eq!(
            tcp(r#"content:"a"; content:!"b"; fast_pattern; offset:6;"#).unwrap_err(),
            "can't have a relative negated keyword set along with 'fast_pattern'."
        );
        assert_eq!(
            tcp(r#"content:"a"; content:!"b"; within:6; fast_pattern;"#).unwrap_err(),
            "can't have a relative negated keyword set along with 'fast_pattern'."
        );
        assert_eq!(
            tcp(r#"content:"a"; content:"b"; fast_pattern:only; offset:6;"#).unwrap_err(),
            "can't have a relative keyword set along with 'fast_pattern:only;'."
        );
        assert!(tcp(r#"content:"a"; content:"b"; fast_pattern; offset:6;"#).is_ok());
        assert!(tcp(r#"content:"a"; content:!"b"; fast_pattern;"#).is_ok());
    }

    #[test]
    fn nocase_on_the_host_buffer_is_refused() {
        let e = rule(r#"http.host; content:"example.com"; nocase;"#).unwrap_err();
        assert!(e.starts_with("rule 1: http.host keyword specified along with \"nocase\"."), "{e}");
        assert!(rule(r#"http.uri; content:"x"; nocase;"#).is_ok());
    }

    #[test]
    fn positional_mistakes_are_told_in_suricata_words() {
        assert_eq!(
            tcp(r#"content:"AA"; content:"BB"; within:3; within:3;"#).unwrap_err(),
            "can't use multiple withins for the same content."
        );
        assert_eq!(
            tcp(r#"content:"Alice"; depth:d; byte_extract:2,1,size;"#).unwrap_err(),
            "unknown byte_ keyword var seen in depth - d."
        );
        assert_eq!(tcp(r#"content:"first"; depth:-5;"#).unwrap_err(), "invalid value for depth: -5.");
        assert_eq!(tcp(r#"content:" "; within:1048577;"#).unwrap_err(), "invalid value for within: 1048577");
        assert_eq!(tcp(r#"content:"AA"; content:"BB";; within:5;"#).unwrap_err(), "unknown rule keyword ''.");
    }
}
