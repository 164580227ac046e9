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
    pub fn load(store: &crate::store::Store, run_id: &str) -> crate::store::Result<Stored> {
        let targets = store.detect_targets(run_id)?;
        let questions: Vec<&str> = targets.iter().map(|t| t.question.as_str()).collect();
        let entailments = store.entailments_on(&questions)?;
        Ok(Stored {
            samples: store.detect_samples(run_id)?,
            pairs: store.detect_pairs(run_id)?,
            entailments,
            targets,
        })
    }
}
