//! Self-detection on stored answers: METHODS.md §4's question, "does it contain false
//! information?", asked of a run's PRISM answers (with their question, which an answer needs to
//! be read), directly and with chain-of-thought, by the model that wrote the answer unless
//! another detector is named. The replies are read as self-detection reads them (anything but a
//! clean yes or no counts as "detected"); every verdict is stored (`answer_checks`) as it
//! arrives; a failed call is asked again on the next run. `prism signals` scores the verdicts
//! against PRISM's own, beside the other signals. The lane runs inside the run harness.

use std::sync::Arc;

use super::parse::{read_cot, read_direct};
use crate::engine::records::{Cx, RecordEvent, Unit};
use crate::engine::{Caller, judge};
use crate::provider::{ChatRequest, Message, Params};
use crate::store::{Answer, AnswerCheck, Mode, now_secs};

/// One call: an answer, and how the detector is asked.
#[derive(Debug, Clone)]
pub struct Check {
    pub job_idx: u32,
    /// Which detector (a configured model's name; `callers` holds it).
    pub detector: String,
    pub mode: Mode,
    pub question: String,
    pub answer: String,
}

fn zero() -> Params {
    Params {
        temperature: Some(0.0),
        ..Params::default()
    }
}

/// The question for one answer, in one mode (the sentence prompts of self-detection, with the
/// question the answer answers).
pub fn request(question: &str, answer: &str, mode: Mode) -> ChatRequest {
    let text = match mode {
        Mode::Direct => format!(
            "Question: {question}\n\nAnswer: {answer}\n\nDoes the answer contain false information? Answer with yes or no only.\n\nAnswer:"
        ),
        Mode::Cot => format!(
            "Question: {question}\n\nAnswer: {answer}\n\nDoes the answer contain false information? First break the answer into its units of meaning (who or what it is about, the relation, the object, any dates, places or numbers). Check each unit in order and say whether it is true. Then give your final answer on the last line, exactly \"Answer: yes\" if the answer contains false information or \"Answer: no\" if it does not."
        ),
    };
    ChatRequest {
        messages: vec![Message::user(text)],
        params: zero(),
    }
}

/// A reply read as self-detection reads it.
pub fn read(reply: &str, mode: Mode) -> Answer {
    match mode {
        Mode::Direct => read_direct(reply),
        Mode::Cot => read_cot(reply),
    }
}

/// Whether a verdict says "contains false information" (METHODS.md: anything but a clean yes
/// or no counts as detected); `None` for a failed call.
pub fn detected(a: Answer) -> Option<bool> {
    a.detected()
}

/// What the front-end hears: each verdict as it is saved.
pub type CheckEvent = RecordEvent<AnswerCheck, ()>;

/// The lane's unit: one answer asked of its detector (`callers`, by name) in one mode.
pub struct Checks {
    pub run_id: String,
    pub callers: std::collections::HashMap<String, Arc<Caller>>,
}

impl Checks {
    /// The lock: one self-detection of a run's answers at a time.
    pub fn lock(&self) -> String {
        format!("answer-checks:{}", self.run_id)
    }
}

impl Unit for Checks {
    type Todo = Check;
    type Record = AnswerCheck;
    type Outcome = ();
    const WHAT: &'static str = "self-detection of answers";

    async fn work(self: Arc<Self>, c: Check, cx: Cx<Self>) -> Option<()> {
        let caller = self.callers.get(&c.detector).cloned()?;
        let slot = cx.slot().await?;
        let req = request(&c.question, &c.answer, c.mode);
        // An unreadable reply is a verdict ("detected"), not a reason to ask again: one
        // attempt, as self-detection asks.
        let asked = tokio::select! {
            a = judge::ask(&caller, &req, 1, |r| Some(read(r, c.mode))) => a,
            _ = cx.cancel().cancelled() => return None,
        };
        drop(slot);
        let (answer, error) = match asked.outcome {
            Ok(a) => (a.unwrap_or(Answer::Unparsed), None),
            Err(e) => (Answer::Failed, Some(e)),
        };
        if cx.is_cancelled() && error.as_deref() == Some("cancelled") {
            return None;
        }
        let rec = cx
            .save(AnswerCheck {
                run_id: self.run_id.clone(),
                job_idx: c.job_idx,
                detector: c.detector,
                mode: c.mode,
                answer,
                reply: asked.reply,
                error,
                attempts: asked.attempts.max(1),
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

    #[test]
    fn replies_are_read_as_self_detection_reads_them() {
        assert_eq!(read("Yes.", Mode::Direct), Answer::Yes);
        assert_eq!(read("No, it is accurate.", Mode::Direct), Answer::No);
        assert_eq!(read("The answer is no", Mode::Direct), Answer::Unparsed);
        assert_eq!(read("1. Paris: true\nAnswer: no", Mode::Cot), Answer::No);
        assert_eq!(read("I think so", Mode::Cot), Answer::Unparsed);
        assert_eq!(detected(Answer::Unparsed), Some(true));
        assert_eq!(detected(Answer::No), Some(false));
        assert_eq!(detected(Answer::Failed), None);
        let r = request("Capital of France?", "Lyon", Mode::Cot);
        let text = crate::provider::text_of(&r);
        assert!(text.contains("Question: Capital of France?") && text.contains("Answer: Lyon"));
        assert_eq!(r.params.temperature, Some(0.0));
    }
}
