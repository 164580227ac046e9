//! Hallucinations found without an answer key (METHODS.md §3, AutoHall): sample more answers
//! from the same model through other wordings, ask a judge whether the answer under test and each
//! sample contradict each other, and flag the answer when any pair does. On PRISM items this
//! checks stored answers; on fact-checking claims it runs AutoHall's own pipeline (a reference,
//! a classification against the label, then detection on a balanced set).

pub(crate) mod analysis;
pub mod import;
pub mod parse;
pub(crate) mod plan;
pub mod prompts;
pub mod released;
pub mod reread;
pub(crate) mod results;
pub mod run;
pub mod semantic;
pub mod signals;
pub mod stored;
pub mod targets;
/// A detection's editable wordings (kept below the store, which records them with a run).
pub use crate::wordings as templates;
#[cfg(test)]
pub(crate) mod test_support;
pub mod topics;
