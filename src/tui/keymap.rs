//! Actions and the keys bound to them, by mode: each screen and popup has a [`Mode`], and only
//! the actions of the focused mode are looked up, so a key can mean one thing on one screen and
//! another elsewhere without clashing. The defaults are compiled in; the config's `[keys]` table
//! replaces an action's keys in every mode (`quit = ["q", "ctrl-c"]`) and `[keys.<mode>]` in one
//! mode (`[keys.compare]` `next_sample = ["x"]`). The help overlay is generated from this, for
//! the mode it was opened from.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

pub use crate::config::KeyEntry;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Collapse,
    Expand,
    Toggle,
    ExpandAll,
    NextPane,
    PrevPane,
    Search,
    NextMatch,
    PrevMatch,
    Problems,
    Cancel,
    Mark,
    Run,
    NextItem,
    PrevItem,
    NextSample,
    Back,
    Rescore,
    ToggleJudge,
    ToggleTokens,
    NextToken,
    PrevToken,
    Entropy,
    ChooseJudge,
    Runs,
    Heatmap,
    HeatView,
    Sort,
    Spearman,
    References,
    Baseline,
    MoreSamples,
    FewerSamples,
    Contradictions,
    Detect,
    SampleAgain,
    Metric,
    Models,
    StopRun,
    Copy,
    Label,
    NameRun,
    OpenRun,
    Claims,
    SelfDetect,
    Review,
    Retain,
    Remove,
    Revise,
    SaveDecision,
    EditRationale,
    EditQuestion,
    ReviewNext,
    ReviewPrev,
    StatusFilter,
    PanelFilter,
    Palette,
    Undo,
    WhereInAnswer,
}

/// Where input goes: a screen, a sub-state of one, or a popup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    Browse,
    Compare,
    Heatmap,
    /// The heatmap's list of items behind a cell.
    Drill,
    /// The heatmap's rank-correlation popup.
    Correlation,
    Help,
    Problems,
    Picker,
    /// The sampled answers of one answer and their pair verdicts.
    Contradictions,
    /// One pair side by side.
    Pair,
    /// The claims browser (topic → claim).
    Claims,
    /// Self-detection: generator × detector scores.
    Selfcheck,
    /// Self-detection: the sentences of one generator × detector pair.
    Sentences,
    /// Human review: the queue and the current item's decision.
    Review,
    /// The runs in the store and the comparison of two.
    Runs,
    /// A flipped item of a comparison: both runs' answers side by side.
    Flip,
    /// The judges on trial: each judge against people, by evaluator.
    Judges,
    /// The command palette: the actions of the screen below, searched as you type.
    Palette,
    /// Where in the answer: one answer's sentences shaded by how little its samples back them.
    Where,
}

impl Mode {
    pub const ALL: [Mode; 19] = [
        Mode::Browse,
        Mode::Compare,
        Mode::Heatmap,
        Mode::Drill,
        Mode::Correlation,
        Mode::Help,
        Mode::Problems,
        Mode::Picker,
        Mode::Contradictions,
        Mode::Pair,
        Mode::Claims,
        Mode::Selfcheck,
        Mode::Sentences,
        Mode::Review,
        Mode::Runs,
        Mode::Flip,
        Mode::Judges,
        Mode::Palette,
        Mode::Where,
    ];

    /// The name used in the config (`[keys.compare]`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Browse => "browse",
            Mode::Compare => "compare",
            Mode::Heatmap => "heatmap",
            Mode::Drill => "drill",
            Mode::Correlation => "correlation",
            Mode::Help => "help",
            Mode::Problems => "problems",
            Mode::Picker => "picker",
            Mode::Contradictions => "contradictions",
            Mode::Pair => "pair",
            Mode::Claims => "claims",
            Mode::Selfcheck => "selfcheck",
            Mode::Sentences => "sentences",
            Mode::Review => "review",
            Mode::Runs => "runs",
            Mode::Flip => "flip",
            Mode::Judges => "judges",
            Mode::Palette => "palette",
            Mode::Where => "where",
        }
    }

    /// What the help overlay calls it.
    pub fn title(self) -> &'static str {
        match self {
            Mode::Browse => "browse",
            Mode::Compare => "compare answers",
            Mode::Heatmap => "heatmap",
            Mode::Drill => "heatmap items",
            Mode::Correlation => "rank correlation",
            Mode::Help => "help",
            Mode::Problems => "problems",
            Mode::Picker => "run picker",
            Mode::Contradictions => "contradictions",
            Mode::Pair => "contradicting pair",
            Mode::Claims => "claims",
            Mode::Selfcheck => "self-detection",
            Mode::Sentences => "self-detection sentences",
            Mode::Review => "review",
            Mode::Runs => "runs",
            Mode::Flip => "flipped item",
            Mode::Judges => "judges on trial",
            Mode::Palette => "command palette",
            Mode::Where => "where in the answer",
        }
    }
}

