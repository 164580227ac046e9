//! Why a lane's run did not start or finish, typed with what a front-end should do about it.

/// Why a lane's run did not start or did not finish, with what to do about it: the policy a
/// front-end acts on (as [`crate::provider::ProviderError`] carries the retry policy of a call).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The run cannot be set up as it is (a missing API key, a model or item that is not
    /// there): nothing was asked; fix the config or the arguments and start again.
    #[error("{0}")]
    Config(String),
    /// Another live prism holds the run's lock (it is running there): wait, then resume.
    #[error(
        "{what} {run} is being run by another prism (pid {pid}, seen {age} s ago); wait for it \
         to finish, or resume after it stops (a lock not refreshed for {stale} s is taken over)",
        stale = crate::store::STALE_AFTER_SECS
    )]
    Locked {
        what: &'static str,
        run: String,
        pid: i64,
        age: i64,
    },
    /// The lock was taken over while this process was stalled: it stopped, the other one
    /// finishes the run.
    #[error(
        "{what} {run} was taken over by another prism while this one was stalled (its lock was \
         not refreshed for {stale} s); this process stopped, and the other one finishes the run",
        stale = crate::store::STALE_AFTER_SECS
    )]
    TakenOver { what: &'static str, run: String },
    /// The store could not record what the run needs before its calls (the run, its lock):
    /// nothing was asked; try again when the store can be written.
    #[error("{doing}: {source}")]
    Store {
        doing: String,
        source: crate::store::WriteError,
    },
}

impl RunError {
    /// Whether the same command can simply be run again later (another process holds the
    /// run, or the store could not be written), as opposed to a config to fix.
    pub fn is_temporary(&self) -> bool {
        matches!(self, RunError::Locked { .. } | RunError::Store { .. })
    }

    pub(crate) fn config(e: impl std::fmt::Display) -> RunError {
        RunError::Config(e.to_string())
    }

    pub(crate) fn store(doing: impl Into<String>, source: crate::store::WriteError) -> RunError {
        RunError::Store {
            doing: doing.into(),
            source,
        }
    }
}
