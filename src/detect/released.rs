//! AutoHall's released outputs (`dataset/<model>_data/<dataset>/dataset_<T>.jsonl` in the
//! authors' repository), read as they are so a stored run can be compared with the paper's.
//!
//! Three shapes exist, one per model (all 27 files checked). The GPT-3.5 files hold per line the
//! request and the response of one classification call, written as `[request},, "object": ... response]`: the response's
//! opening `{"id": "...", ` was lost when the two were spliced, and in most files the splice
//! also ate the end of the request (`"label": ", "object"`, `"labe, "object"`, `"label:
//! "chat.completion"`) or left `{"id": , "object"`. The Llama 2 files hold a JSON string
//! per line, escaped two to four times over, followed by `label: true`: Llama-2-7B's the system,
//! user and assistant turns each `json.dumps`ed and concatenated (the reply after `> Assistant:`),
//! Llama-2-13B's the user's request and the reply after `\n Response: `. In all, the request's
//! text is "... Claim: {claim} Reference: {reference}" and the reply is the model's true/false
//! answer.
//!
//! Each shape's replies were read by its own script, and [`paper_reading`] follows each: the
//! GPT-3.5 notebooks look for "true"/"True", then "false"/"False"; the Llama 2 part of
//! `code/dataset_construct.py` also for "TRUE" and "FALSE", and reads a 13B reply only up to the
//! next `Response: ` (the model sometimes went on with made-up claims of its own).
//!
//! The released `label` is not the claim's truth: it says whether the record is hallucinated
//! (the files are the papers' balanced sets, half `true`, half `false`; on GPT-3.5 Climate-FEVER
//! at T = 0.5, 169 and 169, and the 169 `true` are exactly the records whose reply disagrees
//! with Climate-FEVER's label). A line that cannot be read is named with its reason; the rest
//! load.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::dataset::Problem;
use crate::dataset::claims::Truth;

/// Which of the authors' file shapes a record came in: it says which script read its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// A GPT-3.5 request/response pair.
    Gpt35,
    /// A Llama 2 dialogue string, the reply after `> Assistant:` (Llama-2-7B's files).
    Assistant,
    /// A Llama 2 request string, the reply after `Response:` (Llama-2-13B's files).
    Response,
}

/// The markers a Llama 2 line's reply follows, in the order they are tried, with their shape.
const REPLY_MARKERS: [(&str, Shape); 2] = [
    ("> Assistant:", Shape::Assistant),
    ("Response:", Shape::Response),
];

/// What a file whose lines match no shape is told: every marker looked for.
pub const SHAPES_LOOKED_FOR: &str = "a GPT-3.5 request and response (the response's \"chat.completion\"), or a Llama 2 JSON string with the reply after \"> Assistant:\" (Llama-2-7B) or \"Response:\" (Llama-2-13B), then label: true|false";

/// One classification call of a released file.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub shape: Shape,
    /// 1-based line in the file.
    pub line: usize,
    pub claim: String,
    /// The model's reference (the text after "Reference:").
    pub reference: String,
    /// The model's classification reply.
    pub reply: String,
    pub temperature: Option<f64>,
    /// The model the response names (`gpt-3.5-turbo-0613`); none in the Llama files.
    pub model: Option<String>,
    /// The released `label`: whether the authors counted the record as hallucinated; none where
    /// the splice ate it.
    pub hallucinated: Option<bool>,
}

/// A released file read: its records and every line that could not be read.
#[derive(Debug, Clone, Default)]
pub struct Released {
    pub records: Vec<Record>,
    pub problems: Vec<Problem>,
}

/// The paper's own reading of a classification reply, as the script that read `shape`'s files
/// did: the word "true" or "True" anywhere makes it true, else "false"/"False" makes it false;
/// the Llama 2 script also takes "TRUE" and "FALSE", and reads a 13B reply only up to the next
/// `Response: ` (its `line.split("Response: ")[1]`). "not true" reads as true, which is why
/// prism's reading ([`super::parse::read_truth`]) can differ; both are reported.
pub fn paper_reading(shape: Shape, reply: &str) -> Option<Truth> {
    let capitals = shape != Shape::Gpt35;
    let read = match shape {
        Shape::Response => reply.split("Response: ").next().unwrap_or(reply),
        Shape::Gpt35 | Shape::Assistant => reply,
    };
    let has = |lower: &str, title: &str, upper: &str| {
        read.contains(lower) || read.contains(title) || (capitals && read.contains(upper))
    };
    if has("true", "True", "TRUE") {
        Some(Truth::True)
    } else if has("false", "False", "FALSE") {
        Some(Truth::False)
    } else {
        None
    }
}

