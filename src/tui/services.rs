//! What the TUI's background work needs from outside: the store, how to reach models, who is
//! reviewing, the judge. The front-end builds it; the jobs hub owns it while the loop runs.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::engine::{BackendFactory, Caller};
use crate::provider::ModelConfig;
use crate::store::{Db, StoreHandle};

/// What the loop needs to start runs, score and read stored answers. `offline()` has no store.
pub struct Services {
    pub store: Option<StoreHandle>,
    /// The store: this machine's file, and the shared store beside it when there is one (its
    /// runs mirrored into the file while the TUI runs; review decisions and labels go to it).
    /// The store thread reads through a `Db` of its own on the same stores ([`Db::again`]).
    pub db: Option<Arc<Db>>,
    pub factory: BackendFactory,
    /// How the dataset is named in runs (a path, or `<sample-data>`).
    pub dataset_ref: String,
    /// Most requests in flight for runs started here.
    pub concurrency: usize,
    /// The judge for judged evaluators (`judge` in config.toml, or chosen with `u`), if any:
    /// a run going when it is chosen judges with it from then on (the run shares the slot).
    pub judge: crate::engine::JudgeSlot,
    /// Who is reviewing (`--reviewer`, the config's `reviewer`, or the login name).
    pub reviewer: String,
    /// Blind review (`--blind`, or `blind = true` in the config).
    pub blind: bool,
    /// Where choices made in the TUI are remembered (`config.toml`); `None`: not remembered.
    pub config_file: Option<std::path::PathBuf>,
}

impl Services {
    pub fn offline() -> Services {
        Services {
            store: None,
            db: None,
            factory: crate::engine::http_backends(),
            dataset_ref: "<sample-data>".into(),
            concurrency: 16,
            judge: Default::default(),
            reviewer: crate::review::load::default_reviewer(),
            blind: false,
            config_file: None,
        }
    }

    /// Opens the store file at `path` for runs and reads.
    pub fn with_store(
        path: &std::path::Path,
        factory: BackendFactory,
        dataset_ref: String,
    ) -> anyhow::Result<Services> {
        Services::with_db(Db::file(path), factory, dataset_ref)
    }

    /// Works on `db` (a file, or a shared store through this machine's).
    pub fn with_db(
        db: Db,
        factory: BackendFactory,
        dataset_ref: String,
    ) -> anyhow::Result<Services> {
        let writer = db.writer()?;
        Ok(Services {
            store: Some(writer),
            db: Some(Arc::new(db)),
            factory,
            dataset_ref,
            concurrency: 16,
            judge: Default::default(),
            reviewer: crate::review::load::default_reviewer(),
            blind: false,
            config_file: None,
        })
    }

    /// The shared store, when the store is one (`store::mirror`): the team's runs, and
    /// answers arriving from every worker.
    pub fn shared(&self) -> Option<Arc<Db>> {
        self.db.clone().filter(|d| d.is_shared())
    }

    /// Where labels are written: the shared store when there is one (it writes this machine's
    /// copy too), else this machine's file; `None` without a store. One way for every label
    /// (`Db::add_labels`), whichever screen or undo writes it.
    pub fn labels_db(&self) -> Option<Arc<Db>> {
        self.db.clone()
    }

    /// Uses `cfg` as the judge, sharing the store's cache.
    pub fn set_judge(&mut self, cfg: &ModelConfig) -> anyhow::Result<()> {
        let caller = Caller::new(
            cfg,
            &self.factory,
            self.store.clone(),
            true,
            CancellationToken::new(),
        )?;
        self.judge.set(Some(Arc::new(caller)));
        Ok(())
    }
}