use Mode::{
    Browse, Claims, Compare, Contradictions, Correlation, Drill, Flip, Heatmap, Help, Judges, Pair,
    Palette, Picker, Problems, Review, Runs, Selfcheck, Sentences, Where,
};

/// The screens (not popups): where the global actions apply.
const SCREENS: &[Mode] = &[
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
];
const SCROLL: &[Mode] = &[
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
];

/// One action: config name, (mode, description) pairs saying where it applies and what it does
/// there, and its default keys.
struct Def {
    action: Action,
    name: &'static str,
    keys: &'static [&'static str],
    uses: &'static [(&'static [Mode], &'static str)],
}

/// Every action's config name, in help order (the book's configuration chapter lists the same; a test holds them
/// together).
pub fn action_names() -> impl Iterator<Item = &'static str> {
    DEFS.iter().map(|d| d.name)
}

/// Every action, in help order.
const DEFS: &[Def] = &[
    Def {
        action: Action::Up,
        name: "up",
        keys: &["up", "k"],
        uses: &[
            (SCROLL, "move up"),
            (&[Palette], "the previous action (also ctrl-p)"),
            (&[Compare], "scroll the pane up"),
            (&[Pair], "scroll up"),
            (
                &[Judges],
                "previous evaluator; in the answers, the previous one",
            ),
            (
                &[Review],
                "previous row of the scoring form (criteria, then decision)",
            ),
        ],
    },
    Def {
        action: Action::Down,
        name: "down",
        keys: &["down", "j"],
        uses: &[
            (SCROLL, "move down"),
            (&[Palette], "the next action (also ctrl-n)"),
            (&[Compare], "scroll the pane down"),
            (&[Pair], "scroll down"),
            (&[Judges], "next evaluator; in the answers, the next one"),
            (
                &[Review],
                "next row of the scoring form; 1-9, 0 = 10 score the focused criterion",
            ),
        ],
    },
    Def {
        action: Action::PageUp,
        name: "page_up",
        keys: &["pageup", "ctrl-u"],
        uses: &[
            (
                &[Browse, Drill, Help, Problems, Compare, Selfcheck],
                "page up",
            ),
            (&[Sentences], "scroll the triple up"),
            (&[Review], "scroll the item up"),
            (&[Runs], "scroll the comparison up"),
            (&[Flip], "scroll the answers up"),
            (&[Judges], "scroll the answer up"),
            (&[Heatmap], "ten columns left"),
        ],
    },
    Def {
        action: Action::PageDown,
        name: "page_down",
        keys: &["pagedown", "ctrl-d"],
        uses: &[
            (
                &[Browse, Drill, Help, Problems, Compare, Selfcheck],
                "page down",
            ),
            (&[Sentences], "scroll the triple down"),
            (&[Review], "scroll the item down"),
            (&[Runs], "scroll the comparison down"),
            (&[Flip], "scroll the answers down"),
            (&[Judges], "scroll the answer down"),
            (&[Heatmap], "ten columns right"),
        ],
    },
    Def {
        action: Action::Top,
        name: "top",
        keys: &["home", "g"],
        uses: &[
            (
                &[Browse, Drill, Help, Problems, Heatmap, Selfcheck, Sentences],
                "go to the first row",
            ),
            (&[Compare], "scroll to the top"),
        ],
    },
    Def {
        action: Action::Bottom,
        name: "bottom",
        keys: &["end", "G"],
        uses: &[
            (
                &[Browse, Drill, Heatmap, Selfcheck, Sentences],
                "go to the last row",
            ),
            (&[Compare], "scroll to the end and follow the stream"),
        ],
    },
    Def {
        action: Action::Collapse,
        name: "collapse",
        keys: &["left", "h"],
        uses: &[
            (&[Browse], "collapse node / go to parent / previous pane"),
            (&[Claims], "close the topic / go to it"),
            (&[Compare], "previous pane"),
            (&[Heatmap], "previous column"),
            (&[Drill], "back to the grid"),
            (&[Sentences], "back to the scores"),
            (
                &[Judges],
                "previous judge; in the answers, back to the grid",
            ),
        ],
    },
    Def {
        action: Action::Expand,
        name: "expand",
        keys: &["right", "l"],
        uses: &[
            (&[Browse], "expand node / next pane"),
            (&[Claims], "open the topic"),
            (&[Compare], "next pane"),
            (&[Heatmap], "next column"),
            (&[Drill], "open the item"),
            (&[Judges], "next judge"),
        ],
    },
    Def {
        action: Action::Toggle,
        name: "toggle",
        keys: &["enter"],
        uses: &[
            (&[Browse], "open or close the node; open the item"),
            (&[Heatmap], "the items behind the cell, worst first"),
            (&[Drill], "open the item with every model's answer"),
            (&[Picker], "start the run"),
            (
                &[Contradictions],
                "the pair side by side, conflicting phrases marked",
            ),
            (&[Claims], "open the topic; on a claim, its contradictions"),
            (
                &[Runs],
                "compare the two marked runs (or the selected one with the run before it); on a flipped item, both runs' answers",
            ),
            (&[Selfcheck], "the pair's sentences, wrong verdicts first"),
            (
                &[Judges],
                "the answers where this judge and people disagree: the question, the reference, the answer, every judge's verdicts and every label",
            ),
            (&[Pair], "close"),
            (&[Palette], "do the chosen action"),
        ],
    },
    Def {
        action: Action::ExpandAll,
        name: "expand_all",
        keys: &["e"],
        uses: &[(&[Browse], "expand or collapse the whole tree")],
    },
    Def {
        action: Action::NextPane,
        name: "next_pane",
        keys: &["tab"],
        uses: &[
            (&[Browse], "focus the next pane"),
            (&[Compare], "next model's pane"),
            (&[Claims], "next model's reference"),
            (
                &[Runs],
                "between the runs and the comparison's flipped items",
            ),
            (
                &[Review],
                "next field: the criteria, the decision, the rationale",
            ),
        ],
    },
    Def {
        action: Action::PrevPane,
        name: "prev_pane",
        keys: &["backtab"],
        uses: &[
            (&[Browse], "focus the previous pane"),
            (&[Compare], "previous model's pane"),
            (&[Claims], "previous model's reference"),
            (
                &[Runs],
                "between the runs and the comparison's flipped items",
            ),
            (&[Review], "previous field"),
        ],
    },
    Def {
        action: Action::Search,
        name: "search",
        keys: &["/"],
        uses: &[(&[Browse], "search ids and text")],
    },
    Def {
        action: Action::NextMatch,
        name: "next_match",
        keys: &["n"],
        uses: &[(&[Browse], "jump to the next match")],
    },
    Def {
        action: Action::PrevMatch,
        name: "prev_match",
        keys: &["N"],
        uses: &[(&[Browse], "jump to the previous match")],
    },
    Def {
        action: Action::Mark,
        name: "mark",
        keys: &["space"],
        uses: &[
            (
                &[Browse],
                "mark the item for a run (the cursor moves to the next), or every item under the node",
            ),
            (
                &[Claims],
                "mark the claim (the cursor moves to the next), or every claim of the topic",
            ),
            (&[Picker], "choose the model or not"),
            (
                &[Runs],
                "mark the run: two for a comparison, any number for the heatmap",
            ),
        ],
    },
    Def {
        action: Action::Run,
        name: "run",
        keys: &["r"],
        uses: &[
            (
                &[Browse, Compare],
                "run the marked items (or the selection) against chosen models",
            ),
            (&[Claims, Selfcheck], "choose the models"),
            (&[Picker], "start the run"),
        ],
    },
    Def {
        action: Action::MoreSamples,
        name: "more_samples",
        keys: &["+", "="],
        uses: &[(&[Picker], "one more sample per item")],
    },
    Def {
        action: Action::FewerSamples,
        name: "fewer_samples",
        keys: &["-"],
        uses: &[(&[Picker], "one sample fewer per item")],
    },
    Def {
        action: Action::NextItem,
        name: "next_item",
        keys: &["]"],
        uses: &[
            (&[Compare], "next item"),
            (&[Flip], "next flipped item"),
            (&[Contradictions], "next answer of the detection"),
            (&[Selfcheck, Sentences], "next (older) self-detection run"),
        ],
    },
    Def {
        action: Action::PrevItem,
        name: "prev_item",
        keys: &["["],
        uses: &[
            (&[Compare], "previous item"),
            (&[Flip], "previous flipped item"),
            (&[Contradictions], "previous answer of the detection"),
            (
                &[Selfcheck, Sentences],
                "previous (newer) self-detection run",
            ),
        ],
    },
    Def {
        action: Action::NextSample,
        name: "next_sample",
        keys: &["s"],
        uses: &[
            (&[Compare], "next sample"),
            (&[Flip], "next sample (both sides)"),
            (&[Contradictions], "next round of samples"),
            (&[Review], "the next stored answer (the one L labels)"),
        ],
    },
    Def {
        action: Action::Rescore,
        name: "rescore",
        keys: &["S"],
        uses: &[(
            &[Browse, Compare],
            "score the item's answers again (and judge them)",
        )],
    },
    Def {
        action: Action::Runs,
        name: "runs",
        keys: &["R"],
        uses: &[(
            &[Browse],
            "the runs in the store: name, models, H-Score; compare two",
        )],
    },
    Def {
        action: Action::ChooseJudge,
        name: "choose_judge",
        keys: &["u"],
        uses: &[(
            &[Browse, Compare, Where],
            "choose the judge (any configured model) and score every answer waiting for one",
        )],
    },
    Def {
        action: Action::ToggleTokens,
        name: "toggle_tokens",
        keys: &["t"],
        uses: &[(
            &[Compare],
            "shade each token by its probability (answers run with --logprobs); low ones underlined",
        )],
    },
    Def {
        action: Action::NextToken,
        name: "next_token",
        keys: &["."],
        uses: &[(
            &[Compare],
            "the cursor to the focused answer's next unlikely token (below 0.5): its probability and top alternatives",
        )],
    },
    Def {
        action: Action::Entropy,
        name: "entropy",
        keys: &["e"],
        uses: &[(
            &[Contradictions],
            "semantic entropy of the shown round: the judge clusters the answer and its samples by meaning (stored verdicts are reused)",
        )],
    },
    Def {
        action: Action::PrevToken,
        name: "prev_token",
        keys: &[","],
        uses: &[(&[Compare], "the cursor to the previous unlikely token")],
    },
    Def {
        action: Action::ToggleJudge,
        name: "toggle_judge",
        keys: &["J"],
        uses: &[
            (&[Compare], "show or hide the judges' replies"),
            (&[Pair], "show or hide the judge's raw reply"),
            (
                &[Heatmap],
                "the judges on trial: each judge's kappa against people's labels, by evaluator (prism judges)",
            ),
        ],
    },
    Def {
        action: Action::Heatmap,
        name: "heatmap",
        keys: &["H"],
        uses: &[
            (
                &[Browse, Compare],
                "the heatmap of hallucination rates per model",
            ),
            (
                &[Runs],
                "the heatmap of the marked runs (or the selected one): a row per model and run",
            ),
            (&[Heatmap], "back to browsing"),
        ],
    },
    Def {
        action: Action::HeatView,
        name: "heat_view",
        keys: &["v"],
        uses: &[(&[Heatmap], "dimensions, categories or sub-tasks")],
    },
    Def {
        action: Action::Sort,
        name: "sort",
        keys: &["o"],
        uses: &[(&[Heatmap], "sort by the column (again: flip, off)")],
    },
    Def {
        action: Action::Spearman,
        name: "spearman",
        keys: &["c"],
        uses: &[
            (&[Heatmap], "rank correlation between dimensions"),
            (&[Correlation], "close"),
        ],
    },
    Def {
        action: Action::References,
        name: "references",
        keys: &["R"],
        uses: &[(&[Heatmap], "the paper's published rows, on or off")],
    },
    Def {
        action: Action::Baseline,
        name: "baseline",
        keys: &["B"],
        uses: &[(&[Heatmap], "compare every row with this one")],
    },
    Def {
        action: Action::Contradictions,
        name: "contradictions",
        keys: &["x"],
        uses: &[(
            &[Compare],
            "contradictions of the focused answer: K more samples, each pair checked",
        )],
    },
    Def {
        action: Action::Detect,
        name: "detect",
        keys: &["d"],
        uses: &[
            (
                &[Browse],
                "detect contradictions in the chosen models' answers to the marked items",
            ),
            (
                &[Claims],
                "AutoHall on the marked claims (or the selection) for the chosen models",
            ),
            (
                &[Selfcheck],
                "self-detection on the triples: each chosen model writes and judges its own",
            ),
        ],
    },
    Def {
        action: Action::SampleAgain,
        name: "sample_again",
        keys: &["a"],
        uses: &[(
            &[Contradictions],
            "sample again: a new round (earlier rounds are kept)",
        )],
    },
    Def {
        action: Action::Metric,
        name: "metric",
        keys: &["m"],
        uses: &[
            (
                &[Heatmap],
                "cells show: hallucination rate, share flagged by self-contradiction, share of items whose samples disagree, or each signal's AUROC against PRISM's verdict",
            ),
            (
                &[Selfcheck],
                "recall per relation: direct or chain-of-thought",
            ),
            (
                &[Picker],
                "self-detection: false sentences by the model, or swapped",
            ),
            (
                &[Where],
                "shade by: the prompt method (the judge), unigram, or the answer's tokens",
            ),
        ],
    },
    Def {
        action: Action::StopRun,
        name: "stop_run",
        keys: &["X"],
        uses: &[(
            &[Compare],
            "stop the run (press twice: finished answers are kept; esc only goes back)",
        )],
    },
    Def {
        action: Action::OpenRun,
        name: "open_run",
        keys: &["o"],
        uses: &[(
            &[Runs],
            "open the selected run's answers, item by item (that run's, not the newest)",
        )],
    },
    Def {
        action: Action::Label,
        name: "label",
        keys: &["L"],
        uses: &[
            (
                &[Compare],
                "label the focused answer: hallucinated, correct or can't tell, with a note (kept, never overwritten; prism judges measures the judges against these labels)",
            ),
            (&[Judges], "label the answer shown"),
            (
                &[Review],
                "label the selected stored answer (s selects the next): hallucinated, correct or can't tell",
            ),
        ],
    },
    Def {
        action: Action::NameRun,
        name: "name_run",
        keys: &["n"],
        uses: &[(&[Runs], "name the selected run (shown first in its line)")],
    },
    Def {
        action: Action::Copy,
        name: "copy",
        keys: &["y"],
        uses: &[(
            &[Compare],
            "copy the focused answer to the clipboard (OSC 52: the terminal must allow it; tmux needs set-clipboard on)",
        )],
    },
    Def {
        action: Action::Models,
        name: "models",
        keys: &["M"],
        uses: &[
            (
                &[Browse],
                "the tree shows the next models' rates (when not all fit: the title says how many more)",
            ),
            (
                &[Runs],
                "compare the two runs on the next model they both have",
            ),
        ],
    },
    Def {
        action: Action::Claims,
        name: "claims",
        keys: &["C"],
        uses: &[(
            &[Browse],
            "the claims browser (AutoHall on fact-checking claims)",
        )],
    },
    Def {
        action: Action::SelfDetect,
        name: "self_detection",
        keys: &["D"],
        uses: &[(
            &[Browse],
            "self-detection: can a model spot its own false sentences?",
        )],
    },
    Def {
        action: Action::Review,
        name: "review",
        keys: &["V"],
        uses: &[(
            &[Browse],
            "human review: score, decide and explain which items stay",
        )],
    },
    Def {
        action: Action::Retain,
        name: "retain",
        keys: &["y"],
        uses: &[(&[Review], "decide: retain the item")],
    },
    Def {
        action: Action::Remove,
        name: "remove",
        keys: &["x"],
        uses: &[(&[Review], "decide: remove the item")],
    },
    Def {
        action: Action::Revise,
        name: "revise",
        keys: &["v"],
        uses: &[(
            &[Review],
            "decide: revise (edit the question with E), reviewed again next round",
        )],
    },
    Def {
        action: Action::SaveDecision,
        name: "save_decision",
        keys: &["ctrl-s"],
        uses: &[(&[Review], "save the decision (also inside the editor)")],
    },
    Def {
        action: Action::EditRationale,
        name: "edit_rationale",
        keys: &["enter", "i"],
        uses: &[(
            &[Review],
            "write the rationale (esc leaves the editor; saved as you type)",
        )],
    },
    Def {
        action: Action::EditQuestion,
        name: "edit_question",
        keys: &["E"],
        uses: &[(&[Review], "edit the question for the next round (revise)")],
    },
    Def {
        action: Action::ReviewNext,
        name: "review_next",
        keys: &["n"],
        uses: &[(&[Review], "next item in the queue")],
    },
    Def {
        action: Action::ReviewPrev,
        name: "review_prev",
        keys: &["p"],
        uses: &[(&[Review], "previous item in the queue")],
    },
    Def {
        action: Action::StatusFilter,
        name: "status_filter",
        keys: &["f"],
        uses: &[(
            &[Review],
            "show: all, unreviewed, mine, disputed, converged, revised (round 2+)",
        )],
    },
    Def {
        action: Action::PanelFilter,
        name: "panel_filter",
        keys: &["P"],
        uses: &[(
            &[Review],
            "panel: both, Knowledge & Source (KE/KM), Reasoning & Instruction (RE/IFE)",
        )],
    },
    Def {
        action: Action::Back,
        name: "back",
        keys: &["backspace", "b"],
        uses: &[
            (&[Browse], "back to the run's answers"),
            (&[Compare], "back (a run goes on)"),
            (&[Heatmap], "back to browsing"),
            (&[Drill], "back to the grid"),
            (&[Contradictions], "back (a detection goes on)"),
            (&[Claims, Selfcheck, Review, Runs], "back to browsing"),
            (&[Flip], "back to the comparison"),
            (&[Sentences], "back to the scores"),
            (&[Where], "back to the answers"),
            (&[Judges], "back to the grid, else to the heatmap"),
            (&[Correlation, Pair], "close"),
        ],
    },
    Def {
        action: Action::Problems,
        name: "problems",
        keys: &["!"],
        uses: &[
            (&[Browse], "show the problems found while loading"),
            (&[Problems], "close"),
        ],
    },
    Def {
        action: Action::Help,
        name: "help",
        keys: &["?", "f1"],
        uses: &[
            (SCREENS, "show the keys of this screen"),
            (&[Help], "close"),
        ],
    },
    Def {
        action: Action::WhereInAnswer,
        name: "where_in_answer",
        keys: &["w"],
        uses: &[
            (
                &[Compare],
                "where in the answer: the focused answer's sentences, shaded by how little its samples back them up",
            ),
            (
                &[Where],
                "ask the judge (u chooses it) whether each sample supports each sentence, for the checks not stored yet",
            ),
        ],
    },
    Def {
        action: Action::Undo,
        name: "undo",
        keys: &["z"],
        uses: &[(
            SCREENS,
            "undo your last review decision or label of this session (nothing is deleted)",
        )],
    },
    Def {
        action: Action::Palette,
        name: "palette",
        keys: &[":", "ctrl-p"],
        uses: &[(
            SCREENS,
            "the command palette: every action of this screen, searched as you type, with its key",
        )],
    },
    Def {
        action: Action::Cancel,
        name: "cancel",
        keys: &["esc"],
        uses: &[
            (&[Browse], "clear the search"),
            (
                &[Compare],
                "back (a run goes on: its progress stays in the tree and the status line)",
            ),
            (&[Palette], "close the palette"),
            (&[Contradictions], "cancel the detection, else back"),
            (&[Claims], "cancel the detection, else back to browsing"),
            (&[Selfcheck], "cancel the self-detection run, else back"),
            (&[Sentences], "back to the scores"),
            (&[Where], "back to the answers"),
            (&[Heatmap, Review, Runs], "back to browsing"),
            (&[Flip], "back to the comparison"),
            (&[Drill], "back to the grid"),
            (&[Judges], "back to the grid, else to the heatmap"),
            (&[Correlation, Help, Problems, Picker, Pair], "close"),
        ],
    },
    Def {
        action: Action::Quit,
        name: "quit",
        keys: &["q", "ctrl-c"],
        uses: &[
            (SCREENS, "quit"),
            (
                &[Correlation, Help, Problems, Picker, Pair],
                "close (ctrl-c quits)",
            ),
        ],
    },
];

