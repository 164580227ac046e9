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
pub enum Format {
    Json,
    Xml,
    Csv,
    Yaml,
    General,
    Markdown,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
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

pub fn data_format(response: &str, format: &str) -> Verdict {
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

fn yaml_check(response: &str) -> Verdict {
    use yaml_rust2::{Yaml, YamlLoader};
    match YamlLoader::load_from_str(response) {
        Ok(docs) => match docs.first() {
            Some(Yaml::Hash(_)) => Verdict::pass("YAML mapping"),
            Some(Yaml::Array(_)) => Verdict::pass("YAML list"),
            Some(_) => Verdict::fail("YAML is a scalar, not a mapping or list"),
            None => Verdict::fail("empty YAML"),
        },
        Err(e) => Verdict::fail(format!("invalid YAML: {e}")),
    }
}

fn markdown_check(response: &str) -> Verdict {
    static HEADING: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\s{0,3}#{1,6}\s+\S").unwrap());
    static BULLET: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\s*(?:[-*+]|\d+[.)])\s+\S").unwrap());
    static HIGHLIGHT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\*\*[^*\n]+\*\*|__[^_\n]+__|\*[^*\n]+\*").unwrap());
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
