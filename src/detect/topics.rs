//! Topics assigned by a model, for AutoHall's detection-by-topic analysis when the data has no
//! topics of its own (Climate-FEVER's file is one topic): one call per claim, "which of these
//! topics is the claim about?", the reply read against the list, every record kept in the store
//! (`claim_topics`) so a claim is asked once per model and list, across runs. The lane runs
//! inside the run harness like every lane (a lock per model and list, call slots, records held
//! while the store cannot save them, cancel).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::engine::records::{Cx, RecordEvent, Unit};
use crate::engine::{Caller, judge};
use crate::provider::{ChatRequest, Message, Params};
use crate::store::{TopicRecord, now_secs};

/// AutoHall's topics (its `content_analysis.py`): the list offered when the user gives none.
pub const AUTOHALL_TOPICS: [&str; 13] = [
    "Education",
    "Technology",
    "Literature",
    "Geography",
    "Business",
    "Culture",
    "Sports",
    "Politics",
    "Music",
    "History",
    "Science",
    "Law",
    "Entertainment",
];

/// Replies that name more topics than this list the choices instead of choosing.
const MOST_NAMED: usize = 2;

/// The list offered, as stored (`|`-joined: another list is another question).
pub fn vocabulary(topics: &[String]) -> String {
    topics.join("|")
}

/// Parses `--topic-list` ("A, B, C"): trimmed, no empties, no repeats (case-insensitive), at
/// least two.
pub fn parse_list(list: &str) -> Result<Vec<String>, String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for t in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if t.contains('|') {
            return Err(format!("a topic cannot hold '|': {t:?}"));
        }
        if seen.insert(t.to_lowercase()) {
            out.push(t.to_string());
        }
    }
    if out.len() < 2 {
        return Err(format!(
            "a topic list needs at least two topics, comma-separated (got {list:?})"
        ));
    }
    Ok(out)
}

/// The question for one claim, at temperature 0.
pub fn request(claim: &str, topics: &[String]) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(format!(
            "Claim: {claim}\n\nTopics: {}\n\nWhich one of these topics is the claim about? Answer with the one topic from the list that fits best, and nothing else.",
            topics.join(", ")
        ))],
        params: Params {
            temperature: Some(0.0),
            ..Params::default()
        },
    }
}

/// The topic a reply names: what it does not copy from the prompt, the topic of the list it
/// names first (whole words, any case). A reply naming more than two topics lists the choices
/// and is unread, as is one naming none.
pub fn read(reply: &str, prompt: &str, topics: &[String]) -> Option<String> {
    let own = crate::eval::echo::without_echo(reply, prompt).to_lowercase();
    let mut found: Vec<(usize, &String)> = topics
        .iter()
        .filter_map(|t| first_word_at(&own, &t.to_lowercase()).map(|i| (i, t)))
        .collect();
    if found.is_empty() || found.len() > MOST_NAMED {
        return None;
    }
    found.sort();
    Some(found[0].1.clone())
}

/// Where `word` first stands as a whole word in `text`, not denied ("not about the topic of
/// Education, but Science" names Science).
pub(crate) fn first_word_at(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric();
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back().is_none_or(|c| !is_word(c));
        let after = text[i + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_word(c));
        before && after && !denied(&text[..i])
    })
}

/// Words back to a denial that still covers what follows: "not" or "isn't" among the last
/// few words of the clause before it.
const DENIAL_REACH: usize = 6;

fn denied(before: &str) -> bool {
    let clause = before
        .rsplit(['.', ';', ':', '!', '?', '\n'])
        .next()
        .unwrap_or(before);
    // "not about X, but (rather) about Y": the "but" ends the denial.
    let clause = clause.rsplit(" but ").next().unwrap_or(clause);
    clause
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .rev()
        .take(DENIAL_REACH)
        .any(|w| matches!(w, "not" | "isn't" | "no" | "never"))
}

/// Stored replies read again with today's reader (the request rebuilt from the claim and the
/// list): the records whose topic changed, to save.
pub fn read_again(records: &[TopicRecord], topics: &[String]) -> Vec<TopicRecord> {
    records
        .iter()
        .filter_map(|r| {
            let reply = r.reply.as_deref()?;
            let req = request(&r.claim, topics);
            let topic = read(reply, crate::detect::prompts::text_of(&req), topics);
            (topic != r.topic).then(|| TopicRecord { topic, ..r.clone() })
        })
        .collect()
}

/// A claim's topic from stored records: `claim → topic` for those read.
pub fn assigned(records: &[TopicRecord]) -> HashMap<String, String> {
    records
        .iter()
        .filter_map(|r| Some((r.claim.clone(), r.topic.clone()?)))
        .collect()
}

/// The claims still to ask: those without a record, or whose call failed (an unreadable reply
/// stays: asking the same question again gets the same reply).
pub fn todo(claims: &[String], records: &[TopicRecord]) -> Vec<String> {
    let done: BTreeSet<&str> = records
        .iter()
        .filter(|r| r.error.is_none())
        .map(|r| r.claim.as_str())
        .collect();
    let mut out: Vec<String> = claims
        .iter()
        .filter(|c| !done.contains(c.as_str()))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    out.sort();
    out
}

