//! What the TUI knows from background work, shared by every screen: the answers (live or from
//! the store), the progress of the active run, and every finished answer's score, summarised by
//! the same aggregator `prism score` and `prism report` use. Changed only by the app, when
//! engine events, store reads and scores arrive; screens read it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::dataset::Dataset;
use crate::engine::{Event, Job};
use crate::eval::summary::{Aggregator, Catalogue, ModelSummary, Point};
use crate::store::{ResponseRecord, ScoreRecord};

/// The state of one answer pane.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Queued,
    Sending {
        attempt: u32,
    },
    Streaming,
    Retrying {
        attempt: u32,
        max: u32,
        reason: String,
    },
    Done,
    Failed(String),
    /// The run was cancelled before this job finished.
    Cancelled,
    /// Loaded from the store (an earlier run).
    Stored,
}

impl Status {
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            Status::Done | Status::Failed(_) | Status::Cancelled | Status::Stored
        )
    }
}

#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub status: Status,
    pub latency_ms: Option<u64>,
    pub first_token_ms: Option<u64>,
    pub tokens: Option<u32>,
    pub cached: bool,
    pub error: Option<String>,
    pub attempts: u32,
    /// The run the answer came from, and its job there (to score it).
    pub run_id: String,
    pub job_idx: u32,
    /// Its score, once scored.
    pub verdict: Option<ScoreRecord>,
    /// Its tokens with their log-probabilities, when the run asked for them (`--logprobs`)
    /// and they spell the answer.
    pub logprobs: Option<Vec<crate::provider::TokenLogprob>>,
    /// What to say of its tokens: what was left out as they came, or that they do not spell
    /// the answer (then `logprobs` is none and the answer is drawn as stored).
    pub tokens_note: Option<String>,
    /// For an answer imported from another tool's log: that tool's verdict (`inspect:
    /// includes C`), shown beside prism's own.
    pub source_verdict: Option<String>,
}

impl Answer {
    fn queued(run_id: &str) -> Answer {
        Answer {
            text: String::new(),
            status: Status::Queued,
            latency_ms: None,
            first_token_ms: None,
            tokens: None,
            cached: false,
            error: None,
            attempts: 0,
            run_id: run_id.to_string(),
            job_idx: 0,
            verdict: None,
            logprobs: None,
            tokens_note: None,
            source_verdict: None,
        }
    }

    pub fn from_record(r: &ResponseRecord) -> Answer {
        let blob = r.logprobs.as_deref();
        let (logprobs, tokens_note) = crate::eval::whitebox::shown_tokens(
            blob.and_then(crate::store::logprobs::decode),
            blob.and_then(crate::store::logprobs::note),
            r.text.as_deref().unwrap_or(""),
        );
        Answer {
            text: r.text.clone().unwrap_or_default(),
            status: match &r.error {
                None => Status::Stored,
                Some(e) => Status::Failed(e.clone()),
            },
            latency_ms: r.latency_ms,
            first_token_ms: r.first_token_ms,
            tokens: r.completion_tokens,
            cached: r.cached,
            error: r.error.clone(),
            attempts: r.attempts,
            run_id: r.run_id.clone(),
            job_idx: r.job_idx,
            verdict: None,
            logprobs,
            tokens_note,
            source_verdict: None,
        }
    }
}

/// Key of an answer: item index, model name, sample.
pub type AnswerKey = (usize, String, u32);

/// The run started from the TUI (or the last one).
#[derive(Debug, Clone)]
pub struct ActiveRun {
    pub run_id: String,
    pub models: Vec<String>,
    pub jobs: Arc<Vec<Job>>,
    /// Distinct items of the run, in plan order.
    pub items: Vec<usize>,
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    /// Of the done jobs, those answered from the cache (no request).
    pub cached: usize,
    pub started: Instant,
    /// When the last job finished (the ETA counts down from it between answers).
    pub last_finished: Option<Instant>,
    pub finished: Option<Instant>,
    pub cancelled: bool,
    /// Done (or failed) jobs and all jobs, per task index.
    pub per_task: HashMap<usize, (usize, usize)>,
}

impl ActiveRun {
    pub fn running(&self) -> bool {
        self.finished.is_none()
    }

