//! What the TUI knows about runs: the answers on screen (live or from the store), the progress of
//! the active run, and per-task counters for the tree. Fed only by engine events and store reads.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::{Event, Job};
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
        }
    }

    pub fn from_record(r: &ResponseRecord) -> Answer {
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
    pub started: Instant,
    pub finished: Option<Instant>,
    pub cancelled: bool,
    /// Done (or failed) jobs and all jobs, per task index.
    pub per_task: HashMap<usize, (usize, usize)>,
}

impl ActiveRun {
    pub fn running(&self) -> bool {
        self.finished.is_none()
    }

    /// Jobs finished per second so far.
    pub fn rate(&self) -> f64 {
        let secs = self
            .finished
            .unwrap_or_else(Instant::now)
            .duration_since(self.started)
            .as_secs_f64();
        if secs <= 0.0 {
            0.0
        } else {
            (self.done + self.failed) as f64 / secs
        }
    }

    pub fn eta(&self) -> Option<Duration> {
        let left = self.total.saturating_sub(self.done + self.failed);
        let r = self.rate();
        (r > 0.0 && self.running()).then(|| Duration::from_secs_f64(left as f64 / r))
    }
}

#[derive(Debug, Default)]
pub struct Runs {
    pub answers: HashMap<AnswerKey, Answer>,
    pub active: Option<ActiveRun>,
    /// Scores known for answers (loaded from the store or just computed), by answer.
    pub scores: HashMap<AnswerKey, f64>,
    /// (task index, model) → (sum of scores, count): the tree's and heatmap's rates, kept up
    /// to date as scores arrive.
    pub task_scores: HashMap<(usize, String), (f64, usize)>,
    /// Item index → (sum of scores, count) over every model and sample: the item's own rate.
    pub item_scores: HashMap<usize, (f64, usize)>,
    /// Models with any score, in the order first seen (the tree's rate columns).
    pub scored_models: Vec<String>,
}

impl Runs {
    /// Applies one engine event. `task_of` maps an item index to its task index.
    pub fn apply(&mut self, ev: Event, task_of: impl Fn(usize) -> usize) {
        match ev {
            Event::Started {
                run_id,
                models,
                jobs,
                already_done,
            } => {
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
                    started: Instant::now(),
                    finished: None,
                    cancelled: false,
                    per_task,
                });
            }
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
                }
            }
            Event::Done { job, response } | Event::Failed { job, response } => {
                let ok = response.is_ok();
                let item = self.job(job).map(|j| j.item);
                if let Some(a) = self.answer_mut(job) {
                    let run_id = a.run_id.clone();
                    *a = Answer::from_record(&response);
                    a.run_id = run_id;
                    if ok {
                        a.status = Status::Done;
                    }
                }
                if let (Some(run), Some(item)) = (self.active.as_mut(), item) {
                    if ok {
                        run.done += 1;
                    } else {
                        run.failed += 1;
                    }
                    if let Some(c) = run.per_task.get_mut(&task_of(item)) {
                        c.0 += 1;
                    }
                }
            }
            Event::Finished(summary) => {
                if let Some(run) = self.active.as_mut() {
                    run.finished = Some(Instant::now());
                    run.cancelled = summary.cancelled > 0;
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
        }
    }

    /// Records a score: on its answer (when shown) and in the tree's rates.
    pub fn apply_score(&mut self, item: usize, task: usize, rec: ScoreRecord) {
        let key = (item, rec.model.clone(), rec.sample);
        if let Some(score) = rec.score {
            let old = self.scores.insert(key.clone(), score);
            // A re-score replaces the answer's earlier score in the running sums.
            let add = |e: &mut (f64, usize)| match old {
                Some(o) => e.0 += score - o,
                None => {
                    e.0 += score;
                    e.1 += 1;
                }
            };
            add(self
                .task_scores
                .entry((task, rec.model.clone()))
                .or_insert((0.0, 0)));
            add(self.item_scores.entry(item).or_insert((0.0, 0)));
            if !self.scored_models.contains(&rec.model) {
                self.scored_models.push(rec.model.clone());
            }
        }
        if let Some(a) = self.answers.get_mut(&key)
            && a.run_id == rec.run_id
        {
            a.verdict = Some(rec);
        }
    }

    /// The hallucination rate of `model` over `tasks`: the mean task H (macro over tasks, as
    /// PRISM reports dimensions), over the tasks with scores; with how many tasks that is.
    pub fn rate(&self, tasks: &[usize], model: &str) -> Option<(f64, usize)> {
        let mut sum = 0.0;
        let mut n = 0;
        for &t in tasks {
            if let Some((s, c)) = self.task_scores.get(&(t, model.to_string()))
                && *c > 0
            {
                sum += 100.0 - 100.0 * s / *c as f64;
                n += 1;
            }
        }
        (n > 0).then(|| (sum / n as f64, n))
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
