//! A run shared by workers on PostgreSQL (issue 25), measured as users run it: `prism`
//! processes against a stub server, beside the same work on a SQLite file.
//!
//! `cargo bench --bench shared_run` (options: `-- --jobs N --concurrency C --wait-jobs M
//! --repeat R --prism PATH`, the last to measure another build; defaults 20,000 jobs at concurrency 256 as `process_run`, 1,200 jobs for (b),
//! 3 repeats, medians reported). Needs nginx (`scripts/bench-tools`) and PostgreSQL (`.ci/run` installs it); a
//! server of the bench's own is started with fsync on.
//!
//! (a) Coordination: one `prism run` of N items at concurrency C against nginx answering at
//!     once, on a SQLite file and on PostgreSQL (a fresh database each time): what leasing jobs
//!     and storing answers over the network costs when the model costs nothing.
//! (b) Scaling when the model is the bottleneck, as in real use: the mock's `wait200` model
//!     answers in 200 ms; each worker runs at concurrency 8; M jobs done by one worker, then
//!     by three (`prism run` and two `prism work` joining it), each on a fresh database.
//! (c) A lane on a shared store: `prism autohall` on `--claims N` claims (default 200, K = 5:
//!     12 calls a claim) against the mock's scripted `autohall` model at concurrency 16, on a
//!     SQLite file and on PostgreSQL (worked on locally, every result pushed as it is saved):
//!     what pushing costs. `--only c` runs this part alone.

#[path = "../tests/common/mock.rs"]
mod mock;
#[path = "../tests/common/pg.rs"]
mod pg;
#[path = "support/stub.rs"]
mod stub;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn models(dir: &Path, base: &str, model: &str, conc: usize) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("models.toml"),
        format!(
            "[[models]]\nname = \"stub\"\nprovider = \"openai\"\nbase_url = \"{base}/v1\"\nmodel = \"{model}\"\nmax_concurrency = {conc}\n"
        ),
    )
    .unwrap();
}

/// The prism binary measured (`--prism PATH`: another build, to compare two in one session).
static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

fn prism(cfg: &Path, args: &[&str]) -> Child {
    Command::new(
        BIN.get()
            .cloned()
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_prism").into()),
    )
    .args(args)
    // PRISM_BENCH_ARGS: more arguments for every prism (to try an option's cost).
    .args(
        std::env::var("PRISM_BENCH_ARGS")
            .ok()
            .iter()
            .flat_map(|a| a.split_whitespace()),
    )
    .env("PRISM_CONFIG_DIR", cfg)
    .env("PRISM_DATA_DIR", cfg)
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap()
}

fn wait_ok(mut c: Child, what: &str) {
    let s = c.wait().unwrap();
    assert!(s.success(), "{what}: {s}");
}

/// A fresh database on the server; its URL.
fn database(pg: &pg::Pg, name: &str) -> String {
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    format!("postgres://prism@127.0.0.1:{}/{name}", pg.port)
}

fn answers(url: &str) -> i64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query_one("SELECT count(*) FROM responses WHERE error IS NULL", &[])
        .unwrap()
        .get(0)
}

fn wait_run(url: &str) -> String {
    let t = Instant::now();
    loop {
        if let Ok(mut c) = postgres::Client::connect(url, postgres::NoTls)
            && let Ok(Some(r)) = c.query_opt("SELECT id FROM runs LIMIT 1", &[])
        {
            return r.get(0);
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no run was created");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--jobs", 20_000);
    let conc: usize = arg(&args, "--concurrency", 256);
    let m: usize = arg(&args, "--wait-jobs", 1_200);
    let repeat: usize = arg(&args, "--repeat", 3);
    let claims: usize = arg(&args, "--claims", 200);
    let only: String = arg(&args, "--only", String::new());
    let bin: std::path::PathBuf = arg(
        &args,
        "--prism",
        std::path::PathBuf::from(env!("CARGO_BIN_EXE_prism")),
    );
    let _ = BIN.set(bin);
    let dir = tempfile::tempdir().unwrap();
    let pg = pg::Pg::start_with(true);
    let mut db_no = 0;
    let mut fresh = |pg: &pg::Pg| {
        db_no += 1;
        database(pg, &format!("bench{db_no}"))
    };
    if only.is_empty() || only == "a" {
        coordination(&dir, &pg, &mut fresh, (n, conc, repeat));
    }
    if only.is_empty() || only == "b" {
        scaling(&dir, &pg, &mut fresh, (m, repeat));
    }
    if only.is_empty() || only == "c" {
        lane(&dir, &pg, &mut fresh, (claims, repeat));
    }
}

type Fresh<'a> = dyn FnMut(&pg::Pg) -> String + 'a;

/// (c): see the module's comment.
fn lane(dir: &tempfile::TempDir, pg: &pg::Pg, fresh: &mut Fresh, (n, repeat): (usize, usize)) {
    let mock = mock::start_background();
    let file = dir.path().join("claims.jsonl");
    let lines: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": "c{i}", "claim": "Claim number {i} is true", "label": {}, "topic": "t{}"}}"#,
                i % 2 == 0,
                i % 7
            )
        })
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let file_s = file.display().to_string();
    let calls = (n * 12) as f64;
    let (mut lite, mut shared) = (Vec::new(), Vec::new());
    for k in 0..repeat {
        let common = [
            "autohall",
            file_s.as_str(),
            "--models",
            "stub",
            "--temperature",
            "0.5",
            "-k",
            "5",
            "--concurrency",
            "16",
        ];
        let cfg = dir.path().join(format!("c{k}l"));
        models(&cfg, &mock.url(), "autohall", 16);
        let db = cfg.join("prism.db").display().to_string();
        let t = Instant::now();
        let mut a = common.to_vec();
        a.extend(["--db", db.as_str()]);
        wait_ok(prism(&cfg, &a), "autohall on SQLite");
        let l = calls / t.elapsed().as_secs_f64();
        let cfg = dir.path().join(format!("c{k}s"));
        models(&cfg, &mock.url(), "autohall", 16);
        let url = fresh(pg);
        let t = Instant::now();
        let mut a = common.to_vec();
        a.extend(["--db", url.as_str()]);
        wait_ok(prism(&cfg, &a), "autohall on PostgreSQL");
        let s = calls / t.elapsed().as_secs_f64();
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let pairs: i64 = c
            .query_one("SELECT count(*) FROM detect_pairs", &[])
            .unwrap()
            .get(0);
        assert_eq!(
            pairs,
            (n * 5) as i64,
            "every pair verdict on the shared store"
        );
        println!(
            "(c) #{k}: autohall, {n} claims x 12 calls: SQLite {l:.0} calls/s, shared {s:.0} calls/s = {:.2}x",
            s / l
        );
        lite.push(l);
        shared.push(s);
    }
    let (l, s) = (median(lite), median(shared));
    println!(
        "(c) median: SQLite {l:.0} calls/s, shared (pushed as saved) {s:.0} calls/s: {:.2}x",
        s / l
    );
}

