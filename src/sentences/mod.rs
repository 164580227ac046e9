//! Where in the answer (SelfCheckGPT's sentence-level consistency, METHODS.md §5): an answer cut
//! into sentences ([`split`]), each scored by how little the model's other samples to the same
//! prompt back it up; higher is more likely made up. Three methods:
//! - `prompt`: a judge asked, per sentence and sample, "Is the sentence supported by the context
//!   above?" (Yes 0, No 1, anything else 0.5), averaged over the samples;
//! - `unigram`: no model at all: a unigram distribution of the words of the samples and the
//!   answer (add-one smoothing), the sentence's maximum (and average) of -log p over its words;
//! - `logprob`: the answer's own token log-probabilities, when stored: the average and maximum
//!   of -log p over the sentence's tokens.
//!
//! The answers and samples are the ones semantic entropy works on (`detect::semantic::Group`:
//! a run made with `--samples N`, or a detection's answer under test and its samples): the first
//! answer of a group is the one scored, the rest are its samples. The judge's verdicts are a
//! records lane (`engine::records`): each saved as it arrives, on a shared store too, resumed
//! where it stopped, asked once per judge, sentence and sample text.

pub mod draw;
pub mod eval;
pub mod labels;
pub mod split;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::detect::semantic::Group;
use crate::engine::records::{Cx, RecordEvent, Unit};
use crate::engine::{Caller, judge};
use crate::provider::{ChatRequest, Message, TokenLogprob};
use crate::store::lane_tables::{SENTENCE_SUPPORT, Table, Val};
use crate::store::record::{Fields, Record, int, text};
pub use split::{Sentence, split};

/// The methods, by the names `--methods` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Prompt,
    Unigram,
    Logprob,
}

impl Method {
    pub const ALL: [Method; 3] = [Method::Prompt, Method::Unigram, Method::Logprob];

    pub fn name(self) -> &'static str {
        match self {
            Method::Prompt => "prompt",
            Method::Unigram => "unigram",
            Method::Logprob => "logprob",
        }
    }

    pub fn parse(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == s.trim())
    }
}

/// A sentence's scores; a method that could not score it (no samples, no tokens stored, no
/// verdict yet) has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scores {
    pub prompt: Option<f64>,
    pub unigram: Option<f64>,
    pub unigram_avg: Option<f64>,
    pub logprob_avg: Option<f64>,
    pub logprob_max: Option<f64>,
}

impl Scores {
    /// The score a screen or a ranking uses: the prompt method's when there is one (the best in
    /// the paper), else the unigram's maximum, else the tokens' average.
    pub fn headline(&self) -> Option<f64> {
        self.prompt.or(self.unigram).or(self.logprob_avg)
    }
}

/// A sentence with its scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scored {
    #[serde(flatten)]
    pub sentence: Sentence,
    pub scores: Scores,
}

/// The unigram method over `answer` and its `samples`: per sentence, the maximum and average
/// of -log p(word), p from the words of all of them with add-one smoothing.
pub fn unigram(sentences: &[Sentence], answer: &str, samples: &[String]) -> Vec<(f64, f64)> {
    let words = |t: &str| -> Vec<String> {
        use unicode_segmentation::UnicodeSegmentation;
        t.unicode_words().map(str::to_lowercase).collect()
    };
    let mut counts: HashMap<String, f64> = HashMap::new();
    let mut total = 0.0;
    for t in std::iter::once(answer).chain(samples.iter().map(String::as_str)) {
        for w in words(t) {
            *counts.entry(w).or_default() += 1.0;
            total += 1.0;
        }
    }
    let vocab = counts.len() as f64;
    sentences
        .iter()
        .map(|s| {
            let nll: Vec<f64> = words(&s.text)
                .iter()
                .map(|w| -((counts.get(w).copied().unwrap_or(0.0) + 1.0) / (total + vocab)).ln())
                .collect();
            if nll.is_empty() {
                return (f64::NAN, f64::NAN);
            }
            let max = nll.iter().copied().fold(f64::MIN, f64::max);
            (max, nll.iter().sum::<f64>() / nll.len() as f64)
        })
        .collect()
}

