//! Scoring: text normalisation, the rule evaluators (exact, fuzzy, choice, abstain, truth_label,
//! word_range, data_format, language, ifeval), the LLM judges, and the metrics.

pub(crate) mod binary;
pub mod compare;
pub(crate) mod echo;
pub(crate) mod formats;
pub mod gate;
pub mod ifeval;
pub(crate) mod judge;
pub mod language;
pub(crate) mod metrics;
pub mod panel;
pub(crate) mod rules;
/// The option letter of a choice answer (PRISM's extraction), for the tests that hold it to the rule.
pub use rules::extract_choice;
pub(crate) mod py;
pub mod score;
pub mod semantic;
pub mod signals;
pub mod summary;
pub(crate) mod text;
pub mod whitebox;
