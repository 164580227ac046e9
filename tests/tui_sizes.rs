//! Every screen at the three terminal sizes a user meets first (issue 28): 80x24, 120x40 and
//! 200x60, as text snapshots, on the bundled sample data with two models' stored answers and
//! scores. Besides the snapshots (read them when a screen changes), each frame is checked for
//! what must never happen at any size: the hint line cut mid-word, a line wider than the screen,
//! the tree's counts out of line.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::screen::{code, key, screen};
use crossterm::event::{Event, KeyCode};
use prism::dataset;
use prism::provider::ModelsFile;
use prism::store::{
    JobRecord, ResponseRecord, RunConfig, RunRecord, RunStatus, ScoreRecord, Store,
};
use prism::theme::Theme;
use prism::tui::keymap::Keymap;
use prism::tui::{App, Services};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// Two configured models; nothing here calls them (the port is closed).
fn models() -> Vec<prism::provider::ModelConfig> {
    let f: ModelsFile = toml::from_str(
        r#"
[[models]]
name = "alpha"
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "a"

[[models]]
name = "beta-instruct-with-a-long-name"
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "b"
"#,
    )
    .unwrap();
    f.models
}

/// One finished run ("r-sizes") of both models on the first item of every task: alpha right,
/// beta wrong, fixed texts and times.
fn seed(db: &Path) {
    let ds = dataset::load_sample().dataset;
    let mut store = Store::open(db).unwrap();
    let mut jobs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for it in &ds.items {
        let task = ds.task_of(it).id.clone();
        if !seen.insert(task.clone()) {
            continue;
        }
        for model in ["alpha", "beta-instruct-with-a-long-name"] {
            jobs.push(JobRecord {
                idx: jobs.len() as u32,
                item_id: it.id.to_string(),
                task_id: task.clone(),
                model: model.into(),
                sample: 0,
            });
        }
    }
    store
        .create_run(
            &RunRecord {
                id: "r-sizes".into(),
                created_at: 0,
                dataset: "<sample-data>".into(),
                config: RunConfig::default(),
                status: RunStatus::Finished,
            },
            &jobs,
        )
        .unwrap();
    let mut responses = Vec::new();
    let mut scores = Vec::new();
    for j in &jobs {
        let right = j.model == "alpha";
        responses.push(ResponseRecord {
            run_id: "r-sizes".into(),
            job_idx: j.idx,
            item_id: j.item_id.clone(),
            task_id: j.task_id.clone(),
            model: j.model.clone(),
            sample: 0,
            text: Some(if right {
                "Yes. A short answer that the evaluator accepts.".into()
            } else {
                "A much longer answer that wanders: it restates the question, adds a claim that \
                 is not in the reference, and ends without committing to anything at all."
                    .into()
            }),
            error: None,
            finish_reason: Some("stop".into()),
            prompt_tokens: Some(40),
            completion_tokens: Some(12),
            latency_ms: Some(900),
            first_token_ms: Some(120),
            attempts: 1,
            params: "{}".into(),
            request_hash: String::new(),
            cached: false,
            created_at: 0,
            cache_key: None,
            logprobs: None,
        });
        scores.push(ScoreRecord {
            run_id: "r-sizes".into(),
            job_idx: j.idx,
            item_id: j.item_id.clone(),
            task_id: j.task_id.clone(),
            model: j.model.clone(),
            sample: 0,
            evaluator: "exact".into(),
            score: Some(f64::from(right)),
            detail: if right { "matches" } else { "does not match" }.into(),
            judge: None,
            judge_reply: None,
            judge_attempts: 0,
            created_at: 0,
            rule_score: None,
        });
    }
    store.save_responses(&responses).unwrap();
    store.save_scores(&scores).unwrap();
}

