//! `prism import` of a big inspect_ai log (issue 64): `cargo bench --bench import` (options:
//! `-- --samples N --events BYTES`). It writes an inspect_ai log of N samples (default
//! 10,000) in both formats, by repeating the real fixture's samples under new ids, each carrying
//! BYTES of events (default 4,096: the transcript a real log keeps, which prism skips), then
//! reads and stores each into a fresh SQLite store, as `prism import` does: seconds, samples a
//! second, and the peak heap (counting allocator) against the file's size. With
//! `PRISM_IMPORT_TOOLS` (or `~/.cache/prism-import-tools`, made by `scripts/import-fixtures`)
//! it also times inspect_ai's own `read_eval_log` on the same files, for the ratio.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use counting_alloc::{CURRENT, Counting, PEAK};
use prism::foreign::{self, place};
use serde_json::Value;

#[global_allocator]
static ALLOC: Counting = Counting;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fixture() -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/inspect");
    let json = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

/// The fixture's samples repeated to `n`, each under a new id with `events` bytes of events.
fn samples(log: &Value, n: usize, events: usize) -> Vec<Value> {
    let base = log["samples"].as_array().unwrap();
    let pad = "x".repeat(events);
    (0..n)
        .map(|i| {
            let mut s = base[i % base.len()].clone();
            s["id"] = Value::from(format!("s{i:06}"));
            s["events"] = serde_json::json!([{"event": "info", "data": pad}]);
            s
        })
        .collect()
}

fn write_json(dir: &Path, log: &Value, samples: Vec<Value>) -> PathBuf {
    let mut v = log.clone();
    v["samples"] = Value::Array(samples);
    let p = dir.join("big.json");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

fn write_eval(dir: &Path, log: &Value, samples: &[Value]) -> PathBuf {
    let p = dir.join("big.eval");
    let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut header = log.clone();
    header.as_object_mut().unwrap().remove("samples");
    z.start_file("header.json", opts).unwrap();
    z.write_all(&serde_json::to_vec(&header).unwrap()).unwrap();
    for s in samples {
        z.start_file(
            format!("samples/{}_epoch_1.json", s["id"].as_str().unwrap()),
            opts,
        )
        .unwrap();
        z.write_all(&serde_json::to_vec(s).unwrap()).unwrap();
    }
    z.finish().unwrap();
    p
}

/// Reads and stores one log as `prism import` does; (seconds, answers, peak heap bytes above
/// the start).
fn import(path: &Path, dir: &Path) -> (f64, usize, usize) {
    let db = dir.join(format!(
        "{}.db",
        path.file_name().unwrap().to_string_lossy()
    ));
    let store = prism::store::Db::file(&db);
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let t = Instant::now();
    let read = foreign::read(&[path.to_path_buf()], None);
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    let placed = place::import(&store, &read.runs[0], &place::Options::default()).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    (secs, placed.answers, peak)
}

/// inspect_ai's own reader on the same file, when its venv is there (seconds).
fn inspect_reads(path: &Path) -> Option<f64> {
    let tools = std::env::var_os("PRISM_IMPORT_TOOLS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/prism-import-tools"))
        })?;
    let py = tools.join("venv/bin/python");
    if !py.exists() {
        return None;
    }
    let out = std::process::Command::new(py)
        .args([
            "-c",
            "import sys, time\nfrom inspect_ai.log import read_eval_log\nt = time.perf_counter()\nlog = read_eval_log(sys.argv[1])\nassert len(log.samples) > 0\nprint(time.perf_counter() - t)",
        ])
        .arg(path)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = arg(&args, "--samples", 10_000);
    let events = arg(&args, "--events", 4096);
    let dir = tempfile::tempdir().unwrap();
    let log = fixture();
    let all = samples(&log, n, events);
    let eval = write_eval(dir.path(), &log, &all);
    let json = write_json(dir.path(), &log, all);
    println!("inspect_ai log of {n} samples, {events} bytes of events each");
    for p in [&json, &eval] {
        let size = std::fs::metadata(p).unwrap().len() as f64;
        let (secs, answers, peak) = import(p, dir.path());
        assert_eq!(answers, n);
        let theirs = inspect_reads(p)
            .map(|t| {
                format!(
                    "; inspect_ai's read_eval_log {t:.2} s = {:.1}x prism's whole import",
                    t / secs
                )
            })
            .unwrap_or_default();
        println!(
            "{}: {:.1} MB: read and stored in {secs:.2} s = {:.0} samples/s; peak heap {:.1} MB = {:.2}x the file{theirs}",
            p.file_name().unwrap().to_string_lossy(),
            size / 1e6,
            n as f64 / secs,
            peak as f64 / 1e6,
            peak as f64 / size,
        );
    }
}