/// The grey-box method: per sentence, the average and maximum of -log p over the answer's
/// tokens that start inside it. Tokens are placed in the answer by their text, in order; a
/// token that cannot be found there (a server that changed it) is left out.
pub fn logprob(
    sentences: &[Sentence],
    answer: &str,
    tokens: &[TokenLogprob],
) -> Vec<Option<(f64, f64)>> {
    let mut at = 0;
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); sentences.len()];
    for t in tokens {
        let Some((start, len)) = place(answer, at, &t.token) else {
            continue;
        };
        at = start + len;
        // A token's own first non-space character says where it is.
        let lead = len - t.token[t.token.len() - len..].trim_start().len();
        let pos = start + lead;
        if let Some(i) = sentences.iter().position(|s| s.start <= pos && pos < s.end) {
            per[i].push(-f64::from(t.logprob));
        }
    }
    per.into_iter()
        .map(|v| {
            (!v.is_empty()).then(|| {
                let avg = v.iter().sum::<f64>() / v.len() as f64;
                (avg, v.iter().copied().fold(f64::MIN, f64::max))
            })
        })
        .collect()
}

/// Where the token `tok` sits in `answer` at or just after `at`: its start and how many of its
/// bytes are there. The stored answer is the tokens' text trimmed (a first token " Mercury" is
/// "Mercury" in it) and a token may be missing from it (sanitised away): a token is looked for
/// only a few bytes ahead, never further (a search to the end would jump to the same word a
/// paragraph on and lose every token before it), and one found nowhere near is skipped.
fn place(answer: &str, at: usize, tok: &str) -> Option<(usize, usize)> {
    let rest = answer.get(at..)?;
    if tok.is_empty() {
        return None;
    }
    if rest.starts_with(tok) {
        return Some((at, tok.len()));
    }
    let mut w = (tok.len() + 8).min(rest.len());
    while !rest.is_char_boundary(w) {
        w -= 1;
    }
    if let Some(i) = rest[..w].find(tok) {
        return Some((at + i, tok.len()));
    }
    // Its leading spaces trimmed away with the answer's.
    let bare = tok.trim_start();
    (!bare.is_empty() && rest.starts_with(bare)).then_some((at, bare.len()))
}

/// What a judge said of a sentence against one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Yes,
    No,
    /// Neither, after every attempt: counted 0.5, as the paper counts it.
    Other,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Yes => "yes",
            Verdict::No => "no",
            Verdict::Other => "other",
        }
    }

    pub fn score(self) -> f64 {
        match self {
            Verdict::Yes => 0.0,
            Verdict::No => 1.0,
            Verdict::Other => 0.5,
        }
    }
}

/// SelfCheckGPT's question, as the paper asks it.
pub fn request(sample: &str, sentence: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(format!(
            "Context: {sample}\n\nSentence: {sentence}\n\nIs the sentence supported by the context above? Answer Yes or No.\n\nAnswer: "
        ))],
        params: crate::provider::Params {
            temperature: Some(0.0),
            ..Default::default()
        },
    }
}

/// A reply's Yes or No: its first word, after any copy of the prompt.
pub fn read(reply: &str, prompt: &str) -> Option<Verdict> {
    let own = crate::eval::echo::without_echo(reply, prompt);
    let first: String = own
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    match first.as_str() {
        "yes" => Some(Verdict::Yes),
        "no" => Some(Verdict::No),
        _ => None,
    }
}

/// One verdict, as stored (`lane_tables::SENTENCE_SUPPORT`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SupportRecord {
    pub judge: String,
    pub sentence: String,
    /// The sample the sentence was checked against.
    pub context: String,
    /// `None`: the judge could not be reached (`error` says why).
    pub verdict: Option<Verdict>,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

