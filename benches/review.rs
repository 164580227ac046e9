//! Review at scale (issue 14): a synthetic release of 100,000 items (benches/support/synth.rs)
//! with 3 models' scores on 30,000 of them and 40,000 decisions by 4 reviewers already stored.
//!
//! - the queue: loading what the screen reads (decisions, drafts, scores → signals), the items'
//!   statuses and the triage-ordered queue, as the review screen does when it opens;
//! - saving a decision and loading the next item, through the review screen's own code: the
//!   decision key, `ctrl-s`, the save as the TUI's job does it, the screen's handling of the
//!   saved decision (status and queue updated, next item entered, its draft), the next item's
//!   stored answers and scores, and the refresh of other reviewers' decisions; p50/p99/max over
//!   500 saves. The frame itself is drawn at the next 60 Hz tick after that.
//!
//! - another reviewer live: a decision saved on another connection, until this screen has it
//!   drawn (the watcher notices, the screen reads what is new, applies it and draws a frame);
//!   p50/p99/max over 200 saves at random moments. The loop's 60 Hz frame cap can add up to
//!   16 ms to the drawing; the store's side is all here.
//!
//! Both on SQLite and, when PostgreSQL's server binaries are installed, on a local PostgreSQL
//! started for the bench (its own port and data directory).
//!
//! `cargo bench --bench review [-- --items N --saves N]`

#[path = "support/synth.rs"]
mod synth;

#[path = "../tests/common/pg.rs"]
mod pg;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use prism::dataset::Dataset;
use prism::review::load::ReviewData;
use prism::review::{Decision, ReviewRecord};
use prism::store::{Db, ScoreRecord, Store};
use prism::tui::component::{Cmd, Component, Cx, Input};
use prism::tui::jobs::answers::{LoadStored, Stored};
use prism::tui::jobs::review::{
    DecisionSaved, RefreshReview, ReviewChanged, ReviewMore, SaveDecision, SaveDraft,
};
use prism::tui::jobs::{Job, Msg};
use prism::tui::keymap::{Action, Keymap};
use prism::tui::screens::Review;
use prism::tui::session::Session;

