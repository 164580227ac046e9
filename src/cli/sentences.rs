//! `prism sentences [RUN]`: where in the answer (`sentences`): each answer of a run made with
//! `--samples N`, or of a detection run, cut into sentences, each scored by how little the
//! model's other samples back it up (the prompt method with `--judge`, unigram, token
//! log-probabilities). The judge's verdicts are saved as they arrive and asked once; a second
//! run, or one after an interrupt, asks only what is missing.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;

use super::run::load_models;
use crate::config::Dirs;
use crate::engine::BackendFactory;
use crate::sentences::{Answer, Known, Method, SentenceEvent, Support, SupportRecord};
use crate::store::lane_tables::{self, LaneKind};

#[derive(Debug, Args)]
pub struct SentencesArgs {
    /// A run made with --samples N (N ≥ 2: the first answer is scored, the rest are its
    /// samples), or a detection run (its answers under test and their samples); default: the
    /// latest run.
    pub run: Option<String>,
    /// The methods, comma-separated: prompt (needs --judge), unigram, logprob (answers run
    /// with --logprobs). Default: unigram and logprob, and prompt with --judge.
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<String>,
    /// The model asked whether each sample supports each sentence (the prompt method):
    /// sentences × samples calls per answer, each asked once.
    #[arg(long)]
    pub judge: Option<String>,
    /// Samples per answer: the first N of those it has, and for a run's answers with fewer, the
    /// missing ones drawn from the model that answered (its prompt again, with its own
    /// parameters; saved, never drawn twice). The prompt method's cost is sentences × samples.
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Only this many answers, in order.
    #[arg(long)]
    pub limit: Option<usize>,
    /// The run's dataset, when it has moved (the questions come from it).
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    #[command(flatten)]
    pub ask: super::lane_flags::AskFlags,
}

/// One check of the prompt method: (answer, sentence, sample).
type Check = (usize, usize, usize);

/// The methods asked for (`--methods`), checked.
fn methods(args: &SentencesArgs) -> anyhow::Result<Vec<Method>> {
    let mut out = Vec::new();
    for m in &args.methods {
        match Method::parse(m) {
            Some(m) if !out.contains(&m) => out.push(m),
            Some(_) => {}
            None => bail!("--methods: no method {m:?} (prompt, unigram, logprob)"),
        }
    }
    if out.is_empty() {
        out = vec![Method::Unigram, Method::Logprob];
        if args.judge.is_some() {
            out.insert(0, Method::Prompt);
        }
    }
    if out.contains(&Method::Prompt) && args.judge.is_none() {
        bail!("the prompt method asks a judge: name one with --judge MODEL");
    }
    out.sort();
    Ok(out)
}