/// What the front-end hears: each claim's record as it is saved.
pub type TopicEvent = RecordEvent<TopicRecord, ()>;

/// The topic lane's unit: one claim asked of `caller` against `topics`.
pub struct Topics {
    pub caller: Arc<Caller>,
    pub topics: Vec<String>,
}

impl Topics {
    /// The lock of an assignment: one per model and list at a time.
    pub fn lock(&self) -> String {
        format!(
            "topics:{}:{}",
            self.caller.cfg.name,
            vocabulary(&self.topics)
        )
    }
}

impl Unit for Topics {
    type Todo = String;
    type Record = TopicRecord;
    type Outcome = ();
    const WHAT: &'static str = "topic assignment";

    async fn work(self: Arc<Self>, claim: String, cx: Cx<Self>) -> Option<()> {
        let slot = cx.slot().await?;
        let req = request(&claim, &self.topics);
        let prompt = crate::detect::prompts::text_of(&req).to_string();
        let asked = tokio::select! {
            a = judge::ask(&self.caller, &req, 2, |r| read(r, &prompt, &self.topics)) => a,
            _ = cx.cancel().cancelled() => return None,
        };
        drop(slot);
        let (topic, error) = match asked.outcome {
            Ok(t) => (t, None),
            Err(e) => (None, Some(e)),
        };
        // A call the cancel cut short is not a result: it is asked next time.
        if cx.is_cancelled() && error.as_deref() == Some("cancelled") {
            return None;
        }
        let rec = cx
            .save(TopicRecord {
                claim,
                model: self.caller.cfg.name.clone(),
                vocabulary: vocabulary(&self.topics),
                topic,
                reply: asked.reply,
                error,
                attempts: asked.attempts,
                created_at: now_secs(),
            })
            .await?;
        cx.count(rec.error.is_none(), asked.cached);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> Vec<String> {
        AUTOHALL_TOPICS.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn a_reply_is_read_against_the_list() {
        let topics = list();
        let req = request("Sea levels are rising.", &topics);
        let prompt = crate::detect::prompts::text_of(&req);
        let r = |reply: &str| read(reply, prompt, &topics);
        assert_eq!(r("Science"), Some("Science".into()));
        assert_eq!(r("science."), Some("Science".into()));
        assert_eq!(r("The topic is: Geography"), Some("Geography".into()));
        // Two topics: the one named first.
        assert_eq!(r("Science, and some Politics too"), Some("Science".into()));
        // A denied topic is not the choice.
        assert_eq!(
            r(
                "The claim is not about the topic of \"Education,\" but rather about the topic of \"Science\""
            ),
            Some("Science".into())
        );
        assert_eq!(r("It is not Music."), None);
        assert_eq!(r("Not music. History."), Some("History".into()));
        // A word holding a topic is not the topic.
        assert_eq!(r("Sciences of the lawful"), None);
        // The list copied back chooses nothing; neither does a reply naming no topic.
        assert_eq!(
            r("Topics: Education, Technology, Literature, Geography, Business"),
            None
        );
        assert_eq!(r("Climate change"), None);
        // The prompt copied back, then a choice: the choice.
        let echo = format!("{prompt} Science");
        assert_eq!(r(&echo), Some("Science".into()));
    }

    #[test]
    fn a_topic_list_is_checked() {
        assert_eq!(
            parse_list(" Health, Politics ,health,, Science").unwrap(),
            vec!["Health", "Politics", "Science"]
        );
        assert!(parse_list("Health").unwrap_err().contains("at least two"));
        assert!(parse_list("A|B, C").unwrap_err().contains("'|'"));
    }

    #[test]
    fn claims_asked_once_unless_the_call_failed() {
        let rec = |claim: &str, topic: Option<&str>, error: Option<&str>| TopicRecord {
            claim: claim.into(),
            model: "m".into(),
            vocabulary: "A|B".into(),
            topic: topic.map(str::to_string),
            reply: None,
            error: error.map(str::to_string),
            attempts: 1,
            created_at: 0,
        };
        let records = vec![
            rec("read", Some("A"), None),
            rec("unread", None, None),
            rec("failed", None, Some("HTTP 500")),
        ];
        let claims: Vec<String> = ["read", "unread", "failed", "new", "new"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(todo(&claims, &records), vec!["failed", "new"]);
        // Read again: "unread" had no reply kept; give it one that reads now.
        let topics = vec!["A".to_string(), "B".to_string()];
        let mut kept = records.clone();
        kept[1].reply = Some("B".into());
        kept[0].reply = Some("A".into());
        let moved = read_again(&kept, &topics);
        assert_eq!(moved.len(), 1);
        assert_eq!(
            (moved[0].claim.as_str(), moved[0].topic.as_deref()),
            ("unread", Some("B"))
        );
        assert_eq!(
            assigned(&records),
            HashMap::from([("read".to_string(), "A".to_string())])
        );
    }
}
