//! The TUI as components: input reaches only the screen on top (the mouse too), a dataset with
//! no tasks cannot crash it, invisible characters never reach the screen, the run picker sets
//! the samples per item, and the rates it shows are `prism score`'s.

mod common;

use std::io;
use std::sync::Arc;

use assert_cmd::Command;
use common::mock;
use common::screen::{code, drive, key, screen};
use crossterm::event::{Event, KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use prism::dataset::{self, Dataset};
use prism::store::ScoreRecord;
use prism::theme::Theme;
use prism::tui::component::ScreenId;
use prism::tui::keymap::Keymap;
use prism::tui::session::NodeRate;
use prism::tui::{App, Services, run_loop_with};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app_on(ds: Dataset) -> App {
    App::new(
        Arc::new(ds),
        Arc::new(Vec::new()),
        Theme::default_theme(),
        Keymap::default(),
    )
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

fn score(ds: &Dataset, k: usize, model: &str, s: Option<f64>) -> ScoreRecord {
    let it = &ds.items[k];
    ScoreRecord {
        run_id: "r".into(),
        job_idx: k as u32,
        item_id: it.id.to_string(),
        task_id: ds.task_of(it).id.clone(),
        model: model.into(),
        sample: 0,
        evaluator: "exact".into(),
        score: s,
        detail: String::new(),
        judge: None,
        judge_reply: None,
        judge_attempts: 0,
        created_at: 0,
        rule_score: None,
    }
}

#[test]
fn the_mouse_acts_on_the_screen_shown_not_the_browse_screen_below() {
    let ds = dataset::load_sample().dataset;
    let mut app = app_on(ds.clone());
    for k in 0..ds.items.len() {
        for m in ["a", "b", "c"] {
            app.session
                .apply_score(score(&ds, k, m, Some((k % 3) as f64 / 2.0)));
        }
    }
    // Heatmap: the wheel moves its cursor; a click picks a cell. The browse screen below, where
    // the same rows hold its tree, does not move.
    drive(&mut app, 120, 40, vec![key('H')]);
    assert_eq!(app.top(), ScreenId::Heatmap);
    let before = (
        app.browse().tree_sel,
        app.browse().item_sel,
        app.browse().focus,
    );
    drive(
        &mut app,
        120,
        40,
        vec![
            mouse(MouseEventKind::ScrollDown, 5, 5),
            mouse(MouseEventKind::ScrollDown, 5, 5),
        ],
    );
    assert_eq!(app.heatmap().unwrap().row, 2);
    // Row 1 of the grid is the header; the third data row (c) is on screen row 5; the second
    // column (KM) starts after the 24-column label and one 10-column cell.
    drive(
        &mut app,
        120,
        40,
        vec![mouse(
            MouseEventKind::Down(MouseButton::Left),
            1 + 24 + 10 + 3,
            3,
        )],
    );
    let h = app.heatmap().unwrap();
    assert_eq!((h.row, h.col), (0, 1), "clicked on a's KM cell");
    assert_eq!(
        (
            app.browse().tree_sel,
            app.browse().item_sel,
            app.browse().focus
        ),
        before
    );

    // Compare (from the drill-down): clicks pick a pane, the wheel scrolls it; browse stays.
    drive(
        &mut app,
        120,
        40,
        vec![code(KeyCode::Enter), code(KeyCode::Enter)],
    );
    assert_eq!(app.top(), ScreenId::Compare);
    drive(
        &mut app,
        120,
        40,
        vec![
            mouse(MouseEventKind::ScrollDown, 3, 20),
            mouse(MouseEventKind::Down(MouseButton::Left), 3, 20),
            mouse(MouseEventKind::Down(MouseButton::Left), 2, 2),
        ],
    );
    assert_eq!(
        (
            app.browse().tree_sel,
            app.browse().item_sel,
            app.browse().focus
        ),
        before,
        "the browse selection never moved under the other screens"
    );

    // And on the browse screen itself the mouse still works.
    drive(&mut app, 120, 40, vec![key('b'), key('b'), key('b')]);
    assert_eq!(app.top(), ScreenId::Browse);
    drive(
        &mut app,
        120,
        40,
        vec![mouse(MouseEventKind::Down(MouseButton::Left), 3, 3)],
    );
    assert_eq!(app.browse().tree_sel, 1);
}

#[test]
fn a_dataset_with_no_tasks_cannot_crash_the_screens() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.jsonl");
    std::fs::write(&p, "").unwrap();
    let ds = dataset::load_path(&p).unwrap().dataset;
    assert!(ds.tasks.is_empty());
    let mut app = app_on(ds);
    let every_key: Vec<Event> = "jkhlgGe /xn N!?  r  SHvocRBb[]sJ"
        .chars()
        .map(key)
        .chain(
            [
                KeyCode::Enter,
                KeyCode::Tab,
                KeyCode::BackTab,
                KeyCode::PageDown,
                KeyCode::PageUp,
                KeyCode::Home,
                KeyCode::End,
                KeyCode::Left,
                KeyCode::Right,
                KeyCode::Esc,
            ]
            .into_iter()
            .map(code),
        )
        .chain([
            mouse(MouseEventKind::Down(MouseButton::Left), 3, 3),
            mouse(MouseEventKind::ScrollDown, 60, 10),
        ])
        .collect();
    let term = drive(&mut app, 100, 30, every_key);
    let s = screen(&term);
    assert!(!app.quit);
    drive(
        &mut app,
        100,
        30,
        vec![code(KeyCode::Esc), code(KeyCode::Esc), key('b')],
    );
    let s2 = screen(&drive(&mut app, 100, 30, vec![]));
    assert!(
        s.contains("no tasks") || s2.contains("no tasks in this dataset"),
        "{s}\n{s2}"
    );
}

#[test]
fn bidi_and_zero_width_characters_never_reach_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("evil.jsonl");
    // An id that would read backwards, a task name with a zero-width space, a question with a
    // BOM and an escape sequence.
    std::fs::write(
        &p,
        "{\"id\": \"evil\\u202etxt.exe\", \"dimension\": \"KE\", \"category\": \"FD\", \"task\": \"KE-FD-Zero\\u200bWidth\", \"question\": \"\\ufeffWhat? \\u001b[31mred\", \"answer\": \"x\"}\n",
    )
    .unwrap();
    let ds = dataset::load_path(&p).unwrap().dataset;
    assert_eq!(ds.items.len(), 1);
    let mut app = app_on(ds.clone());
    // A stored answer full of invisible characters, shown in the compare screen.
    let key_ = (0usize, "m\u{2066}odel".to_string(), 0u32);
    let mut rec = common::answers::stored_answer(
        ("r", 0),
        (&ds.items[0].id, &ds.tasks[0].id),
        &key_.1,
        "yes\u{200b}\u{202e}sey \u{2067}hidden\u{2069} \u{1b}]0;title\u{7}",
    );
    rec.finish_reason = None;
    app.session.load_stored(0, &[rec]);
    let mut all = String::new();
    for keys in [
        vec![key('e')],
        vec![code(KeyCode::Tab)],
        vec![code(KeyCode::Enter)],
    ] {
        all.push_str(&screen(&drive(&mut app, 120, 30, keys)));
    }
    assert_eq!(app.top(), ScreenId::Compare);
    assert!(all.contains("eviltxt.exe"), "{all}");
    assert!(all.contains("yessey hidden"), "{all}");
    for bad in [
        '\u{202e}', '\u{200b}', '\u{feff}', '\u{2066}', '\u{2067}', '\u{2069}', '\u{1b}',
    ] {
        assert!(!all.contains(bad), "{bad:?} reached the screen");
    }
}