    /// Answers fetched per second so far (cache hits apart: they take no time, and a run of
    /// them would show a rate of hundreds of thousands a second).
    pub fn rate(&self) -> f64 {
        let secs = self
            .finished
            .unwrap_or_else(Instant::now)
            .duration_since(self.started)
            .as_secs_f64();
        if secs <= 0.0 {
            0.0
        } else {
            (self.done + self.failed - self.cached) as f64 / secs
        }
    }

    /// The time left: the jobs left at the pace of those finished so far (measured up to the
    /// last one that finished), counting down from then. (Measured up to now, the pace fell
    /// while a long answer streamed and the ETA grew from 12 s to 44 s between answers.)
    pub fn eta(&self) -> Option<Duration> {
        let left = self.total.saturating_sub(self.done + self.failed);
        let fetched = (self.done + self.failed).saturating_sub(self.cached);
        let last = self.last_finished?;
        if !self.running() || fetched == 0 {
            return None;
        }
        let per_job = last.duration_since(self.started).as_secs_f64() / fetched as f64;
        let since = Instant::now().duration_since(last).as_secs_f64();
        // A job slower than the pace so far: one second left rather than none (it is coming).
        Some(Duration::from_secs_f64(
            (per_job * left as f64 - since).max(1.0),
        ))
    }
}

/// A node's (or cell's) hallucination rate for one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NodeRate {
    /// Every answered item under it is scored: the mean task H (macro over tasks, as PRISM
    /// reports dimensions).
    Rate(f64),
    /// Some answers await a score (a judge): how many answered items are scored. No rate that
    /// could be mistaken for a final one.
    Partial { scored: usize, answered: usize },
}

/// An item's answers over every model and sample: the sum of scores, how many are scored, how
/// many await a score.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ItemTally {
    pub sum: f64,
    pub scored: usize,
    pub unscored: usize,
}

pub struct Session {
    ds: Arc<Dataset>,
    pub answers: HashMap<AnswerKey, Answer>,
    pub active: Option<ActiveRun>,
    /// Every finished answer's latest score: `Some(score)`, or `None` while unscored.
    pub points: HashMap<AnswerKey, Option<f64>>,
    /// The points, aggregated as `prism score` does (items averaged over samples first).
    agg: Aggregator,
    cat: Catalogue,
    /// Summaries of `agg`, rebuilt before a frame when points changed.
    summaries: HashMap<String, ModelSummary>,
    stale: bool,
    /// Bumped each time the summaries are rebuilt (screens built from them compare it).
    version: usize,
    pub items: HashMap<usize, ItemTally>,
    /// Models with any finished answer, in the order first seen (the tree's rate columns).
    pub scored_models: Vec<String>,
    /// On a shared store: the worker that answered each (run, job) the mirror pulled.
    pub answered_by: HashMap<(String, u32), String>,
}

impl Session {
    pub fn new(ds: Arc<Dataset>) -> Session {
        Session {
            cat: Catalogue::of(&ds),
            ds,
            answers: HashMap::new(),
            active: None,
            points: HashMap::new(),
            agg: Aggregator::default(),
            summaries: HashMap::new(),
            stale: false,
            version: 0,
            items: HashMap::new(),
            scored_models: Vec::new(),
            answered_by: HashMap::new(),
        }
    }

    fn task_of(&self, item: usize) -> usize {
        self.ds.items[item].task as usize
    }

