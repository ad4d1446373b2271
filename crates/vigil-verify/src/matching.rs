//! Field lookup and comparison for `filter` and `stats` checks, with upstream's Python
//! semantics.
//!
//! Upstream evaluates `val != expected` between `json.loads` and PyYAML values, so:
//! types are strict between strings and numbers (`53 != "53"`), but `1 == 1.0` and
//! `true == 1` (Python bools are ints). A missing field and a JSON `null` are both
//! Python `None`. Operations Python cannot do (`None.find(...)`, `"x" in 5`) raise in
//! upstream and fail the whole check; they are [`Err`] here for the same effect.
//!
//! Key syntax: dotted path, `name[N]` index, and a final `__len`, `__find`,
//! `__contains`, `__startswith`, `__endswith`, `__gt`, `__gte`, `__lt`, `__lte`.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::Value;

use crate::yaml::Yaml;

/// Suffix parts that stop the lookup and leave the comparison to [`match_key`].
const STOP_PARTS: &[&str] = &["__contains", "__find", "__startswith", "__endswith", "__gt", "__gte", "__lt", "__lte"];

/// A lookup result. `None` is Python's `None`: the path is missing. A JSON `null` comes
/// back as `Some(Value::Null)` and compares the same way, but `__len` of it is -1
/// whereas a missing path never reaches `__len`.
pub type Found<'a> = Option<Cow<'a, Value>>;

/// Upstream's `find_value`: walks `name` (dotted, with `[N]` indexes) into `obj`.
pub fn find_value<'a>(name: &str, obj: &'a Value) -> Result<Found<'a>, String> {
    let mut cur: Cow<'a, Value> = Cow::Borrowed(obj);
    for part in name.split('.') {
        if part == "__len" {
            return Ok(Some(Cow::Owned(Value::from(py_len(&cur)))));
        }
        if STOP_PARTS.contains(&part) {
            break;
        }
        let (field, index) = split_index(part);
        cur = match step(cur, field)? {
            Some(v) => v,
            None => return Ok(None),
        };
        if let Some(index) = index {
            cur = match index_into(&cur, index) {
                Some(v) => Cow::Owned(v),
                None => return Ok(None),
            };
        }
    }
    Ok(Some(cur))
}

/// `len()` of a JSON value; -1 where Python's `len` raises (numbers, bools, None).
fn py_len(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.chars().count() as i64,
        Value::Array(a) => a.len() as i64,
        Value::Object(o) => o.len() as i64,
        _ => -1,
    }
}

/// Splits `name[3]` into `("name", Some(3))`; the last bracket wins, as the greedy
/// upstream regex `^(.*)\[(\d+)\]$` does.
fn split_index(part: &str) -> (&str, Option<usize>) {
    if let Some(body) = part.strip_suffix(']') {
        if let Some(open) = body.rfind('[') {
            let digits = &body[open + 1..];
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                // Too large an index simply finds nothing.
                return (&body[..open], Some(digits.parse().unwrap_or(usize::MAX)));
            }
        }
    }
    (part, None)
}

/// `if not name in obj: return None; obj = obj[name]`.
fn step<'a>(cur: Cow<'a, Value>, field: &str) -> Result<Option<Cow<'a, Value>>, String> {
    match cur {
        Cow::Borrowed(Value::Object(map)) => Ok(map.get(field).map(Cow::Borrowed)),
        Cow::Owned(Value::Object(mut map)) => Ok(map.remove(field).map(Cow::Owned)),
        other => not_an_object(&other, field).map(|()| None),
    }
}

/// `name in obj` works on lists and strings (and then indexing them with a string
/// raises); on anything else `in` itself raises.
fn not_an_object(v: &Value, field: &str) -> Result<(), String> {
    let present = match v {
        Value::Array(a) => a.iter().any(|x| x.as_str() == Some(field)),
        Value::String(s) => s.contains(field),
        _ => true,
    };
    if present {
        Err(format!("cannot look up {field:?} in {}", type_name(v)))
    } else {
        Ok(())
    }
}

