//! The detection engine: for each answer under test, (claims: its reference and the model's
//! classification of the claim from it, then) K sampled answers and K pair checks. Every call goes
//! through a [`Caller`] (the model's limits, retries, cache), every result is committed before it
//! is announced, and what is already stored is never asked again: a run resumes where it stopped.
//! Typed [`DetectEvent`]s go to the front-end; nothing here knows about the terminal.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::mpsc;

use super::parse::{is_refusal, read_pair_to, read_truth_to};
use super::prompts;
use crate::engine::{Caller, Delta, Lane, harness, judge};
use crate::provider::{ChatRequest, Message, ModelConfig, Params};
use crate::store::{
    Class, DetectConfig, DetectKind, DetectRun, DetectWrite, PairRecord, SampleRecord, StoreHandle,
    Target, Verdict, now_secs,
};

/// One call of the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// The answer under test (a claim's reference), when it was not stored already.
    Answer,
    /// A claim's classification from the model's own reference.
    Classify,
    Sample {
        round: u32,
        k: u32,
    },
    Pair {
        round: u32,
        k: u32,
        /// Which wording of the pair check (0: the run's first).
        wording: u32,
    },
}

/// What a front-end hears.
#[derive(Debug, Clone)]
pub enum DetectEvent {
    /// The run is recorded: its targets, and how many calls are left to make.
    Started {
        run_id: String,
        targets: Arc<Vec<Target>>,
        calls: usize,
    },
    /// A call was sent (again, after a failure, when `attempt` > 1).
    Sending {
        target: u32,
        step: Step,
        attempt: u32,
        reason: Option<String>,
    },
    /// More text of a streaming call (the answer and the samples).
    Delta {
        target: u32,
        step: Step,
        text: String,
    },
    /// The answer under test arrived (or failed for good); `refused`: set aside as a refusal.
    Answer {
        target: u32,
        answer: Result<String, String>,
        refused: bool,
    },
    Classified {
        target: u32,
        class: Result<Class, String>,
        reply: Option<String>,
    },
    Sample(Arc<SampleRecord>),
    Pair(Arc<PairRecord>),
    /// Saving held or working again, the run ended: as every lane tells them.
    Life(harness::Lifecycle),
}

/// What a detection's calls came to (the harness's counts, as every lane reports them).
pub type DetectSummary = harness::Counts;

/// How to run.
#[derive(Clone)]
pub struct DetectOptions {
    /// The most calls in flight across all models.
    pub concurrency: usize,
    pub use_cache: bool,
    /// Send [`DetectEvent::Delta`]s (the TUI streams samples; the CLI does not need them).
    pub stream_deltas: bool,
}

impl Default for DetectOptions {
    fn default() -> Self {
        DetectOptions {
            concurrency: 16,
            use_cache: true,
            stream_deltas: false,
        }
    }
}

pub use super::stored::Stored;

impl Stored {
    /// Applies what an event says was stored (front-ends keep their copy current this way).
    pub fn apply(&mut self, ev: &DetectEvent) {
        match ev {
            DetectEvent::Answer {
                target,
                answer,
                refused,
            } => {
                if let Some(t) = self.targets.iter_mut().find(|t| t.idx == *target) {
                    match answer {
                        Ok(a) => {
                            t.answer = Some(a.clone());
                            t.answer_error = None;
                        }
                        Err(e) => t.answer_error = Some(e.clone()),
                    }
                    t.refused = *refused;
                }
            }
            DetectEvent::Classified {
                target,
                class,
                reply,
            } => {
                if let Some(t) = self.targets.iter_mut().find(|t| t.idx == *target) {
                    match class {
                        Ok(c) => {
                            t.class = Some(*c);
                            t.class_error = None;
                        }
                        Err(e) => t.class_error = Some(e.clone()),
                    }
                    t.class_reply = reply.clone();
                }
            }
            DetectEvent::Sample(s) => {
                let key = (s.target, s.round, s.k);
                self.samples.retain(|x| (x.target, x.round, x.k) != key);
                self.samples.push((**s).clone());
            }
            DetectEvent::Pair(p) => {
                let key = (p.target, p.round, p.k, p.wording);
                self.pairs
                    .retain(|x| (x.target, x.round, x.k, x.wording) != key);
                self.pairs.push((**p).clone());
            }
            _ => {}
        }
    }
}

