//! What every lane run is given, in one value: where it saves, how it reaches the models, where
//! its front-end listens, and the user's cancel. A lane's entry takes this and what is its own
//! (its run, its plan, its options), so no entry point grows an argument per concern.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::BackendFactory;
use crate::store::StoreHandle;

pub struct Lane<E> {
    /// Where the lane saves (the store's one writer; a shared store gets each commit).
    pub store: StoreHandle,
    /// How models are reached (a backend per configured model).
    pub factory: BackendFactory,
    /// Where the lane's front-end listens.
    pub events: mpsc::UnboundedSender<E>,
    /// The user's cancel (ctrl-c, SIGTERM, esc on a screen).
    pub cancel: CancellationToken,
}