/// (a): see the module's comment.
fn coordination(
    dir: &tempfile::TempDir,
    pg: &pg::Pg,
    fresh: &mut Fresh,
    (n, conc, repeat): (usize, usize, usize),
) {
    // (a) Coordination cost against nginx.
    let nginx = stub::start_nginx(dir.path(), &stub::sse_body(None));
    let items = stub::write_items(dir.path(), n);
    let items_s = items.display().to_string();
    let base = format!("http://127.0.0.1:{}", nginx.port);
    let (mut lite, mut shared) = (Vec::new(), Vec::new());
    for k in 0..repeat {
        let cfg = dir.path().join(format!("a{k}"));
        models(&cfg, &base, "stub", conc);
        let file = cfg.join("prism.db").display().to_string();
        let common = [
            "--models",
            "stub",
            "--concurrency",
            &conc.to_string(),
            "--no-score",
        ];
        let t = Instant::now();
        let mut a = vec!["run", items_s.as_str(), "--db", &file];
        a.extend(common);
        wait_ok(prism(&cfg, &a), "prism run on SQLite");
        let s = t.elapsed().as_secs_f64();
        lite.push(n as f64 / s);
        let url = fresh(pg);
        let t = Instant::now();
        let mut a = vec!["run", items_s.as_str(), "--db", &url];
        a.extend(common);
        wait_ok(prism(&cfg, &a), "prism run on PostgreSQL");
        let p = t.elapsed().as_secs_f64();
        assert_eq!(answers(&url), n as i64, "every answer stored");
        shared.push(n as f64 / p);
        println!(
            "(a) #{k}: {n} jobs at concurrency {conc}: SQLite {:.0} jobs/s, PostgreSQL (one worker) {:.0} jobs/s = {:.2}x",
            n as f64 / s,
            n as f64 / p,
            s / p
        );
    }
    let (l, s) = (median(lite), median(shared));
    println!(
        "(a) median: SQLite {l:.0} jobs/s, PostgreSQL {s:.0} jobs/s: {:.2}x (goal: at least 0.5x)",
        s / l
    );
    drop(nginx);
}

/// (b): see the module's comment.
fn scaling(dir: &tempfile::TempDir, pg: &pg::Pg, fresh: &mut Fresh, (m, repeat): (usize, usize)) {
    let mock = mock::start_background();
    std::fs::create_dir_all(dir.path().join("b")).unwrap();
    let items = stub::write_items(&dir.path().join("b"), m);
    let items_s = items.display().to_string();
    let (mut one, mut three) = (Vec::new(), Vec::new());
    for k in 0..repeat {
        let cfg = dir.path().join(format!("b{k}"));
        models(&cfg, &mock.url(), "wait200", 8);
        let common = ["--concurrency", "8", "--no-score"];
        let url = fresh(pg);
        let t = Instant::now();
        let mut a = vec!["run", items_s.as_str(), "--db", &url, "--models", "stub"];
        a.extend(common);
        wait_ok(prism(&cfg, &a), "one worker");
        let r1 = m as f64 / t.elapsed().as_secs_f64();
        assert_eq!(answers(&url), m as i64);
        let url = fresh(pg);
        let t = Instant::now();
        let mut a = vec!["run", items_s.as_str(), "--db", &url, "--models", "stub"];
        a.extend(common);
        let first = prism(&cfg, &a);
        let run = wait_run(&url);
        let mut w = vec!["work", run.as_str(), "--db", &url];
        w.extend(common);
        let others = [prism(&cfg, &w), prism(&cfg, &w)];
        wait_ok(first, "the first worker");
        for o in others {
            wait_ok(o, "a joining worker");
        }
        let r3 = m as f64 / t.elapsed().as_secs_f64();
        assert_eq!(answers(&url), m as i64);
        println!(
            "(b) #{k}: {m} jobs, 200 ms each, concurrency 8 a worker: one worker {r1:.1} jobs/s, three {r3:.1} jobs/s = {:.2}x",
            r3 / r1
        );
        one.push(r1);
        three.push(r3);
    }
    let (a, b) = (median(one), median(three));
    println!(
        "(b) median: one worker {a:.1} jobs/s, three {b:.1} jobs/s: {:.2}x (goal: at least 2.7x; the model's ceiling is 40 jobs/s a worker)",
        b / a
    );
}