/// A detection run's work: the run, what is stored of it, the targets to work on (`None`:
/// every one; the TUI's "sample again" names one), and the models that answer and judge.
pub struct Work {
    pub run: DetectRun,
    pub stored: Stored,
    pub only: Option<Vec<u32>>,
    pub models: Vec<ModelConfig>,
    /// The judge of the pairs (`None`: each model judges its own).
    pub judge: Option<ModelConfig>,
}

/// Records a new detection run (its targets are `work.stored`'s) and runs it.
pub async fn start(
    lane: Lane<DetectEvent>,
    work: Work,
    opts: DetectOptions,
) -> Result<DetectSummary, harness::RunError> {
    // Backends first: a missing key fails before anything is recorded.
    let callers = Callers::new(&work, &lane, &opts).map_err(harness::RunError::config)?;
    lane.store
        .detect(DetectWrite::CreateRun(
            Box::new(work.run.clone()),
            work.stored.targets.clone(),
        ))
        .await
        .map_err(|e| harness::RunError::store("recording the detection run", e))?;
    execute(lane, work, callers, opts).await
}

/// Finishes a stored run: only what is missing (or failed) is asked.
pub async fn resume(
    lane: Lane<DetectEvent>,
    work: Work,
    opts: DetectOptions,
) -> Result<DetectSummary, harness::RunError> {
    let callers = Callers::new(&work, &lane, &opts).map_err(harness::RunError::config)?;
    execute(lane, work, callers, opts).await
}

/// The callers of a run: one per model, and the judge's (or none: each model judges itself).
struct Callers {
    models: HashMap<String, Arc<Caller>>,
    judge: Option<Arc<Caller>>,
}

impl Callers {
    fn new(work: &Work, lane: &Lane<DetectEvent>, opts: &DetectOptions) -> anyhow::Result<Callers> {
        let make = |m: &ModelConfig| -> anyhow::Result<Arc<Caller>> {
            Ok(Arc::new(Caller::new(
                m,
                &lane.factory,
                Some(lane.store.clone()),
                opts.use_cache,
                lane.cancel.clone(),
            )?))
        };
        let mut out = HashMap::new();
        for m in &work.models {
            out.insert(m.name.clone(), make(m)?);
        }
        // A judge that is one of the models shares its caller (one endpoint, one limit).
        let judge = match &work.judge {
            Some(j) => Some(match out.get(&j.name) {
                Some(c) => c.clone(),
                None => make(j)?,
            }),
            None => None,
        };
        Ok(Callers { models: out, judge })
    }
}

struct Shared {
    run: DetectRun,
    callers: Callers,
    store: StoreHandle,
    events: mpsc::UnboundedSender<DetectEvent>,
    opts: DetectOptions,
    /// The run's lifecycle: cancel, call slots, counts, holding results (engine::harness).
    life: Arc<harness::Life>,
}

/// The work left on one target.
#[derive(Debug, Clone)]
struct Todo {
    target: Target,
    /// Samples already stored with text, by (round, k).
    samples: HashMap<(u32, u32), String>,
    /// Pairs with a final verdict (not failed), by (round, k, wording).
    pairs: std::collections::HashSet<(u32, u32, u32)>,
}

impl Todo {
    /// Calls still to make, counted before the run (a classification or answer that fails stops
    /// what depends on it, so this is an upper bound).
    fn calls(&self, k: u32, wordings: u32, detect: bool) -> usize {
        let t = &self.target;
        let mut n = 0;
        if t.answer.is_none() {
            n += 1;
        }
        if t.label.is_some() && !t.refused && t.class.is_none() {
            n += 1;
        }
        if detect && !t.refused {
            for round in 0..t.rounds.max(1) {
                for kk in 0..k {
                    if !self.samples.contains_key(&(round, kk)) {
                        n += 1;
                    }
                    n += (0..wordings)
                        .filter(|w| !self.pairs.contains(&(round, kk, *w)))
                        .count();
                }
            }
        }
        n
    }
}

