//! Where in the answer on screen (`w` on a compare pane): one stored answer's sentences shaded in
//! place by how little its samples back them up, a mark before each (readable without colour),
//! the sentence under the cursor with each sample's verdict and text, at 80x24 and 120x40; `w`
//! asks the judge (a mock of SelfCheckGPT's question) what is not stored, and the verdicts show
//! as they arrive.

mod common;

use std::path::Path;

use common::answers::stored_answer;
use common::mock;
use common::screen::{code, key, models, play, runtime, session};
use crossterm::event::KeyCode;
use prism::store::{JobRecord, ResponseRecord, RunConfig, RunRecord, RunStatus, Store};
use prism::tui::component::{Open, ScreenId};
use prism::tui::screens::sentences::Sentences;

const MADE_UP: &str = "It was built by Martians in 1066.";

/// One run of one model on one item, three samples: the first makes its last sentence up, the
/// other two leave it out.
fn seed(db: &Path) -> String {
    let ds = prism::dataset::load_sample().dataset;
    let it = &ds.items[0];
    let task = ds.task_of(it).id.clone();
    let mut store = Store::open(db).unwrap();
    let jobs: Vec<JobRecord> = (0..3)
        .map(|s| JobRecord {
            idx: s,
            item_id: it.id.to_string(),
            task_id: task.clone(),
            model: "teller".into(),
            sample: s,
        })
        .collect();
    store
        .create_run(
            &RunRecord {
                id: "r-where".into(),
                created_at: 0,
                dataset: "<sample-data>".into(),
                config: RunConfig::default(),
                status: RunStatus::Finished,
            },
            &jobs,
        )
        .unwrap();
    let told = "Paris is the capital of France. The Eiffel Tower is in Paris.";
    let responses: Vec<ResponseRecord> = jobs
        .iter()
        .map(|j| {
            let text = if j.sample == 0 {
                format!("{told} {MADE_UP}")
            } else {
                told.to_string()
            };
            let mut r = stored_answer(
                ("r-where", j.idx),
                (&j.item_id, &j.task_id),
                &j.model,
                &text,
            );
            r.sample = j.sample;
            r
        })
        .collect();
    store.save_responses(&responses).unwrap();
    "r-where".into()
}

fn judge_models(url: &str) -> Vec<prism::provider::ModelConfig> {
    models(&format!(
        r#"
[[models]]
name = "referee"
provider = "openai"
base_url = "{url}/v1"
model = "autohall"
"#
    ))
}

#[test]
fn sentences_are_shaded_in_place_and_the_judge_fills_them_in() {
    let mock = mock::start_background();
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let run = seed(&db);
    for size in [(80, 24), (120, 40)] {
        let (mut app, mut services) = session(&rt, &db, judge_models(&mock.url()));
        app.push(Open::Sentences {
            run: run.clone(),
            job: 0,
        });
        // No judge yet: unigram shades it, the prompt method has nothing ("-").
        let s = play(&rt, &mut app, &mut services, vec![vec![key('m')]], size);
        assert_eq!(app.top(), ScreenId::Sentences);
        assert!(s.contains("where in the answer"), "{s}");
        assert!(s.contains("[3·!!]"), "the made-up sentence, marked\n{s}");
        assert!(s.contains("[1·"), "{s}");
        assert!(s.contains("unigram: mean word surprise"), "{s}");
        // The legend fits at 80 columns.
        assert!(s.contains("[!!]≥.75 [-]none"), "{s}");
        let view = app.find::<Sentences>().unwrap();
        assert_eq!(view.view.as_ref().unwrap().0.sentences.len(), 3);
        // Down to the made-up sentence: its scores, each sample with no verdict yet.
        let s = play(
            &rt,
            &mut app,
            &mut services,
            vec![vec![code(KeyCode::Down), code(KeyCode::Down)]],
            size,
        );
        assert!(s.contains("sentence 3/3"), "{s}");
        assert!(s.contains(" 1 -"), "{s}");
    }

    // With the judge chosen, w asks the six checks; the verdicts show as they are saved.
    // A judge chosen after the screen opened: w shows its stored verdicts first, w again asks.
    let (mut app, mut services) = session(&rt, &db, judge_models(&mock.url()));
    app.push(Open::Sentences {
        run: run.clone(),
        job: 0,
    });
    app.judge = Some("referee".into());
    let before = mock.requests();
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![key('w')]],
        (120, 40),
    );
    assert!(s.contains("showing judge referee's stored verdicts"), "{s}");
    assert_eq!(mock.requests(), before);
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![
            vec![key('w')],
            vec![code(KeyCode::Down), code(KeyCode::Down)],
        ],
        (120, 40),
    );
    assert_eq!(
        mock.requests() - before,
        3,
        "two samples of one text: 3 checks\n{s}"
    );
    assert!(s.contains("sentence 3/3 · prompt 1.00"), "{s}");
    assert!(s.contains(" 1 no"), "{s}");
    assert!(s.contains("[3·!!]") && s.contains("[1·ok]"), "{s}");
    // Stored: opened again, the verdicts are there without asking.
    let (mut app, mut services) = session(&rt, &db, judge_models(&mock.url()));
    app.judge = Some("referee".into());
    app.push(Open::Sentences { run, job: 0 });
    let before = mock.requests();
    let s = play(&rt, &mut app, &mut services, vec![vec![]], (80, 24));
    assert_eq!(mock.requests(), before);
    assert!(s.contains("[1·ok]") && s.contains("[3·!!]"), "{s}");
    // No judge chosen: the judge that has verdicts on these sentences is shown.
    let (mut app, mut services) = session(&rt, &db, judge_models(&mock.url()));
    app.push(Open::Sentences {
        run: "r-where".into(),
        job: 0,
    });
    let s = play(&rt, &mut app, &mut services, vec![vec![]], (120, 40));
    assert!(s.contains("judge referee") && s.contains("[3·!!]"), "{s}");
    // Escape goes back.
    play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![code(KeyCode::Esc)]],
        (80, 24),
    );
    assert_ne!(app.top(), ScreenId::Sentences);
}

