//! The `data_format` evaluator: does the response parse as the format the item asks for?
//! Rules per PRISM-FORMAT.md: JSON parses; XML parses; CSV has at least 2 non-empty rows, at least
//! 2 columns and every row the same width; YAML or General parses to a mapping or a list;
//! Markdown has a heading, a bullet line or a highlight. The response is taken as it is (no code
//! fence is stripped: the rule does not strip one, and our numbers must equal PRISM's).

use std::sync::LazyLock;

use regex::Regex;

use super::rules::Verdict;

/// The formats PRISM's Data_Schema items name, matched without regard to case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Xml,
    Csv,
    Yaml,
    General,
    Markdown,
}

impl Format {
    pub(crate) fn parse(s: &str) -> Option<Format> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "json" => Format::Json,
            "xml" => Format::Xml,
            "csv" => Format::Csv,
            "yaml" | "yml" => Format::Yaml,
            "general" => Format::General,
            "markdown" | "md" => Format::Markdown,
            _ => return None,
        })
    }
}

pub(crate) fn data_format(response: &str, format: &str) -> Verdict {
    let Some(f) = Format::parse(format) else {
        return Verdict::fail(format!("unknown format {format:?}"));
    };
    match f {
        Format::Json => match serde_json::from_str::<serde_json::Value>(response.trim()) {
            Ok(_) => Verdict::pass("valid JSON"),
            Err(e) => Verdict::fail(format!("invalid JSON: {e}")),
        },
        Format::Xml => match roxmltree::Document::parse(response.trim()) {
            Ok(_) => Verdict::pass("valid XML"),
            Err(e) => Verdict::fail(format!("invalid XML: {e}")),
        },
        Format::Csv => csv_check(response),
        Format::Yaml | Format::General => yaml_check(response),
        Format::Markdown => markdown_check(response),
    }
}

fn csv_check(response: &str) -> Verdict {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(response.trim().as_bytes());
    let mut widths = Vec::new();
    for rec in reader.records() {
        match rec {
            Ok(r) if r.iter().all(|f| f.trim().is_empty()) => {}
            Ok(r) => widths.push(r.len()),
            Err(e) => return Verdict::fail(format!("invalid CSV: {e}")),
        }
    }
    if widths.len() < 2 {
        return Verdict::fail(format!("{} non-empty rows, need 2", widths.len()));
    }
    if widths[0] < 2 {
        return Verdict::fail("one column, need 2");
    }
    if let Some((i, w)) = widths.iter().enumerate().find(|(_, w)| **w != widths[0]) {
        return Verdict::fail(format!(
            "row {} has {w} columns, row 1 has {}",
            i + 1,
            widths[0]
        ));
    }
    Verdict::pass(format!("{} rows x {} columns", widths.len(), widths[0]))
}

/// Whether the first YAML document is a mapping or a list, read as a stream of parser events:
/// aliases are never expanded (a few hundred bytes of nested aliases, the "billion laughs",
/// would otherwise build gigabytes), nothing recurses (a response of 300,000 `[` cannot
/// overflow the stack), and memory stays within a small multiple of the response.
fn yaml_check(response: &str) -> Verdict {
    use yaml_rust2::parser::{Event, Parser};
    /// Deeper than any document a model would mean; a bound on the parser's own state.
    const MAX_DEPTH: usize = 10_000;
    let mut parser = Parser::new_from_str(response);
    let mut kind: Option<Verdict> = None;
    let mut depth = 0usize;
    loop {
        let ev = match parser.next_token() {
            Ok((ev, _)) => ev,
            Err(e) => return Verdict::fail(format!("invalid YAML: {e}")),
        };
        match ev {
            Event::StreamEnd => break,
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if kind.is_none() {
                    kind = Some(if matches!(ev, Event::MappingStart(..)) {
                        Verdict::pass("YAML mapping")
                    } else {
                        Verdict::pass("YAML list")
                    });
                }
                depth += 1;
                if depth > MAX_DEPTH {
                    return Verdict::fail(format!("YAML nested deeper than {MAX_DEPTH} levels"));
                }
            }
            Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
            Event::Scalar(..) | Event::Alias(_) if kind.is_none() => {
                kind = Some(Verdict::fail("YAML is a scalar, not a mapping or list"));
            }
            // The first document decides; the rest of the stream must still parse.
            _ => {}
        }
    }
    kind.unwrap_or_else(|| Verdict::fail("empty YAML"))
}

