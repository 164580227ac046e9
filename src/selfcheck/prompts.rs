//! The prompts of self-detection, in our own words (METHODS.md §4): a true sentence that
//! paraphrases the fact and keeps the object, a false one with the object replaced, and the
//! question "does it contain false information?", directly and with chain-of-thought.

use crate::provider::{ChatRequest, Message, Params};

/// The fact as the generator sees it.
pub fn fact(subject: &str, relation: &str, object: &str, source: Option<&str>) -> String {
    let mut s = format!("Subject: {subject}\nRelation: {relation}\nObject: {object}");
    if let Some(src) = source {
        s.push_str(&format!("\nSource sentence: {src}"));
    }
    s
}

fn true_prompt(fact: &str, object: &str) -> String {
    format!(
        "Write one sentence that states the fact below in your own words. The sentence must contain the exact phrase \"{object}\". Reply with the sentence only.\n\n{fact}\n\nSentence:"
    )
}

/// An example for the generator: another triple of the dataset (never the item), its sentence,
/// and a decoy, the object of another triple of the same relation, that makes the example's
/// false sentence.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Shot {
    pub fact: String,
    pub object: String,
    pub sentence: String,
    #[serde(default)]
    pub decoy: Option<String>,
}

/// The true-sentence request: each example's fact as a user turn answered by its sentence,
/// then the triple's own fact.
pub fn true_sentence(fact: &str, object: &str, shots: &[Shot], params: Params) -> ChatRequest {
    let mut messages = Vec::with_capacity(shots.len() * 2 + 1);
    for s in shots {
        messages.push(Message::user(true_prompt(&s.fact, &s.object)));
        messages.push(Message::assistant(s.sentence.clone()));
    }
    messages.push(Message::user(true_prompt(fact, object)));
    ChatRequest { messages, params }
}

fn false_prompt(sentence: &str, relation: &str, object: &str) -> String {
    format!(
        "Rewrite the sentence below so that it becomes false: replace \"{object}\" with a different {relation} that sounds plausible but is wrong. Keep every other word as it is. Reply with the new sentence only.\n\nSentence: {sentence}\n\nNew sentence:"
    )
}

/// The false-sentence request: the true sentence with the object replaced by a plausible wrong
/// one, everything else kept. Examples with a decoy show the edit done (their sentence with the
/// object swapped for the decoy): small models otherwise tend to copy the sentence back.
pub fn false_sentence(
    true_s: &str,
    relation: &str,
    object: &str,
    shots: &[Shot],
    params: Params,
) -> ChatRequest {
    let mut messages = Vec::with_capacity(shots.len() * 2 + 1);
    for s in shots {
        if let Some(d) = &s.decoy
            && s.sentence.contains(&s.object)
        {
            let relation = s.fact.lines().find_map(|l| l.strip_prefix("Relation: "));
            messages.push(Message::user(false_prompt(
                &s.sentence,
                relation.unwrap_or("value"),
                &s.object,
            )));
            messages.push(Message::assistant(s.sentence.replace(&s.object, d)));
        }
    }
    messages.push(Message::user(false_prompt(true_s, relation, object)));
    ChatRequest { messages, params }
}

fn zero() -> Params {
    Params {
        temperature: Some(0.0),
        ..Params::default()
    }
}

/// "Does it contain false information?", answered directly.
pub fn direct(sentence: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(format!(
            "Does the following sentence contain false information? Answer with yes or no only.\n\nSentence: {sentence}\n\nAnswer:"
        ))],
        params: zero(),
    }
}

/// The same with chain-of-thought: the sentence split into meaning units, each checked in turn,
/// then the answer on the last line.
pub fn cot(sentence: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(format!(
            "Does the following sentence contain false information?\n\nSentence: {sentence}\n\nFirst break the sentence into its units of meaning (who or what it is about, the relation, the object, any dates, places or numbers). Check each unit in order and say whether it is true. Then give your final answer on the last line, exactly \"Answer: yes\" if the sentence contains false information or \"Answer: no\" if it does not."
        ))],
        params: zero(),
    }
}

/// Up to `k` examples for a triple: other triples with a source sentence, chosen the same way
/// every run (a stable hash of the two ids), never the triple itself.
pub fn pick_shots<'a, T>(
    all: &'a [T],
    own_id: &str,
    id: impl Fn(&T) -> &str,
    usable: impl Fn(&T) -> bool,
    k: usize,
) -> Vec<&'a T> {
    let mut c: Vec<(u64, &T)> = all
        .iter()
        .filter(|t| id(t) != own_id && usable(t))
        .map(|t| (fnv1a(&[own_id.as_bytes(), b"\0", id(t).as_bytes()]), t))
        .collect();
    c.sort_by_key(|x| x.0);
    c.into_iter().take(k).map(|x| x.1).collect()
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}