/// `L` grades the sentence under the cursor (accurate, minor or major inaccurate, with a note):
/// the grade is stored with the sentence's index, span and text, shows on the sentence, and `z`
/// takes it back (nothing deleted: a withdrawal is added).
#[test]
fn a_sentence_is_graded_in_place_and_undone() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let run = seed(&db);
    let (mut app, mut services) = session(&rt, &db, Vec::new());
    app.push(Open::Sentences {
        run: run.clone(),
        job: 0,
    });
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![
            vec![code(KeyCode::Down), code(KeyCode::Down), key('L')],
            vec![code(KeyCode::Tab), code(KeyCode::Tab)],
        ],
        (80, 24),
    );
    assert!(s.contains("Grade sentence 3"), "{s}");
    assert!(s.contains("major inaccurate"), "{s}");
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![
            "Martians".chars().map(key).collect(),
            vec![code(KeyCode::Enter)],
            vec![],
        ],
        (80, 24),
    );
    // No judge's verdicts: the prompt method has no score ("-"); the grade after the mark.
    assert!(s.contains("[3·-·M]"), "{s}");
    assert!(s.contains("your grade: major inaccurate"), "{s}");
    let stored: Vec<prism::sentences::labels::SentenceLabel> = Store::open(&db)
        .unwrap()
        .records_where(Some(("run_id", run.as_str())))
        .unwrap();
    assert_eq!(stored.len(), 1);
    let g = &stored[0];
    assert_eq!((g.job_idx, g.sentence), (0, 2));
    assert_eq!(g.text, MADE_UP);
    assert_eq!(g.label, prism::sentences::labels::Grade::Major);
    assert_eq!(g.note, "Martians");
    let answer = "Paris is the capital of France. The Eiffel Tower is in Paris. It was built by Martians in 1066.";
    assert_eq!(&answer[g.start as usize..g.end as usize], MADE_UP);
    // At 120x40 too, then z: withdrawn, kept.
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![key('z')], vec![]],
        (120, 40),
    );
    assert!(
        s.contains("undone your grade major inaccurate on sentence 3"),
        "{s}"
    );
    assert!(s.contains("your grade: none"), "{s}");
    let stored: Vec<prism::sentences::labels::SentenceLabel> = Store::open(&db)
        .unwrap()
        .records_where(Some(("run_id", run.as_str())))
        .unwrap();
    assert_eq!(stored.len(), 2);
    assert!(prism::sentences::labels::newest(&stored).is_empty());
}

