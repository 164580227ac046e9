//! Contradiction detection (AutoHall): detection runs, their targets (the answers under test),
//! every sampled answer and every pair verdict, each saved the moment it arrives so a run
//! resumes without asking anything twice.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::Store;
use super::error::{Result, StoreError};
use super::record::Record;
use super::runs::{ModelSnapshot, RunStatus};
use crate::dataset::claims::Truth;
use crate::provider::Params;

/// What a detection run checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DetectKind {
    /// Answers stored by runs (PRISM items).
    Answers,
    /// Fact-checking claims: AutoHall's own pipeline.
    Claims,
}

impl DetectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DetectKind::Answers => "answers",
            DetectKind::Claims => "claims",
        }
    }

    fn parse(s: &str) -> Result<DetectKind> {
        match s {
            "answers" => Ok(DetectKind::Answers),
            "claims" => Ok(DetectKind::Claims),
            other => Err(StoreError::Unknown {
                what: "detection kind",
                value: other.into(),
            }),
        }
    }
}

/// How a detection run was set up. Never holds an API key (only the variable's name).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DetectConfig {
    /// Samples per answer (K).
    pub k: u32,
    /// The models answering (and, without a judge, checking their own pairs).
    pub models: Vec<ModelSnapshot>,
    /// The judge of the pair checks; none: each model checks its own.
    pub judge: Option<ModelSnapshot>,
    /// Overrides of the sampling parameters (the answer's own otherwise).
    pub params: Params,
    /// Claims: generation temperatures, one target per claim, model and temperature.
    pub temperatures: Vec<f64>,
    /// The balanced set's draw.
    pub seed: u64,
    /// Claims: sample and check pairs only on the balanced set (fewer calls).
    pub balanced_only: bool,
    /// Attempts at a judge reply that can be read.
    pub judge_attempts: u32,
    /// Answers: the run the answers came from, and the filter that chose them.
    pub source_run: Option<String>,
    pub filter: Option<String>,
    /// Claims: the released files (AutoHall's own outputs) the run was imported from; such a
    /// run has no model to call and cannot be resumed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imported: Vec<String>,
    /// Imported runs: how the classification replies were read (`paper` or `prism`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reading: Option<String>,
    /// Imported runs: every file was one of the paper's balanced sets (hallucinated first, as
    /// many factual after), so H% is 50% by construction, not the paper's rate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub balanced_set: bool,
    /// The user's wordings of the prompts (`--prompts`); prism's own where none.
    #[serde(skip_serializing_if = "crate::wordings::Templates::is_default")]
    pub templates: crate::wordings::Templates,
}

/// A detection run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectRun {
    pub id: String,
    pub created_at: i64,
    pub kind: DetectKind,
    /// The dataset: a path, `<sample-data>`, `<sample-claims>`.
    pub dataset: String,
    pub config: DetectConfig,
    pub status: RunStatus,
}

/// A claim's classification by the model, from its own reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    True,
    False,
    /// No reply could be read as true or false.
    Unparsed,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::True => "true",
            Class::False => "false",
            Class::Unparsed => "unparsed",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        match s {
            "true" => Some(Class::True),
            "false" => Some(Class::False),
            "unparsed" => Some(Class::Unparsed),
            _ => None,
        }
    }

    pub fn truth(self) -> Option<Truth> {
        match self {
            Class::True => Some(Truth::True),
            Class::False => Some(Truth::False),
            Class::Unparsed => None,
        }
    }
}

