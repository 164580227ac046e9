//! One running worker process, seen from prism: its pipes, the jobs waiting on it, and what
//! killed it. Three threads per worker keep the async runtime off the pipes: one writes
//! requests, one reads replies and hands each to its job, one keeps the last lines of the
//! worker's stderr (a `GGML_ASSERT` message, a panic) for the crash report.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use tokio::sync::mpsc as tmpsc;

use super::budget::Budget;
use super::protocol::{LoadSpec, Reply, Request};
use super::worker::SUBCOMMAND;
use crate::provider::{ProviderError, StreamEvent};

pub(super) type EventTx = tmpsc::UnboundedSender<Result<StreamEvent, ProviderError>>;

enum Pending {
    Stream(EventTx),
    Render(mpsc::Sender<Result<String, ProviderError>>),
}

#[derive(Default)]
struct State {
    pending: HashMap<u64, Pending>,
    /// Generations among `pending`: the worker is busy while there are any.
    streams: usize,
    /// Why the worker died; once set, no job is taken.
    dead: Option<String>,
}

/// What the reader thread shares with the handle. It holds no sender to the worker, so dropping
/// the last [`Worker`] closes the worker's stdin and the worker exits (the thread budget holds
/// one until the worker leaves it, which the handle's drop does).
struct Shared {
    state: Mutex<State>,
    generated: AtomicU64,
    /// Prompt tokens the worker read, and took from cells it had (as of its last usage report).
    prompt_read: AtomicU64,
    prompt_reused: AtomicU64,
    /// The threads the worker says it decodes with now.
    threads: AtomicUsize,
    /// The thread budget this worker is a member of, and its id there.
    budget: Arc<Budget>,
    member: u64,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits on a job; the worker is working from its first generation on (its share of the
    /// cores is sent before the request).
    fn add(&self, id: u64, p: Pending) -> Result<(), ProviderError> {
        let first = {
            let mut st = self.lock();
            if let Some(reason) = &st.dead {
                return Err(ProviderError::Crashed(reason.clone()));
            }
            let stream = matches!(p, Pending::Stream(_));
            st.pending.insert(id, p);
            st.streams += usize::from(stream);
            stream && st.streams == 1
        };
        if first {
            self.budget.working(self.member);
        }
        Ok(())
    }

    /// A job is over (done, failed or cancelled); the last generation ending makes the worker
    /// idle.
    fn remove(&self, id: u64) -> Option<Pending> {
        let (p, last) = {
            let mut st = self.lock();
            let p = st.pending.remove(&id);
            let stream = matches!(p, Some(Pending::Stream(_)));
            st.streams -= usize::from(stream);
            (p, stream && st.streams == 0)
        };
        if last {
            self.budget.idle(self.member);
        }
        p
    }

    /// Fails every waiting job with the reason; later jobs are refused.
    fn die(&self, reason: String) {
        let pending = {
            let mut st = self.lock();
            st.dead = Some(reason.clone());
            st.streams = 0;
            std::mem::take(&mut st.pending)
        };
        self.budget.leave(self.member);
        for (_, p) in pending {
            let e = ProviderError::Crashed(reason.clone());
            match p {
                Pending::Stream(tx) => {
                    let _ = tx.send(Err(e));
                }
                Pending::Render(tx) => {
                    let _ = tx.send(Err(e));
                }
            }
        }
    }
}

/// What the worker said when it had loaded the model.
#[derive(Debug, Clone)]
pub(super) struct Loaded {
    pub completion: bool,
    pub template: Option<String>,
    pub identity: String,
}

/// A live (or lately dead) worker process.
pub(super) struct Worker {
    pub pid: u32,
    requests: mpsc::Sender<String>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("pid", &self.pid).finish()
    }
}

/// Lines of the worker's stderr kept for a crash report.
const STDERR_LINES: usize = 20;
/// How long a dead worker's stderr may take to end (a process it started could hold it open).
const STDERR_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// Starts `exe __local-worker ARGS` with piped stdio, in a process group of its own.
fn spawn(exe: &Path, args: &[String]) -> Result<std::process::Child, ProviderError> {
    let mut cmd = Command::new(exe);
    cmd.arg(SUBCOMMAND)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tune_threads(&mut cmd);
    // A process group of its own: ctrl-c in prism's terminal, or the terminal closing,
    // signals the whole foreground group; prism then stops the run in order, and the
    // worker must not die mid-answer first. It still goes when prism goes: its stdin closes.
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn().map_err(|e| {
        ProviderError::Config(format!(
            "cannot start the local model worker ({}): {e}",
            exe.display()
        ))
    })
}