/// Reads a released file's text; `file` names it in problems.
pub fn read(text: &str, file: &str) -> Released {
    let mut out = Released::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let got = if raw.starts_with('[') || raw.starts_with('{') {
            openai_line(raw)
        } else if raw.starts_with('"') {
            llama_line(raw)
        } else {
            Err("neither a request/response pair nor a Llama dialogue string".into())
        };
        match got {
            Ok(mut r) => {
                r.line = line;
                out.records.push(r);
            }
            Err(reason) => out.problems.push(Problem::error(file, line, "-", reason)),
        }
    }
    out
}

/// The claim and the reference in a classification request's text.
fn claim_and_reference(prompt: &str) -> Result<(String, String), String> {
    let (_, after) = prompt
        .split_once("Claim:")
        .ok_or("the request holds no \"Claim:\"")?;
    let (claim, reference) = after
        .split_once("Reference:")
        .ok_or("the request holds no \"Reference:\"")?;
    let claim = claim.split_whitespace().collect::<Vec<_>>().join(" ");
    if claim.is_empty() {
        return Err("the claim is empty".into());
    }
    Ok((claim, reference.trim().to_string()))
}

/// One GPT-3.5 line: the request's text from its first `content` string (always before the
/// splice), its temperature and label where they survived, the response from the splice on.
fn openai_line(raw: &str) -> Result<Record, String> {
    static SPLICE: LazyLock<Regex> = LazyLock::new(|| {
        // The response starts at its "object" value: `"object": "chat.completion"`, or only
        // `: "chat.completion"` where the splice ate the key.
        Regex::new(r#":\s*"chat\.completion""#).expect("a fixed pattern")
    });
    static TEMPERATURE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#""temperature":\s*([0-9]+(?:\.[0-9]+)?)"#).expect("a fixed pattern")
    });
    static LABEL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""label":\s*"(true|false)""#).expect("a fixed pattern"));
    static CONTENT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""content":\s*""#).expect("a fixed pattern"));
    let splice = SPLICE
        .find_iter(raw)
        .last()
        .ok_or("no response (\"chat.completion\") on the line")?;
    let request = &raw[..splice.start()];
    let mut response = format!("{{\"object\"{}", &raw[splice.start()..]);
    // The line closes the pair's list after the response.
    while response.ends_with(']') || response.ends_with(char::is_whitespace) {
        response.pop();
    }
    let response: Value = serde_json::from_str(&response)
        .map_err(|e| format!("the response after the splice is not JSON ({e})"))?;
    let reply = response
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or("the response has no choices[0].message.content")?
        .to_string();
    let content = CONTENT
        .find(request)
        .ok_or("the request has no message content")?;
    // The string starts at the quote the pattern ended on; the streaming reader stops after it.
    let from = content.end() - 1;
    let prompt: String = serde_json::Deserializer::from_str(&request[from..])
        .into_iter::<String>()
        .next()
        .ok_or("the request's content is cut")?
        .map_err(|e| format!("the request's content is not a JSON string ({e})"))?;
    let (claim, reference) = claim_and_reference(&prompt)?;
    Ok(Record {
        shape: Shape::Gpt35,
        line: 0,
        claim,
        reference,
        reply,
        temperature: TEMPERATURE
            .captures(request)
            .and_then(|c| c[1].parse().ok()),
        model: response
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string),
        hallucinated: LABEL.captures(request).map(|c| &c[1] == "true"),
    })
}

/// Undoes one level of JSON string escaping of `s` (`\"`, `\\`, `\n`, `\uXXXX`), leniently:
/// the Llama files' text holds bare quotes between its turns, so it is no JSON string, and an
/// escape that means nothing is kept as written. `None` when there is nothing to undo.
fn unescape_once(s: &str) -> Option<String> {
    if !s.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(e @ ('"' | '\\' | '/')) => {
                out.push(e);
                chars.next();
            }
            Some('n') => {
                out.push('\n');
                chars.next();
            }
            Some('t') => {
                out.push('\t');
                chars.next();
            }
            Some('r') => {
                out.push('\r');
                chars.next();
            }
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => {
                        out.push(ch);
                        for _ in 0..5 {
                            chars.next();
                        }
                    }
                    _ => out.push('\\'),
                }
            }
            _ => out.push('\\'),
        }
    }
    (out != s).then_some(out)
}

