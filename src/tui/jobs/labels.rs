//! People's labels on answers and the judges on trial: saving a label (the compare screen's
//! `L`), an item's labels, the trial and one judged answer. A screen showing labels starts the
//! watch on them, so a label stored anywhere (another screen, another process, a teammate
//! through the shared store's mirror) reaches it as [`LabelsChanged`].

use super::{Effects, Job, JobCx, Msg, Outcome, Reply};
use crate::sentences::labels::{Grade, SentenceLabel};
use crate::store::{AnswerLabel, Label};
use crate::tui::jobs::read_or_fail;
use crate::tui::screen_id::ScreenId;

/// Saves a person's label on an answer, on the shared store first when there is one; never
/// replacing an earlier label (the newest counts).
pub struct SaveLabel {
    pub run: String,
    pub job: u32,
    pub item_id: String,
    pub model: String,
    pub label: Label,
    pub note: String,
}

/// A label saved (the compare screen shows it on its answer's pane; `z` can take it back).
#[derive(Debug)]
pub struct Labelled(pub AnswerLabel);

impl Outcome for Labelled {
    fn apply(&self, fx: &mut Effects<'_>) {
        fx.undo.push(crate::tui::undo::Undo::Label(self.0.clone()));
    }
}

/// Labels were stored by someone: screens showing labels read them again.
#[derive(Debug)]
pub struct LabelsChanged;

impl Outcome for LabelsChanged {}

impl Job for SaveLabel {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let db = cx.services.labels_db();
        let at = crate::store::now_millis();
        let reviewer = cx.services.reviewer.clone();
        let rec = AnswerLabel {
            uid: AnswerLabel::new_uid(&reviewer, at),
            run_id: self.run,
            job_idx: self.job,
            item_id: self.item_id,
            model: self.model,
            reviewer,
            label: self.label,
            note: self.note,
            created_at: at,
        };
        cx.on_store(move |_| {
            let Some(db) = &db else {
                return vec![Msg::failed("labels need a store")];
            };
            // Whether this reviewer labelled the answer before (said only then).
            let earlier = db
                .read()
                .and_then(|s| s.answer_labels(Some(&rec.run_id)))
                .map(|ls| {
                    ls.iter()
                        .filter(|l| l.job_idx == rec.job_idx && l.reviewer == rec.reviewer)
                        .count()
                })
                .unwrap_or(0);
            match db.add_labels(std::slice::from_ref(&rec)) {
                Ok(_) => vec![
                    Msg::notice(if earlier == 0 {
                        format!("labelled {}", rec.label.words())
                    } else {
                        format!(
                            "labelled {} (your earlier label{} on this answer kept; the newest counts)",
                            rec.label.words(),
                            if earlier == 1 { "" } else { "s" }
                        )
                    }),
                    Msg::new(Labelled(rec)),
                ],
                Err(e) => vec![Msg::failed(format!("saving the label: {e:#}"))],
            }
        });
    }
}

/// Which sentence of an answer a label is on (its index, byte span and text).
#[derive(Debug, Clone, PartialEq)]
pub struct SentencePick {
    pub index: u32,
    pub start: u32,
    pub end: u32,
    pub text: String,
}

/// Saves a person's grade of one sentence of an answer (the where-in-the-answer screen's
/// `L`), the same way as a label on an answer.
pub struct SaveSentenceLabel {
    pub run: String,
    pub job: u32,
    pub item_id: String,
    pub model: String,
    pub sentence: SentencePick,
    pub grade: Grade,
    pub note: String,
}

/// A grade saved (the screen shows it on its sentence; `z` can take it back).
#[derive(Debug)]
pub struct SentenceLabelled(pub SentenceLabel);

impl Outcome for SentenceLabelled {
    fn apply(&self, fx: &mut Effects<'_>) {
        fx.undo
            .push(crate::tui::undo::Undo::Sentence(self.0.clone()));
    }
}

impl Job for SaveSentenceLabel {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let db = cx.services.labels_db();
        let at = crate::store::now_millis();
        let reviewer = cx.services.reviewer.clone();
        let rec = SentenceLabel {
            uid: AnswerLabel::new_uid(&reviewer, at),
            run_id: self.run,
            job_idx: self.job,
            item_id: self.item_id,
            model: self.model,
            sentence: self.sentence.index,
            start: self.sentence.start,
            end: self.sentence.end,
            text: self.sentence.text,
            reviewer,
            label: self.grade,
            note: self.note,
            created_at: at,
        };
        cx.on_store(move |_| {
            let Some(db) = &db else {
                return vec![Msg::failed("labels need a store")];
            };
            match db.add_labels(std::slice::from_ref(&rec)) {
                Ok(_) => vec![
                    Msg::notice(format!(
                        "sentence {} graded {} (your newest grade counts; z takes it back)",
                        rec.sentence + 1,
                        rec.label.words()
                    )),
                    Msg::new(SentenceLabelled(rec)),
                ],
                Err(e) => vec![Msg::failed(format!("saving the grade: {e:#}"))],
            }
        });
    }
}

