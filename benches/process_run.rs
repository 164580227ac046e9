//! `prism run` measured as a user runs it: the `prism` binary as its own process against an
//! external server, beside that server's raw capacity measured in the same run.
//!
//! `cargo bench --bench process_run` (options: `-- --jobs N --concurrency C --repeat R`;
//! defaults 20,000 jobs at concurrency 256, 3 repeats, median reported). Needs `nginx` and `wrk`
//! (`scripts/bench-tools` installs both from apt). It:
//! 1. starts nginx (one worker process, its own port and directory) answering every POST with the
//!    same OpenAI-shaped SSE reply: 35 events, 7.8 KB (33 content deltas, the finish chunk with
//!    usage, `[DONE]`); `stub_status` counts the connections accepted;
//! 2. measures the endpoint's raw capacity with wrk (2 threads, the same concurrency, POST);
//! 3. runs `prism run` (release build) on N distinct items with a fresh store each time, `--json`
//!    events to a pipe that is drained (what a script reading them pays), and reports jobs/s
//!    (wall time of the whole process, start to exit), the ratio to raw, CPU per job (user +
//!    system of the process), peak RSS, and the TCP connections it opened (`--prism PATH`
//!    measures another build the same way);
//! 4. checks every answer is in the store.
//!
//! `-- --against PATH`: every repeat also runs the build at PATH (an older commit's), the two in
//! turns (ABBA order, so a machine growing busier weighs on both), and the end reports each
//! build's median CPU per job and jobs/s and the median of the per-repeat ratios: on a shared,
//! noisy machine the way to see a change of a few percent.
//!
//! `-- --logprobs N`: the stub's reply also carries each token's log-probability and N
//! alternatives (as a server asked for them sends), and each repeat runs `prism run` without
//! asking for them and with `--logprobs N`: the jobs/s of both, their ratio, and the bytes
//! stored per answer.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[path = "support/stub.rs"]
mod stub;
use stub::{accepts, sse_body, start_nginx, write_items, wrk};

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

struct Measured {
    secs: f64,
    cpu: f64,
    rss_kb: i64,
    conns: u64,
    stored: usize,
    /// RSS and the WAL file, in MiB, at each tenth of the answers.
    rss_series: Vec<(u64, u64)>,
    /// Seconds from the start to the first answer read, and to the last.
    first_answer: f64,
    last_answer: f64,
    /// Mean bytes of stored token log-probabilities per answer (0 when none were asked).
    logprob_bytes: f64,
}