impl Worker {
    /// Starts `exe __local-worker ARGS`, loads the model and waits until it is ready.
    pub(super) fn start(
        exe: &Path,
        args: &[String],
        spec: &LoadSpec,
    ) -> Result<(Arc<Worker>, Loaded), ProviderError> {
        let mut child = spawn(exe, args)?;
        let pid = child.id();
        let tail = Arc::new(Mutex::new(VecDeque::<String>::new()));
        // Says when the worker's stderr has ended, so its last words are in `tail` before the
        // reason it died is put into words.
        let (stderr_done, stderr_ended) = mpsc::channel::<()>();
        if let Some(err) = child.stderr.take() {
            let tail = tail.clone();
            std::thread::Builder::new()
                .name(format!("prism-local-stderr-{pid}"))
                .spawn(move || {
                    keep_tail(err, &tail);
                    let _ = stderr_done.send(());
                })
                .map_err(thread_error)?;
        }
        let mut stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let load = serde_json::to_string(&Request::Load(spec.clone()))
            .map_err(|e| ProviderError::Config(format!("model path {:?}: {e}", spec.path)))?;
        // A worker that died at once shows up as a broken pipe here or as the end of its
        // stdout below; either way its exit status says why.
        let _ = writeln!(stdin, "{load}").and_then(|_| stdin.flush());
        let mut first = String::new();
        let read = stdout.read_line(&mut first);
        let reply = match read {
            Ok(n) if n > 0 => serde_json::from_str::<Reply>(&first).ok(),
            _ => None,
        };
        let loaded = match reply {
            Some(Reply::Loaded {
                completion,
                template,
                identity,
            }) => Loaded {
                completion,
                template,
                identity,
            },
            Some(Reply::LoadFailed { kind, message }) => {
                let _ = child.wait();
                return Err(kind.error(message));
            }
            other => {
                drop(stdin);
                let status = child.wait().ok();
                let _ = stderr_ended.recv_timeout(STDERR_GRACE);
                let said = if other.is_some() || first.trim().is_empty() {
                    String::new()
                } else {
                    format!(" (it printed {:?})", clip(first.trim(), 80))
                };
                return Err(match status {
                    Some(s) if !s.success() => {
                        ProviderError::Crashed(describe_exit(s, &last_lines(&tail)))
                    }
                    _ => ProviderError::Config(format!(
                        "{} is not prism's local model worker{said}",
                        exe.display()
                    )),
                });
            }
        };
        let (tx, rx) = mpsc::channel::<String>();
        let budget = Budget::global().clone();
        let tell = {
            let tx = tx.clone();
            Box::new(move |n: usize| {
                if let Ok(mut line) = serde_json::to_string(&Request::Threads { n }) {
                    line.push('\n');
                    let _ = tx.send(line);
                }
            })
        };
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            generated: AtomicU64::new(0),
            prompt_read: AtomicU64::new(0),
            prompt_reused: AtomicU64::new(0),
            threads: AtomicUsize::new(spec.threads.max(1) as usize),
            member: budget.join(spec.threads.max(1) as usize, tell),
            budget,
        });
        std::thread::Builder::new()
            .name(format!("prism-local-in-{pid}"))
            .spawn(move || {
                for line in rx {
                    if stdin
                        .write_all(line.as_bytes())
                        .and_then(|_| stdin.flush())
                        .is_err()
                    {
                        break; // the worker died: the reader reports it
                    }
                }
                // Dropping stdin here tells the worker to exit.
            })
            .map_err(thread_error)?;
        {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("prism-local-out-{pid}"))
                .spawn(move || read_replies(child, stdout, &shared, &tail, &stderr_ended))
                .map_err(thread_error)?;
        }
        Ok((
            Arc::new(Worker {
                pid,
                requests: tx,
                shared,
                next_id: AtomicU64::new(1),
            }),
            loaded,
        ))
    }

    /// Why the worker died, if it did.
    pub(super) fn death(&self) -> Option<String> {
        self.shared.lock().dead.clone()
    }

    /// Tokens the worker reported generating, over all its jobs.
    pub(super) fn generated(&self) -> u64 {
        self.shared.generated.load(Ordering::Relaxed)
    }

    /// Prompt tokens the worker has read, and taken from cells it had instead (as of the last
    /// answer it finished).
    pub(super) fn prompt_tokens(&self) -> (u64, u64) {
        (
            self.shared.prompt_read.load(Ordering::Relaxed),
            self.shared.prompt_reused.load(Ordering::Relaxed),
        )
    }

    /// The threads the worker decodes with now (its share of the cores).
    pub(super) fn threads(&self) -> usize {
        self.shared.threads.load(Ordering::Relaxed)
    }

    fn register(&self, p: Pending) -> Result<u64, ProviderError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared.add(id, p)?;
        Ok(id)
    }

    fn send(&self, req: &Request) {
        if let Ok(mut line) = serde_json::to_string(req) {
            line.push('\n');
            // A closed channel means the writer stopped because the worker died; the reader
            // fails the job with the reason.
            let _ = self.requests.send(line);
        }
    }

    /// Starts a generation; its events arrive on `tx`. Returns the job's id.
    pub(super) fn generate(
        &self,
        req: &crate::provider::ChatRequest,
        tx: EventTx,
    ) -> Result<u64, ProviderError> {
        let id = self.register(Pending::Stream(tx))?;
        self.send(&Request::Generate {
            id,
            messages: req.messages.clone(),
            params: req.params.clone(),
        });
        Ok(id)
    }

    /// Stops job `id` if it is still running.
    pub(super) fn cancel(&self, id: u64) {
        let was_pending = self.shared.remove(id).is_some();
        if was_pending {
            self.send(&Request::Cancel { id });
        }
    }

    /// The prompt text for these messages in the model's style (blocks until the worker
    /// answers).
    pub(super) fn render(
        &self,
        messages: &[crate::provider::Message],
    ) -> Result<String, ProviderError> {
        let (tx, rx) = mpsc::channel();
        let id = self.register(Pending::Render(tx))?;
        self.send(&Request::Render {
            id,
            messages: messages.to_vec(),
        });
        rx.recv()
            .unwrap_or_else(|_| Err(ProviderError::Crashed("the worker stopped".into())))
    }
}

