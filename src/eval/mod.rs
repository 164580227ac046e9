//! Scoring: text normalisation, the rule evaluators (exact, fuzzy, choice, abstain, truth_label,
//! word_range, data_format, language, ifeval), the LLM judges, and the metrics.

pub mod binary;
pub mod compare;
pub mod echo;
pub mod formats;
pub mod ifeval;
pub mod judge;
pub mod language;
pub mod metrics;
pub mod rules;
pub mod score;
pub mod summary;
pub mod text;