async fn execute(
    lane: Lane<DetectEvent>,
    work: Work,
    callers: Callers,
    opts: DetectOptions,
) -> Result<DetectSummary, harness::RunError> {
    let Work {
        run, stored, only, ..
    } = work;
    let Lane {
        store,
        events,
        cancel,
        ..
    } = lane;
    let k = run.config.k.max(1);
    let todos = plan(&stored, only.as_deref());
    let targets = Arc::new(stored.targets.clone());
    let balanced_only = run.kind == DetectKind::Claims && run.config.balanced_only;
    let wordings = run.config.templates.pair_wordings();
    let calls: usize = todos
        .iter()
        .map(|t| t.calls(k, wordings, !balanced_only))
        .sum();
    let run_id = run.id.clone();
    let spec = harness::Spec::new(&run_id, calls, opts.concurrency);
    let (ev, st) = (events.clone(), store.clone());
    let tell = harness::tell_into(events, DetectEvent::Life);
    harness::run::<DetectWrite, _, _>(&store, &cancel, spec, tell, |life| async move {
        let sh = Arc::new(Shared {
            callers,
            store: st,
            events: ev.clone(),
            life,
            opts,
            run,
        });
        let _ = ev.send(DetectEvent::Started {
            run_id: sh.run.id.clone(),
            targets,
            calls,
        });
        work_on(&sh, todos, k, balanced_only).await;
    })
    .await
}

/// The detection itself: references and classifications, then K samples and their pairs.
async fn work_on(sh: &Arc<Shared>, todos: Vec<Todo>, k: u32, balanced_only: bool) {
    // Targets in flight: enough to keep every call slot busy with K samples each.
    let width = (sh.opts.concurrency / k as usize).max(1) + 1;
    let todos = if balanced_only {
        // AutoHall's order: every reference and classification first, then detection on the
        // balanced set only (which needs every classification to draw).
        let collected: Vec<Todo> = futures::stream::iter(todos)
            .map(|t| {
                let sh = sh.clone();
                async move { collect(&sh, t).await }
            })
            .buffer_unordered(width)
            .filter_map(|t| async move { t })
            .collect()
            .await;
        let chosen = super::results::balanced_targets(
            &collected
                .iter()
                .map(|t| t.target.clone())
                .collect::<Vec<_>>(),
            sh.run.config.seed,
        );
        collected
            .into_iter()
            .filter(|t| chosen.contains(&t.target.idx))
            .collect()
    } else {
        todos
    };
    futures::stream::iter(todos)
        .map(|t| {
            let sh = sh.clone();
            async move {
                if balanced_only {
                    // Collected above: only the balanced set's detection is left.
                    detect(&sh, t).await;
                    return;
                }
                // The classification needs only the answer, and the samples only the question:
                // once the answer is in (and is no refusal), both go at once.
                let Some(t) = answer(&sh, t).await else {
                    return;
                };
                let target = t.target.clone();
                futures::join!(classify(&sh, target), detect(&sh, t));
            }
        })
        .buffer_unordered(width)
        .collect::<Vec<()>>()
        .await;
}

/// What is left to do on each target, from what is stored.
fn plan(stored: &Stored, only: Option<&[u32]>) -> Vec<Todo> {
    let mut todos: HashMap<u32, Todo> = stored
        .targets
        .iter()
        .filter(|t| only.is_none_or(|o| o.contains(&t.idx)))
        .map(|t| {
            (
                t.idx,
                Todo {
                    target: t.clone(),
                    samples: HashMap::new(),
                    pairs: Default::default(),
                },
            )
        })
        .collect();
    for s in &stored.samples {
        if let (Some(t), Some(text)) = (todos.get_mut(&s.target), &s.text) {
            t.samples.insert((s.round, s.k), text.clone());
        }
    }
    for p in &stored.pairs {
        if let Some(t) = todos.get_mut(&p.target)
            && p.verdict != Verdict::Failed
        {
            t.pairs.insert((p.round, p.k, p.wording));
        }
    }
    let mut out: Vec<Todo> = todos.into_values().collect();
    out.sort_by_key(|t| t.target.idx);
    out
}

/// Saves a write, holding it and retrying while the store cannot save (a full disk): a result
/// is never thrown away. `false` when the run was cancelled first.
async fn persist(sh: &Shared, w: DetectWrite) -> bool {
    sh.life.save(|| sh.store.detect(w.clone())).await
}