impl Drop for Worker {
    /// The budget's line to the worker goes with the handle, so the worker's stdin closes and
    /// it exits; its cores go to the others.
    fn drop(&mut self) {
        self.shared.budget.leave(self.shared.member);
    }
}

/// At most `max` bytes of `s`, cut at a character boundary.
fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn thread_error(e: std::io::Error) -> ProviderError {
    ProviderError::Config(format!("starting a local model thread: {e}"))
}

/// The reader thread: hands each reply to its job; at the end of the worker's stdout, waits
/// for it and fails the jobs left with the reason it died.
fn read_replies(
    mut child: Child,
    stdout: BufReader<ChildStdout>,
    shared: &Shared,
    tail: &Mutex<VecDeque<String>>,
    stderr_ended: &mpsc::Receiver<()>,
) {
    for line in stdout.lines() {
        let Ok(line) = line else { break };
        let Ok(reply) = serde_json::from_str::<Reply>(&line) else {
            continue;
        };
        if let Some(n) = reply.generated() {
            shared.generated.fetch_max(n, Ordering::Relaxed);
        }
        if let Reply::Usage {
            prompt_read,
            prompt_reused,
            ..
        } = &reply
        {
            shared
                .prompt_read
                .fetch_max(*prompt_read, Ordering::Relaxed);
            shared
                .prompt_reused
                .fetch_max(*prompt_reused, Ordering::Relaxed);
        }
        if let Reply::Threads { n } = reply {
            shared.threads.store(n, Ordering::Relaxed);
            continue;
        }
        if let Reply::Rendered { id, text, error } = reply {
            if let Some(Pending::Render(tx)) = shared.remove(id) {
                let _ = tx.send(text.ok_or_else(|| {
                    ProviderError::Config(error.unwrap_or_else(|| "render failed".into()))
                }));
            }
            continue;
        }
        let Some((id, ev, last)) = reply.into_event() else {
            continue;
        };
        let gone = match shared.lock().pending.get(&id) {
            Some(Pending::Stream(tx)) => tx.send(ev).is_err(),
            _ => false,
        };
        if last || gone {
            shared.remove(id);
        }
    }
    // stdout ended: the worker exited (or closed it). Its status says how.
    let status = child.wait();
    // The stderr thread may still be reading the worker's last words.
    let _ = stderr_ended.recv_timeout(STDERR_GRACE);
    let reason = match status {
        Ok(s) => describe_exit(s, &last_lines(tail)),
        Err(e) => format!("lost the worker: {e}"),
    };
    shared.die(reason);
}

fn keep_tail(err: std::process::ChildStderr, tail: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(err).lines() {
        let Ok(line) = line else { break };
        let line = clip(line.trim(), 300).to_string();
        if line.is_empty() {
            continue;
        }
        let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
        if t.len() == STDERR_LINES {
            t.pop_front();
        }
        t.push_back(line);
    }
}

fn last_lines(tail: &Mutex<VecDeque<String>>) -> Vec<String> {
    tail.lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .cloned()
        .collect()
}

