//! Self-detection's rows as records of their described tables (`lane_tables`): each read by
//! column name, the same way on SQLite and PostgreSQL.

use super::error::Result;
use super::lane_tables::{SELFCHECK_ITEMS, SELFCHECK_VERDICTS, Table, Val};
use super::record::{Fields, Record, int, real, text};
use super::selfcheck::{SelfcheckItem, VerdictRecord, parse};

impl Record for SelfcheckItem {
    fn table() -> &'static Table {
        &SELFCHECK_ITEMS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("idx", int(self.idx)),
            ("triple_id", text(Some(&self.triple_id))),
            ("subject", text(Some(&self.subject))),
            ("relation", text(Some(&self.relation))),
            ("object", text(Some(&self.object))),
            ("source", text(self.source.as_deref())),
            ("popularity", real(self.popularity)),
            ("generator", text(Some(&self.generator))),
            ("params", text(Some(&self.params))),
            ("shots", text(Some(&self.shots))),
            ("true_sentence", text(self.true_sentence.as_deref())),
            ("true_attempts", int(self.true_attempts)),
            ("false_sentence", text(self.false_sentence.as_deref())),
            ("false_attempts", int(self.false_attempts)),
            ("set_aside", text(self.set_aside.as_deref())),
            ("error", text(self.error.as_deref())),
            ("decoy", text(self.decoy.as_deref())),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(SelfcheckItem {
            run_id: f.text("run_id")?,
            idx: f.u32("idx")?,
            triple_id: f.text("triple_id")?,
            subject: f.text("subject")?,
            relation: f.text("relation")?,
            object: f.text("object")?,
            source: f.opt_text("source"),
            popularity: f.opt_real("popularity"),
            generator: f.text("generator")?,
            params: f.opt_text("params").unwrap_or_else(|| "{}".into()),
            shots: f.opt_text("shots").unwrap_or_else(|| "[]".into()),
            true_sentence: f.opt_text("true_sentence"),
            true_attempts: f.u32("true_attempts")?,
            false_sentence: f.opt_text("false_sentence"),
            false_attempts: f.u32("false_attempts")?,
            set_aside: f.opt_text("set_aside"),
            error: f.opt_text("error"),
            decoy: f.opt_text("decoy"),
        })
    }
}

impl Record for VerdictRecord {
    fn table() -> &'static Table {
        &SELFCHECK_VERDICTS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("item", int(self.item)),
            ("sentence", text(Some(self.sentence.as_str()))),
            ("detector", text(Some(&self.detector))),
            ("mode", text(Some(self.mode.as_str()))),
            ("verdict", text(Some(self.answer.as_str()))),
            ("reply", text(self.reply.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(VerdictRecord {
            run_id: f.text("run_id")?,
            item: f.u32("item")?,
            sentence: parse("sentence", &f.text("sentence")?)?,
            detector: f.text("detector")?,
            mode: parse("mode", &f.text("mode")?)?,
            answer: parse("verdict", &f.text("verdict")?)?,
            reply: f.opt_text("reply"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::selfcheck::{Answer, Mode, Sentence};
    use super::*;

    #[test]
    fn self_detection_records_read_back_from_their_rows() {
        let it = SelfcheckItem {
            run_id: "s".into(),
            idx: 2,
            triple_id: "t".into(),
            subject: "Paris".into(),
            relation: "capital of".into(),
            object: "France".into(),
            source: None,
            popularity: Some(3.5),
            generator: "g".into(),
            params: "{}".into(),
            shots: "[]".into(),
            true_sentence: Some("Paris is the capital of France.".into()),
            true_attempts: 1,
            false_sentence: None,
            false_attempts: 2,
            set_aside: Some("why".into()),
            error: None,
            decoy: Some("Spain".into()),
        };
        assert_eq!(SelfcheckItem::from_row(&it.to_row()).unwrap(), it);
        let v = VerdictRecord {
            run_id: "s".into(),
            item: 2,
            sentence: Sentence::False,
            detector: "d".into(),
            mode: Mode::Cot,
            answer: Answer::Unparsed,
            reply: Some("hm".into()),
            error: None,
            attempts: 1,
            created_at: 4,
        };
        assert_eq!(VerdictRecord::from_row(&v.to_row()).unwrap(), v);
    }
}