/// The screens and the keys that reach each (batches, each played to the end before the next:
/// a screen opened by one has loaded for the next).
fn screens() -> Vec<(&'static str, Vec<Vec<Event>>)> {
    let open_myths = || vec![key('j'), code(KeyCode::Enter), key('j'), code(KeyCode::Tab)];
    vec![
        ("browse", vec![]),
        ("browse_items", vec![open_myths()]),
        ("help", vec![vec![key('?')]]),
        ("run_picker", vec![vec![key('r')]]),
        ("judge_picker", vec![vec![key('u')]]),
        ("compare", vec![open_myths(), vec![code(KeyCode::Enter)]]),
        ("heatmap", vec![vec![key('H')]]),
        ("heatmap_subtasks", vec![vec![key('H'), key('v'), key('v')]]),
        ("heatmap_drill", vec![vec![key('H'), code(KeyCode::Enter)]]),
        ("heatmap_correlation", vec![vec![key('H'), key('c')]]),
        ("judges", vec![vec![key('H'), key('J')]]),
        (
            "label_answer",
            vec![open_myths(), vec![code(KeyCode::Enter)], vec![key('L')]],
        ),
        ("review", vec![vec![key('V')]]),
        ("claims", vec![vec![key('C')]]),
        ("selfcheck", vec![vec![key('D')]]),
    ]
}

fn play(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    services: &mut Services,
    keys: Vec<Event>,
    size: (u16, u16),
) -> Terminal<TestBackend> {
    common::screen::play_at(rt, app, services, keys, size)
}

/// What must hold on every frame, whatever the size.
fn check_frame(name: &str, text: &str, w: u16) {
    use unicode_width::UnicodeWidthStr;
    // The screen text has one symbol per cell (a wide character's second cell is a blank of
    // its own), so its characters are cells.
    for (n, line) in text.lines().enumerate() {
        assert!(
            line.chars().count() <= w as usize,
            "{name}: line {n} is wider than the screen:\n{text}"
        );
    }
    // The hint line is the last: it may end early, never at the screen's edge (where the
    // terminal cuts it) nor with an ellipsis.
    let last = text.lines().last().unwrap_or("");
    assert!(
        !last.trim_end().ends_with('…') && last.width() - last.trim_end().width() > 0,
        "{name}: the hint line is cut: {last:?}\n{text}"
    );
}

#[test]
fn every_screen_at_three_sizes() {
    let rt = common::screen::runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    for (name, batches) in screens() {
        for size in SIZES {
            let (mut app, mut services) = common::screen::session(&rt, &db, models());
            app.request(
                prism::tui::component::ScreenId::Browse,
                prism::tui::jobs::answers::LoadScores,
            );
            services.reviewer = "ann".into();
            let mut term = play(&rt, &mut app, &mut services, vec![], size);
            for keys in batches.clone() {
                term = play(&rt, &mut app, &mut services, keys, size);
            }
            let text = screen(&term);
            let label = format!("{name}_{}x{}", size.0, size.1);
            check_frame(&label, &text, size.0);
            if name == "help" && size == (80, 24) {
                // Help longer than the screen says there is more, with a scroll bar
                // (issue 45: it ended mid-sentence with no sign of more).
                assert!(text.contains("more lines (↓ or pgdn)"), "{text}");
            }
            insta::assert_snapshot!(label, text);
        }
    }
}

