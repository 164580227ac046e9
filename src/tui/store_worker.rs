//! The TUI's store reads and small writes (review drafts and decisions, stored answers,
//! detections to show), on a thread of their own with their own connections, so the UI loop
//! never waits for the database: a store held locked by another process (a long import, a
//! panel member's save, a backup) leaves keys and frames as fast as ever.
//!
//! Tasks run one at a time in the order they were asked for (a draft is saved before the
//! decision that follows it), and each answers the component that asked through the loop's
//! channel, like every other job. [`StoreWorker::pending`] counts tasks not yet answered, so a
//! scripted session that ends its input still waits for them; on quit the loop waits for what
//! is queued (each task is bounded by the store's busy timeout), so nothing typed is lost.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::screen_id::ScreenId;
use crate::store::Db;

/// What a task works with: the store, through a `Db` of the worker's own (its own
/// connections; `None` without a store).
pub struct StoreCtx {
    pub db: Option<Db>,
}

/// One read or write; the messages it returns go to the component that asked. (Generic over
/// the message type, so this module needs nothing from the jobs that use it.)
pub(crate) type Task<M> = Box<dyn FnOnce(&mut StoreCtx) -> Vec<M> + Send>;

/// A panic in a task becomes this message instead.
pub(crate) trait Failed {
    fn failed(why: String) -> Self;
}

pub(crate) struct StoreWorker<M> {
    tx: Option<mpsc::Sender<(ScreenId, Task<M>)>>,
    pending: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl<M: Failed + Send + 'static> StoreWorker<M> {
    /// Starts the worker on `ctx`; each answer is handed to `deliver` with who asked.
    pub(crate) fn start(
        mut ctx: StoreCtx,
        deliver: impl Fn(ScreenId, M) + Send + 'static,
    ) -> StoreWorker<M> {
        let (tx, rx) = mpsc::channel::<(ScreenId, Task<M>)>();
        let pending = Arc::new(AtomicUsize::new(0));
        let left = pending.clone();
        let thread = std::thread::Builder::new()
            .name("prism-tui-store".into())
            .spawn(move || {
                for (to, task) in rx {
                    // A bug in a task is that task's failure, not the worker's end.
                    let msgs =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(&mut ctx)))
                            .unwrap_or_else(|_| {
                                vec![M::failed("internal error reading the store".into())]
                            });
                    for msg in msgs {
                        deliver(to, msg);
                    }
                    // After the answers are on the channel: a loop that sees no task pending
                    // and an empty channel has everything.
                    left.fetch_sub(1, Ordering::SeqCst);
                }
            })
            .ok();
        StoreWorker {
            tx: thread.as_ref().map(|_| tx),
            pending,
            thread,
        }
    }

    /// Queues `task` for `to`. Without a worker thread (it could not start), the task is
    /// answered with why.
    pub(crate) fn submit(&self, to: ScreenId, task: Task<M>) -> Result<(), String> {
        let Some(tx) = &self.tx else {
            return Err("the store thread could not start".into());
        };
        self.pending.fetch_add(1, Ordering::SeqCst);
        tx.send((to, task)).map_err(|_| {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            "the store thread has stopped".to_string()
        })
    }

    /// Tasks asked for and not yet answered.
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}

impl<M> StoreWorker<M> {
    /// Waits for every queued task to finish (on quit: a draft typed last is saved).
    pub(crate) fn finish(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl<M> Drop for StoreWorker<M> {
    fn drop(&mut self) {
        self.finish();
    }
}