/// One Llama 2 line: a JSON string, then `label: true|false`. The string holds the turns
/// `"System: ..."`, `"User: ... Claim: ... Reference: ..."`, `"> Assistant: ..."` (7B), or the
/// request and `\n Response: ...` (13B), escaped again at each level; the text is unescaped
/// until it no longer is. The reply starts at the first marker found, as the authors split.
fn llama_line(raw: &str) -> Result<Record, String> {
    static LABEL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*label:\s*(true|false)\s*$").expect("a fixed pattern"));
    let mut stream = serde_json::Deserializer::from_str(raw).into_iter::<String>();
    let mut text = stream
        .next()
        .ok_or("empty line")?
        .map_err(|e| format!("the line does not open with a JSON string ({e})"))?;
    let rest = &raw[stream.byte_offset()..];
    let hallucinated = LABEL.captures(rest).map(|c| &c[1] == "true");
    for _ in 0..6 {
        match unescape_once(&text) {
            Some(t) => text = t,
            None => break,
        }
    }
    let (shape, user, reply) = REPLY_MARKERS
        .iter()
        .find_map(|(marker, shape)| {
            text.split_once(marker)
                .map(|(user, reply)| (*shape, user, reply))
        })
        .ok_or(
            "no reply on the line: looked for \"> Assistant:\" (Llama-2-7B) and \"Response:\" (Llama-2-13B)",
        )?;
    let (claim, reference) = claim_and_reference(user)?;
    let strip = |s: &str| {
        s.trim()
            .trim_matches(|c: char| c == '"' || c.is_whitespace())
            .to_string()
    };
    Ok(Record {
        shape,
        line: 0,
        claim: strip(&claim),
        reference: strip(&reference),
        reply: strip(reply),
        temperature: None,
        model: None,
        hallucinated,
    })
}

