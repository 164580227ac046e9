//! Tests of `wire`.

use super::*;

fn texts(p: &mut Parser, lines: &[(&str, &str)]) -> (String, Vec<StreamEvent>, Vec<String>) {
    let mut text = String::new();
    let mut evs = Vec::new();
    let mut errs = Vec::new();
    for (ev, data) in lines {
        for r in p.parse(ev, data) {
            match r {
                Ok(StreamEvent::Delta(d)) => text.push_str(&d),
                Ok(e) => evs.push(e),
                Err(e) => errs.push(e.to_string()),
            }
        }
    }
    (text, evs, errs)
}

#[test]
fn a_surrogate_pair_split_across_two_events_is_joined() {
    let mut p = Parser::new(ProviderKind::Openai);
    let (text, _, errors) = texts(
        &mut p,
        &[
            ("", r#"{"choices":[{"delta":{"content":"A\ud83d"}}]}"#),
            ("", r#"{"choices":[{"delta":{"content":"\ude00B"}}]}"#),
            ("", r#"{"choices":[{"delta":{"content":"\ud83d"}}]}"#),
            (
                "",
                r#"{"choices":[{"delta":{"content":"C"},"finish_reason":"stop"}]}"#,
            ),
            ("", "[DONE]"),
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
    // The second high half never got its low half: U+FFFD, and the answer is kept.
    assert_eq!(text, "A\u{1F600}B\u{FFFD}C");
    // A low half opening another string of the next event (here a role) is not the
    // answer's: the pending high half is U+FFFD, never silently dropped with it.
    let mut p = Parser::new(ProviderKind::Openai);
    let (text, _, _) = texts(
        &mut p,
        &[
            ("", r#"{"choices":[{"delta":{"content":"A\ud83d"}}]}"#),
            (
                "",
                r#"{"choices":[{"delta":{"role":"\ude00","content":"B"}}]}"#,
            ),
        ],
    );
    assert_eq!(text, "A\u{FFFD}B");
}

/// Every `data:` line of a recorded or documented stream, through the parser: the text, the
/// tokens in order, the other events.
fn replay(kind: ProviderKind, sse: &str) -> (String, Vec<TokenLogprob>, Vec<StreamEvent>) {
    let mut p = Parser::new(kind);
    let mut evs: Vec<Result<StreamEvent, ProviderError>> = Vec::new();
    for data in sse.lines().filter_map(|l| l.strip_prefix("data: ")) {
        evs.extend(p.parse("", data));
    }
    evs.extend(p.end());
    let (mut text, mut tokens, mut rest) = (String::new(), Vec::new(), Vec::new());
    for ev in evs {
        match ev.expect("no error") {
            StreamEvent::Delta(d) => text.push_str(&d),
            StreamEvent::Tokens(t) => tokens.extend(t),
            other => rest.push(other),
        }
    }
    (text, tokens, rest)
}

#[test]
fn token_logprobs_from_a_real_llama_cpp_python_stream() {
    let sse = include_str!("../../../tests/fixtures/logprobs/llama-cpp-python-0.3.36.sse");
    let (text, tokens, rest) = replay(ProviderKind::Openai, sse);
    assert_eq!(text, "The capital of France is Paris");
    // One token per piece of text, in order, their texts the answer's.
    assert_eq!(
        tokens.iter().map(|t| t.token.as_str()).collect::<String>(),
        text
    );
    assert_eq!(tokens.len(), 6);
    assert!((tokens[0].logprob - -1.387_124).abs() < 1e-5);
    assert_eq!(tokens[5].top.len(), 3);
    assert_eq!(tokens[5].top[2].0, " London");
    assert!((tokens[5].top[2].1 - -4.274_681).abs() < 1e-5);
    assert_eq!(
        rest,
        vec![StreamEvent::Finish {
            reason: Some("length".into())
        }]
    );
}

#[test]
fn token_logprobs_in_openai_and_gemini_shapes() {
    let sse = include_str!("../../../tests/fixtures/logprobs/openai-documented.sse");
    let (text, tokens, _) = replay(ProviderKind::Openai, sse);
    assert_eq!(text, "Paris.");
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0].top[1], ("The".to_string(), -9.25));
    // An alternative with no text is kept (a token of bytes that are not UTF-8 alone).
    assert_eq!(tokens[1].top[1], (String::new(), -1.0));

    let sse = include_str!("../../../tests/fixtures/logprobs/gemini-documented.sse");
    let (text, tokens, rest) = replay(ProviderKind::Gemini, sse);
    assert_eq!(text, "Paris is the capital.");
    assert_eq!(
        tokens.iter().map(|t| t.token.as_str()).collect::<Vec<_>>(),
        vec!["Paris", " is", " the", " capital", "."]
    );
    // The chosen "." is not its step's most likely token: both are kept as given.
    assert_eq!(tokens[4].logprob, -0.9);
    assert_eq!(tokens[4].top[0], (" of".to_string(), -0.6));
    assert!(matches!(rest.last(), Some(StreamEvent::Finish { .. })));
}

/// Asked for: OpenAI-compatible servers get `logprobs` and `top_logprobs`, Gemini
/// `responseLogprobs` and `logprobs`; Anthropic has no such option and gets nothing. Not
/// asked for: nothing is sent.
#[test]
fn logprobs_are_asked_for_only_when_wanted() {
    let mut req = ChatRequest {
        messages: vec![crate::provider::Message::user("hi")],
        params: Default::default(),
    };
    let body = |kind, req: &ChatRequest| {
        let (_, b, _) = build(kind, "http://x/v1", "m", req, None);
        serde_json::from_slice::<Value>(&b).unwrap()
    };
    assert!(body(ProviderKind::Openai, &req).get("logprobs").is_none());
    assert!(
        body(ProviderKind::Gemini, &req)
            .pointer("/generationConfig/responseLogprobs")
            .is_none()
    );
    req.params.logprobs = Some(5);
    let o = body(ProviderKind::Openai, &req);
    assert_eq!(
        (o["logprobs"].clone(), o["top_logprobs"].clone()),
        (json!(true), json!(5))
    );
    let g = body(ProviderKind::Gemini, &req);
    assert_eq!(g["generationConfig"]["responseLogprobs"], json!(true));
    assert_eq!(g["generationConfig"]["logprobs"], json!(5));
    let a = body(ProviderKind::Anthropic, &req).to_string();
    assert!(!a.contains("logprob"), "{a}");
    req.params.logprobs = Some(0);
    let o = body(ProviderKind::Openai, &req);
    assert_eq!(o["logprobs"], json!(true));
    assert!(o.get("top_logprobs").is_none());
}

/// A chunk's strings are read in place when they have no escapes (one allocation fewer
/// per content delta, tens of thousands a second in a big run), copied when they do; only
/// the first choice is kept, and `null` choices read as none.
#[test]
fn a_chunk_borrows_its_text_and_keeps_the_first_choice() {
    let plain = r#"{"id":"x","choices":[{"index":0,"delta":{"content":"Lisbon"},"finish_reason":"stop"},{"index":1,"delta":{"content":"Porto"}}]}"#;
    let c: OpenAiChunk<'_> = serde_json::from_str(plain).unwrap();
    let choice = c.choices.unwrap();
    let content = choice.delta.unwrap().content.unwrap();
    assert!(matches!(content, Cow::Borrowed("Lisbon")), "{content:?}");
    assert!(matches!(choice.finish_reason, Some(Cow::Borrowed("stop"))));
    let escaped = r#"{"choices":[{"text":"a \"q\"\n"}]}"#;
    let c: OpenAiChunk<'_> = serde_json::from_str(escaped).unwrap();
    let text = c.choices.unwrap().text.unwrap();
    assert!(
        matches!(&text, Cow::Owned(t) if t == "a \"q\"\n"),
        "{text:?}"
    );
    for none in [
        r#"{"choices":[]}"#,
        r#"{"choices":null}"#,
        r#"{"usage":{}}"#,
    ] {
        let c: OpenAiChunk<'_> = serde_json::from_str(none).unwrap();
        assert!(c.choices.is_none(), "{none}");
    }
    assert!(serde_json::from_str::<OpenAiChunk<'_>>(r#"{"choices":"no"}"#).is_err());
}

/// prism asks for one alternative: only choice 0 (or one with no index) is the answer,
/// wherever it stands in the list; a chunk of other alternatives only adds nothing, and a
/// malformed alternative the answer does not need never fails the chunk.
#[test]
fn the_answer_is_choice_zero_whatever_its_place() {
    let text = |events: &[&str]| {
        let lines: Vec<(&str, &str)> = events.iter().map(|e| ("", *e)).collect();
        texts(&mut Parser::new(ProviderKind::Openai), &lines).0
    };
    assert_eq!(
        text(&[
            r#"{"choices":[{"index":1,"delta":{"content":"Porto"}},{"index":0,"delta":{"content":"Lisbon"}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":" city"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]}"#,
        ]),
        "Lisbon!"
    );
    assert_eq!(
        text(&[r#"{"choices":[{"delta":{"content":"no index"}}]}"#]),
        "no index"
    );
    assert_eq!(
        text(&[
            r#"{"choices":[{"index":2,"delta":{"content":7}},{"index":0.0,"delta":{"content":"ok"}}]}"#
        ]),
        "ok"
    );
    // The scanner leaves any index but 0 to serde.
    assert!(
        super::super::chunk_scan::openai(r#"{"choices":[{"index":1,"delta":{"content":"x"}}]}"#)
            .is_none()
    );
    assert!(
        super::super::chunk_scan::openai(r#"{"choices":[{"index":0,"delta":{"content":"x"}}]}"#)
            .is_some()
    );
}

#[test]
fn openai_chunks_with_escapes_usage_and_done() {
    let mut p = Parser::new(ProviderKind::Openai);
    let (text, evs, errs) = texts(
        &mut p,
        &[
            ("", r#"{"choices":[{"delta":{"role":"assistant"}}]}"#),
            (
                "",
                r#"{"choices":[{"delta":{"content":"a \"q\"\n"},"finish_reason":null}]}"#,
            ),
            ("", r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#),
            (
                "",
                r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            ),
            ("", "[DONE]"),
        ],
    );
    assert_eq!(text, "a \"q\"\n");
    assert!(errs.is_empty());
    assert_eq!(
        evs,
        vec![
            StreamEvent::Usage(Usage {
                prompt_tokens: Some(5),
                completion_tokens: Some(2)
            }),
            StreamEvent::Finish {
                reason: Some("length".into())
            }
        ]
    );
}

#[test]
fn a_stream_that_ends_early_is_broken_but_one_without_done_is_fine() {
    let mut p = Parser::new(ProviderKind::Openai);
    p.parse("", r#"{"choices":[{"delta":{"content":"x"}}]}"#);
    assert!(matches!(p.end()[0], Err(ProviderError::Stream(_))));
    let mut p = Parser::new(ProviderKind::Openai);
    p.parse(
        "",
        r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}"#,
    );
    assert!(matches!(
        p.end().last(),
        Some(Ok(StreamEvent::Finish { .. }))
    ));
}

#[test]
fn done_without_a_finish_reason_is_a_broken_stream_not_an_answer() {
    // What llama-cpp-python's server sends for a request another one interrupted.
    let mut p = Parser::new(ProviderKind::Openai);
    let (text, evs, errs) = texts(
        &mut p,
        &[
            (
                "",
                r#"{"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}"#,
            ),
            ("", "[DONE]"),
        ],
    );
    assert_eq!(text, "");
    assert!(evs.is_empty(), "{evs:?}");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(p.end().is_empty(), "one error, not two");
    let mut p = Parser::new(ProviderKind::Openai);
    assert!(matches!(&p.parse("", "[DONE]")[0], Err(e) if e.retryable()));
    // An empty answer the server finished is an answer (the model said nothing).
    let mut p = Parser::new(ProviderKind::Openai);
    let (_, evs, errs) = texts(
        &mut p,
        &[
            ("", r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#),
            ("", "[DONE]"),
        ],
    );
    assert!(errs.is_empty());
    assert_eq!(
        evs,
        vec![StreamEvent::Finish {
            reason: Some("stop".into())
        }]
    );
    // Text and then [DONE] without a finish reason: cut short, asked again (the text so far
    // is void, as for any retried attempt).
    let mut p = Parser::new(ProviderKind::Openai);
    let (text, evs, errs) = texts(
        &mut p,
        &[
            ("", r#"{"choices":[{"delta":{"content":"Par"}}]}"#),
            ("", "[DONE]"),
        ],
    );
    assert_eq!(text, "Par");
    assert!(evs.is_empty(), "{evs:?}");
    assert!(errs[0].contains("cut short"), "{errs:?}");
}

#[test]
fn anthropic_and_gemini_errors_map_to_retryable_kinds() {
    let mut p = Parser::new(ProviderKind::Anthropic);
    let r = p.parse(
        "error",
        r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#,
    );
    assert!(matches!(&r[0], Err(e) if e.retryable()));
    let mut g = Parser::new(ProviderKind::Gemini);
    let r = g.parse("", "{not json");
    assert!(matches!(&r[0], Err(e) if e.retryable()));
}

/// System messages: OpenAI-compatible servers get them as turns; Anthropic's `system` and
/// Gemini's `systemInstruction` get them joined by a blank line, and the turns go without
/// them; with none, neither key is sent.
#[test]
fn system_messages_go_where_each_api_wants_them() {
    use crate::provider::{Message, Role};
    let system = |c: &str| Message {
        role: Role::System,
        content: c.to_string(),
    };
    let mut req = ChatRequest {
        messages: vec![
            system("be brief"),
            system("answer in French"),
            Message::user("hi"),
        ],
        params: Default::default(),
    };
    let body = |kind, req: &ChatRequest| {
        let (_, b, _) = build(kind, "http://x/v1", "m", req, None);
        serde_json::from_slice::<Value>(&b).unwrap()
    };
    let o = body(ProviderKind::Openai, &req);
    assert_eq!(o["messages"].as_array().unwrap().len(), 3);
    let a = body(ProviderKind::Anthropic, &req);
    assert_eq!(a["system"], json!("be brief\n\nanswer in French"));
    assert_eq!(a["messages"], json!([{"role": "user", "content": "hi"}]));
    let g = body(ProviderKind::Gemini, &req);
    assert_eq!(
        g["systemInstruction"],
        json!({"parts": [{"text": "be brief\n\nanswer in French"}]})
    );
    assert_eq!(
        g["contents"],
        json!([{"role": "user", "parts": [{"text": "hi"}]}])
    );
    req.messages.drain(..2);
    assert!(body(ProviderKind::Anthropic, &req).get("system").is_none());
    assert!(
        body(ProviderKind::Gemini, &req)
            .get("systemInstruction")
            .is_none()
    );
}
