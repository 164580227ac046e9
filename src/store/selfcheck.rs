//! Self-detection runs: per triple and generator the true and false sentences it wrote (or why
//! they were set aside), and each detector's verdict on each sentence, directly and with
//! chain-of-thought; every result saved as it arrives, so a run resumes without asking twice.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::Store;
use super::error::{Result, StoreError};
use super::record::Record;
use super::runs::{ModelSnapshot, RunStatus};
use crate::provider::Params;

/// How a self-detection run was set up. Never holds an API key.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SelfcheckConfig {
    /// The models writing the sentences.
    pub generators: Vec<ModelSnapshot>,
    /// The models judging them; empty: each generator judges its own.
    pub detectors: Vec<ModelSnapshot>,
    /// Examples in the true-sentence prompt.
    pub shots: u32,
    /// Attempts at a sentence that passes its check.
    pub attempts: u32,
    /// Generation parameters over each generator's own.
    pub params: Params,
    pub filter: Option<String>,
    /// Equal-size popularity bins for the recall/popularity correlation.
    pub bins: u32,
    /// Who writes the false sentence.
    pub false_by: FalseBy,
}

/// Who writes the false sentence: the generator (the method), or a swap of the object for
/// another object of the same relation from the dataset (for models too small to do the edit;
/// the detection half is then measured on sentences the model did not write).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FalseBy {
    #[default]
    Model,
    Swap,
}

impl FalseBy {
    pub fn as_str(self) -> &'static str {
        match self {
            FalseBy::Model => "model",
            FalseBy::Swap => "swap",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfcheckRun {
    pub id: String,
    pub created_at: i64,
    /// A path, or `<sample-triples>`.
    pub dataset: String,
    pub config: SelfcheckConfig,
    pub status: RunStatus,
}

/// One triple for one generator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfcheckItem {
    pub run_id: String,
    pub idx: u32,
    pub triple_id: String,
    pub subject: String,
    pub relation: String,
    pub object: String,
    /// The source sentence the true sentence paraphrases, if the dataset gives one.
    pub source: Option<String>,
    pub popularity: Option<f64>,
    pub generator: String,
    /// Generation parameters (JSON).
    pub params: String,
    /// The examples of the true-sentence prompt (JSON: [[fact, sentence], ...]).
    pub shots: String,
    pub true_sentence: Option<String>,
    pub true_attempts: u32,
    pub false_sentence: Option<String>,
    pub false_attempts: u32,
    /// Why the triple is left out (a sentence never passed its check), if it is.
    pub set_aside: Option<String>,
    /// A call that failed (asked again on resume).
    pub error: Option<String>,
    /// Another object of the same relation: the false sentence of a `swap` run.
    pub decoy: Option<String>,
}

/// Which of a triple's sentences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sentence {
    True,
    False,
}

impl Sentence {
    pub fn as_str(self) -> &'static str {
        match self {
            Sentence::True => "true",
            Sentence::False => "false",
        }
    }
}

/// How the detector was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Direct,
    Cot,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Cot => "cot",
        }
    }

    pub const BOTH: [Mode; 2] = [Mode::Direct, Mode::Cot];
}

/// A detector's answer to "does it contain false information?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Yes,
    No,
    /// Not a clean yes or no (METHODS.md: counts as "detected"; kept apart to be seen).
    Unparsed,
    /// The detector could not be reached (asked again on resume).
    Failed,
}

