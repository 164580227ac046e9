//! `prism`: a terminal workbench for diagnosing where and why large language models hallucinate.
//!
//! The library holds the engine (taxonomy, datasets, prompts) and the front-ends (the TUI and the
//! headless CLI commands) that sit on it. Data flows one way: files → [`dataset::Dataset`] →
//! front-ends; nothing in `dataset` knows about the terminal.

#![warn(unreachable_pub, clippy::unwrap_used, clippy::too_many_lines)]
#![deny(clippy::too_many_arguments)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod cli;
pub mod config;
pub mod cpu;
pub mod dataset;
pub mod detect;
pub mod engine;
pub mod eval;
pub mod files;
pub mod foreign;
pub mod fuzzing;
pub mod prompt;
pub mod provider;
pub mod report;
pub mod review;
pub mod runs;
pub mod selfcheck;
pub mod sentences;
pub(crate) mod shutdown;
pub mod store;
pub mod taxonomy;
pub mod text;
pub mod theme;
pub mod tui;
pub(crate) mod validate;
pub mod wordings;
