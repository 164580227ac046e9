//! The self-detection engine: per triple and generator, a true sentence (few-shot, retried until
//! it carries the object phrase, else set aside), a false one (the object replaced, the rest
//! kept, checked the same way), then each detector's verdict on both, directly and with
//! chain-of-thought. Every call goes through a [`Caller`] (limits, retries, cache); every result
//! is committed before it is announced; a resumed run asks only what is missing.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::mpsc;

use super::parse::{check_false, check_true, clean_sentence, read_cot, read_direct, swap_phrase};
use super::prompts;
use super::results::Stored;
use crate::engine::harness::Counts as Summary;
use crate::engine::{Caller, Lane, harness};
use crate::provider::{ModelConfig, Params};
use crate::store::{
    Answer, Mode, RunStatus, SelfcheckItem, SelfcheckRun, SelfcheckWrite, Sentence, StoreHandle,
    VerdictRecord, now_secs,
};

/// One call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    Write {
        sentence: Sentence,
        attempt: u32,
    },
    Judge {
        sentence: Sentence,
        detector: String,
        mode: Mode,
    },
}

#[derive(Debug, Clone)]
pub enum SelfcheckEvent {
    Started {
        run_id: String,
        items: Arc<Vec<SelfcheckItem>>,
        calls: usize,
    },
    Sending {
        item: u32,
        step: Step,
    },
    /// An item's sentences as they now stand (after a sentence or a set-aside).
    Item(Arc<SelfcheckItem>),
    Verdict(Arc<VerdictRecord>),
    /// Saving held or working again, the run ended: as every lane tells them.
    Life(harness::Lifecycle),
}

impl Stored {
    /// Applies what an event says was stored.
    pub fn apply(&mut self, ev: &SelfcheckEvent) {
        match ev {
            SelfcheckEvent::Item(it) => {
                if let Some(x) = self.items.iter_mut().find(|x| x.idx == it.idx) {
                    *x = (**it).clone();
                }
            }
            SelfcheckEvent::Verdict(v) => {
                let key = (v.item, v.sentence, v.detector.clone(), v.mode);
                self.verdicts
                    .retain(|x| (x.item, x.sentence, x.detector.clone(), x.mode) != key);
                self.verdicts.push((**v).clone());
            }
            _ => {}
        }
    }
}

pub struct Options {
    pub concurrency: usize,
    pub use_cache: bool,
}

struct Shared {
    run: SelfcheckRun,
    callers: HashMap<String, Arc<Caller>>,
    store: StoreHandle,
    events: mpsc::UnboundedSender<SelfcheckEvent>,
    /// The run's lifecycle: cancel, call slots, counts, holding results (engine::harness).
    life: Arc<harness::Life>,
}

/// Records a new run and runs it. `models`: every generator and detector.
pub async fn start(
    lane: Lane<SelfcheckEvent>,
    run: SelfcheckRun,
    items: Vec<SelfcheckItem>,
    models: Vec<ModelConfig>,
    opts: Options,
) -> Result<Summary, harness::RunError> {
    let callers = callers(&models, &lane, &opts).map_err(harness::RunError::config)?;
    lane.store
        .selfcheck(SelfcheckWrite::CreateRun(
            Box::new(run.clone()),
            items.clone(),
        ))
        .await
        .map_err(|e| harness::RunError::store("recording the self-detection run", e))?;
    let stored = Stored {
        items,
        verdicts: Vec::new(),
    };
    execute(lane, run, stored, callers, opts).await
}

/// Finishes a stored run: only what is missing (or failed) is asked.
pub async fn resume(
    lane: Lane<SelfcheckEvent>,
    run: SelfcheckRun,
    stored: Stored,
    models: Vec<ModelConfig>,
    opts: Options,
) -> Result<Summary, harness::RunError> {
    let callers = callers(&models, &lane, &opts).map_err(harness::RunError::config)?;
    execute(lane, run, stored, callers, opts).await
}

fn callers(
    models: &[ModelConfig],
    lane: &Lane<SelfcheckEvent>,
    opts: &Options,
) -> anyhow::Result<HashMap<String, Arc<Caller>>> {
    models
        .iter()
        .map(|m| {
            Ok((
                m.name.clone(),
                Arc::new(Caller::new(
                    m,
                    &lane.factory,
                    Some(lane.store.clone()),
                    opts.use_cache,
                    lane.cancel.clone(),
                )?),
            ))
        })
        .collect()
}