fn count(sh: &Shared, ok: bool, cached: bool) {
    sh.life.count(ok, cached);
}

/// Waits for a call slot (and for a store that can save again); `None` when cancelled.
async fn slot(sh: &Shared) -> Option<tokio::sync::SemaphorePermit<'_>> {
    sh.life.slot().await
}

fn params_of(t: &Target) -> Params {
    serde_json::from_str(&t.params).unwrap_or_default()
}

/// The request for the answer under test: a claim's reference in AutoHall's wording, or the
/// item's prompt exactly as a run asks it.
fn answer_request(kind: DetectKind, t: &Target, cfg: &DetectConfig) -> ChatRequest {
    let params = params_of(t).overlay(&cfg.params);
    match kind {
        DetectKind::Claims => {
            let (mut r, _) = prompts::reference_request_with(&cfg.templates, 0, false, &t.question);
            r.params = params;
            r
        }
        DetectKind::Answers => {
            let text = if t.prompt.trim().is_empty() {
                t.question.clone()
            } else {
                format!("{}\n\n{}", t.prompt.trim_end(), t.question)
            };
            ChatRequest {
                messages: vec![Message::user(text)],
                params,
            }
        }
    }
}

/// The request of sample `k`, and the variant of the wording it uses.
fn sample_request(kind: DetectKind, t: &Target, k: u32, cfg: &DetectConfig) -> (ChatRequest, u32) {
    let params = params_of(t).overlay(&cfg.params);
    match kind {
        DetectKind::Claims => {
            let (mut r, v) = prompts::reference_request_with(&cfg.templates, k, true, &t.question);
            r.params = params;
            (r, v)
        }
        DetectKind::Answers => (
            ChatRequest {
                messages: vec![Message::user(prompts::item_variant(
                    k,
                    &t.prompt,
                    &t.question,
                ))],
                params,
            },
            prompts::item_variant_index(k),
        ),
    }
}

/// The cache variant of sample `k` of `round`: every sample is its own request, and a new round
/// never gets an earlier round's replies from the cache.
pub fn sample_cache_variant(round: u32, k: u32) -> u32 {
    1 + round * 1000 + k
}

/// What the pair check shows the judge as the question.
pub(crate) fn pair_question(kind: DetectKind, t: &Target) -> String {
    match kind {
        DetectKind::Claims => format!("Give a reference for the claim: {}", t.question),
        DetectKind::Answers => t.question.clone(),
    }
}

/// A streaming call for the answer or a sample, telling the front-end as it goes.
async fn call(
    sh: &Shared,
    caller: &Caller,
    target: u32,
    step: Step,
    req: &ChatRequest,
    variant: u32,
) -> Result<crate::engine::Reply, String> {
    let Some(_slot) = slot(sh).await else {
        return Err("cancelled".into());
    };
    let _ = sh.events.send(DetectEvent::Sending {
        target,
        step,
        attempt: 1,
        reason: None,
    });
    let deltas = sh.opts.stream_deltas;
    caller
        .complete_streaming(req, variant, |d| match d {
            Delta::Text(text) if deltas && !text.is_empty() => {
                let _ = sh.events.send(DetectEvent::Delta {
                    target,
                    step,
                    text: text.to_string(),
                });
            }
            Delta::Text(_) => {}
            Delta::Retry { attempt, reason } => {
                let _ = sh.events.send(DetectEvent::Sending {
                    target,
                    step,
                    attempt,
                    reason: Some(reason.to_string()),
                });
            }
        })
        .await
}

/// Steps 1-2: the answer under test (when not stored) and, for claims, the classification.
/// `None` when detection cannot go on for this target (no answer, a refusal, cancelled).
async fn collect(sh: &Shared, todo: Todo) -> Option<Todo> {
    let mut todo = answer(sh, todo).await?;
    todo.target = classify(sh, todo.target).await?;
    Some(todo)
}

