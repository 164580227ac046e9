//! A run started here: items against models, scored as the answers arrive, every event of the
//! engine reaching the session (the answers stream on the compare screen) and the screen that
//! started it. One run at a time, in the run slot; esc cancels it, `prism run --resume` finishes it.

use tokio_util::sync::CancellationToken;

use super::{Effects, Job, JobCx, Outcome, Slot};
use crate::engine::Event;
use crate::provider::ModelConfig;

pub struct Run {
    pub items: Vec<usize>,
    pub models: Vec<ModelConfig>,
    pub samples: u32,
}

impl Job for Run {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let Some(store) = cx.services.store.clone() else {
            return cx.fail("runs need a store");
        };
        if cx.in_progress(Slot::Run) {
            return cx.fail("a run is already in progress");
        }
        let s = &*cx.services;
        let mut spec = crate::engine::RunSpec::new(
            cx.ds.clone(),
            s.dataset_ref.clone(),
            self.items,
            self.models,
        );
        spec.concurrency = s.concurrency;
        spec.samples = self.samples.max(1);
        // Scored as they arrive, with the session's judge: one chosen while the run goes (`u`)
        // judges every answer that arrives after (the slot is the session's).
        spec.score = Some(crate::engine::Scoring {
            judge: s.judge.clone(),
        });
        let factory = s.factory.clone();
        let cancel = CancellationToken::new();
        let (etx, erx) = tokio::sync::mpsc::unbounded_channel();
        let (reply, c2) = (cx.reply(), cancel.clone());
        // One task runs and forwards: when it ends, every event has reached the loop (which
        // stops waiting once no job is busy and nothing is queued).
        cx.spawn(Slot::Run, cancel, async move {
            let work = async {
                if let Err(e) = crate::engine::run(spec, store, factory, etx, c2).await {
                    reply.fail(format!("run not started: {e}"));
                }
            };
            tokio::join!(work, reply.forward(erx));
        });
    }
}

impl Outcome for Event {
    /// Into the session (the engine scores each answer as it arrives: its score follows as an
    /// event); a run that starts is shown, its answers streaming.
    fn apply(&self, fx: &mut Effects<'_>) {
        match self {
            Event::Life(l) => fx.lifecycle(l, "the run"),
            Event::ScoringFailed { reason } => {
                *fx.notice = Some(format!(
                    "scoring: {}; the answers are stored (S scores them again)",
                    crate::text::one_line(reason)
                ));
            }
            _ => {}
        }
        fx.session.apply(self.clone());
        if matches!(self, Event::Started { .. }) {
            fx.show_run = true;
        }
    }
}