/// The tree's numbers stay in their columns whatever the names: wide (CJK) task names, and
/// counts of one and two digits, with two models' rates (issue 28: "the tree's numbers
/// misalign").
#[test]
fn the_trees_numbers_line_up_with_wide_names() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("wide.jsonl");
    let mut body = String::new();
    for (task, n) in [("事实-神话常识", 5), ("数字-骨头与钢琴键的数量", 12)] {
        for k in 0..n {
            body.push_str(&format!(
                "{{\"id\":\"{task}-{k}\",\"task\":\"{task}\",\"dimension\":\"KE\",\"category\":\"FD\",\"question\":\"问题 {k}?\",\"answer\":\"是\"}}\n"
            ));
        }
    }
    std::fs::write(&p, body).unwrap();
    let loaded = dataset::load_path(&p).unwrap();
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let ds = Arc::new(loaded.dataset);
    let mut app = App::new(
        ds.clone(),
        Arc::new(Vec::new()),
        Theme::default_theme(),
        Keymap::default(),
    );
    for (k, it) in ds.items.iter().enumerate() {
        for (m, model) in ["alpha", "beta"].iter().enumerate() {
            app.session.apply_score(ScoreRecord {
                run_id: "r".into(),
                job_idx: (k * 2 + m) as u32,
                item_id: it.id.to_string(),
                task_id: ds.task_of(it).id.clone(),
                model: model.to_string(),
                sample: 0,
                evaluator: "exact".into(),
                score: Some(((k + m) % 3 == 0) as u8 as f64),
                detail: String::new(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            });
        }
    }
    // Open the tree down to the tasks.
    app.handle_event(key('e'));
    for (w, h) in SIZES {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        app.before_draw();
        term.draw(|f| app.draw(f)).unwrap();
        let text = screen(&term);
        // Rows of the tree pane: from its left border to the pane's right border.
        let rows: Vec<&str> = text
            .lines()
            .skip(2)
            .filter_map(|l| {
                let end = l.char_indices().skip(1).find(|(_, c)| "┃│".contains(*c))?.0;
                let row = &l[l.char_indices().nth(1)?.0..end];
                row.trim_end()
                    .chars()
                    .last()?
                    .is_ascii_digit()
                    .then_some(row)
            })
            .collect();
        assert!(
            rows.len() >= 4,
            "dimension, category and two tasks:\n{text}"
        );
        // Counted in cells: the screen text has one symbol per cell (a wide character's
        // second cell is a blank of its own), so characters are cells.
        let ends: Vec<usize> = rows.iter().map(|r| r.trim_end().chars().count()).collect();
        assert!(ends.windows(2).all(|p| p[0] == p[1]), "{ends:?}\n{text}");
        // The rates' columns too: the last "." of each row (alpha's and beta's rate).
        let dots: Vec<usize> = rows
            .iter()
            .map(|r| r[..r.rfind('.').unwrap()].chars().count())
            .collect();
        assert!(dots.windows(2).all(|p| p[0] == p[1]), "{dots:?}\n{text}");
    }
}

