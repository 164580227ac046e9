//! The review screen (issue 14): opened from browse (`V`), scores, a decision and a rationale
//! typed with undo and paste; quitting without saving keeps the draft (a new session finds it);
//! `ctrl-s` saves the decision and moves on; a second reviewer who disagrees makes the item
//! disputed; the queue puts items the models disagree on first.

mod common;

use std::io;

use common::screen::{code, key, screen};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use prism::dataset;
use prism::review::Decision;
use prism::store::{ScoreRecord, Store};
use prism::tui::component::ScreenId;
use prism::tui::screens::Review;
use prism::tui::{App, Services};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use common::screen::runtime;

fn session(rt: &tokio::runtime::Runtime, db: &std::path::Path, reviewer: &str) -> (App, Services) {
    let (app, mut services) = common::screen::session(rt, db, Vec::new());
    services.reviewer = reviewer.into();
    (app, services)
}

fn play(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    services: &mut Services,
    keys: Vec<crossterm::event::Event>,
) -> Terminal<TestBackend> {
    common::screen::play_at(rt, app, services, keys, (120, 40))
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn typed(s: &str) -> Vec<Event> {
    s.chars().map(key).collect()
}

/// One answer's score for an item, from run "r1", sample 0.
fn scored(
    item: &prism::dataset::Item,
    task: &str,
    evaluator: &str,
    job: u32,
    model: &str,
    s: f64,
) -> ScoreRecord {
    ScoreRecord {
        run_id: "r1".into(),
        job_idx: job,
        item_id: item.id.to_string(),
        task_id: task.into(),
        model: model.into(),
        sample: 0,
        evaluator: evaluator.into(),
        score: Some(s),
        detail: String::new(),
        judge: None,
        judge_reply: None,
        judge_attempts: 0,
        created_at: 0,
        rule_score: None,
    }
}

fn review(app: &App) -> &Review {
    app.find::<Review>().expect("the review screen is open")
}

#[test]
fn a_draft_survives_quitting_and_a_saved_decision_is_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    let term = play(&rt, &mut app, &mut services, vec![key('V')]);
    assert_eq!(app.top(), ScreenId::Review);
    let s = screen(&term);
    assert!(s.contains("85 in queue (all, both panels)"), "{s}");
    assert!(s.contains("Clarity") && s.contains("Domain Relevance") && s.contains("Coherence"));
    let first = review(&app).draft.item_id.clone();

    // Scores 8, 7, 0 (= 10) down the form, retain; then the rationale: typed, a word undone,
    // a paste.
    let down = || code(KeyCode::Down);
    let mut keys = vec![
        key('8'),
        down(),
        key('7'),
        down(),
        key('0'),
        key('y'),
        code(KeyCode::Enter),
    ];
    keys.extend(typed("Clear question. oops"));
    keys.push(ctrl('u')); // undo: the editor's undo takes back the last edit
    keys.push(Event::Paste(" Reference checked.".into()));
    keys.push(code(KeyCode::Esc));
    let term = play(&rt, &mut app, &mut services, keys);
    let s = screen(&term);
    assert!(
        s.contains("9-10: question, constraints and reference fully"),
        "{s}"
    );
    let d = review(&app).draft.clone();
    assert_eq!(
        (d.clarity, d.relevance, d.coherence),
        (Some(8), Some(7), Some(10))
    );
    assert_eq!(d.decision, Some(Decision::Retain));
    assert!(
        d.rationale.ends_with(" Reference checked."),
        "{:?}",
        d.rationale
    );
    assert!(
        !d.rationale.contains("oops"),
        "undo took the last word back: {:?}",
        d.rationale
    );
    // Quit without saving; a new session (same reviewer) finds the draft as it was.
    play(&rt, &mut app, &mut services, vec![key('q')]);
    drop((app, services));
    let (mut app, mut services) = session(&rt, &db, "ann");
    let term = play(&rt, &mut app, &mut services, vec![key('V')]);
    assert_eq!(review(&app).draft.rationale, d.rationale);
    assert!(screen(&term).contains("Reference checked."));

    // ctrl-s: saved, the draft gone, the queue moves on.
    let term = play(&rt, &mut app, &mut services, vec![ctrl('s')]);
    let s = screen(&term);
    assert!(s.contains(&format!("saved: retain ({first})")), "{s}");
    assert_ne!(review(&app).draft.item_id, first);
    let store = Store::open(&db).unwrap();
    let saved = store.decisions().unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].reviewer, "ann");
    assert_eq!(saved[0].rationale, d.rationale.trim());
    assert_eq!(saved[0].coherence, Some(10));
    assert_eq!(store.draft(&first, "ann").unwrap(), None);

    // Bob removes the same item: disputed, both decisions kept.
    let (mut app, mut services) = session(&rt, &db, "bob");
    // The queue loads in the background: keys typed before it arrives have no item yet.
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![
            key('5'),
            key('j'),
            key('5'),
            key('j'),
            key('5'),
            key('x'),
            ctrl('s'),
        ],
    );
    let s = screen(&term);
    assert!(s.contains("1 disputed"), "{s}");
    assert_eq!(Store::open(&db).unwrap().decisions().unwrap().len(), 2);
    // The disputed filter shows just that item.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![key('f'), key('f'), key('f')],
    );
    let s = screen(&term);
    assert!(s.contains("1 in queue (disputed"), "{s}");
    assert_eq!(review(&app).draft.item_id, first);
}

