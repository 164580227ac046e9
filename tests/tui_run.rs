//! The TUI running two models against the mock server: marking, the model picker, the live
//! compare screen, and re-opening stored answers.

mod common;

use common::mock;
use common::screen::{code, key, screen};
use crossterm::event::KeyCode;
use prism::provider::ModelsFile;
use prism::tui::component::ScreenId;
use prism::tui::{App, Services};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use common::screen::runtime;

/// A fresh app on the sample data with the mock's models, and services on the store `db`.
fn session(rt: &tokio::runtime::Runtime, url: &str, db: &std::path::Path) -> (App, Services) {
    common::screen::session(rt, db, models(url))
}

fn play(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    services: &mut Services,
    keys: Vec<crossterm::event::Event>,
) -> Terminal<TestBackend> {
    common::screen::play_at(rt, app, services, keys, (120, 36))
}

fn models(url: &str) -> Vec<prism::provider::ModelConfig> {
    let f: ModelsFile = toml::from_str(&format!(
        r#"
[[models]]
name = "alpha"
provider = "openai"
base_url = "{url}/v1"
model = "echo"

[[models]]
name = "beta"
provider = "anthropic"
base_url = "{url}"
model = "flaky500"
"#
    ))
    .unwrap();
    f.models
}

/// Plays keys through the real loop (which waits for runs and scoring to finish), then draws.
#[test]
fn two_models_answer_side_by_side_and_stay_stored() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &mock.url(), &db);
    // Open KE > FD > Myths, focus the items, mark three, open the picker, choose beta too, run.
    let script = vec![
        key('j'),
        code(KeyCode::Enter),
        key('j'),
        code(KeyCode::Tab),
        key(' '),
        key(' '),
        key(' '),
        key('r'),
        key('j'),
        key(' '),
        code(KeyCode::Enter),
    ];
    let term = play(&rt, &mut app, &mut services, script);
    // The run took the three marks (and cleared them).
    assert_eq!(app.browse().marked_count, 0);
    let run = app.session.active.as_ref().expect("a run started");
    assert_eq!(run.total, 6, "3 items x 2 models");
    assert!(!run.running());
    assert_eq!(run.done, 6);
    assert_eq!(app.top(), ScreenId::Compare);
    let s = screen(&term);
    assert!(s.contains("alpha") && s.contains("beta"), "{s}");
    assert!(s.contains("ANSWER("), "{s}");
    assert!(s.contains("6/6"), "the gauge shows the run complete: {s}");
    // Volatile parts (run id, timings, rate) are filtered before snapshotting.
    let stable = regex::Regex::new(r"r\d{8}-\d{6}-[0-9a-f]{4}|\d+\.\d+s|\d+\.\d answers/s")
        .unwrap()
        .replace_all(&s, "<v>")
        .into_owned();
    // The gauge's line fills what its label leaves, and the label's length varies with the
    // rate ("9.8" or "12.4"): its length is not part of the snapshot.
    let stable = regex::Regex::new(r"<v> · finished  ─+")
        .unwrap()
        .replace_all(&stable, "<v> · finished  ─…")
        .into_owned();
    insta::assert_snapshot!("compare_two_models", stable);
    // y copies the focused pane's answer (alpha's, the echo of the prompt) and says so.
    let term = play(&rt, &mut app, &mut services, vec![key('y')]);
    let copied = app.copied.clone().expect("copied");
    assert!(copied.starts_with("ANSWER("), "{copied}");
    assert!(
        screen(&term).contains(&format!("copied {} characters", copied.chars().count())),
        "{}",
        screen(&term)
    );
    // Every finished answer was scored and its score saved (fact_judge with no judge set:
    // unscored, saying which judge it needs).
    let scores = prism::store::Store::open(&db)
        .unwrap()
        .scores(None)
        .unwrap();
    assert_eq!(scores.len(), 6);
    assert!(
        scores
            .iter()
            .all(|s| s.score.is_none() && s.detail.contains("semantic_equivalence"))
    );

    // The stored answers come back when the item is re-opened in a fresh session.
    let (mut app2, mut services2) = session(&rt, &mock.url(), &db);
    let script = vec![
        key('j'),
        code(KeyCode::Enter),
        key('j'),
        code(KeyCode::Tab),
        key('j'),
        code(KeyCode::Enter),
    ];
    let term = play(&rt, &mut app2, &mut services2, script);
    assert_eq!(app2.top(), ScreenId::Compare);
    let s = screen(&term);
    assert!(s.contains("KE-FD-Myths-0002"), "{s}");
    assert!(s.contains("stored"), "{s}");
    assert!(s.contains("ANSWER("), "{s}");
}