/// The runs screen (issue 26): `R` lists the stored runs; two marked and `enter` show the
/// comparison of `prism compare`, at every size.
#[test]
fn the_runs_screen_lists_and_compares_two_runs() {
    let rt = common::screen::runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    // A second run: the same items; alpha now wrong on every other item, beta right on all.
    {
        let mut store = Store::open(&db).unwrap();
        let old = store.run("r-sizes").unwrap().unwrap();
        let jobs: Vec<JobRecord> = store
            .jobs("r-sizes")
            .unwrap()
            .into_iter()
            .map(|(j, _)| j)
            .collect();
        store
            .create_run(
                &RunRecord {
                    id: "r-later".into(),
                    created_at: 100,
                    ..old
                },
                &jobs,
            )
            .unwrap();
        let scores: Vec<ScoreRecord> = store
            .scores(Some("r-sizes"))
            .unwrap()
            .into_iter()
            .map(|mut s| {
                s.run_id = "r-later".into();
                s.score = Some(if s.model == "alpha" {
                    f64::from(s.job_idx % 4 == 0)
                } else {
                    1.0
                });
                if s.score == Some(0.0) {
                    s.detail = "does not match".into();
                }
                s
            })
            .collect();
        store.save_scores(&scores).unwrap();
        // Its answers: alpha's wrong ones say something else (with a control sequence a model
        // could send, which must never reach the terminal).
        let responses: Vec<ResponseRecord> = store
            .responses("r-sizes")
            .unwrap()
            .into_iter()
            .map(|mut r| {
                r.run_id = "r-later".into();
                if r.model == "alpha" && r.job_idx % 4 != 0 {
                    r.text =
                        Some("No.\u{1b}[2J Something else entirely, said with confidence.".into());
                }
                r
            })
            .collect();
        store.save_responses(&responses).unwrap();
        store.set_run_name("r-later", Some("fixed prompt")).unwrap();
    }
    for size in SIZES {
        let (mut app, mut services) = common::screen::session(&rt, &db, models());
        play(&rt, &mut app, &mut services, vec![key('R')], size);
        let term = play(&rt, &mut app, &mut services, vec![], size);
        let s = screen(&term);
        assert!(s.contains("2 in the store"), "{s}");
        assert!(s.contains("r-later") && s.contains("r-sizes"), "{s}");
        let term = play(
            &rt,
            &mut app,
            &mut services,
            // Marking leaves the cursor on the run marked: down, then the second.
            vec![
                key(' '),
                code(KeyCode::Down),
                key(' '),
                code(KeyCode::Enter),
            ],
            size,
        );
        let text = screen(&term);
        let label = format!("runs_compare_{}x{}", size.0, size.1);
        check_frame(&label, &text, size.0);
        let r = app.find::<prism::tui::screens::Runs>().unwrap();
        let c = r.comparison.as_ref().expect("compared");
        // The model both runs have, the older run as A.
        assert_eq!(c.a, "r-sizes:alpha");
        assert_eq!(c.b, "r-later:alpha");
        assert!(text.contains("H-Score"), "{text}");
        // Alpha was right on every item in the first run: B is worse, and by more than noise
        // where enough items flipped.
        assert!(c.rows[0].diff.unwrap() > 0.0);
        assert!(c.flips.iter().all(|f| !f.fixed) && !c.flips.is_empty());
        let first = c.flips[0].item_id.clone();
        let second = c.flips.get(1).map(|f| f.item_id.clone());
        insta::assert_snapshot!(label, text);

        // tab: the cursor goes to the flipped items; enter opens both runs' answers.
        play(
            &rt,
            &mut app,
            &mut services,
            vec![code(KeyCode::Tab), code(KeyCode::Enter)],
            size,
        );
        // A second frame: the answers, read off the loop, have arrived.
        let term = play(&rt, &mut app, &mut services, vec![], size);
        let text = screen(&term);
        let f = app
            .find::<prism::tui::screens::Flip>()
            .expect("the flip screen");
        assert_eq!(f.current().unwrap().item_id, first);
        assert!(text.contains("broken: right on A, wrong on B"), "{text}");
        assert!(
            text.contains("A r-sizes") && text.contains("B r-later"),
            "{text}"
        );
        assert!(text.contains("short answer that the"), "A's answer: {text}");
        assert!(text.contains("Something else"), "B's answer: {text}");
        assert!(!text.contains('\u{1b}'), "no escape reaches the screen");
        let label = format!("runs_flip_{}x{}", size.0, size.1);
        check_frame(&label, &text, size.0);
        insta::assert_snapshot!(label, text);
        // ] goes to the next flipped item; backspace back to the comparison.
        if let Some(second) = second {
            play(&rt, &mut app, &mut services, vec![key(']')], size);
            play(&rt, &mut app, &mut services, vec![], size);
            let f = app.find::<prism::tui::screens::Flip>().unwrap();
            assert_eq!(f.current().unwrap().item_id, second);
        }
        let term = play(
            &rt,
            &mut app,
            &mut services,
            vec![code(KeyCode::Backspace)],
            size,
        );
        assert!(app.find::<prism::tui::screens::Flip>().is_none());
        let r = app.find::<prism::tui::screens::Runs>().unwrap();
        assert!(r.on_flips && r.flip == 0, "back where it was");
        assert!(screen(&term).contains("flipped item"), "{}", screen(&term));

        // M: the same two runs on the other model they both have, said in the title; M again
        // comes back to the first.
        play(&rt, &mut app, &mut services, vec![key('M')], size);
        let term = play(&rt, &mut app, &mut services, vec![], size);
        let text = screen(&term);
        let r = app.find::<prism::tui::screens::Runs>().unwrap();
        assert_eq!(r.common_models.len(), 2, "{:?}", r.common_models);
        let c = r.comparison.as_ref().unwrap();
        let other = &r.common_models[1];
        assert_eq!(c.a, format!("r-sizes:{other}"), "{text}");
        assert_eq!(c.b, format!("r-later:{other}"));
        assert!(text.contains("model 2 of 2 (M next)"), "{text}");
        play(&rt, &mut app, &mut services, vec![key('M')], size);
        play(&rt, &mut app, &mut services, vec![], size);
        let r = app.find::<prism::tui::screens::Runs>().unwrap();
        assert_eq!(r.comparison.as_ref().unwrap().a, "r-sizes:alpha");

        // H: the heatmap of the two marked runs, a row per model and run, named by the run.
        play(&rt, &mut app, &mut services, vec![key('H')], size);
        let term = play(&rt, &mut app, &mut services, vec![], size);
        let text = screen(&term);
        let h = app
            .find::<prism::tui::screens::Heatmap>()
            .expect("the heatmap");
        let names: Vec<&str> = h
            .report
            .as_ref()
            .unwrap()
            .rows
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert!(names.contains(&"alpha @ fixed prompt") && names.contains(&"alpha @ r-sizes"));
        assert!(text.contains("chosen runs"), "{text}");
        play(&rt, &mut app, &mut services, vec![key('H')], size);
        assert!(app.find::<prism::tui::screens::Heatmap>().is_none());
    }
}

