//! JSON as Python's `json` module writes it: strict JSON plus the bare constants `NaN`,
//! `Infinity` and `-Infinity`, which it writes for float fields by default (AutoHall's
//! `pubhealth.json` holds `"date_published": NaN` on 243 of its 1,009 lines). serde_json, like
//! the JSON standard, refuses them; here they are read as null, outside strings only.

use serde_json::Value;

/// `text` with every bare `NaN`, `Infinity` and `-Infinity` outside a string replaced by
/// `null`; `None` when there is none.
pub(crate) fn nan_as_null(text: &str) -> Option<String> {
    const WORDS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut in_string = false;
    // The last byte outside a string that is not white space: a constant stands where a value
    // can, after `:`, `,`, `[` or at the start.
    let mut last: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => {
                    in_string = false;
                    last = Some(b'"');
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let value_place = last.is_none_or(|c| matches!(c, b':' | b',' | b'['));
        if value_place && let Some(w) = WORDS.iter().find(|w| bytes[i..].starts_with(w.as_bytes()))
        {
            let end = i + w.len();
            let bounded = bytes
                .get(end)
                .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_');
            if bounded {
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[copied..i]);
                o.push_str("null");
                copied = end;
                i = end;
                last = Some(b'l');
                continue;
            }
        }
        if !b.is_ascii_whitespace() {
            last = Some(b);
        }
        i += 1;
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

/// Parses one JSON value, Python's constants read as null. The flag says whether any were.
/// On failure, the error is strict JSON's (it names the column of the real fault).
pub(crate) fn parse(text: &str) -> Result<(Value, bool), serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(v) => Ok((v, false)),
        Err(e) => match nan_as_null(text).map(|t| serde_json::from_str::<Value>(&t)) {
            Some(Ok(v)) => Ok((v, true)),
            _ => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_constants_become_null_and_strings_keep_them() {
        let line = r#"{"claim": "NaN is not a number, says \"Infinity\"", "date_published": NaN, "x": [Infinity, -Infinity], "label": "true"}"#;
        let (v, nan) = parse(line).unwrap();
        assert!(nan);
        assert_eq!(v["date_published"], Value::Null);
        assert_eq!(v["x"], serde_json::json!([null, null]));
        assert_eq!(v["claim"], r#"NaN is not a number, says "Infinity""#);
        let (_, nan) = parse(r#"{"a": 1}"#).unwrap();
        assert!(!nan);
    }

    #[test]
    fn words_that_only_start_like_a_constant_and_real_faults_stay_errors() {
        assert!(parse(r#"{"a": NaNa}"#).is_err());
        assert!(parse(r#"{"a": Nan}"#).is_err());
        assert!(parse(r#"{"a": NaN"#).is_err());
        assert_eq!(nan_as_null(r#"{"a": "NaN"}"#), None);
        assert_eq!(nan_as_null(r#"{"a\"NaN": 1}"#), None);
        assert_eq!(nan_as_null("[NaN]").as_deref(), Some("[null]"));
    }
}
