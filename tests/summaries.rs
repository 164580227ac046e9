//! The summaries kept as scores land (issue 47) equal the rates recomputed from the scores
//! themselves, after everything that writes scores: runs, re-scores with a judge, an import,
//! a newer run, `prism runs rm` and a `prism score` killed with kill -9 half-way; on a SQLite
//! file and on a real PostgreSQL store. Recomputed the one way rates have always been made
//! (points through the aggregator; the newest run's score per item, model and sample).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::{mock, pg::Pg};
use prism::eval::summary::{Aggregator, Catalogue, ModelSummary, Point};
use prism::store::summaries::{LatestScore, TaskSummary};

fn models(mock: &mock::Mock) -> String {
    let m = |name: &str, model: &str| {
        format!(
            "[[models]]\nname = \"{name}\"\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"{model}\"\n\n",
            mock.url()
        )
    };
    [
        m("e", "echo"),
        m("ah", "autohall"),
        m("j", "judge"),
        m("js", "judgeslow"),
    ]
    .concat()
}

/// A score as stored: (run, job, item, task, model, sample, score).
type Row = (String, u32, String, String, String, u32, Option<f64>);

/// The rates of a run per model, from its score rows, as every reader made them before
/// summaries: points through the aggregator.
fn recomputed(rows: &[Row], run: &str) -> Vec<ModelSummary> {
    let mut agg = Aggregator::default();
    for r in rows.iter().filter(|r| r.0 == run) {
        agg.add(Point {
            model: &r.4,
            task: &r.3,
            item: &r.2,
            score: r.6.filter(|s| (0.0..=1.0).contains(s)),
        });
    }
    agg.finish(&Catalogue::default())
}

/// The newest run's score per item, model and sample, recomputed.
fn newest(rows: &[Row]) -> BTreeMap<(String, String, u32), (String, Option<f64>)> {
    let mut out: BTreeMap<(String, String, u32), (String, Option<f64>)> = BTreeMap::new();
    for r in rows {
        let key = (r.2.clone(), r.4.clone(), r.5);
        if out.get(&key).is_none_or(|(run, _)| *run < r.0) {
            out.insert(key, (r.0.clone(), r.6));
        }
    }
    out
}

/// Summaries and newest scores as stored equal the recomputed ones; how many runs.
fn check(rows: &[Row], sums: &[TaskSummary], latest: &[LatestScore], when: &str) -> usize {
    let runs: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let summed: std::collections::BTreeSet<&str> = sums.iter().map(|s| s.run_id.as_str()).collect();
    assert_eq!(runs, summed, "{when}: the runs summarised");
    for run in &runs {
        let want = recomputed(rows, run);
        let mine: Vec<TaskSummary> = sums.iter().filter(|s| s.run_id == *run).cloned().collect();
        let got = prism::report::build::model_summaries(&mine, &Catalogue::default());
        assert_eq!(want.len(), got.len(), "{when}: {run}'s models");
        for w in &want {
            let g = got.iter().find(|g| g.model == w.model).unwrap();
            assert_eq!(
                w.tasks.keys().collect::<Vec<_>>(),
                g.tasks.keys().collect::<Vec<_>>(),
                "{when}: {run} {}'s tasks",
                w.model
            );
            for (t, wt) in &w.tasks {
                let gt = &g.tasks[t];
                assert_eq!(
                    (wt.scored, wt.unscored),
                    (gt.scored, gt.unscored),
                    "{when}: {run} {} {t}",
                    w.model
                );
                assert!((wt.s - gt.s).abs() < 1e-9, "{when}: {run} {} {t}", w.model);
            }
            for (a, b) in w.rates.dims.iter().zip(&g.rates.dims) {
                match (a, b) {
                    (Some(a), Some(b)) => assert!((a.rate - b.rate).abs() < 1e-9),
                    (a, b) => assert_eq!(a.is_none(), b.is_none(), "{when}"),
                }
            }
        }
    }
    let want = newest(rows);
    let got: BTreeMap<(String, String, u32), (String, Option<f64>)> = latest
        .iter()
        .map(|l| {
            (
                (l.item_id.clone(), l.model.clone(), l.sample),
                (l.run_id.clone(), l.score),
            )
        })
        .collect();
    assert_eq!(want, got, "{when}: the newest scores");
    runs.len()
}

/// A store the commands name: a file, or a shared store by URL.
struct Side {
    dir: tempfile::TempDir,
    db: String,
}

