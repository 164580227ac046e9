//! The review screen's reads and writes, on the store worker. Writes are small; they queue in
//! the order typed, so a draft is saved before the decision after it, and the loop never waits
//! for them. Loading starts the watch on other reviewers' decisions.

use super::{Effects, Job, JobCx, Msg, Outcome, Reply};
use crate::review::ReviewRecord;

/// The review's decisions, this reviewer's drafts and the items' triage signals.
pub struct LoadReview;

#[derive(Debug)]
pub struct Review(pub Box<crate::review::load::ReviewData>);

impl Outcome for Review {}

/// Review decisions were stored by someone else: read what is new.
#[derive(Debug)]
pub struct ReviewChanged;

impl Outcome for ReviewChanged {}

impl Job for LoadReview {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        // Watching starts before the load: what is stored meanwhile is in the load or arrives
        // as a change (a change before the screen has data is ignored).
        if let Some(source) = cx.services.db.as_ref().map(|d| d.review_source()) {
            cx.watch("review", move |reply: Reply| {
                let changed = move || {
                    reply.outcome(ReviewChanged);
                };
                crate::store::panel_watch::Watch::start(source, changed)
                    .map_err(|e| format!("other reviewers' decisions will not show live: {e}"))
            });
        }
        let (reviewer, blind) = (cx.services.reviewer.clone(), cx.services.blind);
        let ds = cx.ds.clone();
        cx.on_store(move |sx| {
            let Some(db) = &sx.db else {
                return vec![Msg::failed("review needs a store")];
            };
            vec![
                match crate::review::load::ReviewData::load(db, &reviewer, Some(&ds)) {
                    Ok(mut d) => {
                        d.blind = blind;
                        Msg::new(Review(Box::new(d)))
                    }
                    Err(e) => Msg::failed(format!("reading reviews: {e}")),
                },
            ]
        });
    }
}

/// Decisions stored after `after` (other reviewers', on a shared database).
pub struct RefreshReview {
    pub after: i64,
}

#[derive(Debug)]
pub struct ReviewMore {
    pub decisions: Vec<ReviewRecord>,
    pub seq: i64,
}

impl Outcome for ReviewMore {}

impl Job for RefreshReview {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let after = self.after;
        cx.on_store(move |sx| {
            let Some(db) = &sx.db else {
                return Vec::new();
            };
            vec![match db.decisions_after(after) {
                Ok((decisions, seq)) => Msg::new(ReviewMore { decisions, seq }),
                Err(e) => Msg::failed(format!("reading reviews: {e}")),
            }]
        });
    }
}

/// Replaces this reviewer's draft of an item (sent as they type).
pub struct SaveDraft(pub crate::store::Draft);

/// A review store call worked (a draft saved): an error shown from an earlier one is over.
#[derive(Debug)]
pub struct ReviewStoreOk;

impl Outcome for ReviewStoreOk {}

impl Job for SaveDraft {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let mut d = self.0;
        d.reviewer = cx.services.reviewer.clone();
        cx.on_store(move |sx| {
            let Some(store) = &sx.db else {
                return Vec::new();
            };
            // Either way the screen hears: an error it shows goes once a save works.
            vec![match store.save_draft(&d) {
                Ok(()) => Msg::new(ReviewStoreOk),
                Err(e) => Msg::failed(format!("saving the draft: {e}")),
            }]
        });
    }
}

/// Saves a decision (its draft goes in the same transaction).
pub struct SaveDecision(pub Box<ReviewRecord>);

/// A decision is on disk (`z` can take it back).
#[derive(Debug)]
pub struct DecisionSaved(pub Box<ReviewRecord>);

impl Outcome for DecisionSaved {
    fn apply(&self, fx: &mut Effects<'_>) {
        fx.undo
            .push(crate::tui::undo::Undo::Decision(self.0.clone()));
    }
}

impl Job for SaveDecision {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let mut r = self.0;
        r.reviewer = cx.services.reviewer.clone();
        r.uid = ReviewRecord::new_uid(&r.reviewer, r.created_at);
        cx.on_store(move |sx| {
            let Some(store) = &sx.db else {
                return vec![Msg::failed("review needs a store")];
            };
            vec![match store.save_decisions(std::slice::from_ref(&r)) {
                Ok(_) => Msg::new(DecisionSaved(r)),
                Err(e) => Msg::failed(format!(
                    "the decision was not saved ({e}); it is kept as your draft: ctrl-s tries again"
                )),
            }]
        });
    }
}