#[test]
fn items_the_models_disagree_on_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let ds = dataset::load_sample().dataset;
    let last = ds.items.last().unwrap();
    let task = ds.task_of(last).id.clone();
    {
        let mut store = Store::open(&db).unwrap();
        let score = |job, model, s| scored(last, &task, "exact", job, model, s);
        store
            .save_scores(&[score(0, "a", 1.0), score(1, "b", 0.0)])
            .unwrap();
    }
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    let term = play(&rt, &mut app, &mut services, vec![key('V')]);
    assert_eq!(review(&app).draft.item_id, &*last.id);
    assert!(screen(&term).contains("models disagree"));
}

#[test]
fn a_category_chosen_in_the_tree_scopes_the_review() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &dir.path().join("prism.db"), "ann");
    // The tree starts on KE, open: down to its first category, review.
    let term = play(&rt, &mut app, &mut services, vec![key('j'), key('V')]);
    let s = screen(&term);
    assert!(s.contains("11 in queue (all, both panels, KE-FD)"), "{s}");
    assert!(review(&app).draft.item_id.starts_with("KE-FD-"));
}

#[test]
fn the_review_screen_with_history_signals_and_a_draft() {
    // Fixed content: a disputed first item (two reviewers, fixed times), signals from scores,
    // a draft with scores and a rationale; drawn at 120x40.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let ds = dataset::load_sample().dataset;
    let first = &ds.items[0];
    let task = ds.task_of(first).id.clone();
    {
        let mut store = Store::open(&db).unwrap();
        let score = |job, model, s| scored(first, &task, "fact_judge", job, model, s);
        store
            .save_scores(&[score(0, "local", 1.0), score(1, "smol", 0.0)])
            .unwrap();
        let rec = |uid: &str, who: &str, d: Decision| prism::review::ReviewRecord {
            uid: uid.into(),
            item_id: first.id.to_string(),
            task_id: task.clone(),
            reviewer: who.into(),
            round: 1,
            clarity: Some(8),
            relevance: Some(6),
            coherence: Some(9),
            decision: d,
            rationale: format!("{who}'s reasons"),
            edited_question: None,
            edited_answer: None,
            created_at: 1_780_000_000_000,
        };
        store
            .save_decisions(&[
                rec("b1", "bob", Decision::Remove),
                rec("c1", "cyd", Decision::Retain),
            ])
            .unwrap();
    }
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let mut keys = vec![key('7'), key('j'), key('4'), key('v'), code(KeyCode::Enter)];
    keys.extend(typed("Reference is right; the question leads."));
    keys.push(code(KeyCode::Esc));
    let term = play(&rt, &mut app, &mut services, keys);
    insta::assert_snapshot!("review_screen", screen(&term));
}

