//! Scoring stored (or imported) responses: rules first, judges through [`Caller`] for what the
//! rules cannot settle. Every score is saved the moment it is known (rule scores in one batch,
//! judged scores one by one as their judge answers) and announced on a channel.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};

use super::Caller;
use crate::dataset::Dataset;
use crate::eval::judge;
use crate::eval::panel::{self, PanelRule};
use crate::eval::score::{Step, step};
use crate::store::{JudgeVerdict, ScoreRecord, StoreHandle, now_secs};

/// A response to score.
#[derive(Debug, Clone)]
pub struct ToScore {
    pub run_id: String,
    pub job_idx: u32,
    /// Index into the dataset's items.
    pub item: usize,
    pub model: String,
    pub sample: u32,
    /// The answer (`None`: there is none).
    pub response: Option<Answer>,
    /// Read back from the store, not just made by this process (see
    /// `StoreHandle::save_stored_scores`).
    pub stored_earlier: bool,
}

/// What a job came to: a text to score, or a failure with its reason (typed, never an
/// `ERROR:` text; only the official outputs files write failures that way, and a text of
/// theirs that starts with `ERROR:` is still read as PRISM reads it).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Text(String),
    Failed(String),
}

impl ToScore {
    /// A stored answer as something to score (its failure, if it has one, wins over any text).
    pub fn from_record(item: usize, r: &crate::store::ResponseRecord) -> ToScore {
        ToScore {
            run_id: r.run_id.clone(),
            job_idx: r.job_idx,
            item,
            model: r.model.clone(),
            sample: r.sample,
            response: match (&r.error, &r.text) {
                (Some(e), _) => Some(Answer::Failed(e.clone())),
                (None, Some(t)) => Some(Answer::Text(t.clone())),
                (None, None) => None,
            },
            stored_earlier: false,
        }
    }

    /// A stored answer read back to be scored (a resumed run's answers left unscored).
    pub fn stored(item: usize, r: &crate::store::ResponseRecord) -> ToScore {
        ToScore {
            stored_earlier: true,
            ..Self::from_record(item, r)
        }
    }

    /// The same, borrowed.
    fn view(&self) -> Input<'_> {
        Input {
            run_id: &self.run_id,
            job_idx: self.job_idx,
            item: self.item,
            model: &self.model,
            sample: self.sample,
            response: self.response.as_ref().map(|a| match a {
                Answer::Text(t) => Reply::Text(t),
                Answer::Failed(why) => Reply::Failed(why),
            }),
        }
    }
}

/// A response to score, borrowed from where it is kept: a run scores each answer the moment
/// it is stored, from the stored record itself (no copy of its text).
pub(crate) struct Input<'a> {
    run_id: &'a str,
    job_idx: u32,
    item: usize,
    model: &'a str,
    sample: u32,
    response: Option<Reply<'a>>,
}