fn detectors(run: &SelfcheckRun, it: &SelfcheckItem) -> Vec<String> {
    super::results::detectors_of(run, it)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The judgements an item still needs.
fn missing_verdicts(
    run: &SelfcheckRun,
    it: &SelfcheckItem,
    have: &std::collections::HashSet<(u32, Sentence, String, Mode)>,
) -> Vec<(Sentence, String, Mode)> {
    let mut out = Vec::new();
    for d in detectors(run, it) {
        for s in [Sentence::True, Sentence::False] {
            for m in Mode::BOTH {
                if !have.contains(&(it.idx, s, d.clone(), m)) {
                    out.push((s, d.clone(), m));
                }
            }
        }
    }
    out
}

async fn execute(
    lane: Lane<SelfcheckEvent>,
    run: SelfcheckRun,
    stored: Stored,
    callers: HashMap<String, Arc<Caller>>,
    opts: Options,
) -> Result<Summary, harness::RunError> {
    let Lane {
        store,
        events,
        cancel,
        ..
    } = lane;
    // Verdicts stored (a failed one is asked again).
    let have: std::collections::HashSet<(u32, Sentence, String, Mode)> = stored
        .verdicts
        .iter()
        .filter(|v| v.answer != Answer::Failed)
        .map(|v| (v.item, v.sentence, v.detector.clone(), v.mode))
        .collect();
    let mut calls = 0;
    let mut todo = Vec::new();
    for it in &stored.items {
        if it.set_aside.is_some() {
            continue;
        }
        let need = missing_verdicts(&run, it, &have);
        let writes =
            usize::from(it.true_sentence.is_none()) + usize::from(it.false_sentence.is_none());
        if need.is_empty() && writes == 0 {
            continue;
        }
        calls += writes + need.len();
        todo.push((it.clone(), need));
    }
    let run_id = run.id.clone();
    let spec = harness::Spec::new(&run_id, calls, opts.concurrency);
    let (ev, st) = (events.clone(), store.clone());
    let tell = harness::tell_into(events, SelfcheckEvent::Life);
    harness::run::<SelfcheckWrite, _, _>(&store, &cancel, spec, tell, |life| async move {
        let _ = ev.send(SelfcheckEvent::Started {
            run_id: run.id.clone(),
            items: Arc::new(stored.items.clone()),
            calls,
        });
        let sh = Arc::new(Shared {
            callers,
            store: st,
            events: ev.clone(),
            life,
            run,
        });
        let width = (opts.concurrency / 4).max(1) + 1;
        futures::stream::iter(todo)
            .map(|(it, need)| {
                let sh = sh.clone();
                async move { item(&sh, it, need).await }
            })
            .buffer_unordered(width)
            .collect::<Vec<()>>()
            .await;
    })
    .await
}

fn count(sh: &Shared, ok: bool, cached: bool) {
    sh.life.count(ok, cached);
}

async fn persist(sh: &Shared, w: SelfcheckWrite) -> bool {
    sh.life.save(|| sh.store.selfcheck(w.clone())).await
}

/// Writes one sentence: up to the run's attempts, each its own request (its own cache entry,
/// and its own seed on the embedded model), until one passes `check`. `Ok(None)`: none did.
async fn write(
    sh: &Shared,
    caller: &Caller,
    it: &SelfcheckItem,
    sentence: Sentence,
    req: crate::provider::ChatRequest,
    check: impl Fn(&str) -> Result<(), String>,
) -> Result<(Option<String>, u32, String), String> {
    let attempts = sh.run.config.attempts.max(1);
    let mut why = String::new();
    for attempt in 0..attempts {
        let _slot = sh.life.slot().await.ok_or("cancelled")?;
        let _ = sh.events.send(SelfcheckEvent::Sending {
            item: it.idx,
            step: Step::Write { sentence, attempt },
        });
        let mut req = req.clone();
        if req.params.seed.is_none() && caller.cfg.provider == crate::provider::ProviderKind::Local
        {
            req.params.seed = Some(0x5eed + u64::from(attempt));
        }
        let reply = caller.complete(&req, attempt).await;
        match reply {
            Ok(r) => {
                count(sh, true, r.cached);
                let s = clean_sentence(&r.text);
                match check(&s) {
                    Ok(()) => return Ok((Some(s), attempt + 1, String::new())),
                    // The last try is kept in the reason: what the model wrote is the finding.
                    Err(e) => {
                        why = format!(
                            "{} sentence {e} after {} attempts (last: {:?})",
                            sentence.as_str(),
                            attempt + 1,
                            crate::text::one_line(&s)
                                .chars()
                                .take(200)
                                .collect::<String>()
                        )
                    }
                }
            }
            Err(e) => {
                count(sh, false, false);
                return Err(e);
            }
        }
    }
    Ok((None, attempts, why))
}

async fn item(sh: &Shared, mut it: SelfcheckItem, mut need: Vec<(Sentence, String, Mode)>) {
    let Some(generator) = sh.callers.get(&it.generator).cloned() else {
        return;
    };
    let params: Params = serde_json::from_str(&it.params).unwrap_or_default();
    // 1. The true sentence.
    if it.true_sentence.is_none() {
        let shots: Vec<prompts::Shot> = serde_json::from_str(&it.shots).unwrap_or_default();
        let fact = prompts::fact(&it.subject, &it.relation, &it.object, it.source.as_deref());
        let req = prompts::true_sentence(&fact, &it.object, &shots, params.clone());
        let object = it.object.clone();
        let source = it.source.clone();
        match write(sh, &generator, &it, Sentence::True, req, |s| {
            check_true(s, &object, source.as_deref())
        })
        .await
        {
            Ok((s, n, why)) => {
                it.true_attempts = n;
                it.error = None;
                match s {
                    Some(s) => it.true_sentence = Some(s),
                    None => it.set_aside = Some(why),
                }
            }
            Err(e) if sh.life.is_cancelled() => {
                let _ = e;
                return;
            }
            Err(e) => it.error = Some(e),
        }
        if !save_item(sh, &it).await || it.error.is_some() || it.set_aside.is_some() {
            return;
        }
    }
    // 2. The false sentence: written by the model, or (a `swap` run) the object swapped for
    // another of the same relation.
    if it.false_sentence.is_none() && sh.run.config.false_by == crate::store::FalseBy::Swap {
        let true_s = it.true_sentence.clone().unwrap_or_default();
        match &it.decoy {
            Some(d) => {
                let f = swap_phrase(&true_s, &it.object, d);
                match check_false(&f, &true_s, &it.object) {
                    Ok(()) => it.false_sentence = Some(f),
                    Err(e) => it.set_aside = Some(format!("swapped sentence {e}")),
                }
            }
            None => {
                it.set_aside = Some(format!(
                    "no other object of the relation {:?} to swap in",
                    it.relation
                ))
            }
        }
        if !save_item(sh, &it).await || it.set_aside.is_some() {
            return;
        }
    }
    if it.false_sentence.is_none() {
        let true_s = it.true_sentence.clone().unwrap_or_default();
        let shots: Vec<prompts::Shot> = serde_json::from_str(&it.shots).unwrap_or_default();
        let req =
            prompts::false_sentence(&true_s, &it.relation, &it.object, &shots, params.clone());
        let object = it.object.clone();
        let check = |s: &str| check_false(s, &true_s, &object);
        match write(sh, &generator, &it, Sentence::False, req, check).await {
            Ok((s, n, why)) => {
                it.false_attempts = n;
                it.error = None;
                match s {
                    Some(s) => it.false_sentence = Some(s),
                    None => it.set_aside = Some(why),
                }
            }
            Err(_) if sh.life.is_cancelled() => return,
            Err(e) => it.error = Some(e),
        }
        if !save_item(sh, &it).await || it.error.is_some() || it.set_aside.is_some() {
            return;
        }
        need = missing_verdicts(&sh.run, &it, &Default::default());
    }
    // 3. The verdicts, side by side.
    let jobs = need.into_iter().map(|(s, d, m)| {
        let it = &it;
        async move { judge(sh, it, s, d, m).await }
    });
    futures::future::join_all(jobs).await;
}

async fn save_item(sh: &Shared, it: &SelfcheckItem) -> bool {
    if !persist(sh, SelfcheckWrite::Item(Box::new(it.clone()))).await {
        return false;
    }
    let _ = sh.events.send(SelfcheckEvent::Item(Arc::new(it.clone())));
    true
}

async fn judge(sh: &Shared, it: &SelfcheckItem, s: Sentence, detector: String, mode: Mode) {
    let Some(caller) = sh.callers.get(&detector).cloned() else {
        return;
    };
    let text = match s {
        Sentence::True => it.true_sentence.clone(),
        Sentence::False => it.false_sentence.clone(),
    }
    .unwrap_or_default();
    let Some(_slot) = sh.life.slot().await else {
        return;
    };
    let _ = sh.events.send(SelfcheckEvent::Sending {
        item: it.idx,
        step: Step::Judge {
            sentence: s,
            detector: detector.clone(),
            mode,
        },
    });
    let mut req = match mode {
        Mode::Direct => prompts::direct(&text),
        Mode::Cot => prompts::cot(&text),
    };
    req.params = caller.cfg.params.overlay(&req.params);
    let got = caller.complete(&req, 0).await;
    drop(_slot);
    if sh.life.is_cancelled() {
        return;
    }
    let (answer, reply, error, cached) = match got {
        Ok(r) => (
            match mode {
                Mode::Direct => read_direct(&r.text),
                Mode::Cot => read_cot(&r.text),
            },
            Some(r.text),
            None,
            r.cached,
        ),
        Err(e) => (Answer::Failed, None, Some(e), false),
    };
    let v = VerdictRecord {
        run_id: sh.run.id.clone(),
        item: it.idx,
        sentence: s,
        detector,
        mode,
        answer,
        reply,
        error,
        attempts: 1,
        created_at: now_secs(),
    };
    if !persist(sh, SelfcheckWrite::Verdict(v.clone())).await {
        return;
    }
    count(sh, answer != Answer::Failed, cached);
    let _ = sh.events.send(SelfcheckEvent::Verdict(Arc::new(v)));
}

/// The items of a new run: one per triple and generator, with its examples chosen.
/// Examples and their decoys come from `examples`, the item's own swap decoy from `pool` (the
/// whole dataset, before a filter or a limit).
pub fn items(
    run_id: &str,
    set: &crate::dataset::triples::TripleSet,
    pool: &[crate::dataset::triples::Triple],
    examples: &[crate::dataset::triples::Triple],
    generators: &[ModelConfig],
    shots: usize,
    over: &Params,
) -> Vec<SelfcheckItem> {
    let mut out = Vec::new();
    for g in generators {
        let params = Params {
            temperature: Some(0.7),
            ..Params::default()
        }
        .overlay(&g.params)
        .overlay(over);
        for t in &set.triples {
            let ex: Vec<prompts::Shot> = prompts::pick_shots(
                examples,
                &t.id,
                |x| x.id.as_str(),
                |x| x.sentence.is_some(),
                shots,
            )
            .into_iter()
            .map(|x| prompts::Shot {
                fact: prompts::fact(&x.subject, &x.relation, &x.object, None),
                object: x.object.clone(),
                sentence: x.sentence.clone().unwrap_or_default(),
                // Another object of the same relation (never the item's own object: that would
                // show the answer).
                decoy: prompts::pick_shots(
                    examples,
                    &x.id,
                    |y| y.id.as_str(),
                    |y| {
                        y.relation == x.relation
                            && !y.object.eq_ignore_ascii_case(&x.object)
                            && !y.object.eq_ignore_ascii_case(&t.object)
                    },
                    1,
                )
                .first()
                .map(|y| y.object.clone()),
            })
            .collect();
            out.push(SelfcheckItem {
                run_id: run_id.to_string(),
                idx: out.len() as u32,
                triple_id: t.id.clone(),
                subject: t.subject.clone(),
                relation: t.relation.clone(),
                object: t.object.clone(),
                source: t.sentence.clone(),
                popularity: t.popularity,
                generator: g.name.clone(),
                params: serde_json::to_string(&params).unwrap_or_else(|_| "{}".into()),
                shots: serde_json::to_string(&ex).unwrap_or_else(|_| "[]".into()),
                true_sentence: None,
                true_attempts: 0,
                false_sentence: None,
                false_attempts: 0,
                set_aside: None,
                error: None,
                decoy: prompts::pick_shots(
                    pool,
                    &t.id,
                    |y| y.id.as_str(),
                    |y| y.relation == t.relation && !y.object.eq_ignore_ascii_case(&t.object),
                    1,
                )
                .first()
                .map(|y| y.object.clone()),
            });
        }
    }
    out
}

/// How a new run is set up (the CLI's flags; the TUI uses the defaults).
#[derive(Debug, Clone)]
pub struct Plan {
    pub shots: u32,
    pub attempts: u32,
    /// Overrides of the generation parameters (e.g. `--temperature`).
    pub params: Params,
    pub filter: Option<String>,
    pub bins: u32,
    pub false_by: crate::store::FalseBy,
    /// Where the few-shot examples (and their decoys) are drawn from, when not from the
    /// dataset itself: the paper draws 10 from 41 hand-written ones.
    pub examples: Option<Vec<crate::dataset::triples::Triple>>,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            shots: 3,
            attempts: 3,
            params: Params::default(),
            filter: None,
            bins: 20,
            false_by: crate::store::FalseBy::Model,
            examples: None,
        }
    }
}

