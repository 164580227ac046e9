//! What is stored of a detection run, read in one go: its targets, every sample, every pair
//! verdict. The engine keeps it current from its events (`Stored::apply`, in `run`); the
//! results are computed from it.

use crate::store::{EntailRecord, PairRecord, SampleRecord, Target};

/// What is stored of a run: its targets, samples and pairs, and the entailment verdicts any
/// judge gave on answers to its questions (semantic entropy, `prism entropy`).
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub targets: Vec<Target>,
    pub samples: Vec<SampleRecord>,
    pub pairs: Vec<PairRecord>,
    pub entailments: Vec<EntailRecord>,
}

impl Stored {
    /// Targets, samples and pairs (not the entailment verdicts: [`Stored::with_entailments`]
    /// adds them where they are shown).
    pub fn load(db: &crate::store::Db, run_id: &str) -> crate::store::Result<Stored> {
        let store = db.read()?;
        Ok(Stored {
            targets: store.detect_targets(run_id)?,
            samples: store.detect_samples(run_id)?,
            pairs: store.detect_pairs(run_id)?,
            entailments: Vec::new(),
        })
    }

    /// Adds every judge's entailment verdicts on answers to the run's questions.
    pub fn with_entailments(mut self, db: &crate::store::Db) -> crate::store::Result<Stored> {
        let store = db.read()?;
        let questions: Vec<&str> = self.targets.iter().map(|t| t.question.as_str()).collect();
        self.entailments = store.entailments_on(&questions)?;
        Ok(self)
    }
}
