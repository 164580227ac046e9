//! Self-detection (METHODS.md §4, Kadotani et al.): from (subject, relation, object) facts a
//! model writes a true sentence and a false one; a detector (the model itself, or another) says
//! whether each contains false information, directly and with chain-of-thought. Can a model spot
//! its own false sentences?

pub mod answers;
pub(crate) mod parse;
pub mod prompts;
pub mod results;
pub mod run;