/// `obj[int(index)]`, where upstream turns every failure into `None`.
fn index_into(v: &Value, index: usize) -> Option<Value> {
    match v {
        Value::Array(a) => a.get(index).cloned(),
        Value::String(s) => s.chars().nth(index).map(|c| Value::String(c.to_string())),
        _ => None,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "None",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Evaluates one `match:` entry (`key: expected`, not `has-key`) against an event.
pub fn match_key(key: &str, expected: &Yaml, event: &Value) -> Result<bool, String> {
    let found = find_value(key, event)?;
    let val = found.as_deref();
    compare_found(key, val, expected)
}

/// Applies the comparison a key's suffix asks for to an already looked-up value.
pub fn compare_found(key: &str, val: Option<&Value>, expected: &Yaml) -> Result<bool, String> {
    let val = val.filter(|v| !v.is_null());
    if key.ends_with("__find") || key.ends_with("__startswith") || key.ends_with("__endswith") {
        let op = key.rsplit("__").next().unwrap_or_default();
        let (Some(Value::String(s)), Yaml::Str(e)) = (val, expected) else {
            return Err(format!("{key}: needs a string field and a string value, got {}", show(val)));
        };
        return Ok(match op {
            "find" => s.contains(e.as_str()),
            "startswith" => s.starts_with(e.as_str()),
            _ => s.ends_with(e.as_str()),
        });
    }
    if key.ends_with("__contains") {
        return py_contains(key, val, expected);
    }
    for (suffix, wanted) in [
        ("__gte", &[Ordering::Greater, Ordering::Equal][..]),
        ("__gt", &[Ordering::Greater][..]),
        ("__lte", &[Ordering::Less, Ordering::Equal][..]),
        ("__lt", &[Ordering::Less][..]),
    ] {
        if key.ends_with(suffix) {
            return match py_order(val, expected) {
                Some(ord) => Ok(wanted.contains(&ord)),
                None => Err(format!("{key}: cannot compare {} with {expected}", show(val))),
            };
        }
    }
    Ok(py_eq(val, expected))
}

/// `expected in val`.
fn py_contains(key: &str, val: Option<&Value>, expected: &Yaml) -> Result<bool, String> {
    match (val, expected) {
        (Some(Value::String(s)), Yaml::Str(e)) => Ok(s.contains(e.as_str())),
        (Some(Value::Array(items)), _) => Ok(items.iter().any(|x| py_eq(Some(x), expected))),
        (Some(Value::Object(map)), Yaml::Str(e)) => Ok(map.contains_key(e)),
        // Hashable non-strings are never keys of a JSON object.
        (Some(Value::Object(_)), Yaml::Null | Yaml::Bool(_) | Yaml::Int(_) | Yaml::Float(_)) => Ok(false),
        _ => Err(format!("{key}: cannot test {expected} in {}", show(val))),
    }
}

fn show(val: Option<&Value>) -> String {
    match val {
        None => "a missing field".to_string(),
        Some(v) => crate::clip(&v.to_string(), 60),
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn json_num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(*b as i128)),
        Value::Number(n) => Some(if let Some(i) = n.as_i64() {
            Num::Int(i.into())
        } else if let Some(u) = n.as_u64() {
            Num::Int(u.into())
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }),
        _ => None,
    }
}

fn yaml_num(y: &Yaml) -> Option<Num> {
    match y {
        Yaml::Bool(b) => Some(Num::Int(*b as i128)),
        Yaml::Int(i) => Some(Num::Int(*i)),
        Yaml::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

fn num_cmp(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Int(x), Num::Float(y)) => (x as f64).partial_cmp(&y),
        (Num::Float(x), Num::Int(y)) => x.partial_cmp(&(y as f64)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
    }
}

/// Python `<`/`>` between a found value and a YAML value: numbers with numbers,
/// strings with strings (by code point), anything else raises.
fn py_order(val: Option<&Value>, expected: &Yaml) -> Option<Ordering> {
    let val = val?;
    if let (Some(a), Some(b)) = (json_num(val), yaml_num(expected)) {
        return num_cmp(a, b);
    }
    match (val, expected) {
        (Value::String(a), Yaml::Str(b)) => Some(a.as_str().cmp(b.as_str())),
        _ => None,
    }
}

/// Python `==` between a looked-up JSON value (`None` = missing) and a YAML value.
pub fn py_eq(val: Option<&Value>, expected: &Yaml) -> bool {
    let Some(val) = val.filter(|v| !v.is_null()) else {
        return matches!(expected, Yaml::Null);
    };
    if let (Some(a), Some(b)) = (json_num(val), yaml_num(expected)) {
        return num_cmp(a, b) == Some(Ordering::Equal);
    }
    match (val, expected) {
        (Value::String(a), Yaml::Str(b)) => a == b,
        (Value::Array(a), Yaml::Seq(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| py_eq(Some(x), y)),
        (Value::Object(a), Yaml::Map(b)) => {
            a.len() == b.len()
                && b.iter().all(|(k, y)| match k {
                    Yaml::Str(k) => a.get(k).is_some_and(|x| py_eq(Some(x), y)),
                    _ => false,
                })
        }
        _ => false,
    }
}

/// Python `count == expected` for a filter's `count:` (and uids, exit codes).
pub fn count_matches(count: usize, expected: &Yaml) -> bool {
    int_matches(count as i128, expected)
}

/// Python `n == expected` for an integer the runner measured.
pub fn int_matches(n: i128, expected: &Yaml) -> bool {
    match yaml_num(expected) {
        Some(e) => num_cmp(Num::Int(n), e) == Some(Ordering::Equal),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn y(text: &str) -> Yaml {
        Yaml::parse(text).unwrap()
    }

    fn m(key: &str, expected: &str, event: &Value) -> Result<bool, String> {
        match_key(key, &y(expected), event)
    }

    #[test]
    fn dotted_paths_and_indexes() {
        let e = json!({"alert": {"signature_id": 1, "metadata": {"tag": ["a", "b"]}},
                       "smtp": {"rcpt_to": ["x@y"]}, "s": "abc"});
        assert_eq!(m("alert.signature_id", "1", &e), Ok(true));
        assert_eq!(m("alert.signature_id", "2", &e), Ok(false));
        assert_eq!(m("alert.metadata.tag[1]", "b", &e), Ok(true));
        assert_eq!(m("smtp.rcpt_to[0]", "x@y", &e), Ok(true));
        // Out of range, or indexing a non-list, finds nothing (None).
        assert_eq!(m("smtp.rcpt_to[5]", "null", &e), Ok(true));
        assert_eq!(m("alert[0]", "null", &e), Ok(true));
        // Strings index by character.
        assert_eq!(m("s[1]", "b", &e), Ok(true));
        assert_eq!(m("missing.deeper", "null", &e), Ok(true));
    }

    #[test]
    fn equality_is_strict_on_json_type_but_numeric_like_python() {
        let e = json!({"port": 53, "s": "53", "f": 1.0, "b": true, "n": null});
        assert_eq!(m("port", "53", &e), Ok(true));
        assert_eq!(m("port", "\"53\"", &e), Ok(false));
        assert_eq!(m("s", "53", &e), Ok(false));
        assert_eq!(m("s", "\"53\"", &e), Ok(true));
        assert_eq!(m("f", "1", &e), Ok(true));
        assert_eq!(m("port", "53.0", &e), Ok(true));
        assert_eq!(m("b", "true", &e), Ok(true));
        // Python: True == 1.
        assert_eq!(m("b", "1", &e), Ok(true));
        assert_eq!(m("b", "\"true\"", &e), Ok(false));
        // null and missing are both None.
        assert_eq!(m("n", "null", &e), Ok(true));
        assert_eq!(m("nope", "null", &e), Ok(true));
        assert_eq!(m("port", "null", &e), Ok(false));
    }

    #[test]
    fn lists_and_objects_compare_whole() {
        let e = json!({"l": [1, "a"], "o": {"k": 1, "j": "x"}});
        assert_eq!(m("l", "[1, a]", &e), Ok(true));
        assert_eq!(m("l", "[1]", &e), Ok(false));
        assert_eq!(m("o", "{j: x, k: 1}", &e), Ok(true));
        assert_eq!(m("o", "{k: 1}", &e), Ok(false));
    }

    #[test]
    fn len_suffix() {
        let e = json!({"a": [1, 2, 3], "s": "héllo", "o": {"x": 1}, "n": 5, "z": null});
        assert_eq!(m("a.__len", "3", &e), Ok(true));
        assert_eq!(m("s.__len", "5", &e), Ok(true));
        assert_eq!(m("o.__len", "1", &e), Ok(true));
        // len() of a number or null raises; upstream maps that to -1.
        assert_eq!(m("n.__len", "-1", &e), Ok(true));
        assert_eq!(m("z.__len", "-1", &e), Ok(true));
        // A missing path returns None before __len is reached.
        assert_eq!(m("missing.__len", "-1", &e), Ok(false));
        assert_eq!(m("missing.__len", "null", &e), Ok(true));
    }

    #[test]
    fn string_suffixes() {
        let e = json!({"msg": "Lua script failed: io", "l": ["a"], "n": 3});
        assert_eq!(m("msg.__find", "script", &e), Ok(true));
        assert_eq!(m("msg.__find", "nope", &e), Ok(false));
        assert_eq!(m("msg.__startswith", "Lua", &e), Ok(true));
        assert_eq!(m("msg.__startswith", "script", &e), Ok(false));
        assert_eq!(m("msg.__endswith", "io", &e), Ok(true));
        // Python raises on None.find / list.startswith / str.find(int): the check fails.
        assert!(m("missing.__find", "x", &e).is_err());
        assert!(m("l.__startswith", "a", &e).is_err());
        assert!(m("msg.__find", "3", &e).is_err());
        assert!(m("n.__endswith", "3", &e).is_err());
    }

    #[test]
    fn contains_suffix() {
        let e = json!({"s": "abcdef", "l": [1, "x", {"k": 2}], "o": {"key": 1}, "n": 4});
        assert_eq!(m("s.__contains", "cde", &e), Ok(true));
        assert_eq!(m("s.__contains", "xyz", &e), Ok(false));
        assert_eq!(m("l.__contains", "x", &e), Ok(true));
        assert_eq!(m("l.__contains", "1", &e), Ok(true));
        assert_eq!(m("l.__contains", "\"1\"", &e), Ok(false));
        assert_eq!(m("l.__contains", "{k: 2}", &e), Ok(true));
        assert_eq!(m("o.__contains", "key", &e), Ok(true));
        assert_eq!(m("o.__contains", "1", &e), Ok(false));
        assert!(m("s.__contains", "1", &e).is_err());
        assert!(m("n.__contains", "4", &e).is_err());
        assert!(m("missing.__contains", "x", &e).is_err());
    }

    #[test]
    fn ordering_suffixes() {
        let e = json!({"n": 10, "f": 2.5, "s": "b"});
        assert_eq!(m("n.__gt", "9", &e), Ok(true));
        assert_eq!(m("n.__gt", "10", &e), Ok(false));
        assert_eq!(m("n.__gte", "10", &e), Ok(true));
        assert_eq!(m("n.__lt", "10.5", &e), Ok(true));
        assert_eq!(m("n.__lte", "9", &e), Ok(false));
        assert_eq!(m("f.__lte", "2.5", &e), Ok(true));
        assert_eq!(m("s.__gt", "a", &e), Ok(true));
        assert!(m("s.__gt", "1", &e).is_err());
        assert!(m("missing.__gt", "1", &e).is_err());
    }

    #[test]
    fn walking_into_scalars_raises_like_python() {
        let e = json!({"n": 5, "z": null, "s": "abc", "l": ["x"]});
        assert!(m("n.x", "1", &e).is_err());
        assert!(m("z.x", "1", &e).is_err());
        // `"q" in "abc"` is False, so upstream returns None without indexing.
        assert_eq!(m("s.q", "null", &e), Ok(true));
        assert!(m("s.b", "null", &e).is_err());
        assert_eq!(m("l.y", "null", &e), Ok(true));
        assert!(m("l.x", "null", &e).is_err());
    }

    #[test]
    fn count_comparison() {
        assert!(count_matches(3, &y("3")));
        assert!(count_matches(3, &y("3.0")));
        assert!(!count_matches(3, &y("\"3\"")));
        assert!(count_matches(0, &y("0")));
        assert!(!count_matches(0, &y("null")));
    }
}
