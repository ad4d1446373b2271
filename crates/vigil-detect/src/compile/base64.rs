//! The options of `base64_decode` (`bytes N`, `offset N`, `relative`, in
//! any order, comma separated) into the step that decodes; the payload
//! compiler then puts the keywords after `base64_data` inside it.

use crate::inspect::Base64Step;
use vigil_rules::Value;

pub(super) fn base64_decode(value: &Value) -> Result<Base64Step, String> {
    let text = match value {
        Value::None => "",
        Value::Text(t) => t.as_str(),
        _ => return Err("expects bytes, offset and relative options".into()),
    };
    let (mut bytes, mut offset, mut relative) = (None, None, false);
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, arg) = part.split_once(char::is_whitespace).map_or((part, ""), |(n, a)| (n, a.trim()));
        let number = || arg.parse::<u32>().map_err(|_| format!("{name} expects a number, not '{arg}'"));
        match name {
            // Suricata reads `bytes` as 16 bits.
            "bytes" if bytes.is_none() => {
                bytes = Some(arg.parse::<u16>().map_err(|_| format!("bytes expects 0 to 65535, not '{arg}'"))?.into())
            }
            "offset" if offset.is_none() => offset = Some(number()?),
            "relative" if arg.is_empty() && !relative => relative = true,
            "bytes" | "offset" | "relative" => return Err(format!("'{part}' given twice or with a value")),
            _ => return Err(format!("unknown option '{part}'")),
        }
    }
    Ok(Base64Step::new(bytes, offset.unwrap_or(0), relative))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::MAX_ENCODED;

    fn parse(t: &str) -> Result<(u32, u32, bool), String> {
        let v = if t.is_empty() { Value::None } else { Value::Text(t.into()) };
        base64_decode(&v).map(|s| (s.bytes, s.offset, s.relative))
    }

    #[test]
    fn options() {
        assert_eq!(parse("bytes 17, offset 1, relative"), Ok((17, 1, true)));
        assert_eq!(parse("bytes 2,relative"), Ok((2, 0, true)));
        assert_eq!(parse("relative"), Ok((MAX_ENCODED, 0, true)));
        assert_eq!(parse("offset 0,relative"), Ok((MAX_ENCODED, 0, true)));
        assert_eq!(parse(""), Ok((MAX_ENCODED, 0, false)));
        // `bytes 0` reads the rest of the buffer, like no `bytes`.
        assert_eq!(parse("bytes 0"), Ok((MAX_ENCODED, 0, false)));
        for bad in ["bytes", "bytes x", "bytes 65536", "offset -1", "relative 1", "bytes 1, bytes 2", "depth 3"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
