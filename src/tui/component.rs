//! What every screen and popup is: a [`Component`] that owns its state, turns input into
//! [`Cmd`]s, and draws itself from its state plus a read-only [`Cx`].
//!
//! Data flows one way. Input reaches the focused component (the top popup, else the top
//! screen); it changes only its own state and returns commands; the app carries them out
//! (navigation, background jobs, notices); results of background work change the shared
//! [`Session`] and are handed back to the component that asked. Drawing reads state and records
//! the geometry it drew (areas, line counts) in the component, so the next update uses what is
//! on screen without calling the view.

use std::sync::Arc;

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::jobs::{Job, Msg};
use super::keymap::{Action, Keymap, Mode};
use super::session::Session;
use crate::dataset::{Dataset, Problem};
use crate::provider::ModelConfig;
use crate::theme::Theme;

/// The read-only context every component draws and updates with.
pub struct Cx<'a> {
    pub ds: &'a Arc<Dataset>,
    pub problems: &'a [Problem],
    pub theme: &'a Theme,
    pub keymap: &'a Keymap,
    pub session: &'a Session,
    /// Configured models, and which are chosen in the run picker.
    pub models: &'a [ModelConfig],
    pub chosen: &'a [bool],
    /// Whether runs can be started (a store is open).
    pub can_run: bool,
    /// The notice shown in the status bar, if any.
    pub notice: Option<&'a str>,
    /// The judge model for judged evaluators, by name, if one is set.
    pub judge: Option<&'a str>,
}

/// Input for a component: an action from its mode's bindings, or the raw event for a component
/// that takes text (or the mouse).
#[derive(Debug, Clone)]
pub enum Input {
    Action(Action),
    /// A key no binding of the mode claims, or any key while a text field has focus.
    Key(KeyEvent),
    Paste(String),
    Mouse(MouseEvent),
}

/// What a component asks the app to do.
pub enum Cmd {
    /// Open a screen on top of the current one.
    Push(Open),
    /// Back to the screen below (the browse screen stays).
    Pop,
    /// Open a popup; popups get input before screens.
    Popup(Box<dyn Component>),
    ClosePopup,
    /// Background work; its results come back to the component that asked.
    Job(Box<dyn Job>),
    /// Cancel the run in progress (finished answers are kept).
    CancelRun,
    /// Cancel the detection in progress (finished samples and verdicts are kept).
    CancelDetect,
    /// Remember which models the run picker has chosen.
    Choose(Vec<bool>),
    /// Deliver an action to whatever is on top after the other commands.
    Then(Action),
    Notice(String),
    ClearNotice,
    /// Put text on the terminal's clipboard (OSC 52).
    Copy(String),
    Quit,
}

impl Cmd {
    /// Background work of any job type.
    pub fn job(j: impl Job + 'static) -> Cmd {
        Cmd::Job(Box::new(j))
    }
}

/// Screens and popups. A new screen is a new file implementing this, plus its [`ScreenId`] arm.
pub trait Component {
    fn id(&self) -> ScreenId;

    /// Which keymap mode applies now (a screen can have sub-modes, like the heatmap's drill-down).
    fn mode(&self) -> Mode;

    /// A focused text field: every key goes to [`update`](Component::update) as `Input::Key`,
    /// before any binding.
    fn takes_text(&self) -> bool {
        false
    }

    /// Called once when the component is opened (e.g. to load what it shows).
    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        Vec::new()
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd>;

    /// A result of background work this component asked for, after the session has applied it.
    fn on_msg(&mut self, _msg: &Msg, _cx: &Cx) -> Vec<Cmd> {
        Vec::new()
    }

    /// Draws into `area`, recording the geometry it drew for the next update.
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx);

    /// Popups: whether the screen below should still be drawn first (they all are today).
    fn is_overlay(&self) -> bool {
        false
    }

    /// For tests and the app: downcasting to the concrete screen.
    fn as_any(&self) -> &dyn std::any::Any;
}

pub use super::screen_id::ScreenId;

/// A screen to open. Screens never build each other (the compare screen opens the heatmap and
/// the heatmap opens the compare screen): they ask for one by name and
/// [`screens::open`](super::screens::open) builds it.
#[derive(Debug, Clone)]
pub enum Open {
    /// Items to step through, starting at `pos`.
    Compare {
        items: Vec<usize>,
        pos: usize,
    },
    /// One stored run's answers (not the newest of every run), item by item from the first.
    RunAnswers {
        run: String,
        items: Vec<usize>,
    },
    /// A run imported from another tool, in that tool's own tree.
    Source(String),
    Heatmap,
    /// The heatmap of these stored runs (a row per model and run).
    HeatmapOf(Vec<String>),
    /// The contradictions of an answer (a stored detection, or a new one).
    Contradictions(super::jobs::detect::DetectJob),
    /// The claims browser over a claim set (the bundled claims unless opened on a file).
    Claims {
        set: std::sync::Arc<crate::dataset::claims::ClaimSet>,
        dataset: String,
    },
    /// Self-detection scores; new runs go over `set` (the bundled triples unless opened on a
    /// file).
    Selfcheck {
        set: std::sync::Arc<crate::dataset::triples::TripleSet>,
        dataset: String,
    },
    /// Human review of the dataset's items, all of them or those under a task-id prefix (a
    /// category or sub-task chosen in the browse tree).
    Review {
        scope: Option<String>,
    },
    /// The runs in the store.
    Runs,
    /// Where in the answer: one stored answer's sentences against its samples.
    Sentences {
        run: String,
        job: u32,
    },
    /// The flipped items of a comparison, from `pos`: both sides' answers.
    Flip {
        flips: Vec<crate::eval::compare::Flip>,
        pos: usize,
        sides: Box<[crate::eval::compare::Side; 2]>,
    },
    /// The judges on trial over one run's judged answers (every run's when `None`).
    Judges {
        run: Option<String>,
    },
}
