//! What is stored of a detection run, read in one go: its targets, every sample, every pair
//! verdict. The engine keeps it current from its events (`Stored::apply`, in `run`); the
//! results are computed from it.

use crate::store::{PairRecord, SampleRecord, Target};

/// What is stored of a run: its targets, samples and pairs.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub targets: Vec<Target>,
    pub samples: Vec<SampleRecord>,
    pub pairs: Vec<PairRecord>,
}

impl Stored {
    pub fn load(store: &crate::store::Store, run_id: &str) -> crate::store::Result<Stored> {
        Ok(Stored {
            targets: store.detect_targets(run_id)?,
            samples: store.detect_samples(run_id)?,
            pairs: store.detect_pairs(run_id)?,
        })
    }
}