    /// Applies one engine event.
    pub fn apply(&mut self, ev: Event) {
        match ev {
            Event::Started {
                run_id,
                models,
                jobs,
                already_done,
            } => self.start(run_id, models, jobs, already_done),
            Event::Sending { job, attempt } => {
                if let Some(a) = self.answer_mut(job) {
                    a.status = Status::Sending { attempt };
                    a.text.clear();
                }
            }
            Event::Delta { job, text } => {
                if let Some(a) = self.answer_mut(job) {
                    a.status = Status::Streaming;
                    a.text.push_str(&text);
                }
            }
            Event::Tokens { job, tokens } => {
                if let Some(a) = self.answer_mut(job) {
                    a.logprobs.get_or_insert_with(Vec::new).extend(tokens);
                }
            }
            Event::Retrying {
                job,
                attempt,
                max_attempts,
                reason,
                ..
            } => {
                if let Some(a) = self.answer_mut(job) {
                    a.status = Status::Retrying {
                        attempt,
                        max: max_attempts,
                        reason,
                    };
                    a.text.clear();
                    a.logprobs = None;
                }
            }
            Event::Done { job, response } | Event::Failed { job, response } => {
                self.finish_job(job, &response)
            }
            Event::Scored(r) => self.apply_score(r),
            // Shown by the app as a notice; nothing to keep here.
            Event::Life(
                crate::engine::harness::Lifecycle::StoreDown { .. }
                | crate::engine::harness::Lifecycle::StoreUp,
            )
            | Event::ScoringFailed { .. } => {}
            Event::Life(crate::engine::harness::Lifecycle::Finished(summary)) => {
                self.finish_run(summary.cancelled > 0)
            }
        }
    }

    /// A run started: every job queued, counted per task.
    fn start(
        &mut self,
        run_id: String,
        models: Vec<String>,
        jobs: Arc<Vec<Job>>,
        already_done: usize,
    ) {
        let ds = self.ds.clone();
        let task_of = |i: usize| ds.items[i].task as usize;
        let mut items = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut per_task: HashMap<usize, (usize, usize)> = HashMap::new();
        for j in jobs.iter() {
            if seen.insert(j.item) {
                items.push(j.item);
            }
            per_task.entry(task_of(j.item)).or_default().1 += 1;
            self.answers.insert(
                (j.item, models[j.model].clone(), j.sample),
                Answer::queued(&run_id),
            );
        }
        self.active = Some(ActiveRun {
            run_id,
            total: jobs.len() - already_done,
            models,
            jobs,
            items,
            done: 0,
            failed: 0,
            cached: 0,
            started: Instant::now(),
            last_finished: None,
            finished: None,
            cancelled: false,
            per_task,
        });
    }

    /// A job finished (answered or failed for good): its answer shown, the run's counts moved.
    fn finish_job(&mut self, job: u32, response: &ResponseRecord) {
        let ds = self.ds.clone();
        let task_of = |i: usize| ds.items[i].task as usize;
        let ok = response.is_ok();
        let item = self.job(job).map(|j| j.item);
        if let Some(a) = self.answer_mut(job) {
            let run_id = a.run_id.clone();
            *a = Answer::from_record(response);
            a.run_id = run_id;
            if ok {
                a.status = Status::Done;
            }
        }
        // Finished: it counts, unscored until its score arrives.
        if let Some(item) = item {
            self.set_point(item, &response.model, response.sample, None);
        }
        if let (Some(run), Some(item)) = (self.active.as_mut(), item) {
            run.last_finished = Some(Instant::now());
            if ok {
                run.done += 1;
                run.cached += usize::from(response.cached);
            } else {
                run.failed += 1;
            }
            if let Some(c) = run.per_task.get_mut(&task_of(item)) {
                c.0 += 1;
            }
        }
    }

    /// The run ended; when it was stopped, every answer still waiting says so.
    fn finish_run(&mut self, cancelled: bool) {
        if let Some(run) = self.active.as_mut() {
            run.finished = Some(Instant::now());
            run.cancelled = cancelled;
            if run.cancelled {
                let keys: Vec<AnswerKey> = run
                    .jobs
                    .iter()
                    .map(|j| (j.item, run.models[j.model].clone(), j.sample))
                    .collect();
                for k in keys {
                    if let Some(a) = self.answers.get_mut(&k)
                        && !a.status.is_final()
                    {
                        a.status = Status::Cancelled;
                    }
                }
            }
        }
    }

    /// Records a score (or that an answer awaits one): on its answer when shown, and in the
    /// rates.
    pub fn apply_score(&mut self, rec: ScoreRecord) {
        let Some(item) = self.ds.index_of(&rec.item_id) else {
            return;
        };
        self.set_point(item, &rec.model, rec.sample, rec.score);
        let key = (item, rec.model.clone(), rec.sample);
        if let Some(a) = self.answers.get_mut(&key)
            && a.run_id == rec.run_id
        {
            a.verdict = Some(rec);
        }
    }

