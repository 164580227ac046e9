//! A team's whole history (issue 47): a store of N runs of a PRISM-sized dataset (9,660 items
//! over the 65 sub-tasks) × 8 models, every answer stored and scored, and what a user types
//! against it, timed with the real binary:
//!
//! - `prism runs` (the newest 20, as it lists by default);
//! - `prism compare A:m0 B:m0` of the two newest runs;
//! - `prism report --format md` of the newest run;
//! - the TUI in tmux at 120x40: launch to first frame (the tree drawn), and to the tree's rates
//!   (the newest scores loaded off the loop thread); `R` to the runs listed; every run marked and
//!   `H` to the heatmap of every run's models; the TUI's peak resident memory then;
//! - with `--pg`: `prism db copy` of one run SQLite → PostgreSQL and back (answers/s and the
//!   copying prism's peak resident memory), on a PostgreSQL server of the bench's own; with
//!   `--pg-all` too, the rest of the history copied there and a new machine's `prism runs
//!   --db postgres://...`.
//!
//! The first run is written through the store as `prism run` writes it (answers, then scores
//! with their summaries); the others are copies of it made in SQL, each a day newer.
//!
//! `cargo bench --bench history [-- --runs 30,100 --items 9660 --models 8 --repeat 5 --pg
//! --keep DIR [--reuse]]` (`--keep`: the stores and the release stay in DIR for a closer
//! look; `--reuse`: measure the store an earlier `--keep` made there)
//!
//! Needs tmux for the TUI's numbers (skipped, and said, without it).

#[path = "../tests/common/pg.rs"]
mod pg;
#[path = "support/synth.rs"]
mod synth;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prism::store::{
    JobRecord, ResponseRecord, RunConfig, RunRecord, RunStatus, ScoreRecord, Store,
};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

const BIN: &str = env!("CARGO_BIN_EXE_prism");

