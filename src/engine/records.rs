//! The records lanes: lanes whose work is a list of independent units, each asking a model and
//! keeping what it said as records of a described table (claims' topics, semantic entropy's
//! entailment verdicts, self-detection on stored answers, the quality agent's scores). Their
//! state is their records: no run status to keep, only the harness's lock (one process per
//! lock at a time), and a second run asks only for what is missing.
//!
//! A lane is a [`Unit`]: what one item of its list is, how it is done (calls through the
//! [`Cx`]'s slots, each record saved through the store's one writer, so it reaches a shared
//! store as it is saved) and what its front-end hears when it is done. Everything around it
//! (lock, slots, counts, saving held while the store is down, cancel) is [`run`]'s, given the
//! lane's [`Lane`] like every lane.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::{SemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::harness::{self, Counts, Life, Lifecycle, RunError, RunTable};
use super::lane::Lane;
use crate::store::record::Record;
use crate::store::{RunStatus, StoreHandle};

/// What a records lane's front-end hears.
#[derive(Debug, Clone)]
pub enum RecordEvent<R, O> {
    /// A record, saved.
    Saved(Arc<R>),
    /// An item done, with what the lane says of it (entropy: its clusters).
    Done(O),
    Life(Lifecycle),
}

/// One records lane.
pub trait Unit: Send + Sync + Sized + 'static {
    /// One item of the lane's list.
    type Todo: Send + 'static;
    /// What it keeps.
    type Record: Record;
    /// What the front-end hears when an item is done.
    type Outcome: Send + 'static;
    /// What to call the lane's run in messages ("topic assignment").
    const WHAT: &'static str;

    /// Does one item: each call in a slot ([`Cx::slot`]), each record saved ([`Cx::save`]),
    /// the item counted ([`Cx::count`]). `None`: stopped (cancelled, or a save that could not
    /// be made before the cancel).
    fn work(
        self: Arc<Self>,
        todo: Self::Todo,
        cx: Cx<Self>,
    ) -> impl Future<Output = Option<Self::Outcome>> + Send;
}

/// What one item's work is given.
pub struct Cx<U: Unit> {
    life: Arc<Life>,
    store: StoreHandle,
    events: mpsc::UnboundedSender<RecordEvent<U::Record, U::Outcome>>,
}

impl<U: Unit> Cx<U> {
    /// Waits for a call slot (and a store that saves); `None` when cancelled.
    pub async fn slot(&self) -> Option<SemaphorePermit<'_>> {
        self.life.slot().await
    }

    pub fn cancel(&self) -> &CancellationToken {
        &self.life.cancel
    }

    pub fn is_cancelled(&self) -> bool {
        self.life.is_cancelled()
    }

    /// Counts the item: done or failed, and whether every answer came from the cache.
    pub fn count(&self, ok: bool, cached: bool) {
        self.life.count(ok, cached);
    }

    /// Saves a record (held and retried while the store cannot save) and tells the front-end;
    /// `None` when cancelled before it could be saved.
    pub async fn save(&self, rec: U::Record) -> Option<Arc<U::Record>> {
        let rec = Arc::new(rec);
        let saved = self
            .life
            .save(|| {
                let (store, rec) = (self.store.clone(), rec.clone());
                async move { store.save_records(std::slice::from_ref(&*rec)).await }
            })
            .await;
        if !saved {
            return None;
        }
        let _ = self.events.send(RecordEvent::Saved(rec.clone()));
        Some(rec)
    }
}

/// A records lane's runs for the harness: no status, only the lock.
struct NoStatus<U>(PhantomData<U>);

impl<U: Unit> RunTable for NoStatus<U> {
    const WHAT: &'static str = U::WHAT;
    async fn set_status(_: &StoreHandle, _: String, _: RunStatus) {}
}

/// Runs `unit` over `todo` under the lock `lock`, `concurrency` calls at a time; the counts
/// are of items.
pub async fn run<U: Unit>(
    lane: Lane<RecordEvent<U::Record, U::Outcome>>,
    concurrency: usize,
    lock: &str,
    unit: Arc<U>,
    todo: Vec<U::Todo>,
) -> Result<Counts, RunError> {
    let concurrency = concurrency.max(1);
    let spec = harness::Spec::new(lock, todo.len(), concurrency);
    let tell = harness::tell_into(lane.events.clone(), RecordEvent::Life);
    let (store, events) = (lane.store.clone(), lane.events);
    harness::run::<NoStatus<U>, _, _>(&lane.store, &lane.cancel, spec, tell, |life| async move {
        futures::stream::iter(todo)
            .map(|t| {
                let unit = unit.clone();
                let item = Cx::<U> {
                    life: life.clone(),
                    store: store.clone(),
                    events: events.clone(),
                };
                let events = events.clone();
                async move {
                    if let Some(outcome) = unit.work(t, item).await {
                        let _ = events.send(RecordEvent::Done(outcome));
                    }
                }
            })
            .buffer_unordered(concurrency)
            .collect::<Vec<()>>()
            .await;
    })
    .await
}