/// A new run over `set` (examples and decoys from `pool`), its items, and every model it calls (generators, then the detectors
/// that are not generators). No detectors: each generator judges its own sentences.
pub fn plan(
    dataset: String,
    set: &crate::dataset::triples::TripleSet,
    pool: &[crate::dataset::triples::Triple],
    generators: Vec<ModelConfig>,
    detectors: Vec<ModelConfig>,
    p: Plan,
) -> (SelfcheckRun, Vec<SelfcheckItem>, Vec<ModelConfig>) {
    use crate::store::{ModelSnapshot, SelfcheckConfig};
    let id = crate::store::new_run_id();
    let examples = p.examples.as_deref().unwrap_or(pool);
    let items = items(
        &id,
        set,
        pool,
        examples,
        &generators,
        p.shots as usize,
        &p.params,
    );
    let run = SelfcheckRun {
        id,
        created_at: now_secs(),
        dataset,
        config: SelfcheckConfig {
            generators: generators.iter().map(ModelSnapshot::from).collect(),
            detectors: detectors.iter().map(ModelSnapshot::from).collect(),
            shots: p.shots,
            attempts: p.attempts.max(1),
            params: p.params,
            filter: p.filter,
            bins: p.bins.max(3),
            false_by: p.false_by,
        },
        status: RunStatus::Running,
    };
    let mut models = generators;
    for d in detectors {
        if !models.iter().any(|m| m.name == d.name) {
            models.push(d);
        }
    }
    (run, items, models)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::triples::Triple;

    fn triple(id: &str, relation: &str, object: &str, sentence: Option<&str>) -> Triple {
        Triple {
            id: id.into(),
            subject: format!("s-{id}"),
            relation: relation.into(),
            object: object.into(),
            sentence: sentence.map(str::to_string),
            popularity: None,
        }
    }

    /// Given an examples pool, the shots come from it (with their decoys), never from the
    /// dataset; the item's own swap decoy still comes from the dataset.
    #[test]
    fn the_shots_come_from_the_examples_pool_when_one_is_given() {
        let set = crate::dataset::triples::sample_triples().set;
        let examples = vec![
            triple(
                "e1",
                "capital",
                "Paris",
                Some("Paris is the capital of France."),
            ),
            triple(
                "e2",
                "capital",
                "Rome",
                Some("Rome is the capital of Italy."),
            ),
            triple(
                "e3",
                "capital",
                "Oslo",
                Some("Oslo is the capital of Norway."),
            ),
        ];
        let generator: ModelConfig = toml::from_str(
            "name = \"g\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"",
        )
        .unwrap();
        let (_, items, _) = plan(
            "x".into(),
            &set,
            &set.triples,
            vec![generator],
            vec![],
            Plan {
                shots: 2,
                examples: Some(examples.clone()),
                ..Plan::default()
            },
        );
        assert_eq!(items.len(), set.triples.len());
        let pool_objects: Vec<&str> = examples.iter().map(|e| e.object.as_str()).collect();
        for it in &items {
            let shots: Vec<prompts::Shot> = serde_json::from_str(&it.shots).unwrap();
            assert_eq!(shots.len(), 2);
            for s in &shots {
                assert!(pool_objects.contains(&s.object.as_str()), "{s:?}");
                // A decoy is another example's object of the same relation.
                let d = s.decoy.as_deref().unwrap();
                assert!(pool_objects.contains(&d) && d != s.object, "{s:?}");
            }
            if let Some(d) = &it.decoy {
                assert!(!pool_objects.contains(&d.as_str()), "{d}");
            }
        }
    }
}
