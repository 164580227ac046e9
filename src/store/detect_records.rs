//! Detection's rows as records of their described tables (`lane_tables`): each read by column
//! name, the same way on SQLite and PostgreSQL.

use super::detect::{Class, PairRecord, SampleRecord, Target, Verdict};
use super::error::Result;
use super::lane_tables::{DETECT_PAIRS, DETECT_SAMPLES, DETECT_TARGETS, Table, Val};
use super::record::{Fields, Record, flag, int, opt_int, real, text};
use crate::dataset::claims::Truth;

impl Record for Target {
    fn table() -> &'static Table {
        &DETECT_TARGETS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("idx", int(self.idx)),
            ("item_id", text(Some(&self.item_id))),
            ("task_id", text(Some(&self.task_id))),
            ("model", text(Some(&self.model))),
            ("temperature", real(self.temperature)),
            ("source_run", text(self.source_run.as_deref())),
            ("source_job", opt_int(self.source_job)),
            ("prompt", text(Some(&self.prompt))),
            ("question", text(Some(&self.question))),
            ("params", text(Some(&self.params))),
            ("answer", text(self.answer.as_deref())),
            ("answer_error", text(self.answer_error.as_deref())),
            ("refused", flag(self.refused)),
            (
                "label",
                text(self.label.map(|l| match l {
                    Truth::True => "true",
                    Truth::False => "false",
                })),
            ),
            ("class", text(self.class.map(Class::as_str))),
            ("class_reply", text(self.class_reply.as_deref())),
            ("class_error", text(self.class_error.as_deref())),
            ("rounds", int(self.rounds)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(Target {
            run_id: f.text("run_id")?,
            idx: f.u32("idx")?,
            item_id: f.text("item_id")?,
            task_id: f.text("task_id")?,
            model: f.text("model")?,
            temperature: f.opt_real("temperature"),
            source_run: f.opt_text("source_run"),
            source_job: f.opt_int("source_job").and_then(|j| u32::try_from(j).ok()),
            prompt: f.opt_text("prompt").unwrap_or_default(),
            question: f.opt_text("question").unwrap_or_default(),
            params: f.opt_text("params").unwrap_or_else(|| "{}".into()),
            answer: f.opt_text("answer"),
            answer_error: f.opt_text("answer_error"),
            refused: f.flag("refused"),
            label: f.opt_text("label").and_then(|l| match l.as_str() {
                "true" => Some(Truth::True),
                "false" => Some(Truth::False),
                _ => None,
            }),
            class: f.opt_text("class").as_deref().and_then(Class::parse),
            class_reply: f.opt_text("class_reply"),
            class_error: f.opt_text("class_error"),
            rounds: f.u32("rounds")?,
        })
    }
}

impl Record for SampleRecord {
    fn table() -> &'static Table {
        &DETECT_SAMPLES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("target", int(self.target)),
            ("round", int(self.round)),
            ("k", int(self.k)),
            ("variant", int(self.variant)),
            ("text", text(self.text.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("cached", flag(self.cached)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(SampleRecord {
            run_id: f.text("run_id")?,
            target: f.u32("target")?,
            round: f.u32("round")?,
            k: f.u32("k")?,
            variant: f.u32("variant")?,
            text: f.opt_text("text"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            cached: f.flag("cached"),
            created_at: f.int("created_at")?,
        })
    }
}

impl Record for PairRecord {
    fn table() -> &'static Table {
        &DETECT_PAIRS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("target", int(self.target)),
            ("round", int(self.round)),
            ("k", int(self.k)),
            ("wording", int(self.wording)),
            ("judge", text(Some(&self.judge))),
            ("verdict", text(Some(self.verdict.as_str()))),
            ("explanation", text(self.explanation.as_deref())),
            ("quote_a", text(self.quote_a.as_deref())),
            ("quote_b", text(self.quote_b.as_deref())),
            ("reply", text(self.reply.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(PairRecord {
            run_id: f.text("run_id")?,
            target: f.u32("target")?,
            round: f.u32("round")?,
            k: f.u32("k")?,
            wording: f.opt_int("wording").map_or(Ok(0), |_| f.u32("wording"))?,
            judge: f.text("judge")?,
            verdict: Verdict::parse(&f.text("verdict")?)?,
            explanation: f.opt_text("explanation"),
            quote_a: f.opt_text("quote_a"),
            quote_b: f.opt_text("quote_b"),
            reply: f.opt_text("reply"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_records_read_back_from_their_rows() {
        let t = Target {
            run_id: "d".into(),
            idx: 3,
            item_id: "i".into(),
            task_id: "KE-FD-Myths".into(),
            model: "m".into(),
            temperature: Some(0.5),
            source_run: Some("r".into()),
            source_job: Some(7),
            prompt: "p".into(),
            question: "q".into(),
            params: "{}".into(),
            answer: Some("a".into()),
            answer_error: None,
            refused: true,
            label: Some(Truth::False),
            class: Some(Class::False),
            class_reply: Some("r".into()),
            class_error: None,
            rounds: 2,
        };
        assert_eq!(Target::from_row(&t.to_row()).unwrap(), t);
        let s = SampleRecord {
            run_id: "d".into(),
            target: 3,
            round: 1,
            k: 2,
            variant: 4,
            text: Some("x".into()),
            error: None,
            attempts: 1,
            cached: true,
            created_at: 5,
        };
        assert_eq!(SampleRecord::from_row(&s.to_row()).unwrap(), s);
        let p = PairRecord {
            run_id: "d".into(),
            target: 3,
            round: 1,
            k: 2,
            wording: 1,
            judge: "j".into(),
            verdict: Verdict::Conflict,
            explanation: Some("e".into()),
            quote_a: None,
            quote_b: Some("b".into()),
            reply: Some("r".into()),
            error: None,
            attempts: 2,
            created_at: 6,
        };
        assert_eq!(PairRecord::from_row(&p.to_row()).unwrap(), p);
    }
}