/// An answer under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub run_id: String,
    pub idx: u32,
    /// The PRISM item or the claim.
    pub item_id: String,
    /// The item's sub-task; for claims, the topic.
    pub task_id: String,
    pub model: String,
    /// Claims: the generation temperature.
    pub temperature: Option<f64>,
    /// Answers: where the answer under test was stored.
    pub source_run: Option<String>,
    pub source_job: Option<u32>,
    /// The task prompt (empty for claims and items without one).
    pub prompt: String,
    /// The formatted question; for claims, the claim.
    pub question: String,
    /// The sampling parameters (JSON), as the answer was asked with.
    pub params: String,
    /// The answer under test (the claim's reference); `None` until it is generated.
    pub answer: Option<String>,
    pub answer_error: Option<String>,
    /// Claims: the reference is a refusal without content (set aside, counted).
    pub refused: bool,
    pub label: Option<Truth>,
    pub class: Option<Class>,
    pub class_reply: Option<String>,
    pub class_error: Option<String>,
    /// Rounds of sampling asked for ("sample again" adds one; earlier rounds are kept).
    pub rounds: u32,
}

/// One sampled answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRecord {
    pub run_id: String,
    pub target: u32,
    pub round: u32,
    pub k: u32,
    /// Which prompt variant asked for it.
    pub variant: u32,
    pub text: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub cached: bool,
    pub created_at: i64,
}

/// A pair check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Conflict,
    Consistent,
    /// The judge replied, but no reply could be read.
    Unparsed,
    /// The judge could not be reached (the error says why); asked again on resume.
    Failed,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Conflict => "conflict",
            Verdict::Consistent => "consistent",
            Verdict::Unparsed => "unparsed",
            Verdict::Failed => "failed",
        }
    }

    pub(super) fn parse(s: &str) -> Result<Verdict> {
        Ok(match s {
            "conflict" => Verdict::Conflict,
            "consistent" => Verdict::Consistent,
            "unparsed" => Verdict::Unparsed,
            "failed" => Verdict::Failed,
            other => {
                return Err(StoreError::Unknown {
                    what: "pair verdict",
                    value: other.into(),
                });
            }
        })
    }
}

/// One pair check: the answer under test against sample `k` of `round`, asked in wording
/// `wording` (0: the run's first; see `detect::templates`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRecord {
    pub run_id: String,
    pub target: u32,
    pub round: u32,
    pub k: u32,
    #[serde(default)]
    pub wording: u32,
    pub judge: String,
    pub verdict: Verdict,
    pub explanation: Option<String>,
    pub quote_a: Option<String>,
    pub quote_b: Option<String>,
    /// The judge's last reply, as it came.
    pub reply: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

/// A write to the detection tables (the writer thread commits queued writes together).
#[derive(Debug, Clone)]
pub enum DetectWrite {
    CreateRun(Box<DetectRun>, Vec<Target>),
    Status(String, RunStatus),
    Answer {
        run: String,
        target: u32,
        answer: std::result::Result<String, String>,
        refused: bool,
    },
    Class {
        run: String,
        target: u32,
        class: std::result::Result<Class, String>,
        reply: Option<String>,
    },
    /// One more round of samples for a target.
    AddRound {
        run: String,
        target: u32,
    },
    Sample(SampleRecord),
    Pair(PairRecord),
}

impl DetectWrite {
    /// The run a write belongs to; none for the write that creates it (made before its lock).
    pub fn run_id(&self) -> Option<&str> {
        match self {
            DetectWrite::CreateRun(..) => None,
            DetectWrite::Status(run, _)
            | DetectWrite::Answer { run, .. }
            | DetectWrite::Class { run, .. }
            | DetectWrite::AddRound { run, .. } => Some(run),
            DetectWrite::Sample(s) => Some(&s.run_id),
            DetectWrite::Pair(p) => Some(&p.run_id),
        }
    }
}

