//! Every action of every screen, once: its config name, its default keys, and what it does on
//! each screen it applies to (the help popup, the palette and the book are made from this).

use super::groups::{SCREENS, SCROLL};
use super::{Action, Def, Mode};

use Mode::{
    Browse, Claims, Compare, Contradictions, Correlation, Drill, Flip, Heatmap, Help, Judges, Pair,
    Palette, Picker, Problems, Review, Runs, Selfcheck, Sentences, Source, Where,
};

/// Every action's config name, in help order (the book's configuration chapter lists the same; a test holds them
/// together).
pub fn action_names() -> impl Iterator<Item = &'static str> {
    DEFS.iter().map(|d| d.name)
}

/// Every action, in help order.
pub(super) const DEFS: &[Def] = &[
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
            (&[Source], "scroll the sample up"),
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
            (&[Source], "scroll the sample down"),
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
            (&[Source], "between the tool's tree and its samples"),
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
        uses: &[
            (
                &[Runs],
                "open the run's answers item by item (imported: the tool's tree)",
            ),
            (
                &[Source],
                "the release's items among the samples, in the compare screen",
            ),
        ],
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
            (
                &[Where],
                "grade the sentence under the cursor: accurate, minor or major",
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
            (&[Source], "back to the runs"),
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
            (
                &[Drill],
                "rank the items by their answer's worst sentence, and back",
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
