//! Self-detection on stored answers: a detector's "does this answer contain false
//! information?" about one answer of a run, directly or with chain-of-thought (METHODS.md §4's
//! question, asked of PRISM answers), one row per answer, detector and mode. `prism signals`
//! scores the verdicts against PRISM's.

use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;
use super::lane_tables::{ANSWER_CHECKS, Table, Val};
use super::record::{Fields, Record, int, text};
use super::selfcheck::{Answer, Mode, parse};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerCheck {
    pub run_id: String,
    pub job_idx: u32,
    pub detector: String,
    pub mode: Mode,
    pub answer: Answer,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

impl Record for AnswerCheck {
    fn table() -> &'static Table {
        &ANSWER_CHECKS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("detector", text(Some(&self.detector))),
            ("mode", text(Some(self.mode.as_str()))),
            ("answer", text(Some(self.answer.as_str()))),
            ("reply", text(self.reply.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(AnswerCheck {
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            detector: f.text("detector")?,
            mode: parse("mode", &f.text("mode")?)?,
            answer: parse("verdict", &f.text("answer")?)?,
            reply: f.opt_text("reply"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
    }
}

impl Store {
    /// Saves (replaces) a verdict on an answer.
    pub fn save_answer_check(&mut self, c: &AnswerCheck) -> Result<()> {
        self.save_records(std::slice::from_ref(c))
    }

    /// Every verdict on the answers of `run`.
    pub fn answer_checks(&self, run: &str) -> Result<Vec<AnswerCheck>> {
        self.records_where(Some(("run_id", run)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_kept_per_answer_detector_and_mode() {
        let mut s = Store::open_in_memory().unwrap();
        let c = |job: u32, mode: Mode, answer: Answer| AnswerCheck {
            run_id: "r".into(),
            job_idx: job,
            detector: "d".into(),
            mode,
            answer,
            reply: Some("Yes.".into()),
            error: None,
            attempts: 1,
            created_at: 0,
        };
        s.save_answer_check(&c(0, Mode::Direct, Answer::Failed))
            .unwrap();
        s.save_answer_check(&c(0, Mode::Direct, Answer::Yes))
            .unwrap();
        s.save_answer_check(&c(0, Mode::Cot, Answer::Unparsed))
            .unwrap();
        s.save_answer_check(&c(1, Mode::Direct, Answer::No))
            .unwrap();
        let got = s.answer_checks("r").unwrap();
        assert_eq!(
            got,
            vec![
                c(0, Mode::Cot, Answer::Unparsed),
                c(0, Mode::Direct, Answer::Yes),
                c(1, Mode::Direct, Answer::No)
            ]
        );
        assert!(s.answer_checks("other").unwrap().is_empty());
    }
}