/// One finished run of `n` models on every sample item, each model wrong on a different share;
/// the second model's answers to knowledge items wait for a judge (the tree shows
/// `scored/answered` there).
fn seed_models(db: &Path, n: usize) -> Vec<String> {
    let ds = dataset::load_sample().dataset;
    let mut store = Store::open(db).unwrap();
    let names: Vec<String> = (0..n).map(|i| format!("model-{i:02}-of-a-team")).collect();
    let mut jobs = Vec::new();
    for it in &ds.items {
        for model in &names {
            jobs.push(JobRecord {
                idx: jobs.len() as u32,
                item_id: it.id.to_string(),
                task_id: ds.task_of(it).id.clone(),
                model: model.clone(),
                sample: 0,
            });
        }
    }
    store
        .create_run(
            &RunRecord {
                id: "r-many".into(),
                created_at: 0,
                dataset: "<sample-data>".into(),
                config: RunConfig::default(),
                status: RunStatus::Finished,
            },
            &jobs,
        )
        .unwrap();
    let mut scores = Vec::new();
    for (k, j) in jobs.iter().enumerate() {
        let m = k % n;
        let waiting = m == 1 && j.item_id.starts_with("KE");
        scores.push(ScoreRecord {
            run_id: "r-many".into(),
            job_idx: j.idx,
            item_id: j.item_id.clone(),
            task_id: j.task_id.clone(),
            model: j.model.clone(),
            sample: 0,
            evaluator: "exact".into(),
            score: (!waiting).then(|| f64::from(!(k / n).is_multiple_of(m + 2))),
            detail: if waiting { "needs the judge" } else { "rule" }.into(),
            judge: None,
            judge_reply: None,
            judge_attempts: 0,
            created_at: 0,
            rule_score: None,
        });
    }
    store.save_scores(&scores).unwrap();
    names
}

/// With 8 and 24 models the tree shows as many rate columns as fit, every number whole, and
/// names the rest as "+N more"; `M` brings the next ones in (issue 47).
#[test]
fn many_models_in_the_tree_at_three_sizes() {
    let rt = common::screen::runtime();
    let number = regex::Regex::new(r"^(\d+(\.\d)?|⧗\d+/\d+|-)$").unwrap();
    let cut = regex::Regex::new(r"\d…").unwrap();
    for n in [8usize, 24] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("prism.db");
        let names = seed_models(&db, n);
        for size in SIZES {
            let (mut app, mut services) = common::screen::session(&rt, &db, models());
            app.request(
                prism::tui::component::ScreenId::Browse,
                prism::tui::jobs::answers::LoadScores,
            );
            let term = play(&rt, &mut app, &mut services, vec![], size);
            let text = screen(&term);
            let label = format!("browse_{n}_models_{}x{}", size.0, size.1);
            check_frame(&label, &text, size.0);
            // The tree's pane: from the first column to its right border.
            let lines: Vec<&str> = text.lines().collect();
            let title = lines[1];
            let row: Vec<char> = lines[2].chars().collect();
            let end = row
                .iter()
                .skip(1)
                .position(|&c| c == '┃' || c == '│')
                .unwrap()
                + 1;
            let cells: Vec<String> = row[1..end]
                .iter()
                .collect::<String>()
                .split_whitespace()
                .rev()
                .take_while(|w| number.is_match(w))
                .map(str::to_string)
                .collect();
            // The count, then one cell per shown model, each whole.
            let shown = cells.len() - 1;
            assert!(shown >= 1 && shown <= n, "{label}: {cells:?}\n{text}");
            let rows = lines[2..].join("\n");
            assert!(
                !rows.contains("/…") && !cut.is_match(&rows),
                "{label}: a number is cut\n{text}"
            );
            if shown < n {
                assert!(
                    title.contains(&format!("+{} more (M)", n - shown)),
                    "{label}: {title}"
                );
            }
            insta::assert_snapshot!(label.clone(), text);
            // `M` brings in the next models: the first shown is the one after the last.
            let term = play(&rt, &mut app, &mut services, vec![key('M')], size);
            let after = screen(&term);
            let title_after = after.lines().nth(1).unwrap();
            // Names are told apart by what differs (`…05…` for model-05-of-a-team).
            let first = &names[shown % n];
            let token = title_after
                .split("H% ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            let token = token.trim_matches('…');
            assert!(
                !token.is_empty() && first.contains(token) && token.len() < first.len(),
                "{label}: after M the title starts at {first}: {title_after}"
            );
            if shown < n {
                assert_ne!(title, title_after, "{label}");
                assert!(
                    after.contains(&format!("rates of models {}-", shown + 1)),
                    "{label}: M says which models are shown\n{after}"
                );
            }
        }
    }
}