impl Record for SupportRecord {
    fn table() -> &'static Table {
        &SENTENCE_SUPPORT
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("judge", text(Some(&self.judge))),
            ("sentence", text(Some(&self.sentence))),
            ("context", text(Some(&self.context))),
            ("verdict", text(self.verdict.map(Verdict::as_str))),
            ("reply", text(self.reply.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> crate::store::Result<Self> {
        Ok(SupportRecord {
            judge: f.text("judge")?,
            sentence: f.text("sentence")?,
            context: f.text("context")?,
            verdict: match f.opt_text("verdict").as_deref() {
                Some("yes") => Some(Verdict::Yes),
                Some("no") => Some(Verdict::No),
                Some(_) => Some(Verdict::Other),
                None => None,
            },
            reply: f.opt_text("reply"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
    }
}

/// The verdicts known, by (sentence, sample text).
#[derive(Debug, Default, Clone)]
pub struct Known(HashMap<(String, String), Verdict>);

impl Known {
    pub fn of(records: &[SupportRecord]) -> Known {
        let mut k = Known::default();
        for r in records {
            k.add(r);
        }
        k
    }

    pub fn add(&mut self, r: &SupportRecord) {
        if let Some(v) = r.verdict {
            self.0.insert((r.sentence.clone(), r.context.clone()), v);
        }
    }

    pub fn get(&self, sentence: &str, sample: &str) -> Option<Verdict> {
        self.0
            .get(&(sentence.to_string(), sample.to_string()))
            .copied()
    }
}

/// An answer under test: its group (answer first, then its samples), its sentences, and its
/// tokens when stored.
#[derive(Debug, Clone)]
pub struct Answer {
    pub group: Group,
    pub sentences: Vec<Sentence>,
    pub tokens: Option<Vec<TokenLogprob>>,
}

impl Answer {
    pub fn new(group: Group, tokens: Option<Vec<TokenLogprob>>) -> Answer {
        let sentences = group.answers.first().map_or_else(Vec::new, |a| split(a));
        Answer {
            group,
            sentences,
            tokens,
        }
    }

    pub fn text(&self) -> &str {
        self.group.answers.first().map_or("", String::as_str)
    }

    pub fn samples(&self) -> &[String] {
        self.group.answers.get(1..).unwrap_or(&[])
    }

    /// The judge calls the prompt method still needs: (sentence, sample) pairs not in `known`.
    pub fn missing(&self, known: &Known) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, s) in self.sentences.iter().enumerate() {
            for (j, x) in self.samples().iter().enumerate() {
                if known.get(&s.text, x).is_none() {
                    out.push((i, j));
                }
            }
        }
        out
    }

    /// Every sentence scored by `methods`, with the verdicts in `known` for the prompt method.
    pub fn score(&self, methods: &[Method], known: &Known) -> Vec<Scored> {
        let uni = methods
            .contains(&Method::Unigram)
            .then(|| unigram(&self.sentences, self.text(), self.samples()));
        let lp = match (&self.tokens, methods.contains(&Method::Logprob)) {
            (Some(t), true) => Some(logprob(&self.sentences, self.text(), t)),
            _ => None,
        };
        let finite = |v: f64| v.is_finite().then_some(v);
        self.sentences
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut sc = Scores::default();
                if let Some(u) = &uni {
                    sc.unigram = finite(u[i].0);
                    sc.unigram_avg = finite(u[i].1);
                }
                if let Some(Some((avg, max))) = lp.as_ref().map(|l| l[i]) {
                    sc.logprob_avg = Some(avg);
                    sc.logprob_max = Some(max);
                }
                if methods.contains(&Method::Prompt) && !self.samples().is_empty() {
                    let got: Vec<f64> = self
                        .samples()
                        .iter()
                        .filter_map(|x| known.get(&s.text, x).map(Verdict::score))
                        .collect();
                    // Only when every sample has said: a partial mean would move as it fills.
                    if got.len() == self.samples().len() {
                        sc.prompt = Some(got.iter().sum::<f64>() / got.len() as f64);
                    }
                }
                Scored {
                    sentence: s.clone(),
                    scores: sc,
                }
            })
            .collect()
    }
}

/// The prompt method's checks `answers` still need, as (answer, sentence, sample), each
/// sentence and sample text once (samples often repeat one another, and a verdict is the same
/// whichever answer asks it); and how many checks are missing counting repeats.
pub fn to_ask(answers: &[Answer], known: &Known) -> (Vec<(usize, usize, usize)>, usize) {
    let mut missing = 0;
    let mut todo = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (a, x) in answers.iter().enumerate() {
        for (i, j) in x.missing(known) {
            missing += 1;
            if seen.insert((&x.sentences[i].text, &x.samples()[j])) {
                todo.push((a, i, j));
            }
        }
    }
    (todo, missing)
}

/// The answer's own score per method: the mean of its sentences' (METHODS.md §5, 3.).
pub fn answer_scores(scored: &[Scored]) -> BTreeMap<&'static str, f64> {
    let mut out = BTreeMap::new();
    for (name, f) in eval::SCORES {
        let v: Vec<f64> = scored.iter().filter_map(|s| f(&s.scores)).collect();
        if !v.is_empty() && v.len() == scored.len() {
            out.insert(name, v.iter().sum::<f64>() / v.len() as f64);
        }
    }
    out
}

