//! The hub of the TUI's background work, in gitui's shape: a [`Job`] is a type of its feature's
//! own (under `jobs/`), a component asks for one with `Cmd::Job`, and the hub starts it with a
//! [`JobCx`]: the services, the store worker, a slot to run in and a [`Reply`] bound to the
//! component that asked. Every result comes back on one channel as a [`Delivery`] of a [`Msg`],
//! which holds any [`Outcome`]; the app lets the outcome change what the screens share
//! ([`Outcome::apply`]) and hands it to the asker, which takes the types it knows
//! ([`Msg::get`]). The hub knows no feature: a new lane's work is a new type, not a new variant.

pub mod answers;
pub mod detect;
pub mod labels;
pub mod review;
pub mod run;
pub mod runs;
pub mod selfcheck;
pub mod shared;
pub mod signals;
pub mod undo;

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::screen_id::ScreenId;
use super::services::Services;
use super::session::Session;
use super::store_worker::{StoreCtx, StoreWorker};
use crate::dataset::Dataset;
use crate::provider::ModelConfig;
use crate::store::Db;

/// This machine's store to read on the store thread (`db` is the thread's `Db`), or, from the
/// closure it is in, the message that it could not be opened.
macro_rules! read_or_fail {
    ($db:expr) => {
        match $db.read() {
            Ok(r) => r,
            Err(e) => return Msg::failed(format!("reading the store: {e}")),
        }
    };
}
pub(crate) use read_or_fail;

/// Background work a component asks for. `start` runs on the loop thread and must not wait: it
/// hands the work to the store worker ([`JobCx::on_store`]) or the runtime ([`JobCx::spawn`]).
pub trait Job: Any {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>);
}

impl dyn Job {
    /// The job, if it is a `T` (tests and benches carry out a screen's requests themselves).
    pub fn downcast<T: Job>(self: Box<Self>) -> Result<T, Box<dyn Job>> {
        let any: &dyn Any = &*self;
        if !any.is::<T>() {
            return Err(self);
        }
        let any: Box<dyn Any> = self;
        Ok(*any.downcast::<T>().expect("checked above"))
    }
}

/// A result of background work. Most are their screen's alone; some change what every screen
/// shares first (the session's answers and scores, the notice, what `z` can take back).
pub trait Outcome: Any + Send + std::fmt::Debug {
    /// What the app does with this before the screen that asked sees it.
    fn apply(&self, _fx: &mut Effects<'_>) {}

    /// Whether every open screen hears it, not only the one that asked (the team's store's news).
    fn to_all(&self) -> bool {
        false
    }
}

/// One result: any [`Outcome`], taken by type.
#[derive(Debug)]
pub struct Msg(Box<dyn Outcome>);

impl Msg {
    pub fn new(o: impl Outcome) -> Msg {
        Msg(Box::new(o))
    }

    /// Something went wrong; the status line says why.
    pub fn failed(why: impl Into<String>) -> Msg {
        Msg::new(Failed(why.into()))
    }

    /// News for the status line.
    pub fn notice(what: impl Into<String>) -> Msg {
        Msg::new(Notice(what.into()))
    }

    /// The outcome, if it is a `T`.
    pub fn get<T: Outcome>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.0;
        any.downcast_ref::<T>()
    }

    pub fn outcome(&self) -> &dyn Outcome {
        &*self.0
    }
}

impl super::store_worker::Failed for Msg {
    fn failed(why: String) -> Msg {
        Msg::failed(why)
    }
}

/// Work that could not be done, and why (shown in the status line).
#[derive(Debug)]
pub struct Failed(pub String);

impl Outcome for Failed {
    fn apply(&self, fx: &mut Effects<'_>) {
        *fx.notice = Some(self.0.clone());
    }
}

/// News for the status line.
#[derive(Debug)]
pub struct Notice(pub String);

impl Outcome for Notice {
    fn apply(&self, fx: &mut Effects<'_>) {
        *fx.notice = Some(self.0.clone());
    }
}

/// What an outcome may change: what the screens share, and more work or a screen to show.
pub struct Effects<'a> {
    pub session: &'a mut Session,
    pub notice: &'a mut Option<String>,
    /// The judge's name, as the screens show it.
    pub judge: &'a mut Option<String>,
    pub models: &'a [ModelConfig],
    /// What this session saved, newest last: what `z` takes back.
    pub undo: &'a mut Vec<super::undo::Undo>,
    /// More work, for the component the outcome went to.
    pub more: Vec<Box<dyn Job>>,
    /// Show the run in progress (its answers stream on the compare screen).
    pub show_run: bool,
}