#[test]
fn the_run_picker_sets_samples_per_item() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let loaded = dataset::load_sample();
    let models: prism::provider::ModelsFile = toml::from_str(&format!(
        "[[models]]\nname = \"alpha\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"echo\"\n",
        mock.url()
    ))
    .unwrap();
    let mut app = App::new(
        Arc::new(loaded.dataset),
        Arc::new(loaded.problems),
        Theme::default_theme(),
        Keymap::default(),
    )
    .with_models(models.models);
    let mut services = rt
        .block_on(async {
            Services::with_store(
                &dir.path().join("p.db"),
                prism::engine::http_backends(),
                "<sample-data>".into(),
            )
        })
        .unwrap();
    // One item, picker, three samples (+ + + -), run.
    let script = vec![
        key('j'),
        code(KeyCode::Enter),
        key('j'),
        code(KeyCode::Tab),
        key('r'),
        key('+'),
        key('+'),
        key('+'),
        key('-'),
        code(KeyCode::Enter),
    ];
    let mut term = Terminal::new(TestBackend::new(120, 36)).unwrap();
    rt.block_on(async {
        let stream = futures::stream::iter(script.into_iter().map(Ok::<_, io::Error>));
        run_loop_with(&mut term, &mut app, stream, &mut services).await
    })
    .unwrap();
    let run = app.session.active.as_ref().unwrap();
    assert_eq!(
        (run.total, run.done),
        (3, 3),
        "1 item x 1 model x 3 samples"
    );
    let item = run.items[0];
    assert_eq!(app.session.samples_for(item), 3);
    // The compare screen steps through them with `s`.
    term.draw(|f| app.draw(f)).unwrap();
    assert!(screen(&term).contains("sample 1/3"), "{}", screen(&term));
    // The echo model says the same each time: the pane says how many samples agree.
    assert!(screen(&term).contains("3/3 say this"), "{}", screen(&term));
}