/// The scoring form: a digit sets the focused criterion and the focus stays; ↑/↓ (k/j) move
/// between the criteria and the decision row; tab goes to the decision row; a new item starts
/// on the first criterion; a decision with a criterion unscored is refused, naming it.
#[test]
fn scores_land_where_they_were_typed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let first = review(&app).draft.item_id.clone();
    // V 8 ↓ 9 ↓ 0 y ctrl-s: 8/9/10, retain.
    play(
        &rt,
        &mut app,
        &mut services,
        vec![
            key('8'),
            code(KeyCode::Down),
            key('9'),
            code(KeyCode::Down),
            key('0'),
            key('y'),
            ctrl('s'),
        ],
    );
    let saved = Store::open(&db).unwrap().decisions().unwrap();
    assert_eq!(saved.len(), 1);
    let d = &saved[0];
    assert_eq!(d.item_id, first);
    assert_eq!(
        (d.clarity, d.relevance, d.coherence, d.decision),
        (Some(8), Some(9), Some(10), Decision::Retain)
    );
    // The next item starts on the first criterion: 7 7 7 sets Clarity only, and k goes back.
    assert_eq!(review(&app).criterion, 0);
    play(&rt, &mut app, &mut services, typed("777"));
    let dr = review(&app).draft.clone();
    assert_eq!(
        (dr.clarity, dr.relevance, dr.coherence),
        (Some(7), None, None)
    );
    play(
        &rt,
        &mut app,
        &mut services,
        vec![key('j'), key('j'), key('k'), key('4')],
    );
    assert_eq!(review(&app).draft.relevance, Some(4));
    // Back on Clarity: 8, then tab to the decision row: the 9 scores nothing.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![key('k'), key('8'), code(KeyCode::Tab), key('9')],
    );
    let dr = review(&app).draft.clone();
    assert_eq!(
        (dr.clarity, dr.relevance, dr.coherence),
        (Some(8), Some(4), None)
    );
    assert_eq!(
        review(&app).criterion,
        prism::tui::screens::REVIEW_DECISION_ROW
    );
    assert!(screen(&term).contains("the decision row takes y, x or v"));
    // Saving with Coherence unscored is refused and says which; nothing new is stored.
    let term = play(&rt, &mut app, &mut services, vec![key('x'), ctrl('s')]);
    let s = screen(&term);
    assert!(
        s.contains("score Coherence first (1-9, 0 = 10): each reviewer scores all three"),
        "{s}"
    );
    assert_eq!(
        review(&app).criterion,
        2,
        "the focus goes to the missing one"
    );
    assert_eq!(Store::open(&db).unwrap().decisions().unwrap().len(), 1);
    // Scored, it saves.
    play(&rt, &mut app, &mut services, vec![key('6'), ctrl('s')]);
    let saved = Store::open(&db).unwrap().decisions().unwrap();
    assert_eq!(saved.len(), 2);
    let d = saved.iter().find(|d| d.item_id != first).unwrap();
    assert_eq!(
        (d.clarity, d.relevance, d.coherence, d.decision),
        (Some(8), Some(4), Some(6), Decision::Remove)
    );
}

/// Two runs' answers to the sample's last item, each scored with a reason: alpha's (right) in
/// run r-old, beta's (wrong) in run r-new.
fn two_runs_answering_the_last_item(db: &std::path::Path) {
    use prism::store::{JobRecord, RunConfig, RunRecord, RunStatus};
    let ds = dataset::load_sample().dataset;
    let last = ds.items.last().unwrap();
    let task = ds.task_of(last).id.clone();
    {
        let mut store = Store::open(db).unwrap();
        for (run, model, text, s) in [
            ("r-old", "alpha", "an older answer", 1.0),
            ("r-new", "beta", "a newer answer", 0.0),
        ] {
            store
                .create_run(
                    &RunRecord {
                        id: run.into(),
                        created_at: 0,
                        dataset: "<sample-data>".into(),
                        config: RunConfig::default(),
                        status: RunStatus::Finished,
                    },
                    &[JobRecord {
                        idx: 0,
                        item_id: last.id.to_string(),
                        task_id: task.clone(),
                        model: model.into(),
                        sample: 0,
                    }],
                )
                .unwrap();
            store
                .save_responses(&[common::answers::stored_answer(
                    (run, 0),
                    (&last.id, &task),
                    model,
                    text,
                )])
                .unwrap();
            let mut sc = scored(last, &task, "exact", 0, model, s);
            sc.run_id = run.into();
            sc.detail = format!("reason {}", if s > 0.5 { "one" } else { "two" });
            store.save_scores(&[sc]).unwrap();
        }
    }
}

