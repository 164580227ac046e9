//! `z`: takes back the last decision or label this session saved (see `tui::undo`).

use super::{Effects, Job, JobCx, Msg, Outcome};
use crate::tui::undo::{Changed, Undo};

pub struct TakeBack(pub Undo);

/// An undo was carried out: what it did, for the status line.
#[derive(Debug)]
pub struct Undone(pub String);

impl Outcome for Undone {
    fn apply(&self, fx: &mut Effects<'_>) {
        *fx.notice = Some(self.0.clone());
    }
}

impl Job for TakeBack {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let labels = cx.services.labels_db();
        let u = self.0;
        cx.on_store(
            move |sx| match crate::tui::undo::run(u, sx, labels.as_deref()) {
                Ok((said, changed)) => vec![
                    Msg::new(Undone(said)),
                    match changed {
                        Changed::Decisions => Msg::new(super::review::ReviewChanged),
                        Changed::Labels => Msg::new(super::labels::LabelsChanged),
                    },
                ],
                Err(why) => vec![Msg::failed(why)],
            },
        );
    }
}
