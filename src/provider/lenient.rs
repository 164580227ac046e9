//! Numbers a server writes that JSON does not have. Python's `json` writes `NaN`, `Infinity`
//! and `-Infinity` for the floats it cannot otherwise say, and a log-probability of `-1e400`
//! does not fit an f64; serde_json rightly refuses each, and so the whole event, answer text
//! included, would be lost for one unreadable token probability. [`numbers_to_null`] writes
//! such numbers as `null` (outside strings only), so the event reads and the value is seen as
//! missing where it was.

use std::borrow::Cow;

/// `data` with every non-JSON or out-of-range number outside strings written as `null`;
/// borrowed when there is none.
pub(crate) fn numbers_to_null(data: &str) -> Cow<'_, str> {
    let b = data.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        if c == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let start = i;
        let end = if c == b'-' || c.is_ascii_digit() || c == b'N' || c == b'I' {
            let mut j = i + 1;
            while j < b.len()
                && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'.' | b'+' | b'-'))
            {
                j += 1;
            }
            j
        } else {
            i += 1;
            continue;
        };
        let word = &data[start..end];
        let readable = match word {
            "NaN" | "Infinity" | "-Infinity" | "-NaN" => false,
            w if w.starts_with('N') || w.starts_with('I') => true, // not a number: left to serde
            w => w.parse::<f64>().map_or(true, f64::is_finite),
        };
        if !readable {
            let o = out.get_or_insert_with(|| String::with_capacity(data.len()));
            o.push_str(&data[copied..start]);
            o.push_str("null");
            copied = end;
        }
        i = end;
    }
    match out {
        None => Cow::Borrowed(data),
        Some(mut o) => {
            o.push_str(&data[copied..]);
            Cow::Owned(o)
        }
    }
}

/// Parses `data` as `T`; when it does not read, once more with [`numbers_to_null`] (the first
/// error is the one returned when that does not help either).
pub(crate) fn parse<'a, T: serde::Deserialize<'a>>(
    data: &'a str,
    fixed: &'a mut Option<String>,
) -> Result<T, serde_json::Error> {
    match serde_json::from_str(data) {
        Ok(v) => Ok(v),
        Err(e) => match numbers_to_null(data) {
            Cow::Borrowed(_) => Err(e),
            Cow::Owned(s) => {
                let s: &'a str = fixed.insert(s);
                serde_json::from_str(s).map_err(|_| e)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_numbers_json_cannot_hold_become_null() {
        assert_eq!(
            numbers_to_null(r#"{"a":-Infinity,"b":NaN,"c":Infinity,"d":-1e400,"e":1e999}"#),
            r#"{"a":null,"b":null,"c":null,"d":null,"e":null}"#
        );
        // Inside strings nothing changes; ordinary numbers stay.
        let ok = r#"{"t":"NaN -Infinity 1e400","n":-0.5,"m":[1,2e3,-3.25e-7]}"#;
        assert!(matches!(numbers_to_null(ok), Cow::Borrowed(_)));
        assert_eq!(
            numbers_to_null(r#"{"t":"say \"NaN\"","x":NaN}"#),
            r#"{"t":"say \"NaN\"","x":null}"#
        );
    }

    #[test]
    fn an_event_with_a_python_float_reads() {
        let data = r#"{"logprob":-Infinity,"token":"ok"}"#;
        let mut fixed = None;
        let v: serde_json::Value = parse(data, &mut fixed).unwrap();
        assert_eq!(v["token"], "ok");
        assert!(v["logprob"].is_null());
        let mut fixed = None;
        assert!(parse::<serde_json::Value>("{not json", &mut fixed).is_err());
    }
}