/// The review screen shows every stored answer of the item, from every run and model, with its
/// score and the evaluator's reason, whichever run the queue's signals came from.
#[test]
fn every_stored_answer_of_the_item_is_in_view() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    two_runs_answering_the_last_item(&db);
    let last = dataset::load_sample()
        .dataset
        .items
        .last()
        .unwrap()
        .id
        .to_string();
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let term = play(&rt, &mut app, &mut services, vec![]);
    assert_eq!(review(&app).draft.item_id, last);
    let s = screen(&term);
    for want in [
        "Stored answers (2)",
        "alpha #0 run r-old 1.00 ✓  reason one",
        "beta #0 run r-new 0.00 ✗  reason two",
        "an older answer",
        "a newer answer",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }
}

/// The status line tells the truth about the store: an error shows until the next store call
/// works (a draft saved, a decision saved, a refresh), then it is gone.
#[test]
fn a_store_error_clears_when_the_store_works_again() {
    use prism::tui::jobs::{Delivery, Msg};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    app.on_delivery(Delivery {
        to: ScreenId::Review,
        msg: Msg::failed("saving the draft: connection closed"),
    });
    let term = play(&rt, &mut app, &mut services, vec![]);
    assert!(screen(&term).contains("connection closed"));
    // The next keystroke saves the draft, which works: the error goes.
    play(&rt, &mut app, &mut services, vec![key('5')]);
    let term = play(&rt, &mut app, &mut services, vec![]);
    let s = screen(&term);
    assert!(!s.contains("connection closed"), "{s}");
    assert_eq!(review(&app).draft.clarity, Some(5));
}

/// Blind review: the item's models are "model A" and "model B" (in name order), the run ids
/// (which may name a model) are left out, and no model name is on the screen.
#[test]
fn blind_review_names_no_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    two_runs_answering_the_last_item(&db);
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    services.blind = true;
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let term = play(&rt, &mut app, &mut services, vec![]);
    let s = screen(&term);
    for want in [
        "(model A 1.00, model B 0.00)",
        "model A #0 1.00 ✓  reason one",
        "model B #0 0.00 ✗  reason two",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }
    assert!(!s.contains("alpha") && !s.contains("beta"), "{s}");
    assert!(!s.contains("r-old") && !s.contains("r-new"), "{s}");
    insta::assert_snapshot!("review_screen_blind", s);
}

/// All three criteria scored (8 each), the decision `d`, saved.
fn decide(d: char) -> Vec<Event> {
    let down = || code(KeyCode::Down);
    vec![
        key('8'),
        down(),
        key('8'),
        down(),
        key('8'),
        key(d),
        ctrl('s'),
    ]
}

/// Two reviewers, two processes' worth of TUIs on one SQLite file (issue 21): Bob removes the
/// first item and starts scoring the next; Ann, in her own terminal, retains the first item.
/// Within a second, with no key pressed, Bob's header counts the item disputed, and the score
/// he was typing and his place in the queue are as he left them.
#[test]
fn a_decision_on_one_screen_appears_on_the_other_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut bob, mut sb) = session(&rt, &db, "bob");
    let (mut ann, mut sa) = session(&rt, &db, "ann");
    let bob_keys = vec![vec![key('V')], decide('x'), vec![key('5')]];
    let ann_keys = vec![vec![key('V')], decide('y')];
    let s = common::screen::watch_while_other_acts(
        &rt,
        common::screen::Side {
            app: &mut bob,
            services: &mut sb,
            keys: bob_keys,
        },
        common::screen::Side {
            app: &mut ann,
            services: &mut sa,
            keys: ann_keys,
        },
        std::time::Duration::from_millis(800),
        || {},
        std::time::Duration::from_secs(1),
    );
    assert!(s.contains("· 1 disputed"), "{s}");
    let first = ann.find::<Review>().unwrap().data.as_ref().unwrap();
    assert_eq!(
        first.decisions.len(),
        2,
        "Ann saw Bob's decision when she opened"
    );
    // Bob's draft of the second item is untouched.
    let b = review(&bob);
    assert_eq!(b.draft.clarity, Some(5));
    assert_ne!(b.draft.item_id, first.decisions[0].item_id);
    assert!(s.contains("Clarity            5"), "{s}");
}

