//! The one-pass chunk reader (`chunk_scan`) checked against serde's parse (`wire`): what the
//! scanner reads, serde must read the same. Its own module so that neither of the two depends
//! on the other's checks.

/// Whether the scanner reads `data`; panics when it does and serde (the product's own types
/// and parse) reads it otherwise. For the tests and the `openai_chunk` fuzz target.
pub(crate) fn agrees_with_serde(data: &str) -> bool {
    let fast = super::chunk_scan::openai(data);
    if let Some(f) = &fast {
        let slow = super::wire::serde_scanned(data);
        assert_eq!(
            Some(f),
            slow.as_ref(),
            "scanner and serde differ on {data:?}"
        );
    }
    fast.is_some()
}

#[cfg(test)]
mod tests {
    use super::super::chunk_scan::openai;
    use super::*;

    fn agree(data: &str) -> bool {
        agrees_with_serde(data)
    }

    const CANON: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"logprobs":null,"finish_reason":null}]}"#;

    #[test]
    fn the_common_shapes_are_read_as_serde_reads_them() {
        for data in [
            CANON,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":null},"finish_reason":"length"}]}"#,
            r#" { "choices" : [ { "delta" : { "content" : "a\nb\t\"q\" \\ \/ \u00e9\u4e2d" } } ] } "#,
            r#"{"choices":[{"delta":{"content":"caf\u00e9 ✓ 中文"},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":null}"#,
            r#"{"choices":[{"delta":null}]}"#,
            r#"{"x":-0.5,"y":true,"z":false,"choices":[{"index":0,"delta":{"content":""}}]}"#,
            r#"{}"#,
        ] {
            assert!(agree(data), "not read by the scanner: {data}");
        }
        assert_eq!(openai(CANON).unwrap().content.as_deref(), Some("Hello"));
    }

    #[test]
    fn every_other_shape_is_left_to_serde() {
        for data in [
            // Valid, but not the common shape.
            r#"{"choices":[{"index":12,"delta":{"content":"another alternative"}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"},"logprobs":{"content":[]}}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#,
            r#"{"error":{"message":"overloaded"}}"#,
            r#"{"choices":[{"text":"legacy","finish_reason":null}]}"#,
            r#"{"meta":{"a":1},"choices":[{"delta":{"content":"a"}}]}"#,
            r#"{"cho\u0069ces":[{"delta":{"content":"a"}}]}"#,
            r#"{"created":1e3,"choices":[{"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}"#,
            r#"{"choices":[{"delta":{"content":"a","tool_calls":[{"id":"t"}]}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"st\u006fp"}]}"#,
            // Duplicate fields: serde refuses them.
            r#"{"choices":[{"delta":{"content":"a"}}],"choices":null}"#,
            r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
            // Not JSON.
            r#"{"choices":[{"delta":{"content":"a"}}]"#,
            r#"{"choices":[{"delta":{"content":"a"}}]}x"#,
            r#"{"choices":[{"delta":{"content":"a"}},]}"#,
            r#"{"id":01,"choices":[]}"#,
            r#"{"id":-,"choices":[]}"#,
            r#"{"id":1.,"choices":[]}"#,
            r#"{"id":"a	b","choices":[]}"#,
            r#"{"id":"\x","choices":[]}"#,
            r#"{"id":"\u12","choices":[]}"#,
            r#"{"id":nul,"choices":[]}"#,
            r#"{"id":NaN,"choices":[]}"#,
            r#"{"id":1,}"#,
            "",
            "[DONE]",
        ] {
            assert!(!agree(data), "read by the scanner: {data}");
        }
    }

    /// Every prefix and every single-byte change of the common chunk: whatever the scanner
    /// reads, serde reads the same.
    #[test]
    fn a_damaged_chunk_is_read_as_serde_reads_it_or_not_at_all() {
        let bytes = CANON.as_bytes();
        for n in 0..bytes.len() {
            let _ = agree(&CANON[..n]);
        }
        let mut read = 0;
        for i in 0..bytes.len() {
            for c in [
                b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b' ', b'0', b'n', b'x',
            ] {
                let mut b = bytes.to_vec();
                b[i] = c;
                if let Ok(s) = std::str::from_utf8(&b) {
                    read += usize::from(agree(s));
                }
            }
        }
        assert!(read > 0);
    }
}