/// A digit key, as the review screen gets it (digits are not bound to actions).
fn digit(c: char) -> Input {
    Input::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char(c),
        crossterm::event::KeyModifiers::NONE,
    ))
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn seed(ds: &Dataset, store: &mut Store, review: &Db) {
    let mut scores = Vec::new();
    for (i, it) in ds.items.iter().enumerate().take(30_000) {
        for (m, model) in ["a", "b", "c"].iter().enumerate() {
            scores.push(ScoreRecord {
                run_id: "bench".into(),
                job_idx: (i * 3 + m) as u32,
                item_id: it.id.to_string(),
                task_id: ds.task_of(it).id.clone(),
                model: model.to_string(),
                sample: 0,
                evaluator: "exact".into(),
                score: Some(((i * 7 + m * 3) % 5) as f64 / 4.0),
                detail: String::new(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            });
        }
    }
    store.save_scores(&scores).unwrap();
    let reviewers = ["ann", "bob", "cyd", "dee"];
    let decisions: Vec<ReviewRecord> = (0..40_000)
        .map(|k| {
            let it = &ds.items[(k * 2) % ds.items.len()];
            ReviewRecord {
                uid: format!("seed-{k}"),
                item_id: it.id.to_string(),
                task_id: ds.task_of(it).id.clone(),
                reviewer: reviewers[k % 4].into(),
                round: 1,
                clarity: Some((k % 10 + 1) as u8),
                relevance: Some(7),
                coherence: Some(8),
                decision: Decision::ALL[k % 3],
                rationale: "seeded decision with a rationale of ordinary length".into(),
                edited_question: None,
                edited_answer: None,
                created_at: k as i64,
            }
        })
        .collect();
    for chunk in decisions.chunks(2_000) {
        review.save_decisions(chunk).unwrap();
    }
}

/// What the review screen's context borrows: a session, the theme and the keymap.
struct ScreenEnv {
    session: Session,
    theme: prism::theme::Theme,
    keymap: Keymap,
}

impl ScreenEnv {
    fn new(ds: &Arc<Dataset>) -> ScreenEnv {
        ScreenEnv {
            session: Session::new(ds.clone()),
            theme: prism::theme::Theme::default_theme(),
            keymap: Keymap::default(),
        }
    }

    fn cx<'a>(&'a self, ds: &'a Arc<Dataset>) -> Cx<'a> {
        Cx {
            ds,
            problems: &[],
            theme: &self.theme,
            keymap: &self.keymap,
            session: &self.session,
            models: &[],
            chosen: &[],
            can_run: true,
            notice: None,
            judge: None,
        }
    }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn measure(label: &str, ds: &Arc<Dataset>, review: &Db, saves: usize) {
    let screen_env = ScreenEnv::new(ds);
    let cx = screen_env.cx(ds);
    // Opening the screen: everything it reads, statuses and the queue.
    let t = Instant::now();
    let data = ReviewData::load(review, "eve", None).unwrap();
    let loaded = t.elapsed();
    let t = Instant::now();
    let statuses = data.statuses(2);
    let st = t.elapsed();
    let t = Instant::now();
    let q = prism::review::queue::build(ds, &statuses, &data.signals, "eve", Default::default());
    let qt = t.elapsed();
    let mut screen = Review::new();
    let t = Instant::now();
    let mut pending = screen.on_msg(
        &Msg::new(prism::tui::jobs::review::Review(Box::new(data))),
        &cx,
    );
    let opened = t.elapsed();
    println!(
        "{label}: queue of {} items ({} with signals): read {:.1} ms, statuses {:.1} ms, \
         triage order {:.1} ms; the screen opening on it {:.1} ms",
        q.len(),
        screen.data.as_ref().map_or(0, |d| d.signals.len()),
        loaded.as_secs_f64() * 1e3,
        st.as_secs_f64() * 1e3,
        qt.as_secs_f64() * 1e3,
        opened.as_secs_f64() * 1e3
    );

    // Carries out what the TUI's jobs would, feeding results back to the screen.
    let run = |screen: &mut Review, cmds: Vec<Cmd>, review: &Db| {
        let mut queue = cmds;
        while let Some(c) = queue.pop() {
            let Cmd::Job(req) = c else { continue };
            let msg = carry_out(req, review, ds);
            if let Some(m) = msg {
                queue.extend(screen.on_msg(&m, &cx));
            }
        }
    };
    run(&mut screen, std::mem::take(&mut pending), review);
    let stored_before = review.decisions().map(|d| d.len()).unwrap_or(0);
    let mut lat = Vec::with_capacity(saves);
    for k in 0..saves {
        let t = Instant::now();
        let a = if k % 2 == 0 {
            Action::Retain
        } else {
            Action::Remove
        };
        // The three criteria (a decision with one unscored is refused), then the decision.
        for input in [
            digit('8'),
            Input::Action(Action::Down),
            digit('7'),
            Input::Action(Action::Down),
            digit('9'),
            Input::Action(a),
        ] {
            let cmds = screen.update(input, &cx);
            run(&mut screen, cmds, review);
        }
        let cmds = screen.update(Input::Action(Action::SaveDecision), &cx);
        run(&mut screen, cmds, review);
        lat.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // Every save landed (a refused one would time nothing but a notice).
    let stored = review.decisions().map(|d| d.len()).unwrap_or(0);
    assert_eq!(stored, stored_before + saves, "{label}: every save stored");
    let n = lat.len();
    println!(
        "{label}: decide, save and load the next item ({n} saves): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        pct(&mut lat, 1.0)
    );
}

/// Another reviewer's save until this screen has drawn it (issue 21: under 300 ms p99).
fn measure_live(label: &str, ds: &Arc<Dataset>, mine: Db, other: Db) {
    use prism::store::panel_watch::Watch;
    let screen_env = ScreenEnv::new(ds);
    let cx = screen_env.cx(ds);
    let mut screen = Review::new();
    let data = ReviewData::load(&mine, "fay", None).unwrap();
    let _ = screen.on_msg(
        &Msg::new(prism::tui::jobs::review::Review(Box::new(data))),
        &cx,
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let source = mine.review_source();
    let _watch = Watch::start(source, move || {
        let _ = tx.send(());
    })
    .unwrap();
    // The watcher takes its first look.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    let area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let saves = 200;
    let mut lat = Vec::with_capacity(saves);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for k in 0..saves {
        // At a random moment of the watcher's poll.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(std::time::Duration::from_micros(rng % 60_000));
        while rx.try_recv().is_ok() {}
        let it = &ds.items[(k * 13) % ds.items.len()];
        let r = ReviewRecord {
            uid: format!("live-{k}"),
            item_id: it.id.to_string(),
            task_id: ds.task_of(it).id.clone(),
            reviewer: "gus".into(),
            round: 1,
            clarity: Some(8),
            relevance: Some(8),
            coherence: Some(8),
            decision: Decision::Remove,
            rationale: "live".into(),
            edited_question: None,
            edited_answer: None,
            created_at: 2_000_000_000_000 + k as i64,
        };
        let t = Instant::now();
        other.save_decisions(std::slice::from_ref(&r)).unwrap();
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the watcher saw the save");
        let mut cmds = screen.on_msg(&Msg::new(ReviewChanged), &cx);
        while let Some(c) = cmds.pop() {
            if let Cmd::Job(job) = c
                && let Ok(RefreshReview { after }) = job.downcast::<RefreshReview>()
            {
                let (decisions, seq) = mine.decisions_after(after).unwrap();
                cmds.extend(screen.on_msg(&Msg::new(ReviewMore { decisions, seq }), &cx));
            }
        }
        term.draw(|f| screen.draw(f, area, &cx)).unwrap();
        lat.push(t.elapsed().as_secs_f64() * 1e3);
        let data = screen.data.as_ref().unwrap();
        assert!(
            data.decisions.iter().any(|d| d.uid == r.uid),
            "{label}: applied"
        );
    }
    println!(
        "{label}: another reviewer's save until this screen draws it ({saves} saves): \
         p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        pct(&mut lat, 1.0)
    );
}

fn main() {
    let n = arg("--items", 100_000);
    let saves = arg("--saves", 500);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("release");
    synth::synth_release(&root, n);
    let ds = Arc::new(prism::dataset::load_path(&root).unwrap().dataset);
    println!("{} items in {} tasks", ds.items.len(), ds.tasks.len());

    let db = dir.path().join("prism.db");
    let mut store = Store::open(&db).unwrap();
    let review = Db::file(&db);
    seed(&ds, &mut store, &review);
    measure("SQLite", &ds, &review, saves);
    measure_live("SQLite", &ds, Db::file(&db), Db::file(&db));

    let have_pg = std::fs::read_dir("/usr/lib/postgresql")
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if have_pg {
        // fsync on, as a real server runs: a save waits for its commit to reach the disk.
        let server = pg::Pg::start_with(true);
        // The answers in this machine's store, the decisions on the shared one (as the TUI
        // reviews with a shared store).
        let url = server.url();
        let shared = || Db::open(Some(Path::new(&url)), &db).unwrap();
        let review = shared();
        let mut unused = Store::open_in_memory().unwrap();
        seed(&ds, &mut unused, &review);
        measure("PostgreSQL (local)", &ds, &review, saves);
        measure_live("PostgreSQL (local)", &ds, shared(), shared());
    } else {
        println!("PostgreSQL: not installed (scripts/bench-tools or .ci/run install it); skipped");
    }
}

/// What the TUI's jobs would do for the review screen, done here on the bench's own stores.
fn carry_out(req: Box<dyn Job>, review: &Db, ds: &Dataset) -> Option<Msg> {
    let store = review.read().unwrap();
    let req = match req.downcast::<SaveDraft>() {
        Ok(SaveDraft(mut d)) => {
            d.reviewer = "eve".into();
            review.save_draft(&d).unwrap();
            return None;
        }
        Err(other) => other,
    };
    let req = match req.downcast::<SaveDecision>() {
        Ok(SaveDecision(mut r)) => {
            r.reviewer = "eve".into();
            r.uid = ReviewRecord::new_uid(&r.reviewer, r.created_at);
            review.save_decisions(std::slice::from_ref(&r)).unwrap();
            return Some(Msg::new(DecisionSaved(r)));
        }
        Err(other) => other,
    };
    let req = match req.downcast::<LoadStored>() {
        Ok(LoadStored { item, rescore }) => {
            let id = &ds.items[item].id;
            return Some(Msg::new(Stored {
                item,
                records: store.responses_for_item(id).unwrap(),
                scores: store.scores_for_item(id).unwrap(),
                rescore,
            }));
        }
        Err(other) => other,
    };
    match req.downcast::<RefreshReview>() {
        Ok(RefreshReview { after }) => {
            let (decisions, seq) = review.decisions_after(after).unwrap();
            Some(Msg::new(ReviewMore { decisions, seq }))
        }
        Err(_) => None,
    }
}