impl Def {
    fn describe(&self, mode: Mode) -> Option<&'static str> {
        // The most specific entry wins (a mode listed alone before a shared list).
        self.uses
            .iter()
            .filter(|(modes, _)| modes.contains(&mode))
            .min_by_key(|(modes, _)| modes.len())
            .map(|(_, d)| *d)
    }
}

/// One action as the command palette lists it.
#[derive(Debug, Clone)]
pub struct PaletteRow {
    pub action: Action,
    /// The config name (`next_sample`), searched too.
    pub name: &'static str,
    /// Its keys in the mode, as the help shows them (empty when unbound).
    pub keys: String,
    pub desc: &'static str,
}

/// A key with its modifiers, as written in the config (`ctrl-d`, `G`, `enter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Key {
    pub fn from_event(e: &KeyEvent) -> Key {
        // Shift is folded into the character itself ('G'), except for BackTab which carries it.
        Key {
            code: e.code,
            ctrl: e.modifiers.contains(KeyModifiers::CONTROL),
            alt: e.modifiers.contains(KeyModifiers::ALT),
        }
    }

    pub fn parse(s: &str) -> Result<Key, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = s.trim();
        loop {
            let lower = rest.to_ascii_lowercase();
            if rest.len() > 1 && (lower.starts_with("ctrl-") || lower.starts_with("ctrl+")) {
                ctrl = true;
                rest = &rest[5..];
            } else if rest.len() > 1 && (lower.starts_with("alt-") || lower.starts_with("alt+")) {
                alt = true;
                rest = &rest[4..];
            } else {
                break;
            }
        }
        let code = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" | "shift-tab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            f if f.len() >= 2 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
                    _ => return Err(format!("{s:?} is not a key")),
                }
            }
        };
        Ok(Key { code, ctrl, alt })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::F(n) => write!(f, "f{n}"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("delete"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: HashMap<(Mode, Action), Vec<Key>>,
    /// Bindings the config set: they win over a default that uses the same key.
    overridden: std::collections::HashSet<(Mode, Action)>,
}

impl Default for Keymap {
    fn default() -> Self {
        let mut bindings = HashMap::new();
        for d in DEFS {
            let keys: Vec<Key> = d.keys.iter().filter_map(|k| Key::parse(k).ok()).collect();
            for m in Mode::ALL {
                if d.describe(m).is_some() {
                    bindings.insert((m, d.action), keys.clone());
                }
            }
        }
        Keymap {
            bindings,
            overridden: Default::default(),
        }
    }
}

impl Keymap {
    /// Defaults with the config's overrides applied: an action's keys in every mode, then a
    /// mode's own table. Unknown actions or modes and unparsable keys are returned as warnings;
    /// the rest of the config still applies.
    pub fn with_overrides(overrides: &BTreeMap<String, KeyEntry>) -> (Keymap, Vec<String>) {
        let mut km = Keymap::default();
        let mut warnings = Vec::new();
        let known: Vec<&str> = DEFS.iter().map(|d| d.name).collect();
        let apply = |km: &mut Keymap,
                     warnings: &mut Vec<String>,
                     scope: Option<Mode>,
                     name: &str,
                     keys: &[String]| {
            let shown = match scope {
                Some(m) => format!("keys.{}.{name}", m.name()),
                None => format!("keys.{name}"),
            };
            let Some(def) = DEFS.iter().find(|d| d.name == name) else {
                warnings.push(format!(
                    "{shown}: unknown action (known: {})",
                    known.join(", ")
                ));
                return;
            };
            let mut parsed = Vec::new();
            for k in keys {
                match Key::parse(k) {
                    Ok(key) => parsed.push(key),
                    Err(e) => warnings.push(format!("{shown}: {e}")),
                }
            }
            if parsed.is_empty() {
                return;
            }
            let modes: Vec<Mode> = match scope {
                Some(m) if def.describe(m).is_none() => {
                    warnings.push(format!("{shown}: {name} does nothing in {}", m.name()));
                    return;
                }
                Some(m) => vec![m],
                None => Mode::ALL
                    .into_iter()
                    .filter(|m| def.describe(*m).is_some())
                    .collect(),
            };
            for m in modes {
                km.bindings.insert((m, def.action), parsed.clone());
                km.overridden.insert((m, def.action));
            }
        };
        // Every-mode entries first, so a mode's own table wins over them.
        for (name, entry) in overrides {
            if let KeyEntry::Keys(keys) = entry {
                apply(&mut km, &mut warnings, None, name, keys);
            }
        }
        for (name, entry) in overrides {
            if let KeyEntry::Mode(table) = entry {
                match Mode::ALL.into_iter().find(|m| m.name() == name) {
                    Some(m) => {
                        for (action, keys) in table {
                            apply(&mut km, &mut warnings, Some(m), action, keys);
                        }
                    }
                    None => warnings.push(format!(
                        "keys.{name}: not an action or a mode (modes: {})",
                        Mode::ALL.map(Mode::name).join(", ")
                    )),
                }
            }
        }
        (km, warnings)
    }

    /// The action a key does in `mode`, if any.
    pub fn action_for(&self, mode: Mode, e: &KeyEvent) -> Option<Action> {
        let k = Key::from_event(e);
        let bound = |a: &Action| {
            self.bindings
                .get(&(mode, *a))
                .is_some_and(|keys| keys.contains(&k))
        };
        // What the user configured wins over a default on the same key; among equals, help
        // order decides (so a default never silently shadows `quit`).
        DEFS.iter()
            .map(|d| d.action)
            .find(|a| self.overridden.contains(&(mode, *a)) && bound(a))
            .or_else(|| DEFS.iter().map(|d| d.action).find(bound))
    }

    pub fn keys(&self, mode: Mode, a: Action) -> &[Key] {
        self.bindings
            .get(&(mode, a))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The first key of an action in a mode, for hints in the status bar.
    pub fn hint(&self, mode: Mode, a: Action) -> String {
        self.keys(mode, a)
            .first()
            .map(|k| k.to_string())
            .unwrap_or_else(|| "unbound".into())
    }

    /// (keys, description) rows for the help overlay of one mode.
    pub fn help_rows(&self, mode: Mode) -> Vec<(String, &'static str)> {
        self.rows(mode).map(|r| (r.keys, r.desc)).collect()
    }

    /// Every action `mode` has, with its keys there and what it does there, in help order.
    fn rows(&self, mode: Mode) -> impl Iterator<Item = PaletteRow> + '_ {
        DEFS.iter().filter_map(move |d| {
            let desc = d.describe(mode)?;
            let keys: Vec<String> = self
                .keys(mode, d.action)
                .iter()
                .map(|k| k.to_string())
                .collect();
            Some(PaletteRow {
                action: d.action,
                name: d.name,
                keys: keys.join(", "),
                desc,
            })
        })
    }

    /// The command palette's rows for `mode`: every action it has there but the palette itself,
    /// with its config name, its keys and what it does there, in help order.
    pub fn palette_rows(&self, mode: Mode) -> Vec<PaletteRow> {
        self.rows(mode)
            .filter(|r| r.action != Action::Palette)
            .collect()
    }

    /// Keys bound to two actions in one mode (after overrides), for the config check.
    pub fn clashes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for m in Mode::ALL {
            let mut seen: HashMap<Key, Action> = HashMap::new();
            for d in DEFS {
                for k in self.keys(m, d.action) {
                    if let Some(prev) = seen.insert(*k, d.action)
                        && prev != d.action
                    {
                        out.push(format!(
                            "{}: {k} is bound to both {prev:?} and {:?}",
                            m.name(),
                            d.action
                        ));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
