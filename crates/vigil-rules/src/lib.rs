//! The rule language of Suricata (and Snort, as far as telling what
//! Suricata cannot run): parsing rule files into a lossless AST with source
//! spans, typed keyword values, variables, support files, and loading that
//! never stops at a bad rule.
//!
//! Data flows in four steps:
//!
//! 1. **Lexing**: a file is split into logical
//!    rules: continuation lines joined, comments skipped, `# alert ...`
//!    recognised as a disabled rule.
//! 2. **Parsing** ([`Rule::parse`]): the header (action, protocol,
//!    [`address`] and [`port`] groups, direction) and the options, each
//!    typed by the static [`keywords`] table ([`content`], [`pcre`],
//!    [`IntCmp`] for every numeric keyword, ...). Every node keeps its
//!    [`Span`]; printing a rule ([`printer`]) gives text that parses back to
//!    the same AST.
//! 3. **Checking**: what options mean together (modifiers attach to the
//!    content before them, buffers and transforms, `sid` present); each
//!    problem is a [`RuleError`] (`emerging-foo.rules:123:45: pcre: unknown
//!    flag 'J'`) for that rule only.
//! 4. **Loading** ([`Loader`]): files into a [`RuleSet`]: header variables
//!    resolved against [`Vars`] into address/port sets, `classtype` and
//!    `reference` checked against the support files
//!    ([`Classifications`], [`References`]), duplicate gid:sid rejected.
//!    Whether a loaded rule actually *runs* is the engine's call, asked
//!    through the [`Executor`] trait; [`NoEngine`] runs nothing.
//!
//! ```
//! use vigil_rules::{Loader, NoEngine};
//!
//! let text = r#"
//! alert http $HOME_NET any -> $EXTERNAL_NET any (msg:"ET x"; flow:established,to_server; http.uri; content:"/a.php"; nocase; sid:1; rev:2;)
//! #alert dns any any -> any any (msg:"off"; dns.query; content:"evil"; sid:2;)
//! alert tcp any any -> any any (msg:"bad"; pcre:"/x/J"; sid:3;)
//! "#;
//! let set = Loader::new().load_str(text, "local.rules").unwrap();
//! assert_eq!((set.rules.len(), set.disabled.len(), set.errors.len()), (1, 1, 1));
//! assert_eq!(set.errors[0].to_string(), "local.rules:4:51: pcre: unknown flag 'J'");
//!
//! let rule = &set.rules[0];
//! assert_eq!(rule.contents[0].buffer, Some("http.uri"));
//! assert!(rule.contents[0].mods.nocase);
//! assert_eq!(Some(rule.to_string()), text.lines().nth(1).map(str::to_string));
//!
//! let cap = set.capability(&NoEngine);
//! assert_eq!((cap.loaded, cap.unsupported), (0, 1));
//! ```

pub mod address;
pub mod classification;
pub mod content;
pub mod error;
pub mod executor;
pub mod group;
pub mod header;
pub mod intcmp;
pub mod keywords;
mod lexer;
pub mod load;
pub mod options;
pub mod pcre;
pub mod port;
pub mod printer;
pub mod requires;
pub mod rule;
pub mod semantics;
pub mod span;
pub mod threshold;
pub mod vars;

pub use address::{AddrAtom, AddrExpr, AddressSet};
pub use classification::{Classifications, Classtype, References};
pub use content::{Content, ContentModifier, FastPattern, NumVar};
pub use error::{ErrorKind, RuleError, VResult, ValueError};
pub use executor::{capability, needs_engine, Capability, Executor, NoEngine, Unsupported};
pub use group::{Group, RangeSet, MAX_GROUP_DEPTH};
pub use header::{Action, ActionKind, Direction, Endpoints, Header, ProtoClass, Protocol};
pub use intcmp::IntCmp;
pub use keywords::{Arg, KeywordDef, Kind};
pub use load::{FileStats, Loader, RuleSet, StrictError};
pub use options::{RuleOption, Value};
pub use pcre::Pcre;
pub use port::{PortAtom, PortExpr, PortSet};
pub use rule::{parse_text, Dialect, Resolved, Rule};
pub use semantics::{ContentInfo, ContentMods};
pub use span::Span;
pub use threshold::{ThresholdConfig, ThresholdEntry};
pub use vars::{VarError, Vars};