impl Side {
    fn cmd(&self, args: &[&str]) -> StdCommand {
        let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("prism"));
        c.args(args)
            .args(["--db", &self.db])
            .env("PRISM_CONFIG_DIR", self.dir.path())
            .env("PRISM_DATA_DIR", self.dir.path());
        c
    }

    fn prism(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn pg(&self) -> bool {
        self.db.starts_with("postgres")
    }

    /// Score rows, summaries and newest scores as the store holds them.
    fn read(&self) -> (Vec<Row>, Vec<TaskSummary>, Vec<LatestScore>) {
        if self.pg() {
            let mut c = postgres::Client::connect(&self.db, postgres::NoTls).unwrap();
            let rows = c
                .query(
                    "SELECT run_id, job_idx, item_id, task_id, model, sample, score FROM scores",
                    &[],
                )
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r.get(0),
                        r.get::<_, i64>(1) as u32,
                        r.get(2),
                        r.get(3),
                        r.get(4),
                        r.get::<_, i64>(5) as u32,
                        r.get(6),
                    )
                })
                .collect();
            let sums = c
                .query(
                    "SELECT run_id, model, task_id, scored, unscored, sum, hallucinated, rows
                     FROM run_summaries",
                    &[],
                )
                .unwrap()
                .iter()
                .map(|r| TaskSummary {
                    run_id: r.get(0),
                    model: r.get(1),
                    task_id: r.get(2),
                    scored: r.get::<_, i64>(3) as u32,
                    unscored: r.get::<_, i64>(4) as u32,
                    sum: r.get(5),
                    hallucinated: r.get::<_, i64>(6) as u32,
                    rows: r.get::<_, i64>(7) as u32,
                })
                .collect();
            let latest = c
                .query(
                    "SELECT item_id, model, sample, run_id, job_idx, task_id, score
                     FROM latest_scores",
                    &[],
                )
                .unwrap()
                .iter()
                .map(|r| LatestScore {
                    item_id: r.get(0),
                    model: r.get(1),
                    sample: r.get::<_, i64>(2) as u32,
                    run_id: r.get(3),
                    job_idx: r.get::<_, i64>(4) as u32,
                    task_id: r.get(5),
                    score: r.get(6),
                })
                .collect();
            (rows, sums, latest)
        } else {
            let s = prism::store::Store::open(Path::new(&self.db)).unwrap();
            let rows = s
                .scores(None)
                .unwrap()
                .into_iter()
                .map(|r| {
                    (
                        r.run_id, r.job_idx, r.item_id, r.task_id, r.model, r.sample, r.score,
                    )
                })
                .collect();
            (
                rows,
                s.run_summaries(None).unwrap(),
                s.latest_scores().unwrap(),
            )
        }
    }

    fn check(&self, when: &str) -> usize {
        let (rows, sums, latest) = self.read();
        check(&rows, &sums, &latest, when)
    }

    fn newest_run(&self) -> String {
        let (rows, _, _) = self.read();
        rows.iter().map(|r| r.0.clone()).max().unwrap()
    }
}

