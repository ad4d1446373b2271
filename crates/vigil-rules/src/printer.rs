//! Printing rules back to text. The output is valid rule text that parses
//! to the same AST (spans aside); values are written in one canonical form
//! (`flow:from_client` prints as `flow:to_server`, hex bytes upper case).

use crate::options::{write_quoted, RuleOption, Value};
use crate::rule::Rule;
use std::fmt;

impl fmt::Display for Value {
    /// The value as written after `name:` (nothing for [`Value::None`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => Ok(()),
            Value::Text(t) => f.write_str(t),
            Value::Str(s) => write_quoted(f, s),
            Value::Number(n) => write!(f, "{n}"),
            Value::Int(c) => write!(f, "{c}"),
            Value::IntWith(c, words) => {
                write!(f, "{c}")?;
                for w in words {
                    write!(f, ",{w}")?;
                }
                Ok(())
            }
            Value::Content(c) => write!(f, "{c}"),
            Value::Modifier(m) => m.fmt_value(f),
            Value::Pcre(p) => write!(f, "{p}"),
            Value::Flow(x) => write!(f, "{x}"),
            Value::Flags(x) => write!(f, "{x}"),
            Value::Fragbits(x) => write!(f, "{x}"),
            Value::Bits(x) => write!(f, "{x}"),
            Value::Flowint(x) => write!(f, "{x}"),
            Value::StreamSize(x) => write!(f, "{x}"),
            Value::ByteTest(x) => write!(f, "{x}"),
            Value::ByteJump(x) => write!(f, "{x}"),
            Value::ByteExtract(x) => write!(f, "{x}"),
            Value::ByteMath(x) => write!(f, "{x}"),
            Value::Isdataat(x) => write!(f, "{x}"),
            Value::Threshold(x) => write!(f, "{x}"),
            Value::Tag(x) => write!(f, "{x}"),
            Value::Reference(x) => write!(f, "{x}"),
            Value::Target(x) => write!(f, "{x}"),
            Value::Metadata(items) => {
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(k)?;
                    if !v.is_empty() {
                        write!(f, " {v}")?;
                    }
                }
                Ok(())
            }
            Value::List(items) => f.write_str(&items.join(",")),
            Value::Dataset(x) => write!(f, "{x}"),
        }
    }
}

impl fmt::Display for RuleOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword.name)?;
        let v = self.value.to_string();
        if !v.is_empty() {
            write!(f, ":{v}")?;
        }
        f.write_str(";")
    }
}

impl fmt::Display for Rule {
    /// One line: `[#]header (option; option; ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.disabled {
            f.write_str("#")?;
        }
        write!(f, "{} (", self.header)?;
        for (i, o) in self.options.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{o}")?;
        }
        f.write_str(")")
    }
}