    /// A score read from the store as the TUI opens. A score the session already holds came
    /// later (an answer scored since the TUI opened), so it stays; an answer still waiting
    /// takes the stored score until its own arrives.
    pub fn apply_stored_score(&mut self, rec: &crate::store::summaries::LatestScore) {
        let Some(item) = self.ds.index_of(&rec.item_id) else {
            return;
        };
        if self
            .points
            .get(&(item, rec.model.clone(), rec.sample))
            .is_some_and(Option::is_some)
        {
            return;
        }
        self.set_point(item, &rec.model, rec.sample, rec.score);
    }

    /// A finished answer's score state changes (a new answer counts unscored until scored).
    fn set_point(&mut self, item: usize, model: &str, sample: u32, score: Option<f64>) {
        let key = (item, model.to_string(), sample);
        let old = self.points.insert(key, score);
        if old == Some(score) {
            return;
        }
        let task = self.task_of(item);
        let p = Point {
            model,
            task: &self.ds.tasks[task].id,
            item: &self.ds.items[item].id,
            score: None,
        };
        self.agg.update(p, old, score);
        let t = self.items.entry(item).or_default();
        match old {
            Some(Some(s)) => {
                t.sum -= s;
                t.scored -= 1;
            }
            Some(None) => t.unscored -= 1,
            None => {}
        }
        match score {
            Some(s) => {
                t.sum += s;
                t.scored += 1;
            }
            None => t.unscored += 1,
        }
        if !self.scored_models.iter().any(|m| m == model) {
            self.scored_models.push(model.to_string());
        }
        self.stale = true;
    }

    /// Rebuilds the summaries if points changed since (once per frame at most: about a
    /// millisecond for 50 models x 9,448 items).
    pub fn refresh(&mut self) -> bool {
        if !self.stale {
            return false;
        }
        self.summaries = self
            .agg
            .summarize(&self.cat)
            .into_iter()
            .map(|s| (s.model.clone(), s))
            .collect();
        self.stale = false;
        self.version += 1;
        true
    }

    /// Which build of the summaries is current.
    pub fn version(&self) -> usize {
        self.version
    }

    /// The spread over repeats: per model and sub-task, (items whose scored samples disagree,
    /// items with 2 or more scored samples). A sample is right at score >= 0.5.
    pub fn sample_splits(
        &self,
    ) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, (usize, usize)>>
    {
        let mut by_item: HashMap<(usize, &str), (u32, u32)> = HashMap::new();
        for ((item, model, _), score) in &self.points {
            if let Some(s) = score {
                let e = by_item.entry((*item, model.as_str())).or_default();
                e.0 += u32::from(*s >= 0.5);
                e.1 += 1;
            }
        }
        let mut out: std::collections::BTreeMap<
            String,
            std::collections::BTreeMap<String, (usize, usize)>,
        > = Default::default();
        for ((item, model), (right, n)) in by_item {
            if n < 2 {
                continue;
            }
            let task = self.ds.task_of(&self.ds.items[item]).id.clone();
            let e = out
                .entry(model.to_string())
                .or_default()
                .entry(task)
                .or_default();
            e.0 += usize::from(right > 0 && right < n);
            e.1 += 1;
        }
        out
    }

    /// Every model's summary, as `prism score` computes it.
    pub fn summaries(&self) -> impl Iterator<Item = &ModelSummary> {
        self.scored_models
            .iter()
            .filter_map(|m| self.summaries.get(m))
    }

    /// The rate of `model` over tasks (by index): the tree's cells.
    pub fn node_rate(&self, tasks: &[usize], model: &str) -> Option<NodeRate> {
        let s = self.summaries.get(model)?;
        let (mut sum, mut n, mut scored, mut answered, mut pending) = (0.0, 0, 0, 0, false);
        for &t in tasks {
            if let Some(r) = s.tasks.get(&self.ds.tasks[t].id) {
                scored += r.scored;
                answered += r.scored + r.unscored;
                if r.complete() {
                    sum += 100.0 - r.s;
                    n += 1;
                } else {
                    pending = true;
                }
            }
        }
        if pending {
            Some(NodeRate::Partial { scored, answered })
        } else {
            (n > 0).then(|| NodeRate::Rate(sum / n as f64))
        }
    }