/// "Rule and judge disagree" (issue 21): an answer the judge passed though the rule's own
/// verdict failed it shows both, and the triage line names the signal.
#[test]
fn an_answer_the_rule_and_the_judge_disagree_on_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    two_runs_answering_the_last_item(&db);
    let ds = dataset::load_sample().dataset;
    let last = ds.items.last().unwrap();
    {
        let mut store = Store::open(&db).unwrap();
        let mut sc = scored(last, &ds.task_of(last).id, "fact_judge", 0, "alpha", 1.0);
        sc.run_id = "r-old".into();
        sc.detail = "the judge: equivalent".into();
        sc.judge = Some("j".into());
        sc.rule_score = Some(0.0);
        store.save_scores(&[sc]).unwrap();
    }
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let term = play(&rt, &mut app, &mut services, vec![]);
    assert_eq!(review(&app).draft.item_id, last.id.to_string());
    let s = screen(&term);
    for want in [
        "models disagree, rule and judge disagree",
        "alpha #0 run r-old 1.00 ✓  rule says ✗  the judge: equivalent",
        "beta #0 run r-new 0.00 ✗  reason two",
    ] {
        assert!(s.contains(want), "{want:?} missing:\n{s}");
    }
}

/// Nothing the review screen saves blocks the screen (issue 24): with the store held locked by
/// another process for 2 s, the scores typed show on the next frame, well before the lock goes;
/// the drafts are saved once it goes (on quit the TUI waits for them).
#[test]
fn keys_and_frames_go_on_while_another_process_holds_the_store() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    // Another process takes the write lock and keeps it for 2 s.
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let path = db.clone();
    let holder = std::thread::spawn(move || {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("BEGIN IMMEDIATE; CREATE TABLE hold_it (x INTEGER);")
            .unwrap();
        let at = Instant::now();
        locked_tx.send(at).unwrap();
        std::thread::sleep(Duration::from_secs(2));
        c.execute_batch("ROLLBACK").unwrap();
        Instant::now()
    });
    let locked_at = locked_rx.recv().unwrap();
    let mut term = Terminal::new(common::screen::Timed::new(120, 40)).unwrap();
    let keys = vec![key('5'), code(KeyCode::Down), key('6')];
    let typed_at = Instant::now();
    rt.block_on(async {
        use futures::StreamExt;
        let stream = futures::stream::iter(keys.into_iter().map(Ok::<_, io::Error>))
            .chain(futures::stream::pending());
        let stop = tokio::time::sleep(Duration::from_millis(800));
        prism::tui::run_loop_until(&mut term, &mut app, stream, &mut services, stop).await
    })
    .unwrap();
    let released_at = holder.join().unwrap();
    // The first frame showing both scores: drawn while the lock was still held.
    let (shown_at, _) = term
        .backend()
        .frames
        .iter()
        .find(|(_, f)| f.contains("Clarity            5") && f.contains("Domain Relevance   6"))
        .expect("a frame with both scores");
    assert!(
        *shown_at < released_at && shown_at.duration_since(typed_at) < Duration::from_millis(500),
        "the scores showed {:?} after typing; the lock was held {:?}",
        shown_at.duration_since(typed_at),
        released_at.duration_since(locked_at)
    );
    // The drafts waited for the lock and were saved.
    let store = Store::open(&db).unwrap();
    let drafts = store.drafts("ann").unwrap();
    assert_eq!(drafts.len(), 1, "{drafts:?}");
    assert_eq!((drafts[0].clarity, drafts[0].relevance), (Some(5), Some(6)));
}