/// The heatmap's drill-down ranks its items by their answer's worst sentence (`w`), and back
/// by score (`w` again): the answer that makes a sentence up comes first although it scored
/// better.
#[test]
fn the_drill_down_ranks_items_by_their_worst_sentence() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    // A second item, whose answer its samples all restate.
    let ds = prism::dataset::load_sample().dataset;
    let it = &ds.items[1];
    let task = ds.task_of(it).id.clone();
    let mut store = Store::open(&db).unwrap();
    let told = "Paris is the capital of France. The Eiffel Tower is in Paris.";
    let jobs: Vec<JobRecord> = (0..3)
        .map(|s| JobRecord {
            idx: 3 + s,
            item_id: it.id.to_string(),
            task_id: task.clone(),
            model: "teller".into(),
            sample: s,
        })
        .collect();
    store
        .create_run(
            &RunRecord {
                id: "r-two".into(),
                created_at: 1,
                dataset: "<sample-data>".into(),
                config: RunConfig::default(),
                status: RunStatus::Finished,
            },
            &jobs,
        )
        .unwrap();
    let mut records: Vec<ResponseRecord> = jobs
        .iter()
        .map(|j| {
            let mut r = stored_answer(("r-two", j.idx), (&j.item_id, &j.task_id), "teller", told);
            r.sample = j.sample;
            r
        })
        .collect();
    store.save_responses(&records).unwrap();
    drop(store);
    let mut first = Store::open(&db).unwrap().responses("r-where").unwrap();
    first.retain(|r| r.sample == 0);
    let (mut app, mut services) = session(&rt, &db, Vec::new());
    // The session holds both items' answers and their scores: the made-up answer scored 1,
    // the other 0 (worst first by score: item 1).
    records.retain(|r| r.sample == 0);
    app.session.load_stored(0, &first);
    app.session.load_stored(1, &records);
    for (item, run, job, score) in [(0, "r-where", 0, 1.0), (1, "r-two", 3, 0.0)] {
        let it = &ds.items[item];
        app.session.apply_score(prism::store::ScoreRecord {
            run_id: run.into(),
            job_idx: job,
            item_id: it.id.to_string(),
            task_id: ds.task_of(it).id.clone(),
            model: "teller".into(),
            sample: 0,
            evaluator: "exact".into(),
            score: Some(score),
            detail: String::new(),
            judge: None,
            judge_reply: None,
            judge_attempts: 0,
            created_at: 0,
            rule_score: None,
        });
    }
    app.push(Open::Heatmap);
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![code(KeyCode::Enter)]],
        (120, 40),
    );
    let h = app.heatmap().unwrap();
    let d = h.drill.as_ref().unwrap_or_else(|| panic!("no drill\n{s}"));
    assert_eq!(d.items.iter().map(|x| x.0).collect::<Vec<_>>(), [1, 0]);
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![key('w')], vec![]],
        (80, 24),
    );
    let d = app.heatmap().unwrap().drill.as_ref().unwrap();
    assert_eq!(
        d.items.iter().map(|x| x.0).collect::<Vec<_>>(),
        [0, 1],
        "the made-up sentence first\n{s}"
    );
    assert!(s.contains("worst sentence first (unigram_avg)"), "{s}");
    assert!(s.contains("2/2 items by their worst sentence"), "{s}");
    let s = play(&rt, &mut app, &mut services, vec![vec![]], (120, 40));
    assert!(
        s.contains("1.00  s ") && s.contains("0.00  s "),
        "each item's worst sentence beside it\n{s}"
    );
    let s = play(&rt, &mut app, &mut services, vec![vec![key('w')]], (80, 24));
    let d = app.heatmap().unwrap().drill.as_ref().unwrap();
    assert_eq!(
        d.items.iter().map(|x| x.0).collect::<Vec<_>>(),
        [1, 0],
        "{s}"
    );
}

/// The review queue takes an item whose answer holds a sentence most of its samples do not
/// back (the judge's stored verdicts) as a triage signal: first in the queue, and said why.
#[test]
fn the_review_queue_puts_an_unbacked_sentence_first() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    seed(&db);
    let told = "Paris is the capital of France. The Eiffel Tower is in Paris.";
    let verdict = |sentence: &str, v: prism::sentences::Verdict| prism::sentences::SupportRecord {
        judge: "referee".into(),
        sentence: sentence.into(),
        context: told.into(),
        verdict: Some(v),
        reply: Some("x".into()),
        error: None,
        attempts: 1,
        created_at: 1,
    };
    use prism::sentences::Verdict::{No, Yes};
    Store::open(&db)
        .unwrap()
        .save_records(&[
            verdict("Paris is the capital of France.", Yes),
            verdict("The Eiffel Tower is in Paris.", Yes),
            verdict(MADE_UP, No),
        ])
        .unwrap();
    let (mut app, mut services) = session(&rt, &db, Vec::new());
    app.push(Open::Review { scope: None });
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![], vec![]],
        (120, 40),
    );
    let r = app.find::<prism::tui::screens::Review>().unwrap();
    assert_eq!(r.queue.first(), Some(&0), "{s}");
    assert!(s.contains("a sentence its samples do not back"), "{s}");
}

/// The heatmap's signals metric (`m`) has a row per model and sentence method where people
/// graded sentences, against their grades.
#[test]
fn the_heatmaps_signals_show_the_sentence_methods_against_peoples_grades() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let run = seed(&db);
    let ds = prism::dataset::load_sample().dataset;
    let it = &ds.items[0];
    let grades: Vec<prism::sentences::labels::SentenceLabel> = prism::sentences::split(
        "Paris is the capital of France. The Eiffel Tower is in Paris. It was built by Martians in 1066.",
    )
    .into_iter()
    .enumerate()
    .map(|(i, s)| prism::sentences::labels::SentenceLabel {
        uid: format!("g{i}"),
        run_id: run.clone(),
        job_idx: 0,
        item_id: it.id.to_string(),
        model: "teller".into(),
        sentence: i as u32,
        start: s.start as u32,
        end: s.end as u32,
        text: s.text,
        reviewer: "ann".into(),
        label: if i == 2 {
            prism::sentences::labels::Grade::Major
        } else {
            prism::sentences::labels::Grade::Accurate
        },
        note: String::new(),
        created_at: 1,
    })
    .collect();
    Store::open(&db).unwrap().add_labels(&grades).unwrap();
    let (mut app, mut services) = session(&rt, &db, Vec::new());
    app.push(Open::Heatmap);
    let s = play(
        &rt,
        &mut app,
        &mut services,
        vec![vec![key('m'), key('m'), key('m')], vec![], vec![]],
        (120, 40),
    );
    assert!(s.contains("sentence unigram (people)"), "{s}");
}