/// A borrowed [`Answer`]; a failure's reason shows in the score's detail only where it is a
/// missing response (any other is an API error, as PRISM writes it).
#[derive(Clone, Copy)]
enum Reply<'a> {
    Text(&'a str),
    Failed(&'a str),
}

impl<'a> Input<'a> {
    /// A stored answer to score (its failure, if it has one, wins over any text).
    pub(crate) fn of_record(item: usize, r: &'a crate::store::ResponseRecord) -> Input<'a> {
        Input {
            run_id: &r.run_id,
            job_idx: r.job_idx,
            item,
            model: &r.model,
            sample: r.sample,
            response: match (&r.error, &r.text) {
                (Some(why), _) => Some(Reply::Failed(why)),
                (None, Some(t)) => Some(Reply::Text(t)),
                (None, None) => None,
            },
        }
    }

    /// The answer's text, when it has one.
    fn text(&self) -> Option<&'a str> {
        match self.response {
            Some(Reply::Text(t)) => Some(t),
            _ => None,
        }
    }
}

/// What the rules make of an answer.
pub(crate) enum Ruled {
    /// Its score is known without a judge: by rule, or left unscored (`score: None`) because
    /// the judge it needs has no prompt or is not given.
    Settled(ScoreRecord),
    /// A judge of the panel must read it.
    Ask(ScoreRecord, judge::JudgeAsk),
}

/// Scores `t` by the rules; with `judged` (a panel is given) what they cannot settle goes to
/// [`Ruled::Ask`], without it such an answer is settled unscored, never as wrong.
pub(crate) fn rule(ds: &Dataset, t: &Input<'_>, judged: bool) -> Ruled {
    let mut rec = record(t, ds);
    let item = &ds.items[t.item];
    let steps = match t.response {
        // A failed job scores 0 with its reason (PRISM counts it as wrong).
        Some(Reply::Failed(why)) => Step::Done(crate::eval::rules::Verdict::fail(
            if why.starts_with(crate::eval::score::NO_RESPONSE) {
                format!("failed response ({})", crate::text::one_line(why))
            } else {
                "failed response (API error)".to_string()
            },
        )),
        _ => step(ds, item, t.text()),
    };
    match steps {
        Step::Done(v) => {
            rec.score = Some(v.score);
            rec.detail = v.detail;
        }
        Step::NoPrompt(kind) => rec.detail = format!("no {} judge prompt", kind.name()),
        Step::Judge(ask) => {
            // Kept beside the judge's verdict: review looks where the two disagree.
            rec.rule_score = crate::eval::score::rule_verdict(ds, item, t.text());
            if judged {
                return Ruled::Ask(rec, ask);
            }
            rec.detail = format!("needs the {} judge", ask.kind.name());
        }
    }
    Ruled::Settled(rec)
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct ScoreCounts {
    pub scored: usize,
    pub by_rule: usize,
    pub by_judge: usize,
    /// Left unscored: a judge was needed and none was given (or it has no prompt).
    pub unscored: usize,
    /// The judge could not be reached (recorded with the reason, left unscored).
    pub judge_errors: usize,
    /// Judge replies unreadable after every attempt (the fallback score applied).
    pub fallbacks: usize,
    /// Left unscored by a panel's rule (an even split, or a disagreement under `unanimous`).
    pub panel_undecided: usize,
}

fn record(t: &Input<'_>, ds: &Dataset) -> ScoreRecord {
    let item = &ds.items[t.item];
    let task = ds.task_of(item);
    ScoreRecord {
        run_id: t.run_id.to_string(),
        job_idx: t.job_idx,
        item_id: item.id.to_string(),
        task_id: task.id.clone(),
        model: t.model.to_string(),
        sample: t.sample,
        evaluator: task.evaluator.as_str().to_string(),
        score: None,
        detail: String::new(),
        judge: None,
        judge_reply: None,
        judge_attempts: 0,
        created_at: now_secs(),
        rule_score: None,
    }
}

/// The judges that read what the rules cannot score: one, or a panel whose verdicts become one
/// score by its rule (`eval::panel`), each judge asked `repeats` times.
#[derive(Clone)]
pub(crate) struct Panel {
    pub(crate) judges: Vec<Arc<Caller>>,
    pub(crate) rule: PanelRule,
    pub(crate) repeats: u32,
    /// How the equivalence judge's replies are read.
    pub(crate) reading: judge::Reading,
}

impl Panel {
    /// One judge, asked once: the score is its verdict.
    pub(crate) fn single(judge: Arc<Caller>) -> Panel {
        Panel {
            judges: vec![judge],
            rule: PanelRule::Majority,
            repeats: 1,
            reading: judge::Reading::Prism,
        }
    }

    fn is_single(&self) -> bool {
        self.judges.len() == 1 && self.repeats <= 1
    }

    /// What a score judged by this panel names as its judge: the judge, or the panel.
    pub(crate) fn name(&self) -> String {
        let names: Vec<&str> = self.judges.iter().map(|j| j.cfg.name.as_str()).collect();
        let mut name = if self.is_single() {
            names.concat()
        } else {
            let mut n = names.join("+");
            if self.judges.len() > 1 {
                n.push_str(&format!(" ({})", self.rule.as_str()));
            }
            if self.repeats > 1 {
                n.push_str(&format!(" x{}", self.repeats));
            }
            n
        };
        // A score read strictly says so: its numbers are not PRISM's.
        if self.reading == judge::Reading::Strict {
            name.push_str(" (strict)");
        }
        name
    }
}

/// Who judges what the rules cannot score, and how many judge calls at once.
pub(crate) struct Judging {
    pub(crate) panel: Option<Panel>,
    pub(crate) concurrency: usize,
    /// Whether the scores are saved (else only the judges' verdicts are: a trial of a
    /// judge's wording leaves the scores as they stand).
    pub(crate) keep_scores: bool,
}

impl Judging {
    /// One judge (or none), asked once.
    pub(crate) fn one(judge: Option<Arc<Caller>>, concurrency: usize) -> Judging {
        Judging {
            panel: judge.map(Panel::single),
            concurrency,
            keep_scores: true,
        }
    }
}

/// Scores `inputs`. Without a judge, items that need one are saved unscored (`score: None`),
/// never as wrong.
pub(crate) async fn score_all(
    ds: Arc<Dataset>,
    inputs: Vec<ToScore>,
    Judging {
        panel,
        concurrency,
        keep_scores,
    }: Judging,
    store: Option<StoreHandle>,
    out: mpsc::UnboundedSender<ScoreRecord>,
) -> anyhow::Result<ScoreCounts> {
    let mut counts = ScoreCounts::default();
    // Settled by rule: this process's answers' scores, and those of answers read back.
    let mut settled: [Vec<ScoreRecord>; 2] = Default::default();
    let mut asks = Vec::new();
    for t in &inputs {
        match rule(&ds, &t.view(), panel.is_some()) {
            Ruled::Settled(rec) => {
                if rec.score.is_some() {
                    counts.scored += 1;
                    counts.by_rule += 1;
                } else {
                    counts.unscored += 1;
                }
                settled[usize::from(t.stored_earlier)].push(rec);
            }
            Ruled::Ask(rec, ask) => asks.push((rec, ask, t.stored_earlier)),
        }
    }
    if let Some(store) = store.as_ref().filter(|_| keep_scores) {
        for (of_stored, recs) in settled.iter().enumerate() {
            for chunk in recs.chunks(4096) {
                retrying(|| save(store, chunk.to_vec(), of_stored == 1))
                    .await
                    .map_err(|e| anyhow::anyhow!("saving scores: {e}"))?;
            }
        }
    }
    for r in settled.into_iter().flatten() {
        let _ = out.send(r);
    }
    let Some(panel) = panel else {
        return Ok(counts);
    };
    // `concurrency` answers judged at once, each answer's askings (every judge, every repeat)
    // one after another: answers finish, and are saved, in turn. (A limit on calls alone let
    // every answer start at once: with a panel asked three times, none finished until nearly
    // all had been asked, and nothing was saved for half an hour.)
    let answers = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut handles = Vec::with_capacity(asks.len());
    for (rec, ask, of_stored) in asks {
        let (panel, store, out) = (panel.clone(), store.clone(), out.clone());
        let answers = answers.clone();
        handles.push(tokio::spawn(async move {
            let _turn = answers.acquire().await;
            let (rec, verdicts, outcome) = judge_one(&panel, rec, &ask).await;
            let mut saved = Ok(());
            if let Some(s) = &store {
                saved = retrying(|| s.save_records(&verdicts)).await;
                if saved.is_ok() && keep_scores {
                    saved = retrying(|| save(s, vec![rec.clone()], of_stored)).await;
                }
            }
            let _ = out.send(rec);
            (outcome, saved)
        }));
    }
    for h in handles {
        let (outcome, saved) = h.await?;
        saved.map_err(|e| anyhow::anyhow!("saving a score: {e}"))?;
        match outcome {
            Outcome::Scored { fallback } => {
                counts.scored += 1;
                counts.by_judge += 1;
                counts.fallbacks += usize::from(fallback);
            }
            Outcome::Unreached => {
                counts.unscored += 1;
                counts.judge_errors += 1;
            }
            Outcome::Undecided => {
                counts.unscored += 1;
                counts.panel_undecided += 1;
            }
        }
    }
    Ok(counts)
}

/// Saves scores: of answers read back from the store (`of_stored`), or just made here.
async fn save(
    store: &StoreHandle,
    rs: Vec<ScoreRecord>,
    of_stored: bool,
) -> crate::store::WriteResult<()> {
    if of_stored {
        store.save_stored_scores(rs).await
    } else {
        store.save_scores(rs).await
    }
}

/// How many times a score is saved before its failure is told: a save can fail for a
/// moment (the database restarted, a deadlock PostgreSQL broke, a full disk freed), and a
/// score given up on is an answer that reads unscored.
const SAVE_ATTEMPTS: u32 = 8;

/// Saves with `save`, again after a growing pause (0.2 s doubling to 5 s: about 16 s in all)
/// while it fails; a write refused for a lost lock is not tried again (the run is another
/// process's now).
async fn retrying<F, Fut>(mut save: F) -> crate::store::WriteResult<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::store::WriteResult<()>>,
{
    let mut delay = std::time::Duration::from_millis(200);
    let mut attempt = 1;
    loop {
        match save().await {
            Err(e) if attempt < SAVE_ATTEMPTS && !e.is_lost_lock() => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(std::time::Duration::from_secs(5));
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// What judging one answer came to.
enum Outcome {
    Scored {
        fallback: bool,
    },
    /// No judge could be reached (recorded with the reason).
    Unreached,
    /// The panel's rule left it unscored (an even split, a disagreement under `unanimous`).
    Undecided,
}

/// Asks every judge of the panel, `repeats` times each (each asking cached apart), keeps
/// every verdict, and scores the answer by the panel's rule.
async fn judge_one(
    panel: &Panel,
    mut rec: ScoreRecord,
    ask: &judge::JudgeAsk,
) -> (ScoreRecord, Vec<JudgeVerdict>, Outcome) {
    let mut verdicts = Vec::new();
    let mut per_judge = Vec::with_capacity(panel.judges.len());
    let mut errors = Vec::new();
    for caller in &panel.judges {
        let mut scores = Vec::new();
        for repeat in 0..panel.repeats.max(1) {
            let judged = ask_judge(caller, ask, panel.reading, repeat).await;
            let (score, detail) = match &judged.verdict {
                Ok(v) => (Some(v.score), v.detail.clone()),
                Err(e) => {
                    errors.push(format!("{}: {e}", caller.cfg.name));
                    (None, format!("judge failed: {e}"))
                }
            };
            scores.push(score);
            verdicts.push(JudgeVerdict {
                run_id: rec.run_id.clone(),
                job_idx: rec.job_idx,
                judge: caller.cfg.name.clone(),
                repeat,
                item_id: rec.item_id.clone(),
                task_id: rec.task_id.clone(),
                model: rec.model.clone(),
                evaluator: rec.evaluator.clone(),
                score,
                detail,
                reply: judged.reply,
                attempts: judged.attempts,
                fallback: judged.fallback,
                created_at: now_secs(),
            });
        }
        per_judge.push(panel::judge_score(&scores));
    }
    rec.judge = Some(panel.name());
    rec.created_at = now_secs();
    rec.judge_attempts = verdicts.iter().map(|v| v.attempts).sum();
    let outcome = if panel.is_single() {
        let v = &verdicts[0];
        rec.score = v.score;
        rec.detail = v.detail.clone();
        rec.judge_reply = v.reply.clone();
        match v.score {
            Some(_) => Outcome::Scored {
                fallback: v.fallback,
            },
            None => Outcome::Unreached,
        }
    } else {
        rec.judge_reply = Some(panel_replies(&verdicts));
        match panel::panel_score(panel.rule, &per_judge) {
            Ok(score) => {
                rec.score = Some(score);
                rec.detail = panel_detail(panel, &verdicts);
                Outcome::Scored {
                    fallback: verdicts.iter().any(|v| v.fallback),
                }
            }
            Err(_) if verdicts.iter().all(|v| v.score.is_none()) => {
                rec.detail = format!("judge failed: {}", errors.join("; "));
                Outcome::Unreached
            }
            Err(why) => {
                rec.detail = format!("{why} ({})", panel_detail(panel, &verdicts));
                Outcome::Undecided
            }
        }
    };
    (rec, verdicts, outcome)
}

/// Each judge's verdicts in a line: `a: H C H · b: C` (H hallucinated, C correct, ! failed).
fn panel_detail(panel: &Panel, verdicts: &[JudgeVerdict]) -> String {
    let mut parts = vec![format!("{} of judges:", panel.rule.as_str())];
    for caller in &panel.judges {
        let marks: Vec<&str> = verdicts
            .iter()
            .filter(|v| v.judge == caller.cfg.name)
            .map(|v| match v.hallucinated() {
                Some(true) => "H",
                Some(false) => "C",
                None => "!",
            })
            .collect();
        parts.push(format!("{} {}", caller.cfg.name, marks.join("")));
    }
    parts.join(" ")
}

/// Every judge's reply, each under its judge and repeat (what `J` shows for a panel).
fn panel_replies(verdicts: &[JudgeVerdict]) -> String {
    verdicts
        .iter()
        .map(|v| {
            format!(
                "── {} (ask {}): {} ──\n{}",
                v.judge,
                v.repeat + 1,
                v.detail,
                v.reply.as_deref().unwrap_or("(no reply)")
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// What asking a PRISM judge came to: its verdict (the fallback's when no reply could be
/// read), or why the judge could not be reached.
struct Judged {
    verdict: Result<crate::eval::rules::Verdict, String>,
    /// The last reply, when there was one.
    reply: Option<String>,
    attempts: u32,
    fallback: bool,
}

/// Asks `caller` to judge, on its `repeat`-th asking (each asking cached apart, so a repeat is
/// a new question to the judge, not the cache's old reply).
async fn ask_judge(
    caller: &Caller,
    ask: &judge::JudgeAsk,
    reading: judge::Reading,
    repeat: u32,
) -> Judged {
    let kind = ask.kind.read_as(reading);
    let asked = super::judge::ask_again(
        caller,
        &ask.request(),
        judge::ATTEMPTS,
        repeat * judge::ATTEMPTS,
        |reply| judge::read(kind, reply),
    )
    .await;
    match asked.outcome {
        Ok(Some(v)) => Judged {
            verdict: Ok(v),
            reply: asked.reply,
            attempts: asked.attempts,
            fallback: false,
        },
        Ok(None) => Judged {
            verdict: Ok(kind.fallback()),
            reply: Some(asked.reply.unwrap_or_default()),
            attempts: asked.attempts,
            fallback: true,
        },
        Err(e) => Judged {
            verdict: Err(e),
            reply: None,
            attempts: 0,
            fallback: false,
        },
    }
}