/// Labelling from the review screen (issue 46): `s` selects the next stored answer, `L` labels
/// it; in blind review the popup names it "model A" and no model's name reaches the screen, yet
/// the store keeps the label on the right answer, with its model.
#[test]
fn a_stored_answer_is_labelled_from_the_review_screen_blind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    two_runs_answering_the_last_item(&db);
    // Alpha's answer was scored by a judge: blind, its verdict hides until labelled.
    {
        let store = Store::open(&db).unwrap();
        let mut s = store.scores(Some("r-old")).unwrap().remove(0);
        s.judge = Some("j".into());
        s.detail = "the judge: same meaning".into();
        let mut store = store;
        store.save_scores(&[s]).unwrap();
    }
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    services.blind = true;
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let term = play(&rt, &mut app, &mut services, vec![]);
    // The newer answer (beta: model B) is listed first and selected.
    assert!(screen(&term).contains("▸ model B #0"), "{}", screen(&term));
    let term = play(&rt, &mut app, &mut services, vec![key('s'), key('L')]);
    let s = screen(&term);
    assert!(s.contains("▸ model A #0"), "{s}");
    assert!(s.contains("Label model A's answer"), "{s}");
    assert!(
        s.contains("model A #0 judge's verdict hidden until you label it (L)"),
        "{s}"
    );
    assert!(!s.contains("the judge: same meaning"), "{s}");
    let mut keys = vec![code(KeyCode::Tab)];
    keys.extend(typed("plain and right"));
    keys.push(code(KeyCode::Enter));
    play(&rt, &mut app, &mut services, keys);
    let term = play(&rt, &mut app, &mut services, vec![]);
    let s = screen(&term);
    // Labelled: the judge's verdict shows beside yours.
    assert!(
        s.contains("model A #0 1.00 ✓  you: correct  the judge: same meaning"),
        "{s}"
    );
    assert!(!s.contains("alpha") && !s.contains("beta"), "{s}");
    let labels = Store::open(&db).unwrap().answer_labels(None).unwrap();
    assert_eq!(labels.len(), 1, "{labels:?}");
    let l = &labels[0];
    assert_eq!(
        (
            l.run_id.as_str(),
            l.job_idx,
            l.model.as_str(),
            l.reviewer.as_str()
        ),
        ("r-old", 0, "alpha", "ann")
    );
    assert_eq!(l.label, prism::store::Label::Correct);
    assert_eq!(l.note, "plain and right");
}

/// The review queue ranks an item whose judges disagree, or whose judge flips when asked again,
/// and says so (issue 46), from the verdicts `prism score --judge a,b --judge-repeats N` stores.
#[test]
fn judges_that_disagree_or_flip_put_an_item_up_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    two_runs_answering_the_last_item(&db);
    let ds = dataset::load_sample().dataset;
    let last = ds.items.last().unwrap();
    {
        let mut store = Store::open(&db).unwrap();
        let v = |judge: &str, repeat: u32, score: f64| prism::store::JudgeVerdict {
            run_id: "r-old".into(),
            job_idx: 0,
            judge: judge.into(),
            repeat,
            item_id: last.id.to_string(),
            task_id: ds.task_of(last).id.to_string(),
            model: "alpha".into(),
            evaluator: "judge_equiv".into(),
            score: Some(score),
            detail: String::new(),
            reply: None,
            attempts: 1,
            fallback: false,
            created_at: 0,
        };
        store
            .save_judge_verdicts(&[
                v("j", 0, 1.0),
                v("j", 1, 0.0),
                v("j", 2, 1.0),
                v("k", 0, 0.0),
            ])
            .unwrap();
    }
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    let term = play(&rt, &mut app, &mut services, vec![]);
    assert_eq!(review(&app).draft.item_id, last.id.to_string());
    let s = screen(&term);
    assert!(
        s.contains("the judges disagree, a judge flips when asked again"),
        "{s}"
    );
}

/// Labels are live across TUIs on one store (issue 46): Ann has the judges screen open; Bob,
/// in another TUI on the same SQLite file, labels an answer from his review screen; Ann's
/// screen counts it within a second, without a key.
#[test]
fn a_label_made_in_one_tui_appears_on_the_others_judges_screen_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    two_runs_answering_the_last_item(&db);
    let rt = runtime();
    let (mut ann, mut sa) = session(&rt, &db, "ann");
    let (mut bob, mut sb) = session(&rt, &db, "bob");
    let s = common::screen::watch_while_other_acts(
        &rt,
        common::screen::Side {
            app: &mut ann,
            services: &mut sa,
            keys: vec![vec![key('H')], vec![key('J')]],
        },
        common::screen::Side {
            app: &mut bob,
            services: &mut sb,
            keys: vec![vec![key('V')], vec![key('L')], vec![code(KeyCode::Enter)]],
        },
        std::time::Duration::from_millis(800),
        || {},
        std::time::Duration::from_secs(1),
    );
    assert!(s.contains("judges on trial"), "{s}");
    assert!(s.contains("people decided 1 in all"), "{s}");
    let labels = Store::open(&db).unwrap().answer_labels(None).unwrap();
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0].reviewer, "bob");
}