/// Starts the watch on labels (once; it lives as long as the loop). It watches this machine's
/// store file: on a shared store that is the mirror, into which the team's labels are pulled.
fn watch_labels(cx: &mut JobCx<'_>) {
    watch_table(cx, "answer_labels", &[ScreenId::Compare, ScreenId::Judges]);
}

/// Starts the watch on people's grades of sentences, for the where-in-the-answer screen.
pub fn watch_sentence_labels(cx: &mut JobCx<'_>) {
    watch_table(cx, "sentence_labels", &[ScreenId::Sentences]);
}

fn watch_table(cx: &mut JobCx<'_>, table: &'static str, to: &'static [ScreenId]) {
    let Some(path) = cx.services.db.as_ref().map(|d| d.local().to_path_buf()) else {
        return;
    };
    cx.watch(table, move |reply: Reply| {
        let changed = move || {
            for s in to {
                reply.to(*s).outcome(LabelsChanged);
            }
        };
        crate::store::panel_watch::Watch::start_table(path, table, changed)
            .map_err(|e| format!("other people's labels will not show live: {e}"))
    });
}

/// People's labels on an item's answers (the compare screen shows each reviewer's newest).
pub struct LoadItemLabels {
    pub item: usize,
}

/// An item's labels, with who "you" are.
#[derive(Debug)]
pub struct ItemLabels {
    pub item: usize,
    pub labels: Vec<AnswerLabel>,
    pub me: String,
}

impl Outcome for ItemLabels {}

impl Job for LoadItemLabels {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        watch_labels(cx);
        let me = cx.services.reviewer.clone();
        let item = self.item;
        let Some(id) = cx.ds.items.get(item).map(|it| it.id.to_string()) else {
            return;
        };
        cx.on_reader(None, move |db| {
            match db.read().and_then(|r| r.answer_labels(None)) {
                Ok(all) => Msg::new(ItemLabels {
                    labels: all.into_iter().filter(|l| l.item_id == id).collect(),
                    item,
                    me,
                }),
                Err(e) => Msg::failed(format!("reading the labels: {e}")),
            }
        });
    }
}

/// The judges on trial over one run's judged answers, or every run's.
pub struct LoadJudges {
    pub run: Option<String>,
    /// This machine's models: what each judge is now, for whether its calibration holds.
    pub models: Vec<crate::provider::ModelConfig>,
}

/// The trial, and how each judge's calibration stands (`review::calibration`).
#[derive(Debug)]
pub struct Trial(
    pub Box<crate::review::judges::Trial>,
    pub Vec<(String, crate::review::calibration::Standing)>,
);

impl Outcome for Trial {}

impl Job for LoadJudges {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        watch_labels(cx);
        let cat = crate::eval::summary::Catalogue::of(cx.ds);
        let ds = cx.ds.clone();
        let (run, models) = (self.run, self.models);
        cx.on_reader(Some("the judges need a store"), move |db| {
            let r = read_or_fail!(db);
            use crate::review::calibration as cal;
            let opts = crate::review::judges::Options::default();
            let got =
                crate::review::judges::of_store(db, run.as_deref(), &cat, &opts).and_then(|t| {
                    let verdicts = r.judge_verdicts(run.as_deref())?;
                    let stored = r.records_where(None)?;
                    let now = cal::identities(&t, &verdicts, &models, Some(&ds), &stored);
                    let standings = cal::standings(db, &t, &now, &cal::Floor::default())?;
                    Ok(Msg::new(Trial(Box::new(t), standings)))
                });
            got.unwrap_or_else(|e| Msg::failed(format!("reading the judges: {e}")))
        });
    }
}

/// One judged answer with every judge's verdicts and every person's labels.
pub struct LoadJudgedAnswer {
    pub run: String,
    pub job: u32,
}

#[derive(Debug)]
pub struct JudgedAnswer(pub Box<crate::review::judges::JudgedAnswer>);

impl Outcome for JudgedAnswer {}

impl Job for LoadJudgedAnswer {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let (run, job) = (self.run, self.job);
        cx.on_reader(None, move |db| {
            match crate::review::judges::judged_answer(db, &run, job) {
                Ok(Some(a)) => Msg::new(JudgedAnswer(Box::new(a))),
                Ok(None) => Msg::failed(format!(
                    "answer {job} of run {} is not in the store",
                    crate::text::one_line(&run)
                )),
                Err(e) => Msg::failed(format!("reading the answer: {e}")),
            }
        });
    }
}