/// One stored answer as the screens show it: the answer under test with its samples (the other
/// answers its run has to the same item from the same model, else the samples of its newest
/// detection's newest complete round), its tokens when stored, and the verdicts `judge` gave
/// on its sentences (no judge named: the judge with the most verdicts on them, named in the
/// result). `None`: no such answer, or it has no text.
pub fn of_stored(
    db: &crate::store::Db,
    run: &str,
    job: u32,
    judge: Option<&str>,
) -> crate::store::Result<Option<(Answer, Known, Option<String>)>> {
    let store = db.read()?;
    let Some(me) = store.response(run, job)? else {
        return Ok(None);
    };
    let Some(text) = me.text.clone() else {
        return Ok(None);
    };
    let mut answers = vec![text];
    let mut via = crate::detect::semantic::Via::Samples;
    for r in store.run_item_answers(run, &me.item_id)? {
        if r.model == me.model
            && r.job_idx != job
            && let Some(t) = r.text
        {
            answers.push(t);
        }
    }
    if let Some(more) = draw::drawn(db, run)?.remove(&job) {
        answers.extend(more.into_iter().map(|(_, t)| t));
    }
    if answers.len() == 1
        && let Some((id, target)) = store.detection_of(run, job)?
        && let Some(d) = store.detect_run(&id)?
    {
        let stored = crate::detect::run::Stored::load(db, &id)?;
        if let Some(g) = crate::detect::semantic::detection_groups(&id, d.config.k.max(1), &stored)
            .into_iter()
            .find(|g| matches!(g.via, crate::detect::semantic::Via::Detection { target: t, .. } if t == target))
        {
            answers.extend(g.answers.into_iter().skip(1));
            via = g.via;
        }
    }
    let tokens = store
        .logprobs(run)?
        .into_iter()
        .find(|(j, _)| *j == job)
        .map(|(_, t)| t);
    let group = Group {
        via,
        source_run: Some(run.to_string()),
        source_job: Some(job),
        item_id: me.item_id.clone(),
        task_id: me.task_id.clone(),
        model: me.model.clone(),
        question: String::new(),
        loglik: vec![None; answers.len()],
        answers,
    };
    let answer = Answer::new(group, tokens);
    let mine: std::collections::HashSet<&str> =
        answer.sentences.iter().map(|s| s.text.as_str()).collect();
    let recs: Vec<SupportRecord> = store
        .records_where::<SupportRecord>(judge.map(|j| ("judge", j)))?
        .into_iter()
        .filter(|r| mine.contains(r.sentence.as_str()) && r.verdict.is_some())
        .collect();
    let judge = match judge {
        Some(j) => Some(j.to_string()),
        None => {
            let mut by: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &recs {
                *by.entry(r.judge.as_str()).or_default() += 1;
            }
            by.into_iter()
                .max_by_key(|(j, n)| (*n, std::cmp::Reverse(*j)))
                .map(|(j, _)| j.to_string())
        }
    };
    let known = Known::of(
        &recs
            .into_iter()
            .filter(|r| Some(&r.judge) == judge.as_ref())
            .collect::<Vec<_>>(),
    );
    Ok(Some((answer, known, judge)))
}

/// Every judge's stored verdict on a sentence (what [`scored_run`] picks from).
pub fn support_records(db: &crate::store::Db) -> crate::store::Result<Vec<SupportRecord>> {
    let store = db.read()?;
    store.records_where::<SupportRecord>(None)
}

/// A run's answers with their sentences scored, and the judge whose verdicts the prompt
/// method took (none when no judge was asked).
pub type ScoredRun = (Option<String>, Vec<(Answer, Vec<Scored>)>);

