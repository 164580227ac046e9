//! Undo (`z`) of the last review decision or label made in this session. Nothing is ever
//! deleted: undoing adds the state before as a new record (the reviewer's decision or label
//! before it, given again, or a withdrawal when there was none), so a review's rounds and
//! agreement, and the labels' history, stay true. What can be undone is what this session
//! saved, newest first (the app keeps the list from the saves' own messages).

use super::store_worker::StoreCtx;
use crate::review::ReviewRecord;
use crate::sentences::labels::{Grade, SentenceLabel};
use crate::store::{AnswerLabel, Db};
use crate::text::one_line;

/// Something this session saved that `z` can take back.
#[derive(Debug, Clone)]
pub enum Undo {
    Decision(Box<ReviewRecord>),
    Label(AnswerLabel),
    /// A grade of one sentence (the where-in-the-answer screen's `L`).
    Sentence(SentenceLabel),
}

impl Undo {
    /// What it was, for the notice, short enough for one status line at 80 columns:
    /// "your remove on KE-FD-Myths-0001", "your label hallucinated" (the answer is on screen).
    pub fn what(&self) -> String {
        match self {
            Undo::Decision(d) => {
                format!("your {} on {}", d.decision.as_str(), one_line(&d.item_id))
            }
            Undo::Label(l) => format!("your label {}", l.label.words()),
            Undo::Sentence(l) => format!(
                "your grade {} on sentence {}",
                l.label.words(),
                l.sentence + 1
            ),
        }
    }
}

/// What an undo changed: the screens that show it read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    Decisions,
    Labels,
}

/// Carries out an undo on the store worker: the restoring record is worked out from what is
/// stored and added where the original went (labels through `labels`, the one way `L` writes
/// them too: the shared store first when there is one; decisions to the review panel's store). What it did, for the status line, and what
/// changed; or why it could not.
pub(crate) fn run(
    u: Undo,
    cx: &mut StoreCtx,
    labels: Option<&Db>,
) -> Result<(String, Changed), String> {
    let at = crate::store::now_millis();
    match u {
        Undo::Decision(done) => {
            let Some(panel) = &cx.db else {
                return Err("undo: review needs a store".into());
            };
            let back = match panel.decisions() {
                Ok(all) => {
                    let item: Vec<ReviewRecord> = all
                        .into_iter()
                        .filter(|d| d.item_id == done.item_id)
                        .collect();
                    crate::review::undoing(&item, &done, at)
                }
                Err(e) => return Err(format!("undo: reading decisions: {e}")),
            };
            match panel.save_decisions(std::slice::from_ref(&back)) {
                Ok(_) => Ok((
                    format!(
                        "undone {}: {} (nothing deleted)",
                        Undo::Decision(done.clone()).what(),
                        match back.decision {
                            crate::review::Decision::Withdrawn => {
                                "you have no decision on it now".to_string()
                            }
                            d => format!("{} again", d.as_str()),
                        }
                    ),
                    Changed::Decisions,
                )),
                Err(e) => Err(format!("undo: saving: {e}")),
            }
        }
        Undo::Label(done) => {
            let Some(db) = &cx.db else {
                return Err("undo: labels need a store".into());
            };
            // Every label saved here is in this machine's store too (`Db::add_labels`).
            let back = match db.read().and_then(|r| r.answer_labels(Some(&done.run_id))) {
                Ok(all) => crate::store::judging::undoing_label(&all, &done, at),
                Err(e) => return Err(format!("undo: reading labels: {e}")),
            };
            let saved = match labels {
                Some(db) => db.add_labels(std::slice::from_ref(&back)),
                None => Err(anyhow::anyhow!("labels need a store")),
            };
            match saved {
                Ok(_) => Ok((
                    format!(
                        "undone {}: {} (nothing deleted)",
                        Undo::Label(done.clone()).what(),
                        match back.label {
                            crate::store::Label::Withdrawn => {
                                "you have none on it now".to_string()
                            }
                            l => format!("{} again", l.words()),
                        }
                    ),
                    Changed::Labels,
                )),
                Err(e) => Err(format!("undo: saving the label: {e:#}")),
            }
        }
        Undo::Sentence(done) => {
            let Some(db) = &cx.db else {
                return Err("undo: labels need a store".into());
            };
            let back = match db
                .read()
                .and_then(|r| r.records_where::<SentenceLabel>(Some(("run_id", &done.run_id))))
            {
                Ok(all) => crate::sentences::labels::undoing(&all, &done, at),
                Err(e) => return Err(format!("undo: reading grades: {e}")),
            };
            let saved = match labels {
                Some(db) => db.add_labels(std::slice::from_ref(&back)),
                None => Err(anyhow::anyhow!("labels need a store")),
            };
            match saved {
                Ok(_) => Ok((
                    format!(
                        "undone {}: {} (nothing deleted)",
                        Undo::Sentence(done.clone()).what(),
                        match back.label {
                            Grade::Withdrawn => "you have none on it now".to_string(),
                            g => format!("{} again", g.words()),
                        }
                    ),
                    Changed::Labels,
                )),
                Err(e) => Err(format!("undo: saving the grade: {e:#}")),
            }
        }
    }
}
