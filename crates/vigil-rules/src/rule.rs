//! A parsed rule: header, options in source order, spans, and the views
//! derived from them (sid, content modifiers folded onto their content).

use crate::address::AddressSet;
use crate::error::{ErrorKind, RuleError};
use crate::header::{parse_header, Header};
use crate::keywords::{lookup, Arg};
use crate::lexer::RawRule;
use crate::options::{scan_options, RuleOption, Value};
use crate::port::PortSet;
use crate::semantics::{check, ContentInfo};
use crate::span::Span;
use std::sync::Arc;

/// Which rule language a rule is written in. Snort 3 is recognised by its
/// header-less form, `service`, inline content modifiers or its sticky use
/// of the `http_*` keywords; Suricata cannot load such rules, and the
/// checker says why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    Suricata,
    Snort3,
}

/// Addresses and ports after variable resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub src: Arc<AddressSet>,
    pub src_port: Arc<PortSet>,
    pub dst: Arc<AddressSet>,
    pub dst_port: Arc<PortSet>,
    /// An address negates something (`!x`, directly or in a variable).
    pub negated: bool,
}

/// One rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub header: Header,
    /// The options in source order.
    pub options: Vec<RuleOption>,
    /// The rule was commented out (`#alert ...`).
    pub disabled: bool,
    pub dialect: Dialect,
    /// The file the rule was read from, as named to the loader
    /// (`<string>` for [`Rule::parse`]). Spans are byte offsets into it.
    pub file: Arc<str>,
    /// The whole rule in its file.
    pub span: Span,
    /// Each content with the buffer it inspects and its modifiers, in
    /// option order.
    pub contents: Vec<ContentInfo>,
    /// Header addresses and ports resolved against the variables; filled
    /// in by the loader.
    pub resolved: Option<Resolved>,
}

impl Rule {
    /// Parses one rule from a string (continuation lines allowed; a leading
    /// `#` marks it disabled). Errors name the file `<string>`.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let file: Arc<str> = Arc::from("<string>");
        let mut rules = crate::lexer::raw_rules(text);
        match rules.next() {
            Some(raw) => parse_raw(&raw, &file),
            None => Err(RuleError::at(&file, Span::NONE, ErrorKind::Syntax, None, "no rule in the text")),
        }
    }

    /// The first option named `name` (as the table spells it).
    pub fn option(&self, name: &str) -> Option<&RuleOption> {
        self.options.iter().find(|o| o.keyword.name == name)
    }

    fn number(&self, name: &str) -> Option<u32> {
        match self.option(name).map(|o| &o.value) {
            Some(Value::Number(n)) => Some(*n as u32),
            _ => None,
        }
    }

    /// `sid` (every loaded rule has one).
    pub fn sid(&self) -> u32 {
        self.number("sid").unwrap_or(0)
    }

    /// `gid`, 1 when absent.
    pub fn gid(&self) -> u32 {
        self.number("gid").unwrap_or(1)
    }

    /// `rev`, 0 when absent.
    pub fn rev(&self) -> u32 {
        self.number("rev").unwrap_or(0)
    }

    /// `msg`, when present.
    pub fn msg(&self) -> Option<&str> {
        match self.option("msg").map(|o| &o.value) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// `classtype`, when present.
    pub fn classtype(&self) -> Option<&str> {
        match self.option("classtype").map(|o| &o.value) {
            Some(Value::Text(s)) => Some(s),
            _ => None,
        }
    }

    /// Forgets where the rule was written (every span, and the file): two
    /// rules that say the same thing compare equal afterwards.
    pub fn clear_spans(&mut self) {
        self.file = Arc::from("");
        self.span = Span::NONE;
        self.header.action_span = Span::NONE;
        self.header.protocol_span = Span::NONE;
        if let Some(e) = &mut self.header.endpoints {
            e.spans = [Span::NONE; 5];
        }
        for o in &mut self.options {
            o.span = Span::NONE;
            o.value_span = o.value_span.map(|_| Span::NONE);
        }
    }
}

