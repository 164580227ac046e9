//! Entry points for the fuzz targets (`fuzz/`) and for the test that replays their corpora
//! (`tests/fuzz_corpus.rs`): each takes arbitrary bytes and must neither panic, hang nor grow
//! memory beyond a small multiple of its input, whatever the bytes are.

#![doc(hidden)]

use std::sync::OnceLock;

use crate::provider::ProviderKind;

/// Bytes as text the way each loader would meet them (invalid UTF-8 replaced).
fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// A JSONL dataset file, and a release's `tasks.json`, loaded from disk as `prism PATH` would.
pub fn dataset(data: &[u8]) {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("prism-fuzz-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&d);
        d
    });
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (items, registry) = data.split_at(split);
    let jsonl = dir.join("items.jsonl");
    if std::fs::write(&jsonl, items).is_ok()
        && let Ok(loaded) = crate::dataset::load_path(&jsonl)
    {
        let _ = crate::validate::Report::new("fuzz", &loaded).to_text(&loaded);
        for it in &loaded.dataset.items {
            let _ = crate::prompt::format_question(it);
        }
    }
    // The same bytes as a claims file (Python's NaN read as null), and its report.
    if let Ok(claims) = crate::dataset::claims::load_path(&jsonl) {
        let _ = crate::validate::ClaimsReport::new("fuzz", &claims).to_text();
    }
    let release = dir.join("release/data");
    let _ = std::fs::create_dir_all(release.join("KE/FD"));
    let _ = std::fs::write(release.join("KE/FD/X.jsonl"), items);
    if std::fs::write(
        release.join("tasks.json"),
        registry.get(1..).unwrap_or_default(),
    )
    .is_ok()
    {
        let _ = crate::dataset::load_path(&dir.join("release"));
    }
}

/// Bytes from a server, in arbitrary chunks, through the SSE decoder and each wire format.
pub fn sse(data: &[u8]) {
    let Some((&how, rest)) = data.split_first() else {
        return;
    };
    let kind = match how % 3 {
        0 => ProviderKind::Openai,
        1 => ProviderKind::Anthropic,
        _ => ProviderKind::Gemini,
    };
    let chunk = usize::from(how / 3).max(1);
    let mut decoder = crate::provider::sse::Decoder::new(1 << 16);
    let mut parser = crate::provider::wire_parser(kind);
    let mut events = Vec::new();
    for c in rest.chunks(chunk) {
        if decoder.feed(c, &mut events).is_err() {
            return;
        }
        for ev in events.drain(..) {
            let _ = parser.parse(&ev.event, &ev.data);
        }
    }
    decoder.finish(&mut events);
    for ev in events.drain(..) {
        let _ = parser.parse(&ev.event, &ev.data);
    }
    let _ = parser.end();
}

/// A judge's reply, read by every PRISM judge.
pub fn judge_reply(data: &[u8]) {
    let t = text(data);
    for kind in [
        crate::eval::judge::JudgeKind::EQUIVALENCE,
        crate::eval::judge::JudgeKind::MATH,
        crate::eval::judge::JudgeKind::CODE,
        crate::eval::judge::JudgeKind::CLAIMS,
    ] {
        let _ = crate::eval::judge::read(kind, &t);
    }
    // Self-detection reads model replies too: verdicts, sentences and the object checks.
    use crate::selfcheck::parse;
    let _ = parse::read_direct(&t);
    let _ = parse::read_cot(&t);
    let s = parse::clean_sentence(&t);
    let (object, rest) = t.split_at(
        t.char_indices()
            .nth(t.chars().count() / 3)
            .map_or(0, |c| c.0),
    );
    let _ = parse::check_true(&s, object, Some(&s));
    let _ = parse::check_false(rest, &s, object);
    let _ = parse::swap_phrase(rest, object, "X");
    // AutoHall's readers, with the echo of a prompt taken out first (any split of the input
    // into reply and prompt).
    let _ = crate::detect::parse::read_pair_to(rest, object);
    let _ = crate::detect::parse::read_truth_to(object, rest);
    for (s, e) in crate::eval::echo::echoed_spans(rest, object) {
        assert!(s < e && e <= rest.len() && rest.is_char_boundary(s) && rest.is_char_boundary(e));
    }
}

/// A model's answer checked as every data format.
pub fn formats(data: &[u8]) {
    let t = text(data);
    for f in ["JSON", "XML", "CSV", "YAML", "General", "Markdown"] {
        let _ = crate::eval::formats::data_format(&t, f);
    }
}