// The child is reaped by wait4 (for its rusage), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn prism_run(
    bin: &Path,
    dir: &Path,
    items: &Path,
    port: u16,
    (n, conc, k): (usize, usize, usize),
    extra: &[String],
) -> Measured {
    let cfg = dir.join(format!("cfg{k}"));
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("models.toml"),
        format!(
            "[[models]]\nname = \"stub\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"stub\"\nmax_concurrency = {conc}\n"
        ),
    )
    .unwrap();
    let db = cfg.join("prism.db");
    let before = accepts(port);
    let t = Instant::now();
    // PRISM_BENCH_PERF=FILE: record a profile of the run (the numbers then include perf).
    let perf = std::env::var_os("PRISM_BENCH_PERF");
    let mut cmd = match &perf {
        Some(out) => {
            let mut c = Command::new("perf");
            c.args([
                "record",
                "-g",
                "--call-graph",
                "dwarf,16384",
                "-F",
                "999",
                "-o",
            ])
            .arg(out)
            .arg("--")
            .arg(bin);
            c
        }
        None => Command::new(bin),
    };
    let mut child = cmd
        .arg("run")
        .arg(items)
        .args([
            "--models",
            "stub",
            "--concurrency",
            &conc.to_string(),
            "--json",
            "--db",
            &db.display().to_string(),
        ])
        .args(extra)
        .args(
            std::env::var("PRISM_BENCH_ARGS")
                .ok()
                .iter()
                .flat_map(|a| a.split_whitespace()),
        )
        .env("PRISM_CONFIG_DIR", &cfg)
        .env("PRISM_DATA_DIR", &cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Read the events as a script would; at every tenth of the answers, the process's RSS (is
    // memory flat while the run goes on?).
    let mut out = child.stdout.take().unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let wal_file = db.with_extension("db-wal");
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        let mut done = 0usize;
        let mut rss = Vec::new();
        let (mut first, mut last) = (0.0, 0.0);
        while let Ok(k) = out.read(&mut buf) {
            if k == 0 {
                break;
            }
            for line in buf[..k].split(|b| *b == b'\n') {
                if line.starts_with(b"{\"event\":\"done\"") {
                    done += 1;
                    last = t.elapsed().as_secs_f64();
                    if done == 1 {
                        first = last;
                    }
                    if done.is_multiple_of((n / 10).max(1)) {
                        let kb = std::fs::read_to_string(&status_file)
                            .ok()
                            .and_then(|s| {
                                s.lines()
                                    .find(|l| l.starts_with("VmRSS:"))
                                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                            })
                            .unwrap_or(0);
                        let wal = std::fs::metadata(&wal_file).map(|m| m.len()).unwrap_or(0);
                        rss.push((kb / 1024, wal >> 20));
                    }
                }
            }
        }
        (rss, first, last)
    });
    // wait4 gives the child's own CPU time and peak RSS.
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid);
    let secs = t.elapsed().as_secs_f64();
    let (rss_series, first_answer, last_answer) = reader.join().unwrap_or_default();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "prism run failed: status {status}"
    );
    let conns = accepts(port) - before - 1; // the status request itself
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let store = prism::store::Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    let stored = store
        .responses(&runs[0].id)
        .unwrap()
        .iter()
        .filter(|r| r.text.as_deref().is_some_and(|t| t.len() > 2000))
        .count();
    assert_eq!(stored, n, "every answer is stored whole");
    let lps = store.logprobs(&runs[0].id).unwrap();
    let logprob_bytes = lps
        .iter()
        .map(|(_, t)| prism::store::logprobs::encode(t).len() as f64)
        .sum::<f64>()
        / n as f64;
    Measured {
        secs,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        rss_kb: ru.ru_maxrss,
        conns,
        stored,
        rss_series,
        first_answer,
        last_answer,
        logprob_bytes,
    }
}