/// `/` finds items by their stored answers too (issue 45: "fifth of his" said in an answer found
/// nothing): the items' own text as typed, the stored answers on enter, said and stepped through.
#[test]
fn search_finds_items_by_their_stored_answers() {
    let rt = common::screen::runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    let item = {
        let mut store = Store::open(&db).unwrap();
        let mut r = store.responses("r-sizes").unwrap().remove(3);
        r.text = Some("He left a Fifth of His fortune to the city.".into());
        store.save_responses(std::slice::from_ref(&r)).unwrap();
        r.item_id
    };
    let ds = dataset::load_sample().dataset;
    let at = ds.index_of(&item).unwrap();
    let (mut app, mut services) = common::screen::session(&rt, &db, models());
    let mut keys = vec![key('/')];
    keys.extend("fifth of his".chars().map(key));
    play(&rt, &mut app, &mut services, keys, (80, 24));
    assert!(
        app.browse().search.matches.is_empty(),
        "no item's own text holds it"
    );
    play(
        &rt,
        &mut app,
        &mut services,
        vec![code(KeyCode::Enter)],
        (80, 24),
    );
    let term = play(&rt, &mut app, &mut services, vec![], (80, 24));
    let s = screen(&term);
    let b = app.browse();
    assert_eq!(b.search.matches, vec![at], "{s}");
    assert_eq!(b.search.by_answer, 1);
    assert_eq!(b.current_item(), Some(at), "jumped to it: {s}");
    assert!(
        s.contains("0 items by their text, 1 more by a stored answer"),
        "{s}"
    );
}

/// The runs screen names a run (issue 45: runs could not be named from the TUI): `n`, a name,
/// `enter`; the store has it and the list shows it first on the run's line at 80 columns.
#[test]
fn a_run_is_named_from_the_runs_screen() {
    let rt = common::screen::runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    let (mut app, mut services) = common::screen::session(&rt, &db, models());
    play(&rt, &mut app, &mut services, vec![key('R')], (80, 24));
    let mut keys = vec![key('n')];
    keys.extend("baseline sweep".chars().map(key));
    keys.push(code(KeyCode::Enter));
    play(&rt, &mut app, &mut services, keys, (80, 24));
    let term = play(&rt, &mut app, &mut services, vec![], (80, 24));
    let s = screen(&term);
    let (name, _) = Store::open(&db).unwrap().run_labels("r-sizes").unwrap();
    assert_eq!(name.as_deref(), Some("baseline sweep"));
    let line = s.lines().find(|l| l.contains("r-sizes")).unwrap();
    assert!(line.contains("\"baseline sweep\""), "{s}");
    assert!(s.contains("r-sizes is named \"baseline sweep\""), "{s}");
    // esc leaves the name as it was.
    let mut keys = vec![key('n'), key('x')];
    keys.push(code(KeyCode::Esc));
    play(&rt, &mut app, &mut services, keys, (80, 24));
    let (name, _) = Store::open(&db).unwrap().run_labels("r-sizes").unwrap();
    assert_eq!(name.as_deref(), Some("baseline sweep"));
}

