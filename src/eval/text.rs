//! Text normalisation shared by the rule evaluators, exactly as PRISM-FORMAT.md defines it.

/// "normal": whitespace collapsed, trimmed, lower-cased.
pub fn normal(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// "loose": normal, then the characters `. , ; : ! ? ' " ( ) [ ] { }` removed, whitespace
/// collapsed again.
pub fn loose(s: &str) -> String {
    let stripped: String = normal(s)
        .chars()
        .filter(|c| !".,;:!?'\"()[]{}".contains(*c))
        .collect();
    stripped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The runs of ASCII digits in `s`, in order.
pub fn digit_runs(s: &str) -> Vec<&str> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|r| !r.is_empty())
        .collect()
}

/// A failed response scores 0: missing, empty or only whitespace, or an API error written as
/// `ERROR: ...` by the official scripts.
pub fn is_failed(response: Option<&str>) -> bool {
    match response {
        None => true,
        Some(r) => r.trim().is_empty() || r.starts_with("ERROR:"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_and_loose_forms() {
        assert_eq!(normal("  Lisbon,\n  PORTUGAL "), "lisbon, portugal");
        assert_eq!(loose("  \"Lisbon\", (Portugal)! "), "lisbon portugal");
        assert_eq!(loose("a . b"), "a b");
        assert_eq!(
            digit_runs("19,213 people in 2011"),
            vec!["19", "213", "2011"]
        );
        assert!(is_failed(Some("ERROR: HTTP 500")));
        assert!(is_failed(Some(" \n")));
        assert!(is_failed(None));
        assert!(!is_failed(Some("x")));
    }
}