fn report(k: usize, n: usize, conc: usize, raw: f64, m: &Measured) {
    let rate = n as f64 / m.secs;
    println!(
        "prism run #{k}: {n} jobs at concurrency {conc}: {:.2} s = {rate:.0} jobs/s ({:.3}x raw), CPU {:.3} ms/job, peak RSS {:.1} MiB, {} connections, {} answers stored",
        m.secs,
        rate / raw,
        m.cpu * 1e3 / n as f64,
        m.rss_kb as f64 / 1024.0,
        m.conns,
        m.stored
    );
    println!(
        "  phases: start to the first answer {:.0} ms; answers at {:.0} jobs/s; last answer to exit {:.0} ms",
        m.first_answer * 1e3,
        (n - 1) as f64 / (m.last_answer - m.first_answer).max(1e-9),
        (m.secs - m.last_answer) * 1e3
    );
    println!(
        "  RSS (MiB) at each tenth of the answers: {:?}",
        m.rss_series.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    println!(
        "  WAL file (MiB) at each tenth of the answers: {:?}",
        m.rss_series.iter().map(|r| r.1).collect::<Vec<_>>()
    );
}

/// `--against`: the two builds in turns, ABBA, then each one's medians and the median ratio.
fn compare(
    old: &Path,
    new: &Path,
    dir: &Path,
    items: &Path,
    port: u16,
    (n, conc, repeat): (usize, usize, usize),
    raw: f64,
) {
    let (mut cpu, mut rate) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    let mut ratios = Vec::new();
    for k in 0..repeat {
        let order = if k % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut this = [0.0; 2];
        for (j, which) in order.into_iter().enumerate() {
            let bin = if which == 0 { old } else { new };
            let m = prism_run(bin, dir, items, port, (n, conc, 2 * k + j), &[]);
            println!("{}:", if which == 0 { "against" } else { "this build" });
            report(k, n, conc, raw, &m);
            this[which] = m.cpu * 1e3 / n as f64;
            cpu[which].push(this[which]);
            rate[which].push(n as f64 / m.secs);
        }
        ratios.push(this[1] / this[0]);
    }
    let [c_old, c_new] = cpu.map(median);
    let [r_old, r_new] = rate.map(median);
    println!(
        "against {}: median CPU {c_old:.3} ms/job, {r_old:.0} jobs/s",
        old.display()
    );
    println!("this build: median CPU {c_new:.3} ms/job, {r_new:.0} jobs/s");
    println!(
        "CPU per job, this build / against: median of {repeat} pairs {:.3}x",
        median(ratios)
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--jobs", 20_000);
    let conc: usize = arg(&args, "--concurrency", 256);
    let repeat: usize = arg(&args, "--repeat", 3);
    // Another build to compare (e.g. an older commit's), measured the same way.
    let bin: PathBuf = arg(&args, "--prism", PathBuf::from(env!("CARGO_BIN_EXE_prism")));
    let dir = tempfile::tempdir().unwrap();
    // --logprobs N: the stub's reply carries each token's log-probability and N alternatives,
    // and every repeat runs prism twice, without asking for them and with `--logprobs N`.
    let logprobs: Option<usize> = args
        .iter()
        .position(|a| a == "--logprobs")
        .and_then(|i| args.get(i + 1)?.parse().ok());
    let body = sse_body(logprobs);
    let nginx = start_nginx(dir.path(), &body);
    let items = write_items(dir.path(), n);
    // Warm up, then the raw capacity.
    wrk(dir.path(), nginx.port, conc, 2);
    let raw = wrk(dir.path(), nginx.port, conc, 5);
    println!(
        "endpoint: nginx (1 worker) on 127.0.0.1, {} byte SSE reply (35 events)",
        body.len()
    );
    println!("wrk raw capacity at concurrency {conc}: {raw:.0} req/s");
    let against: Option<PathBuf> = args
        .iter()
        .position(|a| a == "--against")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    if let Some(old) = &against {
        compare(
            old,
            &bin,
            dir.path(),
            &items,
            nginx.port,
            (n, conc, repeat),
            raw,
        );
        return;
    }
    let mut rates = Vec::new();
    let mut on_rates = Vec::new();
    for k in 0..repeat {
        let m = prism_run(&bin, dir.path(), &items, nginx.port, (n, conc, 2 * k), &[]);
        let rate = n as f64 / m.secs;
        report(k, n, conc, raw, &m);
        rates.push(rate);
        if let Some(lp) = logprobs {
            let on = [String::from("--logprobs"), lp.to_string()];
            let m = prism_run(
                &bin,
                dir.path(),
                &items,
                nginx.port,
                (n, conc, 2 * k + 1),
                &on,
            );
            report(k, n, conc, raw, &m);
            println!(
                "  with --logprobs {lp}: {:.0} bytes of log-probabilities stored per answer ({:.1} per token)",
                m.logprob_bytes,
                m.logprob_bytes / 33.0
            );
            on_rates.push(n as f64 / m.secs);
        }
    }
    if logprobs.is_some() {
        let (off, on) = (median(rates.clone()), median(on_rates));
        println!(
            "logprobs: median {on:.0} jobs/s with --logprobs against {off:.0} without = {:.3}x",
            on / off
        );
    }
    let med = median(rates);
    println!(
        "median: {med:.0} jobs/s = {:.3}x wrk's raw capacity",
        med / raw
    );
    drop(nginx);
}
