//! The team's store while the TUI runs: its runs mirrored into this machine's store (every open
//! screen hears what came), and a run started here pushed to it when it ends.

use super::{Effects, Job, JobCx, Msg, Outcome, Reply, Slot};
use crate::store::mirror::{MirrorWatch, Pulled};
use crate::tui::services::Services;

/// How a notice of what the team's store brought starts.
pub const PULLED_NOTICE: &str = "from the team's store: ";

/// Starts mirroring the shared store's runs into the local store, if there is a shared store;
/// what it pulls is delivered as [`Pulled`].
pub(super) fn mirror(services: &Services, reply: Reply) -> Option<MirrorWatch> {
    let db = services.shared()?;
    let failed = reply.clone();
    let shown = db.shown();
    db.mirror(
        move |p| {
            reply.outcome(p);
        },
        move |e| failed.fail(format!("the team's runs on {shown} are not updating: {e}")),
    )
    .ok()
    .flatten()
}

impl Outcome for Pulled {
    /// The scores go into the session (the tree's and heatmap's rates) and the notice says what
    /// came; every open screen hears it (the runs list and a heatmap of chosen runs read again).
    fn apply(&self, fx: &mut Effects<'_>) {
        for r in &self.score_records {
            fx.session.apply_score(r.clone());
        }
        fx.session
            .answered_by
            .extend(self.answered_by.iter().cloned());
        let mut said = Vec::new();
        for (n, what) in [
            (self.runs, "run(s)"),
            (self.answers, "answer(s)"),
            (self.scores, "score(s)"),
            (self.statuses, "run(s) finished"),
            (self.lane_rows, "detection/self-detection result(s)"),
        ] {
            if n > 0 {
                said.push(format!("{n} {what}"));
            }
        }
        if self.trusted > 0 {
            said.push(format!(
                "{} run(s) held by both stores linked to it once (mirrored before links were kept)",
                self.trusted
            ));
        }
        if let Some(r) = self.refused_words() {
            said.push(r);
        }
        // What the mirror brought is news in the background: it does not push aside a message
        // still on screen that the user's own doing raised (a run pushed, an error), which
        // would otherwise flash by unread when a pull lands just after it.
        let fresh_other = fx
            .notice
            .as_deref()
            .is_some_and(|n| !n.starts_with(PULLED_NOTICE));
        if !fresh_other {
            *fx.notice = Some(format!("{PULLED_NOTICE}{}", said.join(", ")));
        }
    }

    fn to_all(&self) -> bool {
        true
    }
}

/// On a shared store: a run started here (any lane) has ended; it goes to the team's store
/// (`what` names the lane in what is said). Off the loop thread, on a thread of its own: the
/// store worker's reads and writes do not wait behind the network.
pub struct Push {
    pub run: String,
    pub what: String,
}

impl Job for Push {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let Some(db) = cx.services.shared() else {
            return;
        };
        let reply = cx.reply();
        let (run, what) = (self.run, self.what);
        let push = tokio::task::spawn_blocking(move || {
            let shown = db.shown();
            let msg = match db.push_finished_run(&run) {
                Ok(Some((noun, n))) => Msg::notice(format!(
                    "{noun} {run} is on the team's store {shown} ({n} row(s) added)"
                )),
                Ok(None) => return,
                Err(e) => Msg::failed(format!(
                    "{what}: {run} stays in this machine's store (the team's store {shown}: \
                     {e}); push it with prism db copy"
                )),
            };
            reply.send(msg);
        });
        cx.spawn(Slot::Other, Default::default(), async move {
            let _ = push.await;
        });
    }
}
