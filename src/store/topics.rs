//! Topics assigned to claims by a model (AutoHall's topic analysis, when the data has none): one
//! row per claim, model and list of topics, kept across runs so a claim is asked once.

use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;
use super::lane_tables::{CLAIM_TOPICS, Table, Val};
use super::record::{Fields, Record, int, text};

/// A claim's topic as a model assigned it from a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicRecord {
    /// The claim's text (a claim is the same claim in any run or file).
    pub claim: String,
    pub model: String,
    /// The topics offered, joined with `|` (another list is another question).
    pub vocabulary: String,
    /// The topic read from the reply; `None` when no reply could be read or the call failed.
    pub topic: Option<String>,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

impl Record for TopicRecord {
    fn table() -> &'static Table {
        &CLAIM_TOPICS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("claim", text(Some(&self.claim))),
            ("model", text(Some(&self.model))),
            ("vocabulary", text(Some(&self.vocabulary))),
            ("topic", text(self.topic.as_deref())),
            ("reply", text(self.reply.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self> {
        Ok(TopicRecord {
            claim: f.text("claim")?,
            model: f.text("model")?,
            vocabulary: f.text("vocabulary")?,
            topic: f.opt_text("topic"),
            reply: f.opt_text("reply"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
    }
}

impl Store {
    /// Saves (replaces) a claim's topic by a model from a list.
    pub fn save_topic(&mut self, r: &TopicRecord) -> Result<()> {
        self.save_records(std::slice::from_ref(r))
    }

    /// Every topic `model` assigned from `vocabulary`.
    pub fn topics(&self, model: &str, vocabulary: &str) -> Result<Vec<TopicRecord>> {
        Ok(self
            .records_where::<TopicRecord>(Some(("model", model)))?
            .into_iter()
            .filter(|r| r.vocabulary == vocabulary)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_is_kept_per_claim_model_and_list() {
        let mut s = Store::open_in_memory().unwrap();
        let rec = |claim: &str, model: &str, vocab: &str, topic: Option<&str>| TopicRecord {
            claim: claim.into(),
            model: model.into(),
            vocabulary: vocab.into(),
            topic: topic.map(str::to_string),
            reply: Some("Science".into()),
            error: None,
            attempts: 1,
            created_at: 3,
        };
        s.save_topic(&rec("c1", "m", "A|B", None)).unwrap();
        s.save_topic(&rec("c1", "m", "A|B", Some("A"))).unwrap();
        s.save_topic(&rec("c1", "m", "A|C", Some("C"))).unwrap();
        s.save_topic(&rec("c1", "n", "A|B", Some("B"))).unwrap();
        let got = s.topics("m", "A|B").unwrap();
        assert_eq!(got, vec![rec("c1", "m", "A|B", Some("A"))]);
        assert_eq!(s.topics("m", "A|C").unwrap()[0].topic.as_deref(), Some("C"));
        assert!(s.topics("x", "A|B").unwrap().is_empty());
    }
}
