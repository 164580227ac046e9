//! What `prism detect`, `prism autohall` and `prism selfcheck` share: run an engine task to its
//! end on a fresh runtime, ctrl-c, SIGTERM or SIGHUP cancelling it, while a printer shows its events; then say how
//! it went on stderr.

use std::future::Future;

use tokio_util::sync::CancellationToken;

use crate::detect::run::DetectSummary;

/// An engine task: the run's summary, or why it could not start.
pub(crate) type Task = std::pin::Pin<
    Box<dyn Future<Output = Result<DetectSummary, crate::engine::harness::RunError>> + Send>,
>;

/// Runs `task` with `printer` beside it; returns the summary and the printer's failure lines.
pub(crate) fn run_with_printer<P>(
    task: Task,
    printer: P,
    cancel: &CancellationToken,
) -> anyhow::Result<(DetectSummary, Vec<String>)>
where
    P: Future<Output = Vec<String>> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        crate::shutdown::cancel_on_signal(cancel);
        let printer = tokio::spawn(printer);
        let result = task.await;
        let failures = printer.await.unwrap_or_default();
        // Kept typed inside the error: `main` reads whether it is worth running again.
        result.map(|s| (s, failures)).map_err(anyhow::Error::from)
    })
}

/// "`what` ID: N calls done (M from cache), F failed", then the first failures.
pub(crate) fn say_summary(what: &str, s: &DetectSummary, failures: &[String]) {
    crate::warn!(
        "{what} {}: {} calls done ({} from cache), {} failed{}",
        s.run_id,
        s.done,
        s.cache_hits,
        s.failed,
        if s.cancelled > 0 { ", interrupted" } else { "" }
    );
    for f in failures.iter().take(20) {
        crate::warn!("  failed: {f}");
    }
    if failures.len() > 20 {
        crate::warn!("  ... and {} more", failures.len() - 20);
    }
}

/// A progress bar over `calls` calls, as every lane's command shows one on a terminal.
pub(crate) fn calls_bar(calls: usize) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(calls as u64);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} calls {per_sec} ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b.enable_steady_tick(std::time::Duration::from_millis(200));
    b
}

/// One call more on the bar, if there is one.
pub(crate) fn tick(bar: &Option<indicatif::ProgressBar>) {
    if let Some(b) = bar {
        b.inc(1);
    }
}

/// Saving failed (a full disk, most likely): said once on stderr, above the bar, whatever the
/// mode (the user has to free space); the JSON event.
fn store_down(
    bar: &Option<indicatif::ProgressBar>,
    reason: &str,
    goes_on: &str,
) -> serde_json::Value {
    let msg = crate::store::store_down_advice(&crate::text::clean_line(reason), goes_on);
    match bar {
        Some(b) => b.println(&msg),
        None => crate::warn!("{msg}"),
    }
    serde_json::json!({"event": "store_down", "reason": reason})
}

/// The run ended: the bar goes; the JSON event, the run's id under `id_key`.
fn finished(
    bar: &Option<indicatif::ProgressBar>,
    id_key: &str,
    s: &DetectSummary,
) -> serde_json::Value {
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    serde_json::json!({"event": "finished", id_key: s.run_id, "total": s.total, "done": s.done,
           "failed": s.failed, "cancelled": s.cancelled, "cache_hits": s.cache_hits})
}

/// A run's lifecycle event, as every lane's command says it: saving stopped (on stderr, above
/// the bar, `goes_on` saying what continues) or works again, the run ended; the JSON event.
pub(crate) fn lifecycle(
    bar: &Option<indicatif::ProgressBar>,
    l: &crate::engine::harness::Lifecycle,
    id_key: &str,
    goes_on: &str,
) -> serde_json::Value {
    use crate::engine::harness::Lifecycle;
    match l {
        Lifecycle::StoreDown { reason } => store_down(bar, reason, goes_on),
        Lifecycle::StoreUp => {
            if let Some(b) = bar {
                b.println("saving works again");
            }
            serde_json::json!({"event": "store_up"})
        }
        Lifecycle::Finished(s) => finished(bar, id_key, s),
    }
}

/// A lane command's exit code: 130 interrupted (the `--resume` command that finishes it is
/// said), 2 some calls failed, 0 all done.
/// `db` is the store the command was given, as the hint should repeat it: the shared store's
/// URL (without its password) when the command worked on one, else the file.
pub(crate) fn exit_code(s: &DetectSummary, command: &str, run_id: &str, db: &str) -> i32 {
    if s.cancelled > 0 {
        crate::warn!(
            "interrupted; finish it with: prism {command} --resume {run_id} --db {}",
            crate::text::shell_quote(db)
        );
        return 130;
    }
    if s.failed > 0 { 2 } else { 0 }
}