impl Effects<'_> {
    /// Saving stopped or works again, for any lane's run (`what` goes on); a finished run goes
    /// to the team's store when there is one. The end of a run is its screen's to tell.
    pub fn lifecycle(&mut self, l: &crate::engine::harness::Lifecycle, what: &str) {
        use crate::engine::harness::Lifecycle;
        match l {
            Lifecycle::StoreDown { reason } => {
                let goes_on = format!("{what} goes on");
                *self.notice = Some(crate::store::store_down_advice(
                    &crate::text::one_line(reason),
                    &goes_on,
                ));
            }
            Lifecycle::StoreUp => *self.notice = Some("saving results works again".into()),
            Lifecycle::Finished(c) => self.more.push(Box::new(shared::Push {
                run: c.run_id.clone(),
                what: what.to_string(),
            })),
        }
    }
}

/// A result and the component that asked for the work.
#[derive(Debug)]
pub struct Delivery {
    pub to: ScreenId,
    pub msg: Msg,
}

/// Where a job's results go: the loop's channel, addressed to the component that asked.
/// Cheap to clone into the tasks a job spawns.
#[derive(Clone)]
pub struct Reply {
    tx: mpsc::UnboundedSender<Delivery>,
    pub to: ScreenId,
}

impl Reply {
    /// Sends `msg`; false once the loop has gone (the work can stop).
    pub fn send(&self, msg: Msg) -> bool {
        self.tx.send(Delivery { to: self.to, msg }).is_ok()
    }

    pub fn outcome(&self, o: impl Outcome) -> bool {
        self.send(Msg::new(o))
    }

    pub fn fail(&self, why: impl Into<String>) {
        self.send(Msg::failed(why));
    }

    /// The same channel, addressed to another component.
    pub fn to(&self, to: ScreenId) -> Reply {
        Reply {
            tx: self.tx.clone(),
            to,
        }
    }

    /// Hands every event of `rx` to the loop until its sender is gone (a lane's progress).
    pub async fn forward<E: Outcome>(&self, mut rx: mpsc::UnboundedReceiver<E>) {
        while let Some(ev) = rx.recv().await {
            if !self.outcome(ev) {
                break;
            }
        }
    }
}

/// Where a spawned job runs: runs and detections take a slot of their own (one at a time, and
/// the user can cancel them); everything else runs beside them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Slot {
    Run,
    Detect,
    Other,
}

/// What a job starts with.
pub struct JobCx<'a> {
    pub services: &'a mut Services,
    pub ds: &'a Arc<Dataset>,
    reply: Reply,
    hub: &'a mut Hub,
}

impl JobCx<'_> {
    /// Where results go (clone it into the tasks the job spawns).
    pub fn reply(&self) -> Reply {
        self.reply.clone()
    }

    pub fn send(&self, msg: Msg) {
        self.reply.send(msg);
    }

    pub fn fail(&self, why: impl Into<String>) {
        self.reply.fail(why);
    }

    /// Runs `task` on the store worker (its own connections, one task at a time in the order
    /// asked, so a draft is saved before the decision after it); its messages go to the asker.
    pub fn on_store(&self, task: impl FnOnce(&mut StoreCtx) -> Vec<Msg> + Send + 'static) {
        if let Err(e) = self.hub.worker.submit(self.reply.to, Box::new(task)) {
            self.fail(format!("reading the store: {e}"));
        }
    }

    /// Runs `read` on the store worker's reader; without a store, `missing` is the answer (or
    /// nothing, when a screen without a store simply shows nothing).
    pub fn on_reader(
        &self,
        missing: Option<&'static str>,
        read: impl FnOnce(&Db) -> Msg + Send + 'static,
    ) {
        self.on_store(move |cx| match &cx.db {
            Some(db) => vec![read(db)],
            None => missing.map(Msg::failed).into_iter().collect(),
        });
    }

    /// Whether the slot's work is still running.
    pub fn in_progress(&self, slot: Slot) -> bool {
        self.hub.in_progress(slot)
    }

    /// Runs `work` on the runtime in `slot`; `cancel` stops it (esc, or quitting).
    pub fn spawn(
        &mut self,
        slot: Slot,
        cancel: CancellationToken,
        work: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let h = tokio::spawn(work);
        match slot {
            Slot::Other => self.hub.others.push((cancel, h)),
            slot => {
                self.hub.slots.insert(slot, (cancel, h));
            }
        }
    }

    /// Keeps a watch named `name` for as long as the loop runs, started once by `start` (which
    /// gets a reply to send changes with, and says why it could not start).
    pub fn watch<W: Send + 'static>(
        &mut self,
        name: &'static str,
        start: impl FnOnce(Reply) -> Result<W, String>,
    ) {
        if self.hub.watches.contains_key(name) {
            return;
        }
        match start(self.reply()) {
            Ok(w) => {
                self.hub.watches.insert(name, Box::new(w));
            }
            Err(why) => self.fail(why),
        }
    }
}