/// Every answer of `run` that has samples (a run made with `--samples N`), its sentences
/// scored by every method, the prompt method by the judge with the most verdicts on them
/// among `support` (every stored verdict, [`support_records`]: read once by a caller that
/// scores several runs); `None` when no answer has samples.
pub fn scored_run(
    db: &crate::store::Db,
    run: &str,
    ds: &crate::dataset::Dataset,
    support: &[SupportRecord],
) -> crate::store::Result<Option<ScoredRun>> {
    let store = db.read()?;
    let groups = draw::run_groups(db, run, ds, false)?;
    if groups.is_empty() {
        return Ok(None);
    }
    let tokens: HashMap<u32, _> = store.logprobs(run)?.into_iter().collect();
    let answers: Vec<Answer> = groups
        .into_iter()
        .map(|g| {
            let t = g.source_job.and_then(|j| tokens.get(&j).cloned());
            Answer::new(g, t)
        })
        .collect();
    let mine: std::collections::HashSet<&str> = answers
        .iter()
        .flat_map(|a| a.sentences.iter().map(|s| s.text.as_str()))
        .collect();
    let recs: Vec<SupportRecord> = support
        .iter()
        .filter(|r| r.verdict.is_some() && mine.contains(r.sentence.as_str()))
        .cloned()
        .collect();
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &recs {
        *by.entry(r.judge.as_str()).or_default() += 1;
    }
    let judge = by
        .into_iter()
        .max_by_key(|(j, n)| (*n, std::cmp::Reverse(*j)))
        .map(|(j, _)| j.to_string());
    let known = Known::of(
        &recs
            .into_iter()
            .filter(|r| Some(&r.judge) == judge.as_ref())
            .collect::<Vec<_>>(),
    );
    let scored = answers
        .into_iter()
        .map(|a| {
            let s = a.score(&Method::ALL, &known);
            (a, s)
        })
        .collect();
    Ok(Some((judge, scored)))
}

/// What the front-end hears: each verdict as it is saved.
pub type SentenceEvent = RecordEvent<SupportRecord, ()>;

/// The lane's unit: one (answer, sentence, sample) asked of the judge behind `caller`; every
/// call is its own item, so `--concurrency` calls are in flight across sentences and answers.
pub struct Support {
    pub answers: Arc<Vec<Answer>>,
    pub caller: Arc<Caller>,
    pub known: Mutex<Known>,
}

impl Support {
    /// The lock: one scoring of a run by a judge at a time.
    pub fn lock(&self, run_id: &str) -> String {
        format!("sentences:{}:{run_id}", self.caller.cfg.name)
    }
}

impl Unit for Support {
    /// (answer, sentence, sample)
    type Todo = (usize, usize, usize);
    type Record = SupportRecord;
    type Outcome = ();
    const WHAT: &'static str = "sentence support";

    async fn work(self: Arc<Self>, (a, i, j): (usize, usize, usize), cx: Cx<Self>) -> Option<()> {
        let answer = &self.answers[a];
        let (sentence, sample) = (&answer.sentences[i].text, &answer.samples()[j]);
        let known = self
            .known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(sentence, sample);
        if known.is_some() {
            // The same sentence and sample came up in another answer already.
            cx.count(true, true);
            return Some(());
        }
        let slot = cx.slot().await?;
        let req = request(sample, sentence);
        let prompt = crate::detect::prompts::text_of(&req).to_string();
        let asked = tokio::select! {
            x = judge::ask(&self.caller, &req, 2, |r| read(r, &prompt)) => x,
            _ = cx.cancel().cancelled() => return None,
        };
        drop(slot);
        let (verdict, error) = match asked.outcome {
            Ok(v) => (Some(v.unwrap_or(Verdict::Other)), None),
            Err(e) => (None, Some(e)),
        };
        if cx.is_cancelled() && error.as_deref() == Some("cancelled") {
            return None;
        }
        let rec = cx
            .save(SupportRecord {
                judge: self.caller.cfg.name.clone(),
                sentence: sentence.clone(),
                context: sample.clone(),
                verdict,
                reply: asked.reply,
                error,
                attempts: asked.attempts,
                created_at: crate::store::now_secs(),
            })
            .await?;
        self.known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(&rec);
        cx.count(rec.error.is_none(), asked.cached);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str, start: usize) -> Sentence {
        Sentence {
            text: text.into(),
            start,
            end: start + text.len(),
        }
    }

    #[test]
    fn unigram_scores_a_sentence_the_samples_do_not_repeat_higher() {
        let answer = "Paris is the capital. It was founded by Martians.";
        let sents = split(answer);
        let samples = vec![
            "Paris is the capital of France.".to_string(),
            "The capital is Paris.".to_string(),
        ];
        let u = unigram(&sents, answer, &samples);
        assert_eq!(u.len(), 2);
        assert!(u[1].0 > u[0].0, "{u:?}");
        assert!(u[1].1 > u[0].1, "{u:?}");
        // By hand: 19 words of 11 kinds; "martians" once: -ln((1 + 1) / (19 + 11)).
        assert!((u[1].0 - 15.0f64.ln()).abs() < 1e-12, "{u:?}");
    }