/// The model and temperature a released file's path names (`llama2_7b_data/climate/
/// dataset_0.5.jsonl`: `llama2_7b`, 0.5), for records that do not say.
pub fn from_path(path: &std::path::Path) -> (Option<String>, Option<f64>) {
    let temperature = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("dataset_"))
        .and_then(|t| t.parse().ok());
    let model = path
        .ancestors()
        .filter_map(|p| p.file_name()?.to_str())
        .find_map(|n| n.strip_suffix("_data"))
        .map(str::to_string);
    (model, temperature)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines in the shapes of the authors' files (our own claims and replies): the plain
    /// splice, the `"id": ,` one, one that ate the label, one that ate the "object" key, a Llama
    /// dialogue string escaped three times, and lines that cannot be read.
    const FILE: &str = concat!(
        r#"[{"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "Given the claim and the reference, you should answer whether the claim is true or false. Claim: Sea ice is growing. Reference: A 2020 survey found \"Arctic ice\" shrinking."}], "stream": false, "temperature": 0.5, "label": "true"},, "object": "chat.completion", "created": 1, "model": "gpt-3.5-turbo-0613", "choices": [{"index": 0, "message": {"role": "assistant", "content": "The claim is true."}, "finish_reason": "stop"}], "usage": {}}]"#,
        "\n",
        r#"[{"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "Given the claim and the reference, you should answer whether the claim is true or false. Claim: CO2 is a trace gas. Reference: It is."}], "stream": false, "temperature": 0.9, "label": "false"}, {"id": , "object": "chat.completion", "created": 1, "model": "gpt-3.5-turbo-0613", "choices": [{"index": 0, "message": {"role": "assistant", "content": "True."}, "finish_reason": "stop"}]}]"#,
        "\n",
        r#"[{"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "Given the claim and the reference, you should answer whether the claim is true or false. Claim: Bats carry rabies. Reference: Some do."}], "stream": false, "temperature": 0.1, "label": ", "object": "chat.completion", "created": 1, "model": "gpt-3.5-turbo-0613", "choices": [{"index": 0, "message": {"role": "assistant", "content": "The claim is false."}, "finish_reason": "stop"}]}]"#,
        "\n",
        r#"[{"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "Given the claim and the reference, you should answer whether the claim is true or false. Claim: A film took five years. Reference: It did."}], "stream": false, "temperature": 0.5, "label: "chat.completion", "created": 1, "model": "gpt-3.5-turbo-0613", "choices": [{"index": 0, "message": {"role": "assistant", "content": "True"}, "finish_reason": "stop"}]}]"#,
        "\n",
        r#""\"System: Always answer true or false.\"\"User: Given the claim and the reference, you should answer whether the claim is true or false. Claim: Ice melts. Reference:  Ice \\\\\\\"melts\\\\\\\" at 0 C.\\\\nIt does.\\\"\"\"> Assistant:  True. It melts.\"\n"label: true"#,
        "\n",
        // Llama-2-13B's shape: the request in quotes, the reply after "Response:", and a model
        // that went on with a made-up claim of its own.
        r#""\"Given the claim and the reference, you should answer whether the claim is true or false. \\\"Claim: \\\"Glaciers grow. Reference: A survey.\\\"\\n Response:  FALSE.\\n\\n2. \\\"Claim: Snow is hot. Reference: none.\\\"\\n Response: True.\"\n"label: false"#,
        "\n",
        r#""\"User: Claim: x Reference: y\"\"Bot: True\"\n"label: true"#,
        "\n\n",
        "not a record\n",
        r#"[{"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "no claim here"}]},, "object": "chat.completion", "choices": [{"message": {"content": "True"}}]}]"#,
        "\n",
        r#"[{"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "Claim: x Reference: y"}]},, "object": "chat.completion", "choices": [{"mess"#,
        "\n",
    );

    #[test]
    fn every_splice_of_the_released_files_is_read_and_the_rest_named() {
        let r = read(FILE, "dataset_0.5.jsonl");
        type Seen<'a> = (usize, &'a str, Option<f64>, Option<bool>, &'a str);
        let got: Vec<Seen<'_>> = r
            .records
            .iter()
            .map(|x| {
                (
                    x.line,
                    x.claim.as_str(),
                    x.temperature,
                    x.hallucinated,
                    x.reply.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    1,
                    "Sea ice is growing.",
                    Some(0.5),
                    Some(true),
                    "The claim is true."
                ),
                (2, "CO2 is a trace gas.", Some(0.9), Some(false), "True."),
                (
                    3,
                    "Bats carry rabies.",
                    Some(0.1),
                    None,
                    "The claim is false."
                ),
                (4, "A film took five years.", Some(0.5), None, "True"),
                (5, "Ice melts.", None, Some(true), "True. It melts."),
                (
                    6,
                    "Glaciers grow.",
                    None,
                    Some(false),
                    "FALSE.\n\n2. \"Claim: Snow is hot. Reference: none.\"\n Response: True."
                ),
            ]
        );
        let shapes: Vec<Shape> = r.records.iter().map(|x| x.shape).collect();
        assert_eq!(
            shapes,
            [
                [Shape::Gpt35; 4].as_slice(),
                &[Shape::Assistant, Shape::Response]
            ]
            .concat()
        );
        assert_eq!(r.records[5].reference, "A survey.");
        // The 13B script reads only up to the next "Response: ": FALSE, not the True after it.
        assert_eq!(
            paper_reading(Shape::Response, &r.records[5].reply),
            Some(Truth::False)
        );
        assert_eq!(
            r.records[0].reference,
            "A 2020 survey found \"Arctic ice\" shrinking."
        );
        assert_eq!(r.records[0].model.as_deref(), Some("gpt-3.5-turbo-0613"));
        assert_eq!(r.records[4].reference, "Ice \"melts\" at 0 C.\nIt does.");
        let problems: Vec<String> = r.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems[0].starts_with("dataset_0.5.jsonl:7:")
                && problems[0].contains("\"> Assistant:\" (Llama-2-7B)")
                && problems[0].contains("\"Response:\" (Llama-2-13B)"),
            "a dialogue with no reply marker names the markers looked for: {problems:?}"
        );
        assert!(
            problems[1].starts_with("dataset_0.5.jsonl:9:"),
            "{problems:?}"
        );
        assert!(problems[2].contains(":10:") && problems[2].contains("Claim:"));
        assert!(problems[3].contains(":11:") && problems[3].contains("not JSON"));
    }

    #[test]
    fn the_papers_reading_takes_any_true_first() {
        for shape in [Shape::Gpt35, Shape::Assistant, Shape::Response] {
            assert_eq!(
                paper_reading(shape, "The claim is true."),
                Some(Truth::True)
            );
            assert_eq!(paper_reading(shape, "It is not true."), Some(Truth::True));
            assert_eq!(paper_reading(shape, "False."), Some(Truth::False));
            assert_eq!(paper_reading(shape, "Unclear."), None);
        }
    }

    #[test]
    fn capitals_are_read_in_the_llama_files_only() {
        // The Llama 2 script checks "TRUE" and "FALSE" (six Llama-2-7B replies say only that);
        // the GPT-3.5 notebooks do not, and their replies are read as they read them.
        for shape in [Shape::Assistant, Shape::Response] {
            assert_eq!(paper_reading(shape, "TRUE"), Some(Truth::True));
            assert_eq!(paper_reading(shape, "FALSE"), Some(Truth::False));
        }
        assert_eq!(paper_reading(Shape::Gpt35, "TRUE"), None);
        assert_eq!(paper_reading(Shape::Gpt35, "FALSE"), None);
    }

    #[test]
    fn the_path_names_the_model_and_temperature() {
        let p = std::path::Path::new("/x/dataset/llama2_7b_data/climate/dataset_0.5.jsonl");
        assert_eq!(from_path(p), (Some("llama2_7b".into()), Some(0.5)));
        assert_eq!(from_path(std::path::Path::new("out.jsonl")), (None, None));
    }
}
