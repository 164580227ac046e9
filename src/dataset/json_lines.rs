//! The JSON lines of a claims or triples file, read the one way both loaders need: each object
//! line is handed on with its number; what cannot be read (the file, a line that is not UTF-8,
//! one over the length limit, one that is not JSON) becomes a problem naming the file and line,
//! and the rest still loads. Python's json writes a bare `NaN` or `Infinity` (AutoHall's
//! PUBHEALTH file holds 243 of them): those read as null, noted once per file.

use serde_json::Value;

use super::{Line, LineReader, MAX_LINE_BYTES, Problem, Source};

/// Hands every JSON line of `rel` to `each` (line number, value, the problems to add to).
pub(crate) fn each_line(
    source: &Source,
    rel: &str,
    problems: &mut Vec<Problem>,
    mut each: impl FnMut(usize, Value, &mut Vec<Problem>),
) {
    let shown = source.display(rel);
    let reader = match source.open(rel) {
        Ok(r) => r,
        Err(e) => {
            problems.push(Problem::error(&shown, 0, "-", format!("cannot read: {e}")));
            return;
        }
    };
    let mut nan_lines: Vec<usize> = Vec::new();
    let mut lines = LineReader::new(reader, MAX_LINE_BYTES);
    loop {
        let (n, line) = match lines.next_line() {
            Ok(Some(x)) => x,
            Ok(None) => break,
            Err(e) => {
                problems.push(Problem::error(&shown, 0, "-", format!("read error: {e}")));
                break;
            }
        };
        let text = match line {
            Line::Text(t) => match std::str::from_utf8(t) {
                Ok(t) => t,
                Err(_) => {
                    problems.push(Problem::error(&shown, n, "-", "invalid UTF-8; skipped"));
                    continue;
                }
            },
            Line::TooLong(len) => {
                problems.push(Problem::error(
                    &shown,
                    n,
                    "-",
                    format!("line of {len} bytes is longer than the limit; skipped"),
                ));
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        match super::python_json::parse(text) {
            Ok((v, nan)) => {
                if nan {
                    nan_lines.push(n);
                }
                each(n, v, problems);
            }
            Err(e) => problems.push(Problem::error(&shown, n, "-", format!("invalid JSON: {e}"))),
        }
    }
    if let Some(&first) = nan_lines.first() {
        problems.push(Problem::warning(
            &shown,
            first,
            "-",
            format!(
                "{} line(s) hold a bare NaN or Infinity (as Python's json writes them), read as null: lines {}",
                nan_lines.len(),
                crate::text::number_list(&nan_lines, 8)
            ),
        ));
    }
}

/// A file's name without its directory and `.jsonl`/`.json`: the default topic or relation, and
/// the stem of ids made for lines without one.
pub(crate) fn stem(rel: &str) -> String {
    rel.rsplit('/')
        .next()
        .unwrap_or(rel)
        .trim_end_matches(".jsonl")
        .trim_end_matches(".json")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_are_problems_with_their_line_and_the_rest_loads() {
        let dir = tempfile::tempdir().unwrap();
        let mut body = b"{\"a\": 1}\n\n{\"a\": NaN}\nnot json\n".to_vec();
        body.extend_from_slice(b"{\"a\": \"\xff\"}\n{\"a\": Infinity}\n");
        std::fs::write(dir.path().join("t.jsonl"), body).unwrap();
        let source = Source::Dir(dir.path().to_path_buf());
        let mut problems = Vec::new();
        let mut seen = Vec::new();
        each_line(&source, "t.jsonl", &mut problems, |n, v, _| {
            seen.push((n, v["a"].clone()))
        });
        assert_eq!(
            seen,
            vec![
                (1, serde_json::json!(1)),
                (3, Value::Null),
                (6, Value::Null)
            ]
        );
        let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(
            text[0].contains(":4") && text[0].contains("invalid JSON"),
            "{text:?}"
        );
        assert!(
            text[1].contains(":5") && text[1].contains("invalid UTF-8"),
            "{text:?}"
        );
        assert!(
            text[2].contains("2 line(s) hold a bare NaN or Infinity"),
            "{text:?}"
        );
        assert!(text[2].contains("lines 3, 6"), "{text:?}");
        assert_eq!(stem("a/b/fever.jsonl"), "fever");
        assert_eq!(stem("pubhealth.json"), "pubhealth");
    }
}
