//! Scoring: text normalisation, the rule evaluators and the metrics (issue 4, in progress: the
//! judged evaluators, data formats, language detection and IFEval checks are still to come).

pub mod metrics;
pub mod rules;
pub mod text;