impl Store {
    /// Applies detection writes in one transaction.
    pub fn apply_detect(&mut self, writes: &[DetectWrite]) -> Result<()> {
        let tx = self.conn.transaction()?;
        for w in writes {
            match w {
                DetectWrite::CreateRun(run, targets) => {
                    tx.execute(
                        "INSERT INTO detect_runs (id, created_at, kind, dataset, config, status)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![
                            run.id,
                            run.created_at,
                            run.kind.as_str(),
                            run.dataset,
                            serde_json::to_string(&run.config).map_err(|source| {
                                StoreError::Json {
                                    what: "detection config",
                                    source,
                                }
                            })?,
                            run.status.as_str()
                        ],
                    )?;
                    // Each row by its table's description (`record.rs`): one conversion.
                    let mut ins = tx.prepare_cached(&Target::table().replace_sql())?;
                    for t in targets {
                        let mut t = t.clone();
                        t.run_id.clone_from(&run.id);
                        t.rounds = t.rounds.max(1);
                        ins.execute(rusqlite::params_from_iter(t.to_row()))?;
                    }
                }
                DetectWrite::Status(id, status) => {
                    tx.execute(
                        "UPDATE detect_runs SET status = ?2 WHERE id = ?1",
                        params![id, status.as_str()],
                    )?;
                }
                DetectWrite::Answer {
                    run,
                    target,
                    answer,
                    refused,
                } => {
                    let (text, error) = match answer {
                        Ok(t) => (Some(t), None),
                        Err(e) => (None, Some(e)),
                    };
                    tx.execute(
                        "UPDATE detect_targets SET answer = ?3, answer_error = ?4, refused = ?5
                         WHERE run_id = ?1 AND idx = ?2",
                        params![run, target, text, error, refused],
                    )?;
                }
                DetectWrite::Class {
                    run,
                    target,
                    class,
                    reply,
                } => {
                    let (c, error) = match class {
                        Ok(c) => (Some(c.as_str()), None),
                        Err(e) => (None, Some(e)),
                    };
                    tx.execute(
                        "UPDATE detect_targets SET class = ?3, class_reply = ?4, class_error = ?5
                         WHERE run_id = ?1 AND idx = ?2",
                        params![run, target, c, reply, error],
                    )?;
                }
                DetectWrite::AddRound { run, target } => {
                    tx.execute(
                        "UPDATE detect_targets SET rounds = rounds + 1 WHERE run_id = ?1 AND idx = ?2",
                        params![run, target],
                    )?;
                }
                DetectWrite::Sample(s) => {
                    tx.prepare_cached(&SampleRecord::table().replace_sql())?
                        .execute(rusqlite::params_from_iter(s.to_row()))?;
                }
                DetectWrite::Pair(p) => {
                    tx.prepare_cached(&PairRecord::table().replace_sql())?
                        .execute(rusqlite::params_from_iter(p.to_row()))?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Detection runs, newest first.
    pub fn detect_runs(&self) -> Result<Vec<DetectRun>> {
        self.lane_runs("detect_runs", Some("kind"))?
            .into_iter()
            .map(|r| {
                Ok(DetectRun {
                    kind: DetectKind::parse(&r.extra)?,
                    id: r.id,
                    created_at: r.created_at,
                    dataset: r.dataset,
                    config: r.config,
                    status: r.status,
                })
            })
            .collect()
    }

    pub fn detect_run(&self, id: &str) -> Result<Option<DetectRun>> {
        Ok(self.detect_runs()?.into_iter().find(|r| r.id == id))
    }

    /// A detection's targets, by index.
    pub fn detect_targets(&self, run_id: &str) -> Result<Vec<Target>> {
        self.records_where(Some(("run_id", run_id)))
    }

    /// A detection's samples, by target, round and k.
    pub fn detect_samples(&self, run_id: &str) -> Result<Vec<SampleRecord>> {
        self.records_where(Some(("run_id", run_id)))
    }

    /// A detection's pair verdicts, by target, round, k and wording.
    pub fn detect_pairs(&self, run_id: &str) -> Result<Vec<PairRecord>> {
        self.records_where(Some(("run_id", run_id)))
    }

    /// The newest detection of a stored answer: (detection run, target).
    pub fn detection_of(&self, source_run: &str, source_job: u32) -> Result<Option<(String, u32)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT t.run_id, t.idx FROM detect_targets t JOIN detect_runs r ON r.id = t.run_id
                 WHERE t.source_run = ?1 AND t.source_job = ?2
                 ORDER BY r.created_at DESC, r.id DESC LIMIT 1",
                params![source_run, source_job],
                |r| Ok((r.get("run_id")?, r.get("idx")?)),
            )
            .optional()?)
    }
}