/// An IFEval instruction id and kwargs (as a dataset writes them) checked against an answer.
pub fn ifeval(data: &[u8]) {
    let t = text(data);
    let mut parts = t.splitn(3, '\u{1}');
    let id = parts.next().unwrap_or("");
    let kwargs: Option<Vec<serde_json::Value>> =
        parts.next().and_then(|k| serde_json::from_str(k).ok());
    let answer = parts.next().unwrap_or("");
    let _ = crate::eval::ifeval::ifeval(answer, Some(id), kwargs.as_deref(), answer);
    let _ = crate::eval::ifeval::py_literal(id);
}

/// An answer to a choice question, with 0 to 255 options: the letter prism extracts must be
/// the one [`choice_reference`] (the rule written apart) extracts.
pub fn choice(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let t = text(rest);
    let got = crate::eval::rules::extract_choice(&t, usize::from(n));
    assert_eq!(
        got,
        choice_reference(&t, usize::from(n)),
        "prism and the written-apart rule extract different letters from {t:?} ({n} options)"
    );
    let _ = crate::eval::rules::choice(&t, "B", usize::from(n));
    let _ = crate::taxonomy::option_letter(usize::from(n) * 7);
}

/// PRISM's choice extraction written apart from prism's (`eval::rules::extract_choice`), as a
/// literal translation of PRISM-FORMAT.md's patterns into regular expressions, with Python's
/// whitespace (`\s` and U+001C..U+001F) and Python's word characters (`\p{L}`, `\p{N}`, `_`)
/// for `\b`, which Rust's regex cannot be told. Slow (it is an oracle): the fuzz target and
/// `tests/choice_reference.rs` (which also holds it to the Python reference's letters).
pub fn choice_reference(response: &str, n_options: usize) -> Option<char> {
    use regex::Regex;
    static MADE: [OnceLock<Vec<Regex>>; 9] = [const { OnceLock::new() }; 9];
    static WORD: OnceLock<Regex> = OnceLock::new();
    let n = n_options.clamp(4, 8);
    let pats = MADE[n].get_or_init(|| {
        let l = format!("([{}])", &"ABCDEFGH"[..n]);
        let ws = r"[\s\x{1C}-\x{1F}]";
        [
            format!(r"(?m)^{ws}*{l}{ws}*$"),
            format!(r"(?m)^{ws}*\*\*{l}\*\*{ws}*$"),
            format!(r"\*\*{l}\*\*"),
            format!(r"[Tt]he answer is(?::|{ws})*\**{l}"),
            format!(r"[Aa]nswer(?::|{ws})*\**{l}"),
            format!(r"^\**{l}\**[.):]?$"),
            format!(r"{l}[.。]?{ws}*$"),
            l,
        ]
        .iter()
        .map(|p| Regex::new(p).expect("a fixed pattern"))
        .collect()
    });
    let word = WORD.get_or_init(|| Regex::new(r"^[\p{L}\p{N}_]$").expect("a fixed pattern"));
    let is_word = |c: Option<char>| c.is_some_and(|c| word.is_match(c.encode_utf8(&mut [0; 4])));
    let py_strip = |s: &str| -> String {
        s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
            .to_string()
    };
    let letter = |m: regex::Captures<'_>| m[1].chars().next();
    let response = py_strip(response);
    let lines: Vec<&str> = response.split('\n').collect();
    let tail = lines[lines.len().saturating_sub(5)..].join("\n");
    for p in &pats[..5] {
        if let Some(c) = p.captures(&tail).and_then(letter) {
            return Some(c);
        }
    }
    for line in lines.iter().rev() {
        if let Some(c) = pats[5].captures(&py_strip(line)).and_then(letter) {
            return Some(c);
        }
    }
    for line in lines.iter().rev().take(10) {
        let line = py_strip(line);
        if let Some(m) = pats[6].captures(&line) {
            let at = m.get(1).map_or(0, |g| g.start());
            if !is_word(line[..at].chars().next_back()) {
                return letter(m);
            }
        }
    }
    pats[7]
        .captures_iter(&response)
        .filter(|m| {
            let g = m.get(1).expect("one group");
            !is_word(response[..g.start()].chars().next_back())
                && !is_word(response[g.end()..].chars().next())
        })
        .filter_map(letter)
        .last()
}

