//! Groups of screens that many actions share (the screens, where the global actions apply;
//! those that scroll), named once for `defs`.

use super::Mode;
use Mode::{
    Browse, Claims, Compare, Contradictions, Drill, Flip, Heatmap, Help, Judges, Pair, Picker,
    Problems, Review, Runs, Selfcheck, Sentences, Source, Where,
};

/// The screens (not popups): where the global actions apply.
pub(super) const SCREENS: &[Mode] = &[
    Browse,
    Compare,
    Heatmap,
    Drill,
    Contradictions,
    Claims,
    Selfcheck,
    Sentences,
    Review,
    Runs,
    Flip,
    Judges,
    Where,
    Source,
];
pub(super) const SCROLL: &[Mode] = &[
    Browse,
    Compare,
    Heatmap,
    Drill,
    Help,
    Problems,
    Picker,
    Contradictions,
    Pair,
    Claims,
    Selfcheck,
    Sentences,
    Runs,
    Flip,
    Judges,
    Where,
    Source,
];