fn markdown_check(response: &str) -> Verdict {
    static HEADING: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\s{0,3}#{1,6}\s+\S").expect("a fixed pattern"));
    static BULLET: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\s*(?:[-*+]|\d+[.)])\s+\S").expect("a fixed pattern"));
    static HIGHLIGHT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\*\*[^*\n]+\*\*|__[^_\n]+__|\*[^*\n]+\*").expect("a fixed pattern")
    });
    if HEADING.is_match(response) {
        Verdict::pass("has a heading")
    } else if BULLET.is_match(response) {
        Verdict::pass("has a bullet line")
    } else if HIGHLIGHT.is_match(response) {
        Verdict::pass("has a highlight")
    } else {
        Verdict::fail("no heading, bullet or highlight")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(r: &str, f: &str) -> bool {
        data_format(r, f).score == 1.0
    }

    #[test]
    fn json_and_xml_must_parse() {
        assert!(ok(r#" {"a": [1, 2]} "#, "JSON"));
        assert!(!ok(r#"{"a": [1, 2}"#, "json"));
        assert!(
            !ok("```json\n{\"a\": 1}\n```", "JSON"),
            "fences are not stripped"
        );
        assert!(ok("<r><a x=\"1\">t</a></r>", "XML"));
        assert!(!ok("<r><a></r>", "XML"));
        assert!(data_format("<r>", "XML").detail.starts_with("invalid XML"));
    }

    #[test]
    fn csv_needs_two_rows_two_columns_same_width() {
        assert!(ok("id,name\n1,Ann\n2,Bo\n", "CSV"));
        assert!(
            ok("id,name\n\n1,\"Ann, Jr\"\n", "csv"),
            "quoted comma, blank line"
        );
        assert!(!ok("id,name\n", "CSV"));
        assert!(!ok("id\n1\n2", "CSV"));
        assert!(!ok("a,b\n1,2,3", "CSV"));
        assert_eq!(
            data_format("a,b\n1,2,3", "CSV").detail,
            "row 2 has 3 columns, row 1 has 2"
        );
    }

    #[test]
    fn yaml_and_general_need_a_mapping_or_list() {
        assert!(ok("patient:\n  name: Ann\n  age: 40\n", "YAML"));
        assert!(ok("- a\n- b\n", "General"));
        assert!(!ok("just a sentence", "YAML"));
        assert!(!ok("a: [1, 2\n", "YAML"));
        assert!(!ok("", "YAML"));
        assert!(!ok("a: *nowhere\n", "YAML"), "an alias to no anchor");
        assert!(ok("base: &b {x: 1}\nother: *b\n", "YAML"));
    }

    /// The "billion laughs": a few hundred bytes whose aliases expand to 10^9 strings (expanded,
    /// it aborts the process at several GB). Read as events, it is a mapping like any other.
    #[test]
    fn nested_aliases_are_never_expanded() {
        let mut doc = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
            .iter()
            .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
        {
            let refs = vec![format!("*{prev}"); 9].join(",");
            doc.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        assert!(doc.len() < 500, "{}", doc.len());
        let v = data_format(&doc, "YAML");
        assert_eq!(v.detail, "YAML mapping");
        assert_eq!(data_format(&doc, "General").score, 1.0);
    }

    #[test]
    fn deep_nesting_cannot_overflow_the_stack() {
        let deep = "[".repeat(300_000);
        assert_eq!(data_format(&deep, "YAML").score, 0.0);
        let balanced = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        assert_eq!(data_format(&balanced, "General").score, 0.0);
        let json = format!("{}{}", "[".repeat(300_000), "]".repeat(300_000));
        assert_eq!(data_format(&json, "JSON").score, 0.0);
        let xml = "<a>".repeat(100_000);
        assert_eq!(data_format(&xml, "XML").score, 0.0);
    }

    #[test]
    fn markdown_needs_structure() {
        assert!(ok("# Report\ntext", "Markdown"));
        assert!(ok("intro\n- item", "Markdown"));
        assert!(ok("a **bold** word", "Markdown"));
        assert!(!ok("plain prose only.", "Markdown"));
        assert!(!ok("x", "Protobuf"));
    }
}