/// The reason a worker ended, in words: the signal by name, with what the worker last said
/// about it (llama.cpp's `GGML_ASSERT` message, a panic) when it said anything.
pub fn describe_exit(status: ExitStatus, stderr: &[String]) -> String {
    let mut out = match signal_of(status) {
        Some(sig) => signal_words(sig),
        None => match status.code() {
            Some(0) => "the worker exited".to_string(),
            Some(c) => format!("the worker exited with status {c}"),
            None => "the worker ended".to_string(),
        },
    };
    // The most telling line: an assertion or panic, else the last thing said.
    let said = stderr
        .iter()
        .rev()
        .find(|l| l.contains("GGML_ASSERT") || l.contains("panicked") || l.contains("error"))
        .or_else(|| stderr.last());
    if let Some(s) = said {
        out.push_str(": ");
        out.push_str(&crate::text::clean_line(s));
    }
    out
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<i32> {
    None
}

fn signal_words(sig: i32) -> String {
    match sig {
        4 => "illegal instruction (SIGILL): this build uses an instruction this CPU cannot run; \
              rebuild prism on this machine"
            .into(),
        6 => "aborted (SIGABRT)".into(),
        7 => "bus error (SIGBUS)".into(),
        8 => "arithmetic fault (SIGFPE)".into(),
        9 => "killed (SIGKILL: by hand or by the out-of-memory killer)".into(),
        11 => "segmentation fault (SIGSEGV)".into(),
        15 => "terminated (SIGTERM)".into(),
        n => format!("killed by signal {n}"),
    }
}

/// OpenMP's default lets idle threads spin at barriers for a while. On a machine that is doing
/// anything else, a spinning thread holds a core the descheduled one needs, and generation
/// crawls (issue 29: 0.6 tok/s beside two other busy processes). A short spin keeps the idle
/// speed and gives the cores back under contention. A user's own setting wins.
fn tune_threads(cmd: &mut Command) {
    if std::env::var_os("OMP_WAIT_POLICY").is_none() && std::env::var_os("GOMP_SPINCOUNT").is_none()
    {
        cmd.env("GOMP_SPINCOUNT", GOMP_SPINCOUNT);
    }
}

/// Spins before a waiting OpenMP thread sleeps (libgomp's default with OMP_WAIT_POLICY unset is
/// 300,000; see BENCHMARKS.md for the measurement behind this value).
pub const GOMP_SPINCOUNT: &str = "10000";

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LoadSpec {
        LoadSpec {
            path: "/nonexistent/model.gguf".into(),
            threads: 1,
            context: 512,
            workers: 1,
            completion: false,
            template: None,
        }
    }

    /// A script that stands in for the worker program.
    #[cfg(unix)]
    fn script(dir: &Path, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("worker.sh");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[cfg(unix)]
    #[test]
    fn a_worker_that_is_not_one_or_dies_loading_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        // Some other program: it answers, but not in the protocol.
        let other = script(dir.path(), "echo 'usage: something else'");
        let e = Worker::start(&other, &[], &spec()).unwrap_err();
        assert!(matches!(e, ProviderError::Config(_)), "{e:?}");
        assert!(
            e.to_string().contains("is not prism's local model worker")
                && e.to_string().contains("usage: something else"),
            "{e}"
        );
        // One that fails, saying why on stderr.
        let fails = script(dir.path(), "echo 'cannot map the file' >&2; exit 3");
        let e = Worker::start(&fails, &[], &spec()).unwrap_err().to_string();
        assert_eq!(
            e,
            "local model crashed: the worker exited with status 3: cannot map the file"
        );
        // One killed by an illegal instruction while loading.
        let ill = script(dir.path(), "kill -ILL $$");
        let e = Worker::start(&ill, &[], &spec()).unwrap_err();
        assert!(e.retryable(), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("local model crashed: illegal instruction (SIGILL)"),
            "{e}"
        );
        // A program that does not exist.
        let e = Worker::start(&dir.path().join("nope"), &[], &spec()).unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot start the local model worker"),
            "{e}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn exits_are_told_in_words_with_the_workers_last_words() {
        use std::os::unix::process::ExitStatusExt;
        let ill = describe_exit(ExitStatus::from_raw(4), &[]);
        assert!(ill.starts_with("illegal instruction (SIGILL)"), "{ill}");
        let abort = describe_exit(
            ExitStatus::from_raw(6),
            &[
                "loading".into(),
                "ggml.c:123: GGML_ASSERT(n <= ctx) failed".into(),
                "backtrace...".into(),
            ],
        );
        assert_eq!(
            abort,
            "aborted (SIGABRT): ggml.c:123: GGML_ASSERT(n <= ctx) failed"
        );
        let oom = describe_exit(ExitStatus::from_raw(9), &[]);
        assert!(
            oom.contains("SIGKILL") && oom.contains("out-of-memory"),
            "{oom}"
        );
        // Exit code 3 is status 3 << 8 in the raw wait status.
        assert_eq!(
            describe_exit(ExitStatus::from_raw(3 << 8), &["\u{1b}[2Jbye".into()]),
            "the worker exited with status 3: bye"
        );
    }
}