/// A prism command against the bench's config and data dirs; its wall time.
fn timed(cfg: &Path, args: &[&str]) -> Duration {
    let t = Instant::now();
    let out = Command::new(BIN)
        .args(args)
        .env("PRISM_CONFIG_DIR", cfg)
        .env("PRISM_DATA_DIR", cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "prism {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// The median of `n` timings.
fn median(n: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut v: Vec<Duration> = (0..n).map(|_| f()).collect();
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// Builds the store: the first run through the store's own writes, then copies.
fn build(db: &Path, ds: &prism::dataset::Dataset, runs: usize, models: usize) -> Vec<String> {
    let names: Vec<String> = (0..models).map(|m| format!("m{m}")).collect();
    let base = "r20260101-000000-0000".to_string();
    let day = 86_400i64;
    let t0 = 1_767_225_600i64; // 2026-01-01
    {
        let mut store = Store::open(db).unwrap();
        let mut jobs = Vec::new();
        for it in &ds.items {
            for m in &names {
                jobs.push(JobRecord {
                    idx: jobs.len() as u32,
                    item_id: it.id.to_string(),
                    task_id: ds.task_of(it).id.clone(),
                    model: m.clone(),
                    sample: 0,
                });
            }
        }
        let config = RunConfig {
            models: names
                .iter()
                .map(|n| {
                    serde_json::from_value::<prism::store::ModelSnapshot>(serde_json::json!({
                        "name": n, "provider": "openai", "model": n,
                        "max_concurrency": null, "params": {}, "max_retries": null
                    }))
                    .unwrap()
                })
                .collect(),
            samples: 1,
            ..RunConfig::default()
        };
        store
            .create_run(
                &RunRecord {
                    id: base.clone(),
                    created_at: t0,
                    dataset: "synthetic".into(),
                    config,
                    status: RunStatus::Finished,
                },
                &jobs,
            )
            .unwrap();
        for chunk in jobs.chunks(5000) {
            let responses: Vec<ResponseRecord> = chunk
                .iter()
                .map(|j| ResponseRecord {
                    run_id: base.clone(),
                    job_idx: j.idx,
                    item_id: j.item_id.clone(),
                    task_id: j.task_id.clone(),
                    model: j.model.clone(),
                    sample: 0,
                    text: Some(format!(
                        "An answer of {} to {}, of some length.",
                        j.model, j.item_id
                    )),
                    error: None,
                    finish_reason: Some("stop".into()),
                    prompt_tokens: Some(60),
                    completion_tokens: Some(20),
                    latency_ms: Some(800),
                    first_token_ms: Some(100),
                    attempts: 1,
                    params: "{}".into(),
                    request_hash: format!("h{}", j.idx),
                    cached: false,
                    created_at: t0,
                    cache_key: None,
                    logprobs: None,
                })
                .collect();
            store.save_responses(&responses).unwrap();
            let scores: Vec<ScoreRecord> = chunk
                .iter()
                .map(|j| ScoreRecord {
                    run_id: base.clone(),
                    job_idx: j.idx,
                    item_id: j.item_id.clone(),
                    task_id: j.task_id.clone(),
                    model: j.model.clone(),
                    sample: 0,
                    evaluator: "exact".into(),
                    score: Some(f64::from(!(j.idx / 8 * 7 + j.idx % 8).is_multiple_of(3))),
                    detail: "rule".into(),
                    judge: None,
                    judge_reply: None,
                    judge_attempts: 0,
                    created_at: t0,
                    rule_score: None,
                })
                .collect();
            store.save_scores(&scores).unwrap();
        }
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let cols = |t: &str| -> Vec<String> {
        let mut st = conn.prepare(&format!("PRAGMA table_info({t})")).unwrap();
        st.query_map([], |r| r.get::<_, String>(1))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let mut ids = vec![base.clone()];
    for k in 1..runs {
        let id = format!("r2026{:04}-000000-{k:04}", 101 + k);
        let tx = conn.unchecked_transaction().unwrap();
        tx.execute(
            "INSERT INTO runs (id, created_at, dataset, config, status, name, tags) \
             SELECT ?1, created_at + ?2, dataset, config, status, NULL, '' FROM runs WHERE id = ?3",
            rusqlite::params![id, day * k as i64, base],
        )
        .unwrap();
        for t in ["jobs", "responses", "scores", "run_summaries"] {
            let c = cols(t);
            let sel: Vec<String> = c
                .iter()
                .map(|c| {
                    if c == "run_id" {
                        "?1".to_string()
                    } else {
                        c.clone()
                    }
                })
                .collect();
            tx.execute(
                &format!(
                    "INSERT INTO {t} ({}) SELECT {} FROM {t} WHERE run_id = ?2",
                    c.join(", "),
                    sel.join(", ")
                ),
                rusqlite::params![id, base],
            )
            .unwrap();
        }
        tx.execute("UPDATE latest_scores SET run_id = ?1", [&id])
            .unwrap();
        tx.commit().unwrap();
        ids.push(id);
    }
    ids.reverse(); // newest first
    ids
}

/// A tmux session of its own running the TUI; polls its screen every 5 ms.
struct Tui {
    socket: String,
}

impl Tui {
    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "b"])
    }
    fn wait(&self, what: &str, ok: impl Fn(&str) -> bool) -> Duration {
        let t = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return t.elapsed();
            }
            assert!(
                t.elapsed() < Duration::from_secs(120),
                "waiting for {what}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "b"];
        a.extend_from_slice(keys);
        self.tmux(&a);
    }
    fn pid(&self) -> Option<u32> {
        let shell = self.tmux(&["list-panes", "-t", "b", "-F", "#{pane_pid}"]);
        let shell = shell.trim();
        let kids = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
        kids.split_whitespace().next()?.parse().ok()
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// Peak resident memory of a process, in MB.
fn peak_mb(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(0.0, |k| k / 1024.0)
}

struct TuiNumbers {
    first_frame: Duration,
    rates: Duration,
    runs_listed: Duration,
    heatmap: Duration,
    peak_mb: f64,
}

fn tui(cfg: &Path, data: &Path, db: &Path, runs: usize, models: usize, heat: bool) -> TuiNumbers {
    // A server of its own each time: a new session on a server still shutting down is lost.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let t = Tui {
        socket: format!(
            "prism-history-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ),
    };
    let cmd = format!(
        "PRISM_CONFIG_DIR={c} PRISM_DATA_DIR={c} {BIN} {d} --db {db}; sleep 60",
        c = cfg.display(),
        d = data.display(),
        db = db.display()
    );
    let start = Instant::now();
    t.tmux(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "120",
        "-y",
        "40",
        &cmd,
    ]);
    t.wait("the first frame", |s| s.contains("Taxonomy"));
    let first_frame = start.elapsed();
    if runs > 0 {
        t.wait("the tree's rates", |s| s.contains("H%"));
    }
    let rates = start.elapsed();
    let (mut runs_listed, mut heatmap) = (Duration::ZERO, Duration::ZERO);
    if heat && runs > 0 {
        let k = Instant::now();
        t.keys(&["R"]);
        t.wait("the runs listed", |s| s.contains("r2026"));
        runs_listed = k.elapsed();
        // Marking leaves the cursor on the run (issue 62): each mark, then the next run.
        for _ in 0..runs {
            t.keys(&["Space", "Down"]);
        }
        std::thread::sleep(Duration::from_millis(300));
        let k = Instant::now();
        t.keys(&["H"]);
        let rows = format!("{} models of the chosen runs", runs * models);
        t.wait("the heatmap of runs", |s| s.contains(&rows));
        heatmap = k.elapsed();
    }
    let peak = t.pid().map_or(0.0, peak_mb);
    t.keys(&["q"]);
    TuiNumbers {
        first_frame,
        rates,
        runs_listed,
        heatmap,
        peak_mb: peak,
    }
}

/// `prism db copy` as a child; its wall time and peak resident memory (MB).
fn copy(cfg: &Path, from: &str, to: &str, run: &str) -> (Duration, f64) {
    let t = Instant::now();
    // Reaped by wait4 below (which also gives its peak memory), not by Child::wait.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(BIN)
        .args(["db", "copy", from, to, "--run", run])
        .env("PRISM_CONFIG_DIR", cfg)
        .env("PRISM_DATA_DIR", cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // wait4 gives the child's peak resident set (ru_maxrss, in KB on Linux).
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "db copy {from} -> {to} failed"
    );
    (t.elapsed(), usage.ru_maxrss as f64 / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = arg(&args, "--runs")
        .unwrap_or_else(|| "30".into())
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let items: usize = arg(&args, "--items").map_or(9660, |s| s.parse().unwrap());
    let models: usize = arg(&args, "--models").map_or(8, |s| s.parse().unwrap());
    let repeat: usize = arg(&args, "--repeat").map_or(5, |s| s.parse().unwrap());
    let with_pg = args.iter().any(|a| a == "--pg");
    let have_tmux = Command::new("tmux").arg("-V").output().is_ok();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    let data = dir.path().join("release");
    synth::synth_release(&data, items);
    let ds = prism::dataset::load_path(&data).unwrap().dataset;
    println!(
        "history: {} items over {} tasks x {models} models; medians of {repeat}",
        ds.items.len(),
        ds.tasks.len()
    );
    if !have_tmux {
        println!("(no tmux: the TUI's numbers are left out)");
    }
    if have_tmux {
        let empty = dir.path().join("empty.db");
        Store::open(&empty).unwrap();
        let n = tui(&cfg, &data, &empty, 0, models, false);
        println!(
            "empty store      TUI first frame {}  peak {:.0} MB",
            ms(n.first_frame),
            n.peak_mb
        );
    }
    for &runs in &sizes {
        // `--keep DIR`: the store is made there and stays (with the release) for a closer look.
        let keep = arg(&args, "--keep").map(std::path::PathBuf::from);
        let db = keep
            .as_deref()
            .unwrap_or(dir.path())
            .join(format!("h{runs}.db"));
        let reuse = keep.is_some() && args.iter().any(|a| a == "--reuse") && db.exists();
        if !reuse {
            let _ = std::fs::remove_file(&db);
        }
        let t = Instant::now();
        let ids = if reuse {
            // `--reuse` (with --keep): the store made by an earlier run of the bench.
            let s = Store::open(&db).unwrap();
            s.runs().unwrap().into_iter().map(|r| r.id).collect()
        } else {
            build(&db, &ds, runs, models)
        };
        let answers = runs * ds.items.len() * models;
        let size = std::fs::metadata(&db).map_or(0, |m| m.len()) / 1_000_000;
        println!(
            "{runs} runs: {answers} answers, {size} MB of SQLite, built in {:.0} s",
            t.elapsed().as_secs_f64()
        );
        let dbs = db.to_str().unwrap();
        let list = median(repeat, || timed(&cfg, &["runs", "--db", dbs]));
        let cmp = median(repeat, || {
            timed(
                &cfg,
                &[
                    "compare",
                    &format!("{}:m0", ids[0]),
                    &format!("{}:m1", ids[1]),
                    "--db",
                    dbs,
                ],
            )
        });
        let report = median(repeat, || {
            timed(
                &cfg,
                &["report", "--run", &ids[0], "--format", "md", "--db", dbs],
            )
        });
        println!(
            "  prism runs {}  compare {}  report --format md {}",
            ms(list),
            ms(cmp),
            ms(report)
        );
        if have_tmux {
            let mut all: Vec<TuiNumbers> = (0..repeat.min(3))
                .map(|_| tui(&cfg, &data, &db, runs, models, true))
                .collect();
            let mid = |f: &dyn Fn(&TuiNumbers) -> Duration, all: &mut Vec<TuiNumbers>| {
                let mut v: Vec<Duration> = all.iter().map(f).collect();
                v.sort();
                v[v.len() / 2]
            };
            let first = mid(&|n| n.first_frame, &mut all);
            let rates = mid(&|n| n.rates, &mut all);
            let listed = mid(&|n| n.runs_listed, &mut all);
            let heat = mid(&|n| n.heatmap, &mut all);
            let peak = all.iter().map(|n| n.peak_mb).fold(0.0, f64::max);
            println!(
                "  TUI first frame {}  rates shown {}  R: runs listed {}  H of {runs} runs x {models} models {}  peak {:.0} MB",
                ms(first),
                ms(rates),
                ms(listed),
                ms(heat),
                peak
            );
        }
        if with_pg && runs == sizes[0] {
            let server = pg::Pg::start();
            let url = server.url();
            let (took, mb) = copy(&cfg, dbs, &url, &ids[0]);
            let per_run = ds.items.len() * models;
            println!(
                "  db copy of one run ({per_run} answers) SQLite -> PostgreSQL {:.1} s = {:.0} answers/s, peak {mb:.0} MB",
                took.as_secs_f64(),
                per_run as f64 / took.as_secs_f64()
            );
            let back = dir.path().join("back.db");
            let backs = back.to_str().unwrap().to_string();
            let (took, mb) = copy(&cfg, &url, &backs, &ids[0]);
            println!(
                "  db copy of one run PostgreSQL -> SQLite {:.1} s = {:.0} answers/s, peak {mb:.0} MB",
                took.as_secs_f64(),
                per_run as f64 / took.as_secs_f64()
            );
            // The whole history on the shared store (`--pg-all`), listed by a new machine.
            if args.iter().any(|a| a == "--pg-all") {
                let all: Vec<String> = ids[1..].to_vec();
                let t = Instant::now();
                let (_, mb) = copy(&cfg, dbs, &url, &all.join(","));
                println!(
                    "  db copy of the other {} runs SQLite -> PostgreSQL {:.0} s = {:.0} answers/s, peak {mb:.0} MB",
                    all.len(),
                    t.elapsed().as_secs_f64(),
                    (all.len() * per_run) as f64 / t.elapsed().as_secs_f64()
                );
                let fresh = dir.path().join("fresh");
                std::fs::create_dir_all(&fresh).unwrap();
                let list = median(repeat, || timed(&fresh, &["runs", "--db", &url]));
                println!(
                    "  a new machine's prism runs --db postgres://... {} (nothing pulled)",
                    ms(list)
                );
                // A new machine's mirror (as the TUI's): every run's head first, then the
                // pages; its first pull and its catch-up rate.
                let mirror = dir.path().join("mirror.db");
                let db = prism::store::db::Db::open(Some(Path::new(&url)), &mirror).unwrap();
                let t = Instant::now();
                let heads = db.pull_some(0).unwrap().unwrap();
                let first = t.elapsed();
                let t = Instant::now();
                let rest = db.pull_all().unwrap().unwrap();
                let took = t.elapsed().as_secs_f64();
                let rows = rest.answers + rest.scores;
                println!(
                    "  a new machine's mirror: {} run heads (names, counts, rates) in {}; the rest, {rows} rows, at {:.0} rows/s",
                    heads.runs,
                    ms(first),
                    rows as f64 / took
                );
            }
        }
        match &keep {
            Some(k) => synth::synth_release(&k.join("release"), items),
            None => {
                let _ = std::fs::remove_file(&db);
                0
            }
        };
    }
}
