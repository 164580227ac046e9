//! Contradiction detection in the TUI against the mock's scripted `autohall` model: from a
//! compare pane to the live contradictions screen, the pair side by side, sampling again, the
//! stored detection re-opened without a request, the heatmap's flag metric, and the claims
//! browser running AutoHall.

mod common;

use std::sync::Arc;

use common::mock;
use common::screen::{code, key, screen};
use crossterm::event::KeyCode;
use prism::dataset;
use prism::tui::component::{Open, ScreenId};
use prism::tui::screens::{ClaimsBrowse, Contradictions, Heatmap};
use prism::tui::{App, Services};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use common::screen::runtime;

fn session(rt: &tokio::runtime::Runtime, url: &str, db: &std::path::Path) -> (App, Services) {
    let models = common::screen::models(&format!(
        "[[models]]\nname = \"ah\"\nprovider = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"autohall\"\n"
    ));
    common::screen::session(rt, db, models)
}

fn play(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    services: &mut Services,
    keys: Vec<crossterm::event::Event>,
) -> Terminal<TestBackend> {
    common::screen::play_at(rt, app, services, keys, (120, 36))
}

#[test]
fn contradictions_of_an_answer_live_pair_again_and_stored() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &mock.url(), &db);
    // Run the first item of KE > FD > Myths with `ah`, then x on its pane.
    let script = vec![
        key('j'),
        code(KeyCode::Enter),
        key('j'),
        code(KeyCode::Tab),
        key(' '),
        key('r'),
        code(KeyCode::Enter),
    ];
    play(&rt, &mut app, &mut services, script);
    assert_eq!(app.top(), ScreenId::Compare);
    let after_run = mock.requests();
    assert_eq!(after_run, 1);
    let term = play(&rt, &mut app, &mut services, vec![key('x')]);
    assert_eq!(app.top(), ScreenId::Contradictions);
    let c = app.find::<Contradictions>().unwrap();
    assert!(!c.running);
    assert_eq!(c.stored.samples.len(), 6);
    assert_eq!(c.stored.pairs.len(), 6);
    // Framings 1-5 end with the question (the mock answers alike), framing 6 ends "Your
    // answer:": one conflict of six, so the answer is flagged.
    let o = c.outcome().unwrap();
    assert_eq!((o.conflicts, o.consistent), (1, 5));
    let s = screen(&term);
    assert!(s.contains("FLAGGED"), "{s}");
    assert!(s.contains("1 of 6 pairs conflict"), "{s}");
    assert!(s.contains("CONFLICT") && s.contains("consistent"), "{s}");
    assert!(s.contains("judge ah (itself)"), "{s}");
    // The whole screen, with the one number that depends on the cache's timing set aside.
    insta::assert_snapshot!("contradictions_flagged", common::screen::stable(&s));
    // Six samples; the pair checks of samples 1-5 are one request (same two texts at
    // temperature 0), answered by the cache when an earlier one finished first.
    let n = mock.requests() - after_run;
    assert!((6 + 2..=12).contains(&n), "{n}");

    // The conflicting pair side by side, the judge's quotes marked.
    let mut keys: Vec<_> = (0..5).map(|_| key('j')).collect();
    keys.push(code(KeyCode::Enter));
    let term = play(&rt, &mut app, &mut services, keys);
    assert_eq!(app.popup(), Some(ScreenId::Pair));
    let s = screen(&term);
    assert!(s.contains("A: the answer under test"), "{s}");
    assert!(s.contains("B: sample #6"), "{s}");
    assert!(s.contains("CONFLICT"), "{s}");
    assert!(
        s.contains("marked:"),
        "the quotes are found in both texts: {s}"
    );
    let term = play(&rt, &mut app, &mut services, vec![key('J')]);
    assert!(screen(&term).contains("the judge's raw reply"));

    // Close, sample again: a second round, kept apart; round 0 still counts.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![code(KeyCode::Esc), key('a')],
    );
    let c = app.find::<Contradictions>().unwrap();
    assert_eq!(c.round, 1);
    assert_eq!(c.stored.samples.len(), 12);
    assert_eq!(c.target().unwrap().rounds, 2);
    assert!(screen(&term).contains("round 2/2 (extra, not counted)"));

    // A judge's entailment verdict stored (as `prism entropy` stores them): sample #6 does not
    // entail the answer. Samples 1-5 are the answer's text, so that is all the clustering
    // needs: two meanings of seven answers.
    let (question, answer, sixth) = {
        let t = c.target().unwrap();
        let sixth = c
            .stored
            .samples
            .iter()
            .find(|s| s.round == 1 && s.k == 5)
            .and_then(|s| s.text.clone())
            .unwrap();
        (t.question.clone(), t.answer.clone().unwrap(), sixth)
    };
    prism::store::Store::open(&db)
        .unwrap()
        .save_entailment(&prism::store::EntailRecord {
            judge: "referee".into(),
            question,
            premise: sixth,
            hypothesis: answer,
            relation: Some(prism::store::Relation::Neutral),
            reply: Some("neutral".into()),
            error: None,
            attempts: 1,
            created_at: 0,
        })
        .unwrap();

    // Back to compare and x again: the stored detection is shown, nothing is asked.
    let before = mock.requests();
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![code(KeyCode::Backspace), key('x')],
    );
    let c = app.find::<Contradictions>().unwrap();
    assert_eq!(c.stored.samples.len(), 12);
    assert_eq!(mock.requests(), before);
    let s = screen(&term);
    // -(6/7 ln 6/7 + 1/7 ln 1/7) = 0.41
    assert!(
        s.contains("semantic entropy 0.41 · 2 meanings of 7 answers (judge referee)"),
        "{s}"
    );
    assert!(s.contains("m1 answer #1 #2 #3 #4 #5 · m2 #6"), "{s}");
    assert!(s.contains("#6") && s.contains("  m2"), "{s}");

    // e: the detection's judge (the model itself) clusters the round: one question (sample #6
    // against the answer; the rest are the answer's text), the mock says neutral.
    let before = mock.requests();
    let term = play(&rt, &mut app, &mut services, vec![key('e')]);
    assert_eq!(mock.requests() - before, 1);
    let c = app.find::<Contradictions>().unwrap();
    assert!(!c.clustering);
    // Its progress was said as verdicts came: 1 in, of at most 7 x 6.
    assert_eq!(c.cluster_progress(), (1, 42));
    let s = screen(&term);
    assert!(
        s.contains("semantic entropy 0.41: 2 meanings of 7 answers"),
        "{s}"
    );
    // Stored: e again asks nothing.
    let before = mock.requests();
    play(&rt, &mut app, &mut services, vec![key('e')]);
    assert_eq!(mock.requests(), before);

    // The heatmap's flag metric: one answer checked, flagged; PRISM's verdict beside it.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![code(KeyCode::Backspace), key('H'), key('m')],
    );
    assert_eq!(app.top(), ScreenId::Heatmap);
    let h = app.find::<Heatmap>().unwrap();
    assert_eq!(h.flags.as_ref().map(Vec::len), Some(1));
    let s = screen(&term);
    assert!(s.contains("self-contradiction flags"), "{s}");
    assert!(s.contains("100.00"), "KE: the one answer is flagged: {s}");
    assert!(s.contains("Flag vs PRISM's verdict"), "{s}");

    // Two more m: past the samples' agreement to the signals, read from the store. The one
    // answer awaits a judge (no PRISM score), so no signal has a verdict to predict, and the
    // screen says what would give one.
    let term = play(&rt, &mut app, &mut services, vec![key('m'), key('m')]);
    let h = app.find::<Heatmap>().unwrap();
    assert_eq!(h.signals.as_ref().map(Vec::len), Some(0));
    let s = screen(&term);
    assert!(s.contains("AUROC % of each signal"), "{s}");
    assert!(
        s.contains("No answer has both a signal and a PRISM score"),
        "{s}"
    );
}