#[test]
fn answers_are_judged_shown_with_their_verdict_and_counted_in_the_tree() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &mock.url(), &db);
    let judge: ModelsFile = toml::from_str(&format!(
        "[[models]]\nname = \"j\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"judge\"\n",
        mock.url()
    ))
    .unwrap();
    rt.block_on(async { services.set_judge(&judge.models[0]) })
        .unwrap();
    // Run the first Myths item (fact_judge) on alpha; the mock's echo answer commits to neither
    // yes nor no, so the semantic judge decides: NO. Then J shows the judge's reply.
    let script = vec![
        key('j'),
        code(KeyCode::Enter),
        key('j'),
        code(KeyCode::Tab),
        key(' '),
        key('r'),
        code(KeyCode::Enter),
    ];
    let term = play(&rt, &mut app, &mut services, script);
    assert_eq!(app.top(), ScreenId::Compare);
    let s = screen(&term);
    assert!(
        s.contains("✗ 0.00 judge: different meaning · fact_judge"),
        "{s}"
    );
    assert!(s.contains("judge j (J shows reply)"), "{s}");
    // J: the judge's full reply under the answer.
    let term = play(&rt, &mut app, &mut services, vec![key('J')]);
    let s = screen(&term);
    assert!(s.contains("── judge j (1 attempt) ──"), "{s}");
    // The store holds the judged score with the reply.
    let stored = prism::store::Store::open(&db)
        .unwrap()
        .scores(None)
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].judge.as_deref(), Some("j"));
    assert_eq!(stored[0].judge_reply.as_deref(), Some("NO"));
    // S asks again: the cached judge reply answers (no new judge request), same verdict.
    let judge_calls = mock.attempts_for("judge", "");
    let term = play(&rt, &mut app, &mut services, vec![key('S'), key('b')]);
    assert_eq!(mock.attempts_for("judge", ""), judge_calls);
    // Back in the tree: the Myths node and its parents show alpha's rate, 100.0.
    let s = screen(&term);
    assert!(s.contains("H% alpha"), "{s}");
    let fd_line = s.lines().find(|l| l.contains("FD Factual")).unwrap();
    assert!(fd_line.contains("100.0"), "{fd_line}");
}