pub(crate) fn sentences(
    args: SentencesArgs,
    dirs: &Dirs,
    factory: BackendFactory,
) -> anyhow::Result<i32> {
    let methods = methods(&args)?;
    let db = super::lane_flags::open_db(args.ask.db.as_ref(), dirs)?;
    let mut named_run = args.run.clone();
    if db.is_shared() {
        let id = match db.pull_run(args.run.as_deref()) {
            Ok(id) => id,
            Err(e) => match args.run.as_deref() {
                Some(id) if db.pull_lane(LaneKind::Detect, id).is_ok() => Some(id.to_string()),
                _ => return Err(e),
            },
        };
        db.pull_table(&lane_tables::SENTENCE_SUPPORT, None)?;
        db.pull_table(&lane_tables::SENTENCE_SAMPLES, None)?;
        named_run = id;
    }
    let store = db.read_existing("run prism run --samples 5 first")?;
    let id = match &named_run {
        Some(id) => id.clone(),
        None => store.latest_run()?.context("no runs in the store")?.id,
    };
    let mut groups = groups(&db, &id, &args)?;
    if let Some(n) = args.samples {
        let todo = to_draw(&db, &groups, n)?;
        if !todo.is_empty() {
            let interrupted = draw(&args, &db, &id, todo, dirs, &factory)?;
            groups = self::groups(&db, &id, &args)?;
            if interrupted {
                crate::warn!("drawing samples was interrupted: run it again for the rest");
                return Ok(130);
            }
        }
        let fewer = groups.iter().filter(|g| g.answers.len() < n + 1).count();
        for g in &mut groups {
            g.answers.truncate(n + 1);
            g.loglik.truncate(n + 1);
        }
        if fewer > 0 {
            crate::warn!(
                "{fewer} answer(s) have fewer than {n} samples (a detection's answers are sampled by prism detect -k {n}; a model not in the models file cannot be asked; a failed call is asked again next time)"
            );
        }
    }
    // Each answer's tokens, from the run that made it (for the logprob method).
    let mut tokens: HashMap<String, HashMap<u32, _>> = HashMap::new();
    let mut answers = Vec::new();
    for g in groups {
        let t = match (&g.source_run, g.source_job) {
            (Some(run), Some(job)) if methods.contains(&Method::Logprob) => {
                if !tokens.contains_key(run) {
                    tokens.insert(run.clone(), store.logprobs(run)?.into_iter().collect());
                }
                tokens.get(run).and_then(|m| m.get(&job)).cloned()
            }
            _ => None,
        };
        answers.push(Answer::new(g, t));
    }
    let judge = match &args.judge {
        Some(name) => Some(
            load_models(dirs, args.ask.models_file.as_deref())?
                .select(name)?
                .into_iter()
                .next()
                .context("--judge names no model")?,
        ),
        None => None,
    };
    let mut known = Known::of(&match &judge {
        Some(j) => store.records_where::<SupportRecord>(Some(("judge", &j.name)))?,
        None => Vec::new(),
    });
    drop(store);
    let sentences: usize = answers.iter().map(|a| a.sentences.len()).sum();
    // What the prompt method still needs, each (sentence, sample) text once: samples often
    // repeat one another, and a verdict is the same whichever answer asked it.
    let (todo, missing): (Vec<Check>, usize) =
        if judge.is_some() && methods.contains(&Method::Prompt) {
            crate::sentences::to_ask(&answers, &known)
        } else {
            (Vec::new(), 0)
        };
    let checks: usize = answers
        .iter()
        .map(|a| a.sentences.len() * a.samples().len())
        .sum();
    crate::warn!(
        "{} answers in {id}, {sentences} sentences{}",
        answers.len(),
        match &judge {
            Some(j) if methods.contains(&Method::Prompt) => format!(
                "; prompt method: {checks} sentence×sample checks ({} stored, {} to ask {}{})",
                checks - missing,
                todo.len(),
                j.name,
                match missing - todo.len() {
                    0 => String::new(),
                    n => format!("; {n} repeat a sentence and sample asked already"),
                }
            ),
            _ => String::new(),
        }
    );
    let answers = Arc::new(answers);
    let interrupted = match &judge {
        Some(j) if !todo.is_empty() => ask(&args, &db, &id, (&answers, j, todo), factory)?,
        _ => false,
    };
    db.finish()?;
    if let Some(j) = &judge {
        known = Known::of(
            &db.read()?
                .records_where::<SupportRecord>(Some(("judge", &j.name)))?,
        );
    }
    show(&args, &answers, &methods, &known);
    Ok(if interrupted { 130 } else { 0 })
}

/// The answers of `id` with their samples: a detection's answers under test, or a run's first
/// answer per item and model with its other answers and the samples drawn for it. With
/// `--samples`, also the run's answers that have no sample yet (they are drawn). `--limit`
/// keeps the first.
fn groups(
    db: &crate::store::Db,
    id: &str,
    args: &SentencesArgs,
) -> anyhow::Result<Vec<crate::detect::semantic::Group>> {
    let store = db.read()?;
    let mut groups = if store.detect_run(id)?.is_some() {
        super::entropy::groups_of(db, id, args.dataset.as_deref())?
    } else {
        let run = store
            .run(id)?
            .with_context(|| format!("no run or detection run {id} in the store"))?;
        let (ds, _) = super::run::open_dataset(
            args.dataset
                .as_deref()
                .or(super::run::dataset_path(&run.dataset)),
        )
        .with_context(|| format!("the dataset of run {id} (its questions)"))?;
        let groups = crate::sentences::draw::run_groups(db, id, &ds, args.samples.is_some())?;
        if groups.is_empty() {
            bail!(
                "run {id} has no answer with samples: draw them with prism sentences {id} --samples 5, or make a run with prism run --samples 5"
            );
        }
        groups
    };
    if let Some(n) = args.limit {
        groups.truncate(n);
    }
    Ok(groups)
}

