//! The screens, one file each. Adding one: a file implementing
//! [`Component`](super::component::Component), its name in
//! [`ScreenId`](super::screen_id::ScreenId), and, if other screens open it, an arm in
//! [`Open`](super::component::Open) built here.

mod browse;
mod claims;
mod compare;
mod contradictions;
mod flip;
mod heatmap;
mod judges;
mod review;
mod runs;
mod selfcheck;
pub mod sentences;
mod source;

pub use browse::{Browse, Focus, Search, find_matches, item_detail};
pub use claims::ClaimsBrowse;
pub use compare::Compare;
pub use contradictions::Contradictions;
pub use flip::Flip;
pub use heatmap::{Drill, Heatmap};
pub use judges::Judges;
pub use review::{
    DECISION_ROW as REVIEW_DECISION_ROW, MIN_REVIEWERS as REVIEW_MIN_REVIEWERS, Review,
};
pub use runs::Runs;
pub use selfcheck::Selfcheck;
pub use source::Source;

use super::component::{Component, Open};

/// Builds a screen another one asked for.
pub fn open(o: Open) -> Box<dyn Component> {
    match o {
        Open::Compare { items, pos } => Box::new(Compare::new(items, pos)),
        Open::RunAnswers { run, items } => Box::new(Compare::of_run(run, items)),
        Open::Heatmap => Box::new(Heatmap::default()),
        Open::HeatmapOf(runs) => Box::new(Heatmap::of_runs(runs)),
        Open::Contradictions(job) => Box::new(Contradictions::new(job)),
        Open::Claims { set, dataset } => Box::new(ClaimsBrowse::new(set, dataset)),
        Open::Selfcheck { set, dataset } => Box::new(Selfcheck::new(set, dataset)),
        Open::Review { scope } => Box::new(Review::scoped(scope)),
        Open::Runs => Box::new(Runs::default()),
        Open::Flip { flips, pos, sides } => Box::new(Flip::new(flips, pos, *sides)),
        Open::Source(run) => Box::new(Source::new(run)),
        Open::Judges { run } => Box::new(Judges::new(run)),
        Open::Sentences { run, job } => Box::new(sentences::Sentences::new(run, job)),
    }
}
