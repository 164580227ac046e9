//! The judge a run scores with, shared with the front-end that started it.

use std::sync::Arc;

use super::Caller;

/// The judge a run scores with, which a front-end may set while the run goes (the TUI's `u`):
/// every answer that arrives after it is set is judged by it; the ones before waited.
#[derive(Clone, Default)]
pub struct JudgeSlot(Arc<std::sync::RwLock<Option<Arc<Caller>>>>);

impl JudgeSlot {
    pub fn new(judge: Option<Arc<Caller>>) -> JudgeSlot {
        JudgeSlot(Arc::new(std::sync::RwLock::new(judge)))
    }

    /// The judge now.
    pub fn get(&self) -> Option<Arc<Caller>> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set(&self, judge: Option<Arc<Caller>>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = judge;
    }

    pub fn is_set(&self) -> bool {
        self.0.read().unwrap_or_else(|e| e.into_inner()).is_some()
    }
}
