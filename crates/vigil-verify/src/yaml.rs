//! The YAML side of a `test.yaml`: an order-preserving value tree.
//!
//! Upstream iterates `requires:` and `match:` mappings in file order and stops at the
//! first failing entry, so the order decides both which reason is reported and which
//! entries are evaluated at all. `serde_json::Map` would sort the keys, hence this type.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A parsed YAML node. Integers are kept apart from floats because the suite compares
/// them with Python semantics (`1 == 1.0`, but printing differs).
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Yaml>),
    /// Entries in document order.
    Map(Vec<(Yaml, Yaml)>),
}

impl Yaml {
    /// Parses a YAML document. An empty document is `Null`, like PyYAML's `safe_load`.
    pub fn parse(text: &str) -> Result<Yaml, String> {
        // Single line, no source snippet: the message ends up in a one-line FAIL reason.
        let options = serde_saphyr::options! {
            with_snippet: false,
            duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
        };
        serde_saphyr::from_str_with_options::<Yaml>(text, options)
            .map_err(|e| e.to_string().lines().collect::<Vec<_>>().join(" "))
    }

    /// Looks a string key up in a mapping; `None` for anything else.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(entries) => entries.iter().find(|(k, _)| matches!(k, Yaml::Str(s) if s == key)).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Yaml, Yaml)]> {
        match self {
            Yaml::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// Python truthiness, for keys such as `pcap:` where upstream tests `if not value`.
    pub fn truthy(&self) -> bool {
        match self {
            Yaml::Null => false,
            Yaml::Bool(b) => *b,
            Yaml::Int(i) => *i != 0,
            Yaml::Float(f) => *f != 0.0,
            Yaml::Str(s) => !s.is_empty(),
            Yaml::Seq(v) => !v.is_empty(),
            Yaml::Map(m) => !m.is_empty(),
        }
    }

    /// The text Python's `str()` gives. Upstream passes `env:` values and version
    /// numbers through `str()`, so `version: 8.0` must read "8.0", not "8".
    pub fn py_str(&self) -> String {
        match self {
            Yaml::Null => "None".to_string(),
            Yaml::Bool(true) => "True".to_string(),
            Yaml::Bool(false) => "False".to_string(),
            Yaml::Int(i) => i.to_string(),
            Yaml::Float(f) => py_float_str(*f),
            Yaml::Str(s) => s.clone(),
            Yaml::Seq(_) | Yaml::Map(_) => self.to_string(),
        }
    }
}

pub(crate) fn py_float_str(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        // Debug keeps a trailing ".0" on whole numbers, as Python's repr does.
        format!("{f:?}")
    }
}

/// Flow-style rendering for messages: `{event_type: alert, alert.signature_id: 1}`.
impl fmt::Display for Yaml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Yaml::Null => f.write_str("null"),
            Yaml::Bool(b) => write!(f, "{b}"),
            Yaml::Int(i) => write!(f, "{i}"),
            Yaml::Float(x) => f.write_str(&py_float_str(*x)),
            Yaml::Str(s) => {
                let plain = !s.is_empty()
                    && s.chars().all(|c| c.is_alphanumeric() || "._-/:@".contains(c))
                    && !matches!(s.as_str(), "true" | "false" | "null")
                    && s.parse::<f64>().is_err();
                if plain {
                    f.write_str(s)
                } else {
                    write!(f, "{s:?}")
                }
            }
            Yaml::Seq(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Yaml::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

impl<'de> Deserialize<'de> for Yaml {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Yaml, D::Error> {
        deserializer.deserialize_any(YamlVisitor)
    }
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = Yaml;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Yaml, E> {
        Ok(Yaml::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Yaml, E> {
        Ok(Yaml::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Yaml, E> {
        Ok(Yaml::Int(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Yaml, E> {
        Ok(Yaml::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Yaml, E> {
        Ok(i128::try_from(v).map(Yaml::Int).unwrap_or(Yaml::Float(v as f64)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Yaml, E> {
        Ok(Yaml::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Yaml, E> {
        Ok(Yaml::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Yaml, E> {
        Ok(Yaml::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Yaml, D::Error> {
        Yaml::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Yaml, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Yaml>()? {
            items.push(item);
        }
        Ok(Yaml::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Yaml, A::Error> {
        let mut entries: Vec<(Yaml, Yaml)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<Yaml, Yaml>()? {
            // PyYAML keeps the last of duplicate keys, at the first key's position.
            if let Some(slot) = entries.iter_mut().find(|(old, _)| *old == k) {
                slot.1 = v;
            } else {
                entries.push((k, v));
            }
        }
        Ok(Yaml::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_mapping_order_and_types() {
        let y = Yaml::parse("b: 1\na: \"53\"\nc: 8.0\nd: yes\ne: ~\nf: [1, x]\n").unwrap();
        let keys: Vec<_> = y.as_map().unwrap().iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(keys, ["b", "a", "c", "d", "e", "f"]);
        assert_eq!(y.get("b"), Some(&Yaml::Int(1)));
        assert_eq!(y.get("a"), Some(&Yaml::Str("53".into())));
        assert_eq!(y.get("c").unwrap().py_str(), "8.0");
        assert_eq!(y.get("d"), Some(&Yaml::Bool(true)));
        assert_eq!(y.get("e"), Some(&Yaml::Null));
        assert_eq!(y.get("f").unwrap().to_string(), "[1, x]");
    }

    #[test]
    fn versions_stay_strings_or_numbers_like_pyyaml() {
        let y = Yaml::parse("a: 7.0.14\nb: 8\nc: 7.10\n").unwrap();
        assert_eq!(y.get("a").unwrap().py_str(), "7.0.14");
        assert_eq!(y.get("b").unwrap().py_str(), "8");
        // PyYAML reads 7.10 as a float too, so upstream sees "7.1".
        assert_eq!(y.get("c").unwrap().py_str(), "7.1");
    }

    #[test]
    fn empty_document_is_null_and_errors_are_one_line() {
        assert_eq!(Yaml::parse("").unwrap(), Yaml::Null);
        let err = Yaml::parse("a: [1, 2\nb: {").unwrap_err();
        assert!(!err.contains('\n'), "{err}");
    }
}
