//! Tests of `compare`.

use super::draw::{token_text, verdict_line};
use super::*;
use std::sync::Arc;

#[test]
fn the_verdict_line_drops_whole_parts_and_never_cuts_one() {
    let v = crate::store::ScoreRecord {
        evaluator: "fact_judge".into(),
        score: None,
        detail: "needs the semantic_equivalence judge".into(),
        ..crate::store::ScoreRecord::default()
    };
    let t = Theme::default_theme();
    let text = |room: usize| -> String {
        verdict_line(&v, &t, (false, "u"), room)
            .spans
            .iter()
            .map(|s| s.content.to_string())
            .collect()
    };
    let wide = text(200);
    assert_eq!(
        wide,
        " ? unscored u: choose a judge · needs the semantic_equivalence judge · fact_judge "
    );
    // One column short of the whole: the evaluator's name goes, whole.
    assert_eq!(wide.chars().count(), 82);
    assert_eq!(text(82), wide);
    let narrow = text(81);
    assert_eq!(
        narrow,
        " ? unscored u: choose a judge · needs the semantic_equivalence judge "
    );
    assert_eq!(text(69), narrow);
    // Narrower: the detail goes too; the way to a judge stays.
    assert_eq!(text(40), " ? unscored u: choose a judge ");
    assert_eq!(text(5), " ? unscored ");
    let judged = crate::store::ScoreRecord {
        evaluator: "fact_judge".into(),
        score: Some(0.0),
        detail: "different meaning".into(),
        judge: Some("smol".into()),
        ..crate::store::ScoreRecord::default()
    };
    let line: String = verdict_line(&judged, &t, (false, "u"), 56)
        .spans
        .iter()
        .map(|s| s.content.to_string())
        .collect();
    assert_eq!(
        line,
        " ✗ 0.00 different meaning · judge smol (J shows reply) "
    );
}

fn answer(text: &str, status: Status) -> Answer {
    Answer {
        text: text.into(),
        status,
        latency_ms: None,
        first_token_ms: None,
        tokens: None,
        cached: false,
        error: None,
        attempts: 1,
        run_id: "r".into(),
        job_idx: 0,
        verdict: None,
        logprobs: None,
        tokens_note: None,
        source_verdict: None,
    }
}

/// Shaded tokens read without colour: a likely token plain, an unlikely one underlined, a
/// very unlikely one underlined and bold; a newline inside a token starts a new line; control
/// sequences in a token are gone.
#[test]
fn tokens_are_shaded_by_probability() {
    let t = Theme::default_theme();
    let tok = |s: &str, p: f64| crate::provider::TokenLogprob {
        token: s.into(),
        logprob: p.ln() as f32,
        top: vec![],
    };
    let lines = token_text(
        &[
            tok("The", 0.95),
            tok(" cap", 0.3),
            tok("ital\nof", 0.05),
            tok(" \u{1b}[31mFrance", 0.6),
        ],
        &t,
        Some(1),
    );
    assert_eq!(lines.len(), 2);
    let spans: Vec<(&str, bool, bool)> = lines
        .iter()
        .flat_map(|l| l.spans.iter())
        .map(|s| {
            (
                s.content.as_ref(),
                s.style.add_modifier.contains(Modifier::UNDERLINED),
                s.style.add_modifier.contains(Modifier::BOLD),
            )
        })
        .collect();
    assert_eq!(spans[0], ("The", false, false));
    assert_eq!(spans[1], (" cap", true, false));
    assert_eq!(spans[2], ("ital", true, true));
    assert_eq!(spans[3], ("of", true, true));
    assert!(!spans[4].0.contains('\u{1b}') && spans[4].0.contains("France"));
    assert!(!spans[4].1);
    // The cursor's token is reversed; no other is.
    let reversed: Vec<&str> = lines
        .iter()
        .flat_map(|l| l.spans.iter())
        .filter(|s| s.style.add_modifier.contains(Modifier::REVERSED))
        .map(|s| s.content.as_ref())
        .collect();
    assert_eq!(reversed, vec![" cap"]);
}

/// The cursor steps through the unlikely tokens only, wrapping round, and the notice gives
/// the token's probability and its alternatives, most likely first, without the token itself.
#[test]
fn the_token_cursor_visits_unlikely_tokens() {
    let tok = |s: &str, p: f64, top: &[(&str, f64)]| crate::provider::TokenLogprob {
        token: s.into(),
        logprob: p.ln() as f32,
        top: top
            .iter()
            .map(|(a, q)| (a.to_string(), q.ln() as f32))
            .collect(),
    };
    let toks = [
        tok("The", 0.95, &[]),
        tok(
            " Lyon",
            0.3,
            &[(" Paris", 0.6), (" Lyon", 0.3), (" Nice", 0.05)],
        ),
        tok(" is", 0.9, &[]),
        tok(" it", 0.1, &[]),
    ];
    assert_eq!(step_unlikely(&toks, None, true), Some(1));
    assert_eq!(step_unlikely(&toks, Some(1), true), Some(3));
    assert_eq!(step_unlikely(&toks, Some(3), true), Some(1));
    assert_eq!(step_unlikely(&toks, None, false), Some(3));
    assert_eq!(step_unlikely(&toks, Some(1), false), Some(3));
    assert_eq!(step_unlikely(&toks[..1], None, true), None);
    assert_eq!(
        token_notice(&toks, 1),
        "token 2/4: \" Lyon\" p 0.300 · instead: \" Paris\" 0.600 · \" Nice\" 0.050"
    );
    assert!(token_notice(&toks, 3).ends_with("no alternatives stored"));
}

#[test]
fn a_pane_says_how_many_finished_samples_say_what_it_shows() {
    let ds = Arc::new(crate::dataset::load_sample().dataset);
    let mut session = Session::new(ds);
    let m = "m".to_string();
    for (s, (text, status)) in [
        ("Paris.", Status::Done),
        ("paris", Status::Done),
        ("Lyon", Status::Done),
        ("Par", Status::Streaming),
    ]
    .into_iter()
    .enumerate()
    {
        session
            .answers
            .insert((0, m.clone(), s as u32), answer(text, status));
    }
    let mut c = Compare::new(vec![0], 0);
    assert_eq!(c.agreement(&session, "m").as_deref(), Some("2/3 say this"));
    c.sample = 2;
    assert_eq!(c.agreement(&session, "m").as_deref(), Some("1/3 say this"));
    // A sample still streaming says nothing yet.
    c.sample = 3;
    assert_eq!(c.agreement(&session, "m"), None);
    // One sample: nothing to agree with.
    let mut one = Session::new(Arc::new(crate::dataset::load_sample().dataset));
    one.answers
        .insert((0, m.clone(), 0), answer("Paris", Status::Done));
    assert_eq!(Compare::new(vec![0], 0).agreement(&one, "m"), None);
}