/// Undo (`z`, issue 43): the last decision and label of the session are taken back by adding
/// what was there before (nothing is deleted): a label changed from correct to hallucinated is
/// correct again; a first label and a first decision are withdrawn (the item unreviewed, the
/// answer unlabelled); with nothing left, `z` says so.
#[test]
fn z_takes_back_the_sessions_labels_and_decisions_without_deleting_any() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    two_runs_answering_the_last_item(&db);
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &db, "ann");
    play(&rt, &mut app, &mut services, vec![key('V')]);
    play(&rt, &mut app, &mut services, vec![]);
    let item = review(&app).draft.item_id.clone();
    // The selected answer labelled correct, then hallucinated.
    let label = |choice: usize| {
        let mut keys = vec![key('L')];
        keys.extend((0..choice).map(|_| code(KeyCode::Right)));
        keys.push(code(KeyCode::Enter));
        keys
    };
    play(&rt, &mut app, &mut services, label(1));
    let term = play(&rt, &mut app, &mut services, vec![]);
    // The first label is just that; the second says the first is kept.
    let s = screen(&term);
    assert!(s.contains("labelled correct"), "{s}");
    assert!(!s.contains("earlier label"), "{s}");
    play(&rt, &mut app, &mut services, label(0));
    let term = play(&rt, &mut app, &mut services, vec![]);
    let s = screen(&term);
    assert!(
        s.contains("labelled hallucinated (your earlier label on this answer kept"),
        "{s}"
    );
    let labels = || Store::open(&db).unwrap().answer_labels(None).unwrap();
    let newest = |all: &[prism::store::AnswerLabel]| -> Vec<prism::store::Label> {
        prism::store::judging::newest_labels(all)
            .iter()
            .map(|l| l.label)
            .collect()
    };
    assert_eq!(newest(&labels()), vec![prism::store::Label::Hallucinated]);
    // A decision on the item: scored, retain, saved.
    let down = || code(KeyCode::Down);
    play(
        &rt,
        &mut app,
        &mut services,
        vec![
            key('8'),
            down(),
            key('7'),
            down(),
            key('9'),
            key('y'),
            ctrl('s'),
        ],
    );
    play(&rt, &mut app, &mut services, vec![]);
    let decisions = || {
        prism::store::Db::open(Some(&db), std::path::Path::new("unused.db"))
            .unwrap()
            .decisions()
            .unwrap()
            .into_iter()
            .filter(|d| d.item_id == item)
            .collect::<Vec<_>>()
    };
    assert_eq!(decisions().len(), 1);

    // z: the decision is withdrawn, as a second record; the item is unreviewed again.
    play(&rt, &mut app, &mut services, vec![key('z')]);
    let term = play(&rt, &mut app, &mut services, vec![]);
    let d = decisions();
    assert_eq!(d.len(), 2, "nothing deleted: {d:?}");
    assert_eq!(d[1].decision, Decision::Withdrawn);
    let refs: Vec<&prism::review::ReviewRecord> = d.iter().collect();
    assert_eq!(
        prism::review::status(&refs, 2).state,
        prism::review::State::Unreviewed
    );
    let s = screen(&term);
    assert!(
        s.contains("you have no decision on it now (nothing deleted)"),
        "{s}"
    );
    assert!(s.contains("0 decisions by you"), "{s}");
    // z: the hallucinated label taken back: correct again.
    let term = play(&rt, &mut app, &mut services, vec![key('z')]);
    let term2 = play(&rt, &mut app, &mut services, vec![]);
    assert_eq!(labels().len(), 3);
    assert_eq!(newest(&labels()), vec![prism::store::Label::Correct]);
    let s = format!("{}{}", screen(&term), screen(&term2));
    assert!(s.contains("correct again"), "{s}");
    // z: the first label withdrawn: no label on the answer, four rows kept.
    play(&rt, &mut app, &mut services, vec![key('z')]);
    play(&rt, &mut app, &mut services, vec![]);
    let all = labels();
    assert_eq!(all.len(), 4);
    assert!(newest(&all).is_empty(), "{all:?}");
    // Nothing left from this session.
    let term = play(&rt, &mut app, &mut services, vec![key('z')]);
    assert!(
        screen(&term).contains("nothing to undo"),
        "{}",
        screen(&term)
    );
}