/// A store with unscored answers (judged tasks, no judge): the TUI's rates are `prism score`'s,
/// and a node with unscored answers shows how many are scored, not a rate.
#[test]
fn tui_rates_equal_prism_scores_on_a_store_with_unscored_answers() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.toml"),
        format!(
            "[[models]]\nname = \"alpha\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"echo\"\n",
            mock.url()
        ),
    )
    .unwrap();
    let db = dir.path().join("p.db");
    let prism = || {
        let mut c = Command::cargo_bin("prism").unwrap();
        c.env("PRISM_CONFIG_DIR", dir.path())
            .env("PRISM_DATA_DIR", dir.path());
        c
    };
    // Every sample item: rule-scored tasks and judged ones.
    prism()
        .args(["run", "--models", "alpha", "--db"])
        .arg(&db)
        .assert()
        .success();
    let out = prism()
        .args(["score", "--json", "--db"])
        .arg(&db)
        .assert()
        .success();
    let summary: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let cli = summary["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "alpha")
        .unwrap();
    let unscored = cli["unscored_items_by_task"].as_object().unwrap();
    assert!(!unscored.is_empty(), "some tasks need a judge: {summary}");

    // The TUI on the same store.
    let loaded = dataset::load_sample();
    let ds = Arc::new(loaded.dataset);
    let mut app = App::new(
        ds.clone(),
        Arc::new(Vec::new()),
        Theme::default_theme(),
        Keymap::default(),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut services = rt
        .block_on(async {
            Services::with_store(&db, prism::engine::http_backends(), "<sample-data>".into())
        })
        .unwrap();
    app.request(
        prism::tui::component::ScreenId::Browse,
        prism::tui::jobs::answers::LoadScores,
    );
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    rt.block_on(run_loop_with(
        &mut term,
        &mut app,
        futures::stream::empty(),
        &mut services,
    ))
    .unwrap();
    app.before_draw();
    let s = app
        .session
        .summaries()
        .find(|s| s.model == "alpha")
        .unwrap()
        .to_json(None);
    for key in [
        "task_scores",
        "dimension_hallucination_rates",
        "partial_rates",
        "coverage",
        "unscored_items_by_task",
        "h_score",
    ] {
        assert_eq!(s[key], cli[key], "{key}");
    }
    // The tree: a task with unscored answers shows n/m, a fully scored one its rate.
    let (pending_task, _) = unscored.iter().next().unwrap();
    let t = ds.tasks.iter().position(|t| &t.id == pending_task).unwrap();
    assert!(matches!(
        app.session.node_rate(&[t], "alpha"),
        Some(NodeRate::Partial { .. })
    ));
    let scored_task = cli["task_scores"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap();
    let t = ds.tasks.iter().position(|t| &t.id == scored_task).unwrap();
    let want = 100.0 - cli["task_scores"][scored_task].as_f64().unwrap();
    match app.session.node_rate(&[t], "alpha") {
        Some(NodeRate::Rate(r)) => assert!((r - want).abs() < 1e-3, "{r} vs {want}"),
        other => panic!("{other:?}"),
    }
}

/// At 80x24 the compare header shows the question (the item's line stays on one row; the
/// reference comes after the question), with a stored answer below it.
#[test]
fn the_compare_header_shows_the_question_at_80x24() {
    let ds = dataset::load_sample().dataset;
    let mut app = app_on(ds.clone());
    let it = &ds.items[0];
    let rec = prism::store::ResponseRecord {
        run_id: "r".into(),
        job_idx: 0,
        item_id: it.id.to_string(),
        task_id: ds.task_of(it).id.clone(),
        model: "m".into(),
        sample: 0,
        text: Some("an answer".into()),
        error: None,
        finish_reason: None,
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        first_token_ms: None,
        attempts: 1,
        params: "{}".into(),
        request_hash: String::new(),
        cached: false,
        created_at: 0,
        cache_key: None,
        logprobs: None,
    };
    app.session.load_stored(0, &[rec]);
    let mut last = String::new();
    for keys in [
        vec![key('e')],
        vec![code(KeyCode::Tab)],
        vec![code(KeyCode::Enter)],
    ] {
        last = screen(&drive(&mut app, 80, 24, keys));
    }
    assert_eq!(app.top(), ScreenId::Compare);
    let q = prism::prompt::format_question(it);
    let start: String = q.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    let flat = last.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&start),
        "{start:?} not on the screen:\n{last}"
    );
    assert!(last.contains("an answer"), "{last}");
}