    #[test]
    fn tokens_land_in_the_sentence_they_start_in() {
        let answer = "Yes. No way.";
        let sents = vec![s("Yes.", 0), s("No way.", 5)];
        let t = |tok: &str, lp: f32| TokenLogprob {
            token: tok.into(),
            logprob: lp,
            top: Vec::new(),
        };
        let toks = [
            t("Yes", -0.5),
            t(".", -1.5),
            t(" No", -2.0),
            t(" way", -4.0),
            t(".", -0.0),
        ];
        let lp = logprob(&sents, answer, &toks);
        assert_eq!(lp[0], Some((1.0, 1.5)));
        assert_eq!(lp[1], Some((2.0, 4.0)));
        // A token the text does not hold is left out, not misplaced.
        let lp = logprob(&sents, answer, &[t("Maybe", -9.0), t(" No", -1.0)]);
        assert_eq!(lp, vec![None, Some((1.0, 1.0))]);
        // The answer is stored trimmed: its first token " Mercury" is "Mercury" there, and is
        // not looked for a paragraph on (where it would take every token before it along).
        let answer = "Mercury\nMercury is a metal. Mercury is dense.";
        let sents = split(answer);
        assert_eq!(sents.len(), 2);
        let toks = [
            t(" Mercury", -1.0),
            t("\n", -1.0),
            t("Mercury", -1.0),
            t(" is", -1.0),
            t(" a", -1.0),
            t(" metal", -1.0),
            t(".", -1.0),
            t(" Mercury", -3.0),
            t(" is", -3.0),
            t(" dense", -3.0),
            t(".", -3.0),
        ];
        let lp = logprob(&sents, answer, &toks);
        assert_eq!(lp, vec![Some((1.0, 1.0)), Some((3.0, 3.0))]);
    }

    #[test]
    fn a_reply_is_yes_no_or_neither() {
        let req = request("The sky is blue.", "The sky is blue.");
        let p = crate::detect::prompts::text_of(&req);
        assert_eq!(read("Yes", p), Some(Verdict::Yes));
        assert_eq!(read(" yes, it is.", p), Some(Verdict::Yes));
        assert_eq!(read("No.", p), Some(Verdict::No));
        assert_eq!(read("Not really", p), None);
        assert_eq!(read("Nope", p), None);
        assert_eq!(read(&format!("{p}No"), p), Some(Verdict::No));
        assert_eq!(Verdict::Other.score(), 0.5);
    }

    #[test]
    fn the_prompt_score_is_the_mean_over_every_sample_once_all_have_said() {
        let g = Group {
            via: crate::detect::semantic::Via::Samples,
            source_run: Some("r".into()),
            source_job: Some(0),
            item_id: "i".into(),
            task_id: "t".into(),
            model: "m".into(),
            question: "q".into(),
            answers: vec!["A is B. C is D.".into(), "x".into(), "y".into()],
            loglik: Vec::new(),
        };
        let a = Answer::new(g, None);
        let rec = |sentence: &str, context: &str, v| SupportRecord {
            judge: "j".into(),
            sentence: sentence.into(),
            context: context.into(),
            verdict: Some(v),
            reply: None,
            error: None,
            attempts: 1,
            created_at: 0,
        };
        let mut known = Known::of(&[rec("A is B.", "x", Verdict::Yes)]);
        assert_eq!(a.missing(&known), vec![(0, 1), (1, 0), (1, 1)]);
        let sc = a.score(&[Method::Prompt], &known);
        assert_eq!(sc[0].scores.prompt, None, "one of two samples said");
        known.add(&rec("A is B.", "y", Verdict::Other));
        known.add(&rec("C is D.", "x", Verdict::No));
        known.add(&rec("C is D.", "y", Verdict::No));
        let sc = a.score(&[Method::Prompt], &known);
        assert_eq!(sc[0].scores.prompt, Some(0.25));
        assert_eq!(sc[1].scores.prompt, Some(1.0));
        assert_eq!(answer_scores(&sc).get("prompt"), Some(&0.625));
        assert!(a.missing(&known).is_empty());
    }
}