/// Parses one logical rule. A [`ErrorKind::Syntax`] error means the text is
/// not a rule at all (for a disabled line: just a comment).
pub(crate) fn parse_raw(raw: &RawRule<'_>, file: &Arc<str>) -> Result<Rule, RuleError> {
    let text: &str = &raw.text;
    let map = &raw.map;
    let at = |off: usize| map.span(off, off);
    // The sid, once the options are scanned, so errors can name the rule.
    let sid_hint = std::cell::Cell::new(None);
    let mk = |off: usize, kind: ErrorKind, kw: Option<&str>, msg: String| {
        let mut e = RuleError::at(file, at(off), kind, kw, msg);
        e.sid = sid_hint.get();
        e
    };
    let fail = |off: usize, kind: ErrorKind, kw: Option<&str>, msg: String| Err(mk(off, kind, kw, msg));
    let Some(open) = text.find('(') else {
        return fail(text.len(), ErrorKind::Syntax, None, "no option list: expected '(' after the header".into());
    };
    let header = parse_header(&text[..open], &|a, b| map.span(a, b))
        .map_err(|(off, e)| mk(off + e.at, e.kind, None, e.reason))?;
    // Suricata takes the options up to the last character that is neither
    // white space nor ')': a missing closing parenthesis (often a `\`
    // continuation before a blank line) is no error.
    let close = text.trim_end_matches(|c: char| c.is_whitespace() || c == ')').len().max(open + 1);
    if close <= open + 1 {
        return fail(text.len(), ErrorKind::Syntax, None, "no rule options".into());
    }
    let body = &text[open + 1..close];
    let raws = scan_options(body, open + 1).map_err(|(off, e)| mk(off + e.at, e.kind, None, e.reason))?;
    // A value error in a rule written in Snort 3 is a Snort construct, not
    // a typo: say so.
    let snort3 = header.endpoints.is_none()
        || raws.iter().any(|r| {
            r.name.eq_ignore_ascii_case("service")
                || (r.name.eq_ignore_ascii_case("content") && r.value.is_some_and(|(_, v)| looks_inline(v)))
        });
    let mk = |off: usize, kind: ErrorKind, kw: Option<&str>, msg: String| {
        if snort3 && matches!(kind, ErrorKind::Value | ErrorKind::UnknownKeyword) {
            return mk(off, ErrorKind::Snort, kw, format!("Snort 3 syntax: {msg}"));
        }
        mk(off, kind, kw, msg)
    };
    let fail = |off: usize, kind: ErrorKind, kw: Option<&str>, msg: String| Err(mk(off, kind, kw, msg));
    let sid_of = |v: &str| crate::intcmp::parse_u64(v, u32::MAX as u64).ok().map(|n| n as u32);
    sid_hint.set(
        raws.iter().find(|r| r.name.eq_ignore_ascii_case("sid")).and_then(|r| r.value.and_then(|(_, v)| sid_of(v))),
    );
    let mut options = Vec::with_capacity(raws.len());
    for r in raws {
        let Some(kw) = lookup(r.name) else {
            return fail(r.name_at, ErrorKind::UnknownKeyword, Some(r.name), "unknown keyword".into());
        };
        let value = match r.value {
            None => match kw.arg {
                Arg::Required => return fail(r.name_at, ErrorKind::Value, Some(kw.name), "needs a value".into()),
                Arg::None | Arg::Optional => {
                    (kw.parse)("").map_err(|e| mk(r.name_at, e.kind, Some(kw.name), e.reason))?
                }
            },
            Some((vat, v)) => {
                let empty = v.trim().is_empty();
                match kw.arg {
                    Arg::None if !empty => {
                        let shown = v.trim();
                        return fail(vat, ErrorKind::Value, Some(kw.name), format!("takes no value, got '{shown}'"));
                    }
                    Arg::None => (kw.parse)("").map_err(|e| mk(r.name_at, e.kind, Some(kw.name), e.reason))?,
                    Arg::Required if empty => {
                        return fail(r.name_at, ErrorKind::Value, Some(kw.name), "needs a value".into())
                    }
                    _ => (kw.parse)(v).map_err(|e| mk(vat + e.at, e.kind, Some(kw.name), e.reason))?,
                }
            }
        };
        options.push(RuleOption {
            keyword: kw,
            value,
            span: map.span(r.start, r.end),
            value_span: r.value.map(|(vat, v)| map.span(vat, vat + v.len())),
        });
    }
    let whole = map.span(0, text.trim_end().len());
    let mut rule = Rule {
        header,
        options,
        disabled: raw.disabled,
        dialect: Dialect::Suricata,
        file: file.clone(),
        span: whole,
        contents: Vec::new(),
        resolved: None,
    };
    check(&mut rule).map_err(|e| {
        let span = e.option.and_then(|i| rule.options.get(i)).map_or(rule.span, |o| o.span);
        let mut err = RuleError::at(file, span, e.kind, e.keyword.as_deref(), e.reason);
        err.sid = sid_hint.get();
        err
    })?;
    Ok(rule)
}

/// Whether a content value carries Snort 3 inline modifiers
/// (`"abc",depth 4`).
fn looks_inline(v: &str) -> bool {
    v.rfind("\",").is_some_and(|i| {
        let rest = v[i + 2..].trim_start();
        ["nocase", "depth", "offset", "distance", "within", "fast_pattern"].iter().any(|m| rest.starts_with(m))
    })
}

/// Parses the rules of a whole text (a file's contents) without loading
/// them: no variables, no duplicate check. Yields each rule or error with
/// whether the line was commented out; commented-out lines that are not
/// rules at all (prose) are skipped.
pub fn parse_text<'a>(src: &'a str, file: &'a Arc<str>) -> impl Iterator<Item = (Result<Rule, RuleError>, bool)> + 'a {
    crate::lexer::raw_rules(src).filter_map(move |raw| {
        let r = parse_raw(&raw, file);
        match r {
            Err(e) if raw.disabled && e.kind == ErrorKind::Syntax => None,
            other => Some((other, raw.disabled)),
        }
    })
}