/// The demo's waiting answers (issue 28, 8a): with no judge, a fact_judge answer that commits to
/// neither yes nor no waits "unscored", and its pane says how to get a judge. `u` lists the
/// configured models; choosing one judges with it, scores every answer that waited (those on
/// screen and one stored by an earlier run), and remembers it in config.toml,
/// keeping what the user wrote there.
#[test]
fn choosing_a_judge_scores_the_waiting_answers_and_is_remembered() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "# mine\ntheme = \"light\"\n").unwrap();
    let rt = runtime();
    let (app, mut services) = session(&rt, &mock.url(), &db);
    services.config_file = Some(config.clone());
    let mut with_judge = models(&mock.url());
    with_judge.push(
        toml::from_str::<ModelsFile>(&format!(
            "[[models]]\nname = \"j\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"judge\"\n",
            mock.url()
        ))
        .unwrap()
        .models
        .remove(0),
    );
    let mut app = app.with_models(with_judge);
    // Myths items on alpha: a first run of the first item, then (its mark cleared by the run,
    // both marked again) a second of the first two, on screen (the first again from the cache).
    // All three answers wait for the semantic judge.
    let open_myths = vec![key('j'), code(KeyCode::Enter), key('j'), code(KeyCode::Tab)];
    let mut keys = open_myths.clone();
    keys.extend([key(' '), key('r'), code(KeyCode::Enter)]);
    play(&rt, &mut app, &mut services, keys);
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![
            key('b'),
            key('k'),
            key('k'),
            key('k'),
            key(' '),
            key(' '),
            key('r'),
            code(KeyCode::Enter),
        ],
    );
    let s = screen(&term);
    assert!(
        s.contains("? unscored u: choose a judge · needs the semantic_equivalence judge"),
        "{s}"
    );
    // u, down to j (third), enter.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![key('u'), key('j'), key('j'), code(KeyCode::Enter)],
    );
    let s = screen(&term);
    assert!(
        s.contains("judge j: scoring 3 waiting answers · remembered"),
        "{s}"
    );
    assert!(s.contains("judge: different meaning"), "{s}");
    let stored = prism::store::Store::open(&db)
        .unwrap()
        .scores(None)
        .unwrap();
    assert_eq!(stored.len(), 3);
    assert!(
        stored
            .iter()
            .all(|r| r.judge.as_deref() == Some("j") && r.score == Some(0.0)),
        "{stored:?}"
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# mine\ntheme = \"light\"\n"), "{text}");
    let (cfg, warn) = prism::config::Config::load(&config);
    assert!(warn.is_none());
    assert_eq!(cfg.judge.as_deref(), Some("j"));
    assert_eq!(app.judge.as_deref(), Some("j"));
    // u again starts on the judge in use, marked.
    let term = play(&rt, &mut app, &mut services, vec![key('u')]);
    let s = screen(&term);
    assert!(s.contains("now: j") && s.contains("● j"), "{s}");
    // The highlight covers the name column too (its own style had hidden it).
    let buf = term.backend().buffer();
    let lit = prism::theme::Theme::default_theme().selected(true).bg;
    let (x, y) = (0..buf.area.height)
        .find_map(|y| {
            let row: String = (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect();
            row.find("● j")
                .map(|at| (row[..at].chars().count() as u16 + 2, y))
        })
        .expect("the judge's row");
    assert_eq!(buf[(x, y)].symbol(), "j");
    assert_eq!(
        buf[(x, y)].bg,
        lit.unwrap(),
        "the name under the cursor is lit"
    );
}

/// A session whose one model, `slow`, answers a chunk every 400 ms (the mock's `crawl`).
fn slow_session(
    rt: &tokio::runtime::Runtime,
    db: &std::path::Path,
    mock: &mock::Mock,
) -> (prism::tui::App, prism::tui::Services) {
    let slow: ModelsFile = toml::from_str(&format!(
        "[[models]]\nname = \"slow\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"crawl\"\n",
        mock.url()
    ))
    .unwrap();
    common::screen::session(rt, db, slow.models)
}

/// The keys that run the first sub-task's first three items on `slow`.
fn three_items_on_slow() -> Vec<crossterm::event::Event> {
    vec![
        key('j'),
        code(KeyCode::Enter),
        key('j'),
        code(KeyCode::Tab),
        key(' '),
        key(' '),
        key(' '),
        key('r'),
        code(KeyCode::Enter),
    ]
}

/// Plays `keys` at once, then each of `then` 300 ms after the one before (the run goes on in
/// between), at `size`, until the events end and the run is over.
fn play_with_pauses(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    services: &mut Services,
    keys: Vec<crossterm::event::Event>,
    then: Vec<crossterm::event::Event>,
    size: (u16, u16),
) -> Terminal<TestBackend> {
    use futures::StreamExt;
    let later = |k: crossterm::event::Event| {
        futures::stream::once(async move {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            Ok::<_, std::io::Error>(k)
        })
    };
    let mut events = futures::stream::iter(keys.into_iter().map(Ok::<_, std::io::Error>)).boxed();
    for k in then {
        events = events.chain(later(k)).boxed();
    }
    let mut term = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
    rt.block_on(prism::tui::run_loop_with(&mut term, app, events, services))
        .unwrap();
    term
}

/// `esc` during a run goes back and leaves the run going; `X` stops it only when pressed twice
/// (issue 45: esc had cancelled a demo's run one second in). At 80x24 and 120x40.
#[test]
fn esc_during_a_run_goes_back_and_the_run_goes_on() {
    let mock = mock::start_background();
    let rt = runtime();
    for size in [(80u16, 24u16), (120, 40)] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("prism.db");
        let (mut app, mut services) = slow_session(&rt, &db, &mock);
        // The keys after the run started: esc (back).
        play_with_pauses(
            &rt,
            &mut app,
            &mut services,
            three_items_on_slow(),
            vec![code(KeyCode::Esc)],
            size,
        );
        let run = app.session.active.as_ref().expect("a run started");
        assert_eq!(app.top(), ScreenId::Browse, "esc went back");
        assert!(!run.running());
        assert_eq!(
            (run.done, run.total),
            (3, 3),
            "{size:?}: the run went on to the end after esc"
        );
        let stored = prism::store::Store::open(&db).unwrap();
        let r = stored.latest_run().unwrap().unwrap();
        assert_eq!(r.status, prism::store::RunStatus::Finished, "{size:?}");
        // The three marked items ran: their marks are gone, so `r` again would not quietly
        // run them a second time.
        assert_eq!(app.browse().marked_count, 0, "{size:?}: marks cleared");
        assert!(app.browse().marked.iter().all(|m| !m));
    }
}

