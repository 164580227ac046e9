//! Topics assigned to claims by a model (AutoHall's topic analysis, when the data has none): one
//! row per claim, model and list of topics, kept across runs so a claim is asked once.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::Store;
use super::error::Result;

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

impl Store {
    /// Saves (replaces) a claim's topic by a model from a list.
    pub fn save_topic(&mut self, r: &TopicRecord) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO claim_topics (claim, model, vocabulary, topic, reply, error,
             attempts, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                r.claim,
                r.model,
                r.vocabulary,
                r.topic,
                r.reply,
                r.error,
                r.attempts,
                r.created_at
            ],
        )?;
        Ok(())
    }

    /// Every topic `model` assigned from `vocabulary`.
    pub fn topics(&self, model: &str, vocabulary: &str) -> Result<Vec<TopicRecord>> {
        let mut st = self.conn.prepare(
            "SELECT claim, model, vocabulary, topic, reply, error, attempts, created_at
             FROM claim_topics WHERE model = ?1 AND vocabulary = ?2 ORDER BY claim",
        )?;
        let rows = st
            .query_map(params![model, vocabulary], |r| {
                Ok(TopicRecord {
                    claim: r.get(0)?,
                    model: r.get(1)?,
                    vocabulary: r.get(2)?,
                    topic: r.get(3)?,
                    reply: r.get(4)?,
                    error: r.get(5)?,
                    attempts: r.get(6)?,
                    created_at: r.get(7)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
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