/// A `prism review import` file: read as the command reads it (line cap, named errors), and
/// what loads written back out as the CSV export (cells neutralised) and read again.
pub fn review_import(data: &[u8]) {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("prism-fuzz-review-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&d);
        d
    });
    let file = dir.join("decisions.jsonl");
    if std::fs::write(&file, data).is_err() {
        return;
    }
    let Ok((records, _problems)) = crate::cli::review::read_jsonl(&file) else {
        return;
    };
    let mut csv = Vec::new();
    if crate::cli::review::write_csv(&mut csv, &records).is_ok() {
        let text = String::from_utf8_lossy(&csv);
        assert!(
            !text.contains('\u{1b}'),
            "an escape sequence in the CSV export"
        );
        let mut r = csv::Reader::from_reader(csv.as_slice());
        for row in r.records().flatten() {
            for c in row.iter() {
                assert!(
                    !c.starts_with(['=', '+', '@']) || c.parse::<f64>().is_ok(),
                    "a formula cell {c:?}"
                );
            }
        }
    }
}

/// A `--db` value: told apart from a SQLite path, shown without its password, and parsed as
/// the PostgreSQL driver parses it. A password the driver reads, when it is long enough to be
/// told apart from the rest and appears once, never shows in the redacted text.
pub fn db_url(data: &[u8]) {
    crate::store::fuzz_db_url(data);
}

/// A hostile server's token log-probabilities: the bytes after the first 0xFF byte go, as they
/// are, where an OpenAI-compatible stream has `logprobs.content` (any shape, any number Python's
/// json writes), beside an answer piece made of the bytes before it; then the engine's token
/// checks. Whatever the tokens are: no panic, the tokens kept are bounded by the answer and
/// hold only log-probabilities that can be, and where the bytes cannot write a string (no `"`),
/// the answer's text is exactly its pieces (tokens never change the answer).
pub fn logprobs(data: &[u8]) {
    let split = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len());
    let piece = text(&data[..split]).into_owned();
    let raw = text(data.get(split + 1..).unwrap_or_default()).into_owned();
    let piece_json = serde_json::Value::String(piece.clone()).to_string();
    let events = [
        format!(
            r#"{{"choices":[{{"delta":{{"content":{piece_json}}},"logprobs":{{"content":{raw}}}}}]}}"#
        ),
        format!(
            r#"{{"choices":[{{"delta":{{"content":"!"}},"logprobs":{{"content":[{{"token":"!","logprob":{raw}}}]}},"finish_reason":"stop"}}]}}"#
        ),
        "[DONE]".to_string(),
    ];
    let mut parser = crate::provider::wire_parser(ProviderKind::Openai);
    let mut answer = String::new();
    let mut sink = crate::engine::tokens::TokenSink::default();
    let mut broken = false;
    for ev in &events {
        for e in parser.parse("", ev) {
            match e {
                Ok(crate::provider::StreamEvent::Delta(d)) => answer.push_str(&d),
                Ok(crate::provider::StreamEvent::Tokens(t)) => {
                    sink.push(t, answer.len());
                }
                Ok(_) => {}
                Err(_) => broken = true,
            }
        }
    }
    let (tokens, _) = sink.finish();
    assert!(tokens.len() <= answer.len() + 64, "{} tokens", tokens.len());
    for t in &tokens {
        assert!(t.logprob.is_finite() && t.logprob <= 0.0, "{t:?}");
        assert!(t.top.len() <= 20);
    }
    if !raw.contains('"') && !broken {
        assert_eq!(answer, format!("{piece}!"));
    }
    let _ = crate::eval::whitebox::shown_tokens(Some(tokens), None, &answer);
}

/// An OpenAI stream chunk read by the one-pass scanner: whatever it reads, serde reads the
/// same (content, finish reason, and nothing the scanner's shape cannot say).
pub fn openai_chunk(data: &[u8]) {
    let _ = crate::provider::chunk_check::agrees_with_serde(&text(data));
}

/// A fuzz target's entry point.
pub type Target = fn(&[u8]);

/// Every target by name (for the corpus replay).
pub const TARGETS: &[(&str, Target)] = &[
    ("dataset", dataset),
    ("sse", sse),
    ("judge_reply", judge_reply),
    ("formats", formats),
    ("ifeval", ifeval),
    ("choice", choice),
    ("review_import", review_import),
    ("db_url", db_url),
    ("logprobs", logprobs),
    ("openai_chunk", openai_chunk),
];