/// After `esc` during a run, the browse screen's status line shows the run going on and the key
/// back to it (the tree's cells show its progress too). At 80x24 and 120x40.
#[test]
fn after_esc_the_browse_screen_shows_the_run_and_the_way_back() {
    use futures::StreamExt;
    let mock = mock::start_background();
    let rt = runtime();
    for size in [(80u16, 24u16), (120, 40)] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("prism.db");
        let (mut app, mut services) = slow_session(&rt, &db, &mock);
        let start = three_items_on_slow();
        let esc = futures::stream::once(async {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            Ok::<_, std::io::Error>(code(KeyCode::Esc))
        });
        let events = futures::stream::iter(start.into_iter().map(Ok::<_, std::io::Error>))
            .chain(esc)
            .boxed();
        let mut term = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
        // Stopped (as q stops it) while the run still goes: what was last drawn is browse.
        let stop = async { tokio::time::sleep(std::time::Duration::from_millis(900)).await };
        rt.block_on(prism::tui::run_loop_until(
            &mut term,
            &mut app,
            events,
            &mut services,
            stop,
        ))
        .unwrap();
        let s = common::screen::screen(&term);
        let last = s
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or_default();
        assert!(
            last.contains("/3 running · backspace back to it"),
            "{size:?}: the status line says the run goes on:\n{s}"
        );
        assert!(s.contains("Taxonomy"), "{size:?}: browse is drawn\n{s}");
    }
}

/// `X` on the compare screen stops a run only when pressed twice within five seconds: once
/// asks (the run goes on to the end), twice stops it with the finished answers kept.
#[test]
fn x_twice_stops_the_run_and_x_once_only_asks() {
    let mock = mock::start_background();
    let rt = runtime();
    for presses in [1usize, 2] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("prism.db");
        let (mut app, mut services) = slow_session(&rt, &db, &mock);
        play_with_pauses(
            &rt,
            &mut app,
            &mut services,
            three_items_on_slow(),
            vec![key('X'); presses],
            (120, 40),
        );
        let run = app.session.active.as_ref().expect("a run started");
        assert!(!run.running());
        let stored = prism::store::Db::file(&db)
            .read()
            .unwrap()
            .latest_run()
            .unwrap()
            .unwrap();
        if presses == 1 {
            assert_eq!((run.done, run.total), (3, 3), "one X only asks");
            assert_eq!(stored.status, prism::store::RunStatus::Finished);
        } else {
            assert!(run.done < 3, "two X stop the run: {} of 3 done", run.done);
            assert_ne!(stored.status, prism::store::RunStatus::Finished);
        }
    }
}