#[test]
fn the_claims_browser_runs_autohall() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let claims = dir.path().join("c.jsonl");
    std::fs::write(
        &claims,
        concat!(
            "{\"id\": \"a\", \"claim\": \"Sky is blue [[conflict2]]\", \"label\": true, \"topic\": \"nature\"}\n",
            "{\"id\": \"b\", \"claim\": \"Water is dry [[says-false]] [[never]]\", \"label\": true, \"topic\": \"nature\"}\n",
        ),
    )
    .unwrap();
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &mock.url(), &db);
    let set = dataset::claims::load_path(&claims).unwrap().set;
    app.push(Open::Claims {
        set: Arc::new(set),
        dataset: claims.display().to_string(),
    });
    // The topic row is first: d on it sends both claims; the picker starts it.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![key('d'), code(KeyCode::Enter)],
    );
    assert_eq!(app.top(), ScreenId::Claims);
    let b = app.find::<ClaimsBrowse>().unwrap();
    assert_eq!(b.results.len(), 2);
    let a = &b.results[&("a".to_string(), "ah".to_string())];
    let o = a.outcome.unwrap();
    assert_eq!((o.conflicts, o.k), (2, 6));
    let nb = &b.results[&("b".to_string(), "ah".to_string())];
    assert_eq!(nb.target.class, Some(prism::store::Class::False));
    // 2 references, 2 classifications, 12 samples, 12 pair checks.
    assert_eq!(mock.requests(), 28);
    // On the second claim: its reference, its classification, the verdict.
    let term2 = play(&rt, &mut app, &mut services, vec![key('j'), key('j')]);
    let s = screen(&term2);
    assert!(s.contains("classified from it as FALSE"), "{s}");
    assert!(s.contains("hallucinated reference"), "{s}");
    insta::assert_snapshot!("claims_after_autohall", common::screen::stable(&s));
    drop(term);
    // Enter opens its contradictions, from the store.
    play(&rt, &mut app, &mut services, vec![code(KeyCode::Enter)]);
    assert_eq!(app.top(), ScreenId::Contradictions);
    let c = app.find::<Contradictions>().unwrap();
    assert_eq!(c.target().unwrap().item_id, "b");
    assert_eq!(mock.requests(), 28);
}
