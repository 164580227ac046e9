//! The signals that ask prism to stop: ctrl-c (SIGINT), SIGTERM (`kill`, a system shutdown) and
//! SIGHUP (the terminal or ssh session closed). Each one stops a run the way `q` or ctrl-c does:
//! the jobs in flight are cancelled, what finished stays stored, the run is marked interrupted
//! (resumable) rather than left `running`, and the terminal is restored.

use tokio_util::sync::CancellationToken;

/// Waits for the first of ctrl-c, SIGTERM and SIGHUP.
pub(crate) async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).ok();
        let mut hup = signal(SignalKind::hangup()).ok();
        let term = async {
            match term.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        let hup = async {
            match hup.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term => {}
            _ = hup => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Cancels `token` on the first such signal (call from inside a runtime).
pub(crate) fn cancel_on_signal(token: &CancellationToken) {
    let token = token.clone();
    tokio::spawn(async move {
        signal().await;
        token.cancel();
    });
}