/// What to draw so each of a run's answers has `n` samples: (its response, the missing `k`s),
/// a `k` already drawn (with a text) never again.
fn to_draw(
    db: &crate::store::Db,
    groups: &[crate::detect::semantic::Group],
    n: usize,
) -> anyhow::Result<Vec<(crate::store::ResponseRecord, Vec<u32>)>> {
    let store = db.read()?;
    let mut out = Vec::new();
    let mut drawn: HashMap<String, HashMap<u32, Vec<(u32, String)>>> = HashMap::new();
    for g in groups {
        let (Some(run), Some(job), crate::detect::semantic::Via::Samples) =
            (&g.source_run, g.source_job, &g.via)
        else {
            continue;
        };
        let have = g.answers.len().saturating_sub(1);
        if have >= n {
            continue;
        }
        if !drawn.contains_key(run) {
            drawn.insert(run.clone(), crate::sentences::draw::drawn(db, run)?);
        }
        let done: Vec<u32> = drawn[run]
            .get(&job)
            .map(|v| v.iter().map(|x| x.0).collect())
            .unwrap_or_default();
        // The run's own samples come first; drawn ones are numbered from 1 after them.
        let own = have - done.len();
        let ks: Vec<u32> = (1..=(n - own) as u32)
            .filter(|k| !done.contains(k))
            .take(n - have)
            .collect();
        if let Some(r) = store.response(run, job)? {
            out.push((r, ks));
        }
    }
    Ok(out)
}