/// What the hub holds besides the services: the channel, the store worker, what runs.
struct Hub {
    tx: mpsc::UnboundedSender<Delivery>,
    worker: StoreWorker<Msg>,
    slots: HashMap<Slot, (CancellationToken, JoinHandle<()>)>,
    others: Vec<(CancellationToken, JoinHandle<()>)>,
    /// Watches on the store (other reviewers' decisions, labels, the team's store's runs).
    watches: HashMap<&'static str, Box<dyn Send>>,
}

impl Hub {
    fn in_progress(&self, slot: Slot) -> bool {
        match slot {
            Slot::Other => self.others.iter().any(|(_, h)| !h.is_finished()),
            s => self.slots.get(&s).is_some_and(|(_, h)| !h.is_finished()),
        }
    }
}

/// The jobs in flight and the channel their results come back on.
pub struct Jobs {
    pub services: Services,
    pub rx: mpsc::UnboundedReceiver<Delivery>,
    hub: Hub,
}

impl Jobs {
    pub fn new(services: Services) -> Jobs {
        let (tx, rx) = mpsc::unbounded_channel();
        // The worker's own connections (SQLite serves one thread per connection well; the
        // shared store's is a handle on its connection thread).
        let ctx = StoreCtx {
            db: services.db.as_ref().map(|d| d.again()),
        };
        let out = tx.clone();
        let worker = StoreWorker::start(ctx, move |to, msg| {
            let _ = out.send(Delivery { to, msg });
        });
        let mut hub = Hub {
            tx,
            worker,
            slots: HashMap::new(),
            others: Vec::new(),
            watches: HashMap::new(),
        };
        let reply = Reply {
            tx: hub.tx.clone(),
            to: ScreenId::Heatmap,
        };
        if let Some(m) = shared::mirror(&services, reply) {
            hub.watches.insert("mirror", Box::new(m));
        }
        Jobs { services, rx, hub }
    }

    /// Starts `job` for `to`; results (or why it could not start) arrive on `rx`.
    pub fn start(&mut self, to: ScreenId, job: Box<dyn Job>, ds: &Arc<Dataset>) {
        let reply = Reply {
            tx: self.hub.tx.clone(),
            to,
        };
        let mut cx = JobCx {
            services: &mut self.services,
            ds,
            reply,
            hub: &mut self.hub,
        };
        job.start(&mut cx);
    }

    /// Whether work is still in flight (the loop waits for it when input ends).
    pub fn busy(&mut self) -> bool {
        self.hub.others.retain(|(_, h)| !h.is_finished());
        self.hub.in_progress(Slot::Run)
            || self.hub.in_progress(Slot::Detect)
            || !self.hub.others.is_empty()
            || self.hub.worker.pending() > 0
    }

    pub fn run_in_progress(&self) -> bool {
        self.hub.in_progress(Slot::Run)
    }

    pub fn detect_in_progress(&self) -> bool {
        self.hub.in_progress(Slot::Detect)
    }

    /// Cancels the work in `slot`; what finished is kept (`--resume` finishes the rest).
    pub fn cancel(&self, slot: Slot) {
        if let Some((cancel, _)) = self.hub.slots.get(&slot) {
            cancel.cancel();
        }
    }

    /// On quit: cancel everything, give the run and the detection a moment to record where
    /// they stopped (finished answers are already stored; the rest stay pending for `--resume`).
    pub async fn shutdown(&mut self) {
        for (c, _) in &self.hub.others {
            c.cancel();
        }
        for slot in [Slot::Detect, Slot::Run] {
            if let Some((cancel, handle)) = self.hub.slots.remove(&slot) {
                cancel.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(3), handle).await;
            }
        }
    }
}

#[cfg(test)]
mod tests;