/// The runs screen opens a stored run's answers (issue 45: the heatmap sends a user to the runs
/// screen, which had no key to open a run): `o` on the older run shows its answers and scores,
/// not the newer run's, and the browse tree's rates stay the newest.
#[test]
fn a_stored_run_opens_with_its_own_answers() {
    let rt = common::screen::runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    // A newer run whose alpha answers differ from the older run's.
    {
        let mut store = Store::open(&db).unwrap();
        let old = store.run("r-sizes").unwrap().unwrap();
        let jobs: Vec<JobRecord> = store
            .jobs("r-sizes")
            .unwrap()
            .into_iter()
            .map(|(j, _)| j)
            .collect();
        store
            .create_run(
                &RunRecord {
                    id: "r-newer".into(),
                    created_at: 100,
                    ..old
                },
                &jobs,
            )
            .unwrap();
        let responses: Vec<ResponseRecord> = store
            .responses("r-sizes")
            .unwrap()
            .into_iter()
            .map(|mut r| {
                r.run_id = "r-newer".into();
                r.created_at += 100;
                r.text = Some(format!("NEWER {}", r.text.unwrap_or_default()));
                r
            })
            .collect();
        store.save_responses(&responses).unwrap();
    }
    let first_item = Store::open(&db).unwrap().run_item_ids("r-sizes").unwrap()[0].clone();
    let old_text = Store::open(&db)
        .unwrap()
        .run_item_answers("r-sizes", &first_item)
        .unwrap()[0]
        .text
        .clone()
        .unwrap();
    for size in [(80, 24), (120, 40)] {
        let (mut app, mut services) = common::screen::session(&rt, &db, models());
        // R, down to the older run (newest first), o.
        play(&rt, &mut app, &mut services, vec![key('R')], size);
        play(&rt, &mut app, &mut services, vec![key('j'), key('o')], size);
        let term = play(&rt, &mut app, &mut services, vec![], size);
        let s = screen(&term);
        let c = app
            .find::<prism::tui::screens::Compare>()
            .expect("the run's answers open");
        assert_eq!(c.run.as_deref(), Some("r-sizes"));
        assert!(s.contains("run r-sizes"), "{s}");
        let head: String = old_text.chars().take(12).collect();
        assert!(s.contains(&head), "the older run's answer: {s}");
        assert!(!s.contains("NEWER"), "not the newest run's: {s}");
        // The progress line is about this run (never another run's progress).
        assert!(s.contains("stored run r-sizes ·"), "{s}");
        assert!(!s.contains("no run in progress"), "{s}");
    }
}

/// The compare screen shows every reviewer's newest label on an answer (issue 46), yours as
/// "you", read from the store when the item opens (labels made elsewhere, or imported).
#[test]
fn the_compare_screen_shows_every_reviewers_labels() {
    use prism::store::{AnswerLabel, Label};
    let rt = common::screen::runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    {
        let mut store = Store::open(&db).unwrap();
        let answers = store.responses("r-sizes").unwrap();
        let first = &answers[0];
        let label = |reviewer: &str, l: Label, at: i64| AnswerLabel {
            uid: format!("{reviewer}-{at}"),
            run_id: first.run_id.clone(),
            job_idx: first.job_idx,
            item_id: first.item_id.clone(),
            model: first.model.clone(),
            reviewer: reviewer.into(),
            label: l,
            note: String::new(),
            created_at: at,
        };
        store
            .add_labels(&[
                label("bob", Label::Correct, 1),
                label("bob", Label::Hallucinated, 2),
                label("ann", Label::Correct, 3),
            ])
            .unwrap();
        assert_eq!(first.item_id, "KE-FD-Myths-0001");
        assert_eq!(first.model, "alpha");
    }
    let (mut app, mut services) = common::screen::session(&rt, &db, models());
    services.reviewer = "ann".into();
    let open_myths = vec![key('j'), code(KeyCode::Enter), key('j'), code(KeyCode::Tab)];
    play(&rt, &mut app, &mut services, open_myths, (200, 60));
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![code(KeyCode::Enter)],
        (200, 60),
    );
    let s = screen(&term);
    // Bob's newest (hallucinated) counts, not his first.
    assert!(s.contains("you: correct, bob: hallucinated"), "{s}");
}