/// Draws `todo`'s samples, each model's by a lane of its own; whether it was interrupted.
fn draw(
    args: &SentencesArgs,
    db: &crate::store::Db,
    id: &str,
    todo: Vec<(crate::store::ResponseRecord, Vec<u32>)>,
    dirs: &Dirs,
    factory: &BackendFactory,
) -> anyhow::Result<bool> {
    let run = db.read()?.run(id)?.context("the run is gone")?;
    let (ds, _) = super::run::open_dataset(
        args.dataset
            .as_deref()
            .or(super::run::dataset_path(&run.dataset)),
    )?;
    let models = load_models(dirs, args.ask.models_file.as_deref())?;
    let calls: usize = todo.iter().map(|(_, k)| k.len()).sum();
    let mut by_model: std::collections::BTreeMap<
        String,
        Vec<(crate::sentences::draw::Target, Vec<u32>)>,
    > = Default::default();
    for (r, ks) in todo {
        if let Some(t) = crate::sentences::draw::Target::of(&ds, &r) {
            by_model.entry(r.model.clone()).or_default().push((t, ks));
        }
    }
    crate::warn!(
        "drawing {calls} sample(s) for {} answer(s) of {} model(s) (each saved as it arrives)",
        by_model.values().map(Vec::len).sum::<usize>(),
        by_model.len()
    );
    for (model, todo) in by_model {
        // This machine's model of that name (or, for an imported model, the one mapped to
        // answer in its place), never an endpoint the run recorded.
        let cfg = match crate::engine::models::model_named(
            &model,
            &models.models,
            &run.config.models,
            id,
        ) {
            Ok(c) => c,
            Err(e) => {
                crate::warn!("{e:#}: its answers' samples cannot be drawn");
                continue;
            }
        };
        let (targets, ks): (Vec<_>, Vec<_>) = todo.into_iter().unzip();
        let items: Vec<(usize, u32)> = ks
            .iter()
            .enumerate()
            .flat_map(|(i, ks)| ks.iter().map(move |&k| (i, k)))
            .collect();
        let targets = Arc::new(targets);
        let (mut ok, mut failed) = (0, 0);
        let interrupted = super::lane_flags::run_records(
            db,
            &args.ask,
            (&format!("samples:{model}:{id}"), "sample(s)"),
            (&cfg, factory),
            (
                |caller| crate::sentences::draw::Draw {
                    targets: targets.clone(),
                    caller,
                },
                items,
            ),
            |ev| {
                if let crate::engine::records::RecordEvent::Saved(r) = ev {
                    if r.text.is_some() {
                        ok += 1
                    } else {
                        failed += 1
                    }
                }
            },
        )?;
        let by = if cfg.name == model {
            String::new()
        } else {
            format!(" (answered by {}, mapped at import)", cfg.name)
        };
        crate::warn!("model {model}{by}: {ok} sample(s) drawn, {failed} failed");
        if interrupted {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Asks the judge the prompt method's `todo` calls, each saved (and pushed to a shared store) as
/// it arrives; whether it was interrupted.
fn ask(
    args: &SentencesArgs,
    db: &crate::store::Db,
    id: &str,
    (answers, judge, todo): (&Arc<Vec<Answer>>, &crate::provider::ModelConfig, Vec<Check>),
    factory: BackendFactory,
) -> anyhow::Result<bool> {
    // (yes or no, neither, failed calls)
    let mut tally = (0, 0, 0);
    let interrupted = super::lane_flags::run_records(
        db,
        &args.ask,
        (
            &format!("sentences:{}:{id}", judge.name),
            "sentence verdict(s)",
        ),
        (judge, &factory),
        (
            |caller| Support {
                answers: answers.clone(),
                caller,
                known: std::sync::Mutex::new(Known::default()),
            },
            todo,
        ),
        |ev| {
            if let SentenceEvent::Saved(r) = ev {
                match (&r.verdict, &r.error) {
                    (Some(crate::sentences::Verdict::Other), _) => tally.1 += 1,
                    (Some(_), _) => tally.0 += 1,
                    (None, _) => tally.2 += 1,
                }
            }
        },
    )?;
    crate::warn!(
        "judge {}: {} verdicts yes or no, {} neither (counted 0.5), {} failed calls{}",
        judge.name,
        tally.0,
        tally.1,
        tally.2,
        if interrupted {
            " (interrupted: run it again for the rest)"
        } else {
            ""
        }
    );
    Ok(interrupted)
}

/// Per answer: JSON lines, or each sentence with its scores and a mark for the doubtful ones.
fn show(args: &SentencesArgs, answers: &[Answer], methods: &[Method], known: &Known) {
    let as_json = args.ask.json || !std::io::stdout().is_terminal();
    let mut text = String::new();
    for a in answers {
        let scored = a.score(methods, known);
        let g = &a.group;
        if as_json {
            crate::outln!(
                "{}",
                crate::text::json_for_terminal(
                    &json!({"event": "sentences", "run": g.source_run, "job": g.source_job,
                            "via": g.via, "item_id": g.item_id, "task_id": g.task_id,
                            "model": g.model, "samples": a.samples().len(),
                            "sentences": scored,
                            "answer": crate::sentences::answer_scores(&scored)})
                    .to_string()
                )
            );
            continue;
        }
        text.push_str(&format!(
            "\n{} · {} · {} samples\n",
            crate::text::one_line(&g.model),
            crate::text::one_line(&g.item_id),
            a.samples().len()
        ));
        for s in &scored {
            let f = |v: Option<f64>| v.map_or("   -".to_string(), |v| format!("{v:4.2}"));
            let head = s.scores.headline();
            let mark = match head {
                Some(h) if h >= 0.5 && s.scores.prompt.is_some() => "!!",
                _ => "  ",
            };
            text.push_str(&format!(
                "{mark} prompt {} unigram {} logprob {}  {}\n",
                f(s.scores.prompt),
                f(s.scores.unigram),
                f(s.scores.logprob_avg),
                crate::text::truncate(&crate::text::one_line(&s.sentence.text), 80)
            ));
        }
    }
    if !as_json {
        text.push_str(
            "\nHigher is more likely made up. prompt: the share of samples that do not support the sentence (Yes 0, No 1, neither 0.5); unigram: the most surprising word given the samples (-log p); logprob: the sentence's mean -log p of its tokens. !! marks a sentence most samples do not support.\n",
        );
        eprint!("{}", crate::text::sanitize(&text));
    }
}
