//! What the TUI's background work needs from outside: the store, how to reach models, who is
//! reviewing, the judge. The front-end builds it; the jobs hub owns it while the loop runs.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::engine::{BackendFactory, Caller};
use crate::provider::ModelConfig;
use crate::store::{Store, StoreHandle};

/// What the loop needs to start runs, score and read stored answers. `offline()` has no store.
pub struct Services {
    pub store: Option<StoreHandle>,
    /// A second connection for reads (WAL lets it read while the writer writes).
    pub reader: Option<Store>,
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
    /// Where review decisions and drafts go: the store's file, or a shared PostgreSQL database.
    pub review: Option<crate::store::Panel>,
    /// Blind review (`--blind`, or `blind = true` in the config).
    pub blind: bool,
    /// Where choices made in the TUI are remembered (`config.toml`); `None`: not remembered.
    pub config_file: Option<std::path::PathBuf>,
    /// A shared store whose runs are mirrored into the local store while the TUI runs
    /// (`store::mirror`): the team's runs, and answers arriving from every worker.
    pub shared: Option<Arc<crate::store::Db>>,
}

impl Services {
    pub fn offline() -> Services {
        Services {
            store: None,
            reader: None,
            factory: crate::engine::http_backends(),
            dataset_ref: "<sample-data>".into(),
            concurrency: 16,
            judge: Default::default(),
            reviewer: crate::review::load::default_reviewer(),
            review: None,
            blind: false,
            config_file: None,
            shared: None,
        }
    }

    /// Opens the store at `db` for runs and reads.
    pub fn with_store(
        db: &std::path::Path,
        factory: BackendFactory,
        dataset_ref: String,
    ) -> anyhow::Result<Services> {
        let file = crate::store::Db::file(db);
        let writer = file.writer()?;
        let reader = file.store()?;
        let review = file.panel()?;
        Ok(Services {
            store: Some(writer),
            reader: Some(reader),
            factory,
            dataset_ref,
            concurrency: 16,
            judge: Default::default(),
            reviewer: crate::review::load::default_reviewer(),
            review: Some(review),
            blind: false,
            config_file: None,
            shared: None,
        })
    }

    /// Where labels are written: the shared store when there is one (it writes this machine's
    /// copy too), else this machine's file; `None` without a store. One way for every label
    /// (`Db::add_labels`), whichever screen or undo writes it.
    pub fn labels_db(&self) -> Option<Arc<crate::store::Db>> {
        self.shared.clone().or_else(|| {
            let path = self.reader.as_ref()?.path()?;
            Some(Arc::new(crate::store::Db::file(&path)))
        })
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