    /// The finished answers of `item` on screen, as something to score again.
    pub fn score_inputs(&self, item: usize) -> Vec<crate::engine::score::ToScore> {
        self.answers
            .iter()
            .filter(|((i, _, _), a)| {
                *i == item && a.status.is_final() && a.status != Status::Cancelled
            })
            .map(|((_, m, sample), a)| crate::engine::score::ToScore {
                run_id: a.run_id.clone(),
                job_idx: a.job_idx,
                item,
                model: m.clone(),
                sample: *sample,
                response: Some(match &a.status {
                    Status::Failed(e) => crate::engine::score::Answer::Failed(e.clone()),
                    _ => crate::engine::score::Answer::Text(a.text.clone()),
                }),
                // Scored again from what is stored, whoever stored it.
                stored_earlier: true,
            })
            .collect()
    }

    /// The item's answers over every model and sample.
    pub fn item_tally(&self, item: usize) -> ItemTally {
        self.items.get(&item).copied().unwrap_or_default()
    }

    fn job(&self, idx: u32) -> Option<&Job> {
        self.active.as_ref()?.jobs.get(idx as usize)
    }

    fn answer_mut(&mut self, job: u32) -> Option<&mut Answer> {
        let run = self.active.as_ref()?;
        let j = run.jobs.get(job as usize)?;
        let key = (j.item, run.models[j.model].clone(), j.sample);
        self.answers.get_mut(&key)
    }

    /// Loads stored answers for an item (re-opening it shows what earlier runs produced). Live
    /// answers of the active run are kept.
    pub fn load_stored(&mut self, item: usize, records: &[ResponseRecord]) {
        for r in records {
            let key = (item, r.model.clone(), r.sample);
            let live = self
                .answers
                .get(&key)
                .is_some_and(|a| !a.status.is_final() || a.status == Status::Done);
            if !live {
                self.answers.insert(key, Answer::from_record(r));
            }
        }
    }

    /// The models with an answer for `item` (sample 0 or any), the active run's first, in order.
    pub fn models_for(&self, item: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        if let Some(run) = &self.active
            && run.items.contains(&item)
        {
            out.extend(run.models.iter().cloned());
        }
        let mut others: Vec<String> = self
            .answers
            .keys()
            .filter(|(i, m, _)| *i == item && !out.contains(m))
            .map(|(_, m, _)| m.clone())
            .collect();
        others.sort();
        others.dedup();
        out.extend(others);
        out
    }

    /// The most samples any model has for `item`.
    pub fn samples_for(&self, item: usize) -> u32 {
        self.answers
            .keys()
            .filter(|(i, _, _)| *i == item)
            .map(|(_, _, s)| s + 1)
            .max()
            .unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(total: usize, done: usize, started_ago: u64, last_ago: u64) -> ActiveRun {
        let now = Instant::now();
        ActiveRun {
            run_id: "r".into(),
            models: Vec::new(),
            jobs: Arc::new(Vec::new()),
            items: Vec::new(),
            total,
            done,
            failed: 0,
            cached: 0,
            started: now - Duration::from_secs(started_ago),
            last_finished: Some(now - Duration::from_secs(last_ago)),
            finished: None,
            cancelled: false,
            per_task: HashMap::new(),
        }
    }

    #[test]
    fn the_eta_counts_down_while_an_answer_streams() {
        // One of four done after 12 s: 36 s left.
        let at_done = run(4, 1, 12, 0).eta().unwrap().as_secs_f64();
        assert!((at_done - 36.0).abs() < 0.5, "{at_done}");
        // 20 s later, nothing more done: the ETA went down, never up.
        let later = run(4, 1, 32, 20).eta().unwrap().as_secs_f64();
        assert!((later - 16.0).abs() < 0.5, "{later}");
        // Slower than the pace so far: a second, not zero or less.
        let slow = run(4, 1, 62, 50).eta().unwrap().as_secs_f64();
        assert_eq!(slow, 1.0);
        // Nothing finished yet: no ETA to give.
        let mut none = run(4, 0, 5, 0);
        none.last_finished = None;
        assert_eq!(none.eta(), None);
    }
}
