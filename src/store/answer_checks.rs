//! Self-detection on stored answers: a detector's "does this answer contain false
//! information?" about one answer of a run, directly or with chain-of-thought (METHODS.md §4's
//! question, asked of PRISM answers), one row per answer, detector and mode. `prism signals`
//! scores the verdicts against PRISM's.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;
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

impl Store {
    /// Saves (replaces) a verdict on an answer.
    pub fn save_answer_check(&mut self, c: &AnswerCheck) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO answer_checks (run_id, job_idx, detector, mode, answer, reply,
             error, attempts, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                c.run_id,
                c.job_idx,
                c.detector,
                c.mode.as_str(),
                c.answer.as_str(),
                c.reply,
                c.error,
                c.attempts,
                c.created_at
            ],
        )?;
        Ok(())
    }

    /// Every verdict on the answers of `run`.
    pub fn answer_checks(&self, run: &str) -> Result<Vec<AnswerCheck>> {
        let mut st = self.conn.prepare(
            "SELECT run_id, job_idx, detector, mode, answer, reply, error, attempts, created_at
             FROM answer_checks WHERE run_id = ?1 ORDER BY job_idx, detector, mode",
        )?;
        let rows = st
            .query_map(params![run], |r| {
                Ok((
                    AnswerCheck {
                        run_id: r.get(0)?,
                        job_idx: r.get(1)?,
                        detector: r.get(2)?,
                        mode: Mode::Direct,
                        answer: Answer::Failed,
                        reply: r.get(5)?,
                        error: r.get(6)?,
                        attempts: r.get(7)?,
                        created_at: r.get(8)?,
                    },
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(mut c, mode, answer)| {
                c.mode = parse("mode", &mode)?;
                c.answer = parse("verdict", &answer)?;
                Ok(c)
            })
            .collect()
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