/// Token shading on an item where one model's answer has token probabilities and the other's
/// (an Anthropic model's, say) has none: the first is shaded with its perplexity, the second
/// says "tokens: not available" instead of passing for a plain answer; `.` puts the cursor on
/// the unlikely token and the status line names its alternatives.
#[test]
fn shading_says_which_answers_have_no_tokens() {
    let ds = dataset::load_sample().dataset;
    let item = &ds.items[0];
    let rec = |model: &str, job: u32, tokens: Option<Vec<prism::provider::TokenLogprob>>| {
        prism::store::ResponseRecord {
            run_id: "r".into(),
            job_idx: job,
            item_id: item.id.to_string(),
            task_id: ds.task_of(item).id.clone(),
            model: model.into(),
            sample: 0,
            text: Some("No, never.".into()),
            error: None,
            finish_reason: None,
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: None,
            first_token_ms: None,
            attempts: 1,
            params: "{}".into(),
            request_hash: String::new(),
            cached: false,
            created_at: 0,
            cache_key: None,
            logprobs: tokens.map(|t| prism::store::logprobs::encode(&t)),
        }
    };
    let tok = |s: &str, p: f32, top: &[(&str, f32)]| prism::provider::TokenLogprob {
        token: s.into(),
        logprob: p.ln(),
        top: top.iter().map(|(a, q)| (a.to_string(), q.ln())).collect(),
    };
    let tokens = vec![
        tok("No", 0.9, &[]),
        tok(", never", 0.1, &[(", not", 0.6)]),
        tok(".", 0.95, &[]),
    ];
    let records = [rec("a-open", 0, Some(tokens)), rec("b-claude", 1, None)];
    let mut app = app_on(ds.clone());
    app.session.load_stored(0, &records);
    app.push(prism::tui::component::Open::Compare {
        items: vec![0],
        pos: 0,
    });
    let s = screen(&drive(&mut app, 120, 30, vec![key('t'), key('.')]));
    assert!(s.contains("a-open stored · ppl"), "{s}");
    assert!(s.contains("b-claude stored · tokens: not available"), "{s}");
    assert!(
        s.contains("token 2/3: \", never\" p 0.100 · instead: \", not\" 0.600"),
        "{s}"
    );
    // At 80x24 the titles drop whole facts, never cut a number (issue 45: "ppl 1" for 1.7).
    let s = screen(&drive(&mut app, 80, 24, vec![]));
    let whole = regex::Regex::new(r"ppl \d+\.\d · min p \d\.\d{3}").unwrap();
    for line in s.lines().filter(|l| l.contains("ppl")) {
        assert!(whole.is_match(line), "a cut fact: {line}\n{s}");
    }
    for line in s.lines().filter(|l| l.contains("tokens: not")) {
        assert!(
            line.contains("tokens: not available"),
            "a cut fact: {line}\n{s}"
        );
    }
}

/// A stored answer longer than its pane opens at its top (the beginning is what is read
/// first), and the token cursor keeps its token on screen: `.` to an unlikely token far down
/// scrolls the pane to it (issue 45, at 80x24).
#[test]
fn a_stored_answer_opens_at_its_top_and_the_token_cursor_stays_in_sight() {
    let ds = dataset::load_sample().dataset;
    let item = &ds.items[0];
    let tok = |s: String, p: f32| prism::provider::TokenLogprob {
        token: s,
        logprob: p.ln(),
        top: vec![],
    };
    // 60 lines: "line 0" ... "line 59", every token likely but one on line 50.
    let mut tokens = Vec::new();
    for l in 0..60 {
        let p = if l == 50 { 0.05 } else { 0.9 };
        tokens.push(tok(format!("line{l}"), p));
        tokens.push(tok("\n".into(), 0.99));
    }
    let text: String = tokens.iter().map(|t| t.token.clone()).collect();
    let rec = prism::store::ResponseRecord {
        run_id: "r".into(),
        job_idx: 0,
        item_id: item.id.to_string(),
        task_id: ds.task_of(item).id.clone(),
        model: "m".into(),
        sample: 0,
        text: Some(text),
        error: None,
        finish_reason: None,
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        first_token_ms: None,
        attempts: 1,
        params: "{}".into(),
        request_hash: String::new(),
        cached: false,
        created_at: 0,
        cache_key: None,
        logprobs: Some(prism::store::logprobs::encode(&tokens)),
    };
    let mut app = app_on(ds.clone());
    app.session.load_stored(0, &[rec]);
    app.push(prism::tui::component::Open::Compare {
        items: vec![0],
        pos: 0,
    });
    let s = screen(&drive(&mut app, 80, 24, vec![]));
    assert!(
        s.contains("line0") && !s.contains("line59"),
        "opens at its top:\n{s}"
    );
    let s = screen(&drive(&mut app, 80, 24, vec![key('t'), key('.')]));
    assert!(
        s.contains("token 101/120"),
        "the cursor is on line50's token:\n{s}"
    );
    assert!(s.contains("line50"), "and that token is on screen:\n{s}");
}
