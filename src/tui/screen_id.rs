//! The names of screens and popups: who asked for background work (its results go back there),
//! and what tests look for.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScreenId {
    Browse,
    Compare,
    Heatmap,
    Help,
    Problems,
    Picker,
    JudgePicker,
    Correlation,
    Contradictions,
    Pair,
    Claims,
    Selfcheck,
    Review,
    Runs,
    Flip,
    NameRun,
    LabelAnswer,
    Judges,
    Palette,
    Sentences,
    Source,
}