impl Answer {
    /// Whether a verdict says "contains false information" (METHODS.md §4: anything but a
    /// clean yes or no counts as detected); `None` for a failed call.
    pub fn detected(self) -> Option<bool> {
        match self {
            Answer::Yes | Answer::Unparsed => Some(true),
            Answer::No => Some(false),
            Answer::Failed => None,
        }
    }
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Yes => "yes",
            Answer::No => "no",
            Answer::Unparsed => "unparsed",
            Answer::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictRecord {
    pub run_id: String,
    pub item: u32,
    pub sentence: Sentence,
    pub detector: String,
    pub mode: Mode,
    pub answer: Answer,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

/// A write to the self-detection tables.
#[derive(Debug, Clone)]
pub enum SelfcheckWrite {
    CreateRun(Box<SelfcheckRun>, Vec<SelfcheckItem>),
    Status(String, RunStatus),
    /// An item's sentences and whether it is set aside, as they stand.
    Item(Box<SelfcheckItem>),
    Verdict(VerdictRecord),
}

impl SelfcheckWrite {
    /// The run a write belongs to; none for the write that creates it (made before its lock).
    pub fn run_id(&self) -> Option<&str> {
        match self {
            SelfcheckWrite::CreateRun(..) => None,
            SelfcheckWrite::Status(run, _) => Some(run),
            SelfcheckWrite::Item(i) => Some(&i.run_id),
            SelfcheckWrite::Verdict(v) => Some(&v.run_id),
        }
    }
}

/// A stored enum's text back as the enum, or the error naming what it was.
pub(super) fn parse<T: serde::de::DeserializeOwned>(what: &'static str, s: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(|_| {
        StoreError::Unknown {
            what,
            value: s.to_string(),
        }
    })
}

impl Store {
    pub fn apply_selfcheck(&mut self, writes: &[SelfcheckWrite]) -> Result<()> {
        let tx = self.conn.transaction()?;
        for w in writes {
            match w {
                SelfcheckWrite::CreateRun(run, items) => {
                    tx.execute(
                        "INSERT INTO selfcheck_runs (id, created_at, dataset, config, status)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![
                            run.id,
                            run.created_at,
                            run.dataset,
                            serde_json::to_string(&run.config).map_err(|source| {
                                StoreError::Json {
                                    what: "self-detection config",
                                    source,
                                }
                            })?,
                            run.status.as_str()
                        ],
                    )?;
                    for it in items {
                        insert_item(&tx, it)?;
                    }
                }
                SelfcheckWrite::Status(id, status) => {
                    tx.execute(
                        "UPDATE selfcheck_runs SET status = ?2 WHERE id = ?1",
                        params![id, status.as_str()],
                    )?;
                }
                SelfcheckWrite::Item(it) => insert_item(&tx, it)?,
                SelfcheckWrite::Verdict(v) => {
                    tx.prepare_cached(&VerdictRecord::table().replace_sql())?
                        .execute(rusqlite::params_from_iter(v.to_row()))?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Self-detection runs, newest first.
    pub fn selfcheck_runs(&self) -> Result<Vec<SelfcheckRun>> {
        Ok(self
            .lane_runs("selfcheck_runs", None)?
            .into_iter()
            .map(|r| SelfcheckRun {
                id: r.id,
                created_at: r.created_at,
                dataset: r.dataset,
                config: r.config,
                status: r.status,
            })
            .collect())
    }

    pub fn selfcheck_run(&self, id: &str) -> Result<Option<SelfcheckRun>> {
        Ok(self.selfcheck_runs()?.into_iter().find(|r| r.id == id))
    }

    /// A self-detection run's items, by index.
    pub fn selfcheck_items(&self, run_id: &str) -> Result<Vec<SelfcheckItem>> {
        self.records_where(Some(("run_id", run_id)))
    }

    /// A self-detection run's verdicts, by item, sentence, detector and mode.
    pub fn selfcheck_verdicts(&self, run_id: &str) -> Result<Vec<VerdictRecord>> {
        self.records_where(Some(("run_id", run_id)))
    }
}

/// An item by its table's description (`record.rs`): one conversion.
fn insert_item(tx: &rusqlite::Transaction, it: &SelfcheckItem) -> Result<()> {
    tx.prepare_cached(&SelfcheckItem::table().replace_sql())?
        .execute(rusqlite::params_from_iter(it.to_row()))?;
    Ok(())
}
