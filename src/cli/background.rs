//! What `prism detect`, `prism autohall` and `prism selfcheck` share: run an engine task to its
//! end on a fresh runtime, ctrl-c, SIGTERM or SIGHUP cancelling it, while a printer shows its events; then say how
//! it went on stderr.

use std::future::Future;

use tokio_util::sync::CancellationToken;

use crate::detect::run::DetectSummary;

/// An engine task: the run's summary, or why it could not start.
pub type Task = std::pin::Pin<Box<dyn Future<Output = anyhow::Result<DetectSummary>> + Send>>;

/// Runs `task` with `printer` beside it; returns the summary and the printer's failure lines.
pub fn run_with_printer<P>(
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
        result.map(|s| (s, failures))
    })
}

/// "`what` ID: N calls done (M from cache), F failed", then the first failures.
pub fn say_summary(what: &str, s: &DetectSummary, failures: &[String]) {
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