/// Step 1: the answer under test, when it is not stored. `None` when detection cannot go on
/// for this target (no answer, a refusal, cancelled).
async fn answer(sh: &Shared, mut todo: Todo) -> Option<Todo> {
    let kind = sh.run.kind;
    let t = &mut todo.target;
    let caller = sh.callers.models.get(&t.model)?.clone();
    if t.answer.is_none() {
        let req = answer_request(kind, t, &sh.run.config);
        let got = call(sh, &caller, t.idx, Step::Answer, &req, 0).await;
        if sh.life.is_cancelled() {
            return None;
        }
        let cached = got.as_ref().is_ok_and(|r| r.cached);
        let answer = got.map(|r| r.text);
        let refused = kind == DetectKind::Claims && answer.as_ref().is_ok_and(|a| is_refusal(a));
        if !persist(
            sh,
            DetectWrite::Answer {
                run: sh.run.id.clone(),
                target: t.idx,
                answer: answer.clone(),
                refused,
            },
        )
        .await
        {
            return None;
        }
        count(sh, answer.is_ok(), cached);
        let _ = sh.events.send(DetectEvent::Answer {
            target: t.idx,
            answer: answer.clone(),
            refused,
        });
        t.refused = refused;
        match answer {
            Ok(a) => t.answer = Some(a),
            Err(_) => return None,
        }
    }
    if t.refused {
        return None;
    }
    Some(todo)
}

/// Step 2, for claims: the model's own classification of the claim from its answer (once it
/// has one). `None` when cancelled.
async fn classify(sh: &Shared, mut t: Target) -> Option<Target> {
    if t.label.is_some() && t.class.is_none() {
        let caller = sh.callers.models.get(&t.model)?.clone();
        let answer = t.answer.clone().unwrap_or_default();
        let _slot = slot(sh).await?;
        let _ = sh.events.send(DetectEvent::Sending {
            target: t.idx,
            step: Step::Classify,
            attempt: 1,
            reason: None,
        });
        let req = prompts::classification_with(&sh.run.config.templates, &t.question, &answer);
        let asked = judge::ask(&caller, &req, attempts(sh), |r| {
            read_truth_to(r, prompts::text_of(&req))
        })
        .await;
        drop(_slot);
        if sh.life.is_cancelled() {
            return None;
        }
        let class = match asked.outcome {
            Ok(Some(truth)) => Ok(match truth {
                crate::dataset::claims::Truth::True => Class::True,
                crate::dataset::claims::Truth::False => Class::False,
            }),
            Ok(None) => Ok(Class::Unparsed),
            Err(e) => Err(e),
        };
        if !persist(
            sh,
            DetectWrite::Class {
                run: sh.run.id.clone(),
                target: t.idx,
                class: class.clone(),
                reply: asked.reply.clone(),
            },
        )
        .await
        {
            return None;
        }
        count(sh, class.is_ok(), asked.cached);
        let _ = sh.events.send(DetectEvent::Classified {
            target: t.idx,
            class: class.clone(),
            reply: asked.reply,
        });
        // Without a classification (the model unreachable) the target cannot be placed as
        // factual or not; its detection still runs (the flag is worth seeing), and resume asks
        // again.
        if let Ok(c) = class {
            t.class = Some(c);
        }
    }
    Some(t)
}

fn attempts(sh: &Shared) -> u32 {
    match sh.run.config.judge_attempts {
        0 => 3,
        n => n,
    }
}

/// Steps 3-4: each missing sample, then its pair check, the K chains of a round side by side.
async fn detect(sh: &Shared, todo: Todo) {
    let t = &todo.target;
    let Some(answer) = t.answer.clone() else {
        return;
    };
    let Some(caller) = sh.callers.models.get(&t.model).cloned() else {
        return;
    };
    let judge = sh.callers.judge.clone().unwrap_or_else(|| caller.clone());
    let judge_name = judge.cfg.name.clone();
    let k_max = sh.run.config.k.max(1);
    let wordings = sh.run.config.templates.pair_wordings();
    let chains = (0..t.rounds.max(1))
        .flat_map(|round| (0..k_max).map(move |k| (round, k)))
        .map(|(round, k)| {
            let left: Vec<u32> = (0..wordings)
                .filter(|w| !todo.pairs.contains(&(round, k, *w)))
                .collect();
            (round, k, left)
        })
        .filter(|(_, _, left)| !left.is_empty())
        .map(|(round, k, left)| {
            let (caller, judge, judge_name, answer) = (
                caller.clone(),
                judge.clone(),
                judge_name.clone(),
                answer.clone(),
            );
            let have = todo.samples.get(&(round, k)).cloned();
            async move {
                let sample = match have {
                    Some(s) => s,
                    None => match take_sample(sh, &caller, t, round, k).await {
                        Some(s) => s,
                        None => return,
                    },
                };
                // The wordings of one pair one after another: the sample's chain holds one
                // call slot's worth of work at a time, as with a single wording.
                for wording in left {
                    let at = At { round, k, wording };
                    check_pair(sh, &judge, &judge_name, t, &answer, &sample, at).await;
                }
            }
        });
    futures::future::join_all(chains).await;
}