/// The newest run in the store other than `not` (scored or not).
fn newest_run_of(side: &Side, not: &str) -> String {
    let out = side.prism(&["runs", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .find(|id| id != not)
        .unwrap()
}

fn every_write_keeps_the_summaries(side: &Side) {
    side.prism(&[
        "run",
        "--models",
        "e,ah",
        "--filter",
        "KE-FD-*,RE-*",
        "--limit",
        "12",
        "--samples",
        "2",
        "--json",
    ]);
    assert_eq!(side.check("after a run"), 1);
    let first = side.newest_run();
    // The judge scores what the rules left.
    side.prism(&["score", "--run", &first, "--judge", "j"]);
    side.check("after scoring with a judge");
    // Again: every score replaced.
    side.prism(&["score", "--run", &first, "--judge", "j"]);
    side.check("after a re-score");
    // Exported and imported: a run of its own.
    let out = side.dir.path().join("out");
    let out = out.to_str().unwrap();
    side.prism(&["export", "--run", &first, "--prism-outputs", out]);
    side.prism(&["import", "--prism-outputs", out]);
    side.check("after an import");
    let imported = newest_run_of(side, &first);
    side.prism(&["score", "--run", &imported, "--judge", "j"]);
    assert_eq!(side.check("after scoring the import"), 2);
    // A newer run of the same items: the newest scores move to it.
    std::thread::sleep(Duration::from_millis(1100));
    side.prism(&[
        "run",
        "--models",
        "e",
        "--filter",
        "KE-FD-*",
        "--limit",
        "6",
        "--samples",
        "2",
        "--json",
    ]);
    assert_eq!(side.check("after a newer run"), 3);
    let newer = side.newest_run();
    // Its removal gives the keys back to the runs before it.
    side.prism(&["runs", "rm", &newer, "--yes"]);
    assert_eq!(side.check("after runs rm"), 2);
    // A re-score with a slow judge killed half-way: what committed is consistent.
    let mut child = side
        .cmd(&[
            "score",
            "--run",
            &first,
            "--judge",
            "js",
            "--concurrency",
            "1",
            "--no-cache",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the slow score was still at it"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(start.elapsed() < Duration::from_secs(30));
    side.check("after a score killed half-way");
}

#[test]
fn summaries_equal_the_recomputed_rates_on_sqlite() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("models.toml"), models(&mock)).unwrap();
    let db = dir.path().join("store.db").display().to_string();
    every_write_keeps_the_summaries(&Side { dir, db });
}

#[test]
fn summaries_equal_the_recomputed_rates_on_postgres() {
    let mock = mock::start_background();
    let pg = Pg::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("models.toml"), models(&mock)).unwrap();
    let side = Side { dir, db: pg.url() };
    every_write_keeps_the_summaries(&side);
    // And a third machine's copy of the shared store holds the same summaries.
    let copy = tempfile::tempdir().unwrap();
    let file = copy.path().join("copy.db");
    assert_cmd::Command::cargo_bin("prism")
        .unwrap()
        .args(["db", "copy", &pg.url(), file.to_str().unwrap()])
        .assert()
        .success();
    let s = prism::store::Store::open(&file).unwrap();
    let rows: Vec<Row> = s
        .scores(None)
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r.run_id, r.job_idx, r.item_id, r.task_id, r.model, r.sample, r.score,
            )
        })
        .collect();
    check(
        &rows,
        &s.run_summaries(None).unwrap(),
        &s.latest_scores().unwrap(),
        "in a copy of the shared store",
    );
    // A new machine's mirror takes every run's head first (row, summaries, job counts as the
    // shared store keeps them): before one answer lands, its list says what the copy's says
    // and its summaries equal the rates recomputed from the shared store's scores.
    let pulled = tempfile::tempdir().unwrap();
    let mirror_db = pulled.path().join("mirror.db");
    let open_mirror =
        || prism::store::db::Db::open(Some(Path::new(&pg.url())), &mirror_db).unwrap();
    let p = open_mirror().pull_some(0).unwrap().unwrap();
    // (Answers and scores changed within the last few hundred change numbers come by those
    // too: in a store this small, all of them.)
    assert_eq!((p.runs, p.more), (2, true));
    {
        let m = prism::store::Store::open(&mirror_db).unwrap();
        assert_eq!(m.pending_runs().unwrap().len(), 2);
        let key = |s: &TaskSummary| (s.run_id.clone(), s.model.clone(), s.task_id.clone());
        let (_, mut theirs, _) = side.read();
        let mut mine = m.run_summaries(None).unwrap();
        theirs.sort_by_key(key);
        mine.sort_by_key(key);
        assert_eq!(
            mine, theirs,
            "a new machine's heads: the shared store's summaries"
        );
    }
    let listed = |db: &Path| -> serde_json::Value {
        let out = assert_cmd::Command::cargo_bin("prism")
            .unwrap()
            .args([
                "runs",
                "--json",
                "--limit",
                "0",
                "--db",
                db.to_str().unwrap(),
            ])
            .env("PRISM_CONFIG_DIR", pulled.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    let mut heads = listed(&mirror_db);
    let mut copied = listed(&file);
    // The copy's runs list the same (labels, counts, rates); where each run came from differs.
    for v in [&mut heads, &mut copied] {
        for r in v.as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("shared");
        }
    }
    assert_eq!(heads, copied, "a new machine's runs before any answer");
    // One page, then a session stopped and another going on: the runs whole, each made from
    // its own scores again, nothing pending.
    let p = open_mirror().pull_some(1).unwrap().unwrap();
    assert!(p.more, "{p:?}");
    open_mirror().pull_all().unwrap();
    let m = prism::store::Store::open(&mirror_db).unwrap();
    assert!(m.pending_runs().unwrap().is_empty());
    let rows: Vec<Row> = m
        .scores(None)
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r.run_id, r.job_idx, r.item_id, r.task_id, r.model, r.sample, r.score,
            )
        })
        .collect();
    assert_eq!(rows.len(), side.read().0.len());
    check(
        &rows,
        &m.run_summaries(None).unwrap(),
        &m.latest_scores().unwrap(),
        "a new machine's mirror, caught up",
    );
    // A new machine lists the team's runs from the shared store itself: the same list as the
    // copy's, and not one answer pulled.
    let fresh = tempfile::tempdir().unwrap();
    let list = |db: &str, dir: &std::path::Path| -> serde_json::Value {
        let out = assert_cmd::Command::cargo_bin("prism")
            .unwrap()
            .args(["runs", "--json", "--limit", "0", "--db", db])
            .env("PRISM_CONFIG_DIR", dir)
            .env("PRISM_DATA_DIR", dir)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    let shared = list(&pg.url(), fresh.path());
    let copied = list(file.to_str().unwrap(), copy.path());
    assert_eq!(shared.as_array().unwrap().len(), 2);
    assert_eq!(shared, copied);
    // Scores written by hand (no summary kept): a list makes the run's rates from its scores,
    // the same as kept ones, on both backends.
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    c.batch_execute("DELETE FROM run_summaries").unwrap();
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute("DELETE FROM run_summaries", [])
        .unwrap();
    assert_eq!(list(&pg.url(), fresh.path()), shared);
    assert_eq!(list(file.to_str().unwrap(), copy.path()), copied);
    let local = fresh.path().join("prism.db");
    if local.exists() {
        let answers = prism::store::Store::open(&local)
            .unwrap()
            .runs()
            .unwrap()
            .len();
        assert_eq!(
            answers, 0,
            "listing pulled runs into the new machine's store"
        );
    }
}