async fn take_sample(
    sh: &Shared,
    caller: &Caller,
    t: &Target,
    round: u32,
    k: u32,
) -> Option<String> {
    let (mut req, variant) = sample_request(sh.run.kind, t, k, &sh.run.config);
    // The embedded model samples with a fixed seed unless told otherwise: each sample gets its
    // own, or two samples of one wording (and every round of "sample again") would be one text.
    if req.params.seed.is_none() && caller.cfg.provider == crate::provider::ProviderKind::Local {
        req.params.seed = Some(u64::from(sample_cache_variant(round, k)));
    }
    let step = Step::Sample { round, k };
    let got = call(
        sh,
        caller,
        t.idx,
        step,
        &req,
        sample_cache_variant(round, k),
    )
    .await;
    if sh.life.is_cancelled() {
        return None;
    }
    let record = SampleRecord {
        run_id: sh.run.id.clone(),
        target: t.idx,
        round,
        k,
        variant,
        text: got.as_ref().ok().map(|r| r.text.clone()),
        error: got.as_ref().err().cloned(),
        attempts: got.as_ref().map(|r| r.attempts).unwrap_or(0),
        cached: got.as_ref().is_ok_and(|r| r.cached),
        created_at: now_secs(),
    };
    if !persist(sh, DetectWrite::Sample(record.clone())).await {
        return None;
    }
    count(sh, got.is_ok(), record.cached);
    let _ = sh.events.send(DetectEvent::Sample(Arc::new(record)));
    got.ok().map(|r| r.text)
}

/// Which pair check: sample `k` of `round`, in wording `wording`.
#[derive(Clone, Copy)]
struct At {
    round: u32,
    k: u32,
    wording: u32,
}

async fn check_pair(
    sh: &Shared,
    judge: &Caller,
    judge_name: &str,
    t: &Target,
    answer: &str,
    sample: &str,
    At { round, k, wording }: At,
) {
    let Some(_slot) = slot(sh).await else {
        return;
    };
    let _ = sh.events.send(DetectEvent::Sending {
        target: t.idx,
        step: Step::Pair { round, k, wording },
        attempt: 1,
        reason: None,
    });
    let req = prompts::pair_check_with(
        &sh.run.config.templates,
        wording,
        &pair_question(sh.run.kind, t),
        answer,
        sample,
    );
    let asked = judge::ask(judge, &req, attempts(sh), |r| {
        read_pair_to(r, prompts::text_of(&req))
    })
    .await;
    drop(_slot);
    if sh.life.is_cancelled() {
        return;
    }
    let (verdict, reading, error) = match asked.outcome {
        Ok(Some(r)) => (
            if r.conflict {
                Verdict::Conflict
            } else {
                Verdict::Consistent
            },
            Some(r),
            None,
        ),
        Ok(None) => (Verdict::Unparsed, None, None),
        Err(e) => (Verdict::Failed, None, Some(e)),
    };
    let record = PairRecord {
        run_id: sh.run.id.clone(),
        target: t.idx,
        round,
        k,
        wording,
        judge: judge_name.to_string(),
        verdict,
        explanation: reading.as_ref().map(|r| r.explanation.clone()),
        quote_a: reading.as_ref().and_then(|r| r.quote_a.clone()),
        quote_b: reading.as_ref().and_then(|r| r.quote_b.clone()),
        reply: asked.reply,
        error,
        attempts: asked.attempts,
        created_at: now_secs(),
    };
    if !persist(sh, DetectWrite::Pair(record.clone())).await {
        return;
    }
    count(sh, verdict != Verdict::Failed, asked.cached);
    let _ = sh.events.send(DetectEvent::Pair(Arc::new(record)));
}
