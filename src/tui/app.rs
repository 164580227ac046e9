//! The app: what every screen shares (the dataset, theme, keymap, models, the [`Session`] of
//! background results), the stack of screens (browse at the bottom) and of popups, and the
//! routing between them. Input goes to the top popup, else the top screen; their commands are
//! carried out here; background results change the session and go back to whoever asked.

use std::sync::Arc;

use crossterm::event::{Event, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::component::{Cmd, Component, Cx, Input, ScreenId};
use super::jobs::{Delivery, Effects, Job};
use super::keymap::Keymap;
use super::screens::{Browse, Compare, Heatmap};
use super::session::Session;
use crate::dataset::{Dataset, Problem};
use crate::provider::ModelConfig;
use crate::theme::Theme;

pub struct App {
    pub ds: Arc<Dataset>,
    pub problems: Arc<Vec<Problem>>,
    pub theme: Theme,
    pub keymap: Keymap,
    /// Configured models, and which are chosen in the run picker.
    pub models: Vec<ModelConfig>,
    pub chosen: Vec<bool>,
    /// Whether runs can be started (a store is open).
    pub can_run: bool,
    pub session: Session,
    /// Screens, bottom first: the browse screen is always there.
    screens: Vec<Box<dyn Component>>,
    /// Popups over the top screen, top last.
    popups: Vec<Box<dyn Component>>,
    /// Warnings and messages, shown once in the status bar.
    pub notice: Option<String>,
    /// The notice on screen and since when: a message leaves by itself (see [`notice_ttl`]).
    notice_shown: Option<(String, std::time::Instant)>,
    /// The judge's name (the config's `judge`, or the one chosen with `u`).
    pub judge: Option<String>,
    pub quit: bool,
    /// Background work asked for, by whom; the loop starts it.
    requests: Vec<(ScreenId, Box<dyn Job>)>,
    /// Decisions and labels this session saved, oldest first: what `z` can take back.
    undo: Vec<super::undo::Undo>,
    /// The run in progress should stop.
    pub(super) cancel_run: bool,
    /// The detection in progress should stop.
    pub(super) cancel_detect: bool,
    /// The terminal size the last frame was drawn at.
    pub area: Rect,
    /// The text last copied (`y`): the loop writes it to the terminal's clipboard.
    pub copied: Option<String>,
    /// Copied text not yet written to the terminal.
    pub(super) copy_pending: Option<String>,
    /// Whether the loop draws on the real terminal (stdout), where copied text goes as OSC 52.
    pub osc52: bool,
    /// Whether the TUI captures the mouse (the config's `mouse`, on by default).
    pub mouse: bool,
}

/// Builds the read-only context from the app's shared fields (a macro, so the borrow covers the
/// fields only and the screens stay free to be borrowed mutably beside it).
macro_rules! cx {
    ($app:expr) => {
        Cx {
            ds: &$app.ds,
            problems: &$app.problems,
            theme: &$app.theme,
            keymap: &$app.keymap,
            session: &$app.session,
            models: &$app.models,
            chosen: &$app.chosen,
            can_run: $app.can_run,
            notice: $app.notice.as_deref(),
            judge: $app.judge.as_deref(),
        }
    };
}

impl App {
    pub fn new(ds: Arc<Dataset>, problems: Arc<Vec<Problem>>, theme: Theme, keymap: Keymap) -> App {
        let browse: Box<dyn Component> = Box::new(Browse::new(&ds));
        App {
            session: Session::new(ds.clone()),
            ds,
            problems,
            theme,
            keymap,
            models: Vec::new(),
            chosen: Vec::new(),
            can_run: false,
            screens: vec![browse],
            popups: Vec::new(),
            notice: None,
            notice_shown: None,
            judge: None,
            quit: false,
            requests: Vec::new(),
            undo: Vec::new(),
            cancel_run: false,
            cancel_detect: false,
            area: Rect::new(0, 0, 120, 40),
            copied: None,
            copy_pending: None,
            osc52: false,
            mouse: true,
        }
    }

    /// Makes models available to the run picker (the first is chosen by default).
    pub fn with_models(mut self, models: Vec<ModelConfig>) -> App {
        self.chosen = (0..models.len()).map(|i| i == 0).collect();
        self.models = models;
        self.can_run = true;
        self
    }

    /// Chooses these models in the picker (by name) instead of the first; unknown names are
    /// ignored. An empty list chooses none (nothing that was offered can start).
    pub fn with_chosen(mut self, names: &[String]) -> App {
        self.chosen = self
            .models
            .iter()
            .map(|m| names.contains(&m.name))
            .collect();
        self
    }

    /// The models chosen in the run picker, by name.
    /// The run started here that did not finish (quit, Ctrl-C or a signal while it went):
    /// its id, and how many of its jobs were done, of how many.
    pub fn unfinished_run(&self) -> Option<(String, usize, usize)> {
        let r = self.session.active.as_ref()?;
        (r.done + r.failed < r.total).then(|| (r.run_id.clone(), r.done + r.failed, r.total))
    }

    pub fn chosen_names(&self) -> Vec<String> {
        self.models
            .iter()
            .zip(&self.chosen)
            .filter(|(_, c)| **c)
            .map(|(m, _)| m.name.clone())
            .collect()
    }

    /// The screen on top (what is shown, under any popup).
    pub fn top(&self) -> ScreenId {
        self.screens.last().map_or(ScreenId::Browse, |s| s.id())
    }

    /// The popup on top, if any.
    pub fn popup(&self) -> Option<ScreenId> {
        self.popups.last().map(|p| p.id())
    }

    /// The browse screen (always at the bottom).
    pub fn browse(&self) -> &Browse {
        self.find::<Browse>()
            .expect("the browse screen is always there")
    }

    /// The topmost screen or popup of type `T`, if one is open.
    pub fn find<T: 'static>(&self) -> Option<&T> {
        self.popups
            .iter()
            .rev()
            .chain(self.screens.iter().rev())
            .find_map(|c| c.as_any().downcast_ref::<T>())
    }

    pub fn compare(&self) -> Option<&Compare> {
        self.find::<Compare>()
    }

    pub fn heatmap(&self) -> Option<&Heatmap> {
        self.find::<Heatmap>()
    }

    /// Opens a screen on top (as if another screen asked for it).
    pub fn push(&mut self, o: super::component::Open) {
        self.open(super::screens::open(o), false);
    }

    /// Background work for the loop to start, on behalf of `to`.
    pub fn request(&mut self, to: ScreenId, job: impl Job + 'static) {
        self.requests.push((to, Box::new(job)));
    }

    pub(super) fn has_requests(&self) -> bool {
        !self.requests.is_empty()
    }

    pub(super) fn take_requests(&mut self) -> Vec<(ScreenId, Box<dyn Job>)> {
        std::mem::take(&mut self.requests)
    }

    /// Applies one input event: to the top popup, else the top screen.
    pub fn handle_event(&mut self, ev: Event) {
        let input = match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                // The focused component: the top popup, else the top screen.
                let takes_text = match self.popups.last() {
                    Some(p) => p.takes_text(),
                    None => self.screens.last().is_some_and(|s| s.takes_text()),
                };
                let mode = self.focused_mode();
                match self.keymap.action_for(mode, &k) {
                    // A focused text field gets every key before any binding.
                    _ if takes_text => Input::Key(k),
                    Some(a) => Input::Action(a),
                    None => Input::Key(k),
                }
            }
            Event::Mouse(m) => Input::Mouse(m),
            Event::Paste(text) => Input::Paste(text),
            Event::Resize(w, h) => {
                self.area = Rect::new(0, 0, w, h);
                return;
            }
            _ => return,
        };
        self.dispatch(input);
    }

    fn focused_mode(&self) -> super::keymap::Mode {
        match self.popups.last() {
            Some(p) => p.mode(),
            None => self
                .screens
                .last()
                .map_or(super::keymap::Mode::Browse, |s| s.mode()),
        }
    }

    /// Performs an action as if its key was pressed (benches, tests).
    pub fn act(&mut self, a: super::keymap::Action) {
        self.dispatch(Input::Action(a));
    }

    /// Hands input to the focused component and carries out what it asks.
    fn dispatch(&mut self, input: Input) {
        // Scores that arrived since the last frame count before the input acts.
        self.session.refresh();
        // The command palette is the app's, not a screen's: it lists the actions of whichever
        // screen is on top and hands the chosen one back to it (`Cmd::Then`).
        // Undo is the app's too: it takes back what this session saved, whichever screen saved it.
        if matches!(input, Input::Action(super::keymap::Action::Undo)) && self.popups.is_empty() {
            let top = self.top();
            match self.undo.pop() {
                Some(u) => {
                    self.notice = Some(format!("undoing {}...", u.what()));
                    self.requests
                        .push((top, Box::new(super::jobs::undo::TakeBack(u))));
                }
                None => {
                    self.notice = Some(
                        "nothing to undo: no review decision or label saved in this session".into(),
                    )
                }
            }
            return;
        }
        if matches!(input, Input::Action(super::keymap::Action::Palette)) && self.popups.is_empty()
        {
            let of = self.focused_mode();
            let top = self.top();
            self.perform(
                top,
                vec![Cmd::Popup(Box::new(super::palette::Palette::new(of)))],
            );
            return;
        }
        let cx = cx!(self);
        let (id, cmds) = match self.popups.last_mut() {
            Some(p) => (p.id(), p.update(input, &cx)),
            None => {
                let s = self.screens.last_mut().expect("a screen");
                (s.id(), s.update(input, &cx))
            }
        };
        self.perform(id, cmds);
    }

    /// Carries out commands from the component `from`.
    fn perform(&mut self, from: ScreenId, cmds: Vec<Cmd>) {
        // Decided before the commands run: a popup that closes itself and asks for work in
        // one breath still has its work delivered to the screen under it.
        let owner = self.owner_of(from);
        let mut then = Vec::new();
        for cmd in cmds {
            match cmd {
                Cmd::Push(o) => self.open(super::screens::open(o), false),
                Cmd::Pop => {
                    if self.screens.len() > 1 {
                        self.screens.pop();
                    }
                }
                Cmd::Popup(mut p) => {
                    let cx = cx!(self);
                    let more = p.on_open(&cx);
                    let id = p.id();
                    self.popups.push(p);
                    self.perform(id, more);
                }
                Cmd::ClosePopup => {
                    self.popups.pop();
                }
                Cmd::Job(req) => self.requests.push((owner, req)),
                Cmd::CancelRun => self.cancel_run = true,
                Cmd::CancelDetect => self.cancel_detect = true,
                Cmd::Choose(chosen) => self.chosen = chosen,
                Cmd::Then(a) => then.push(a),
                Cmd::Notice(n) => self.notice = Some(n),
                Cmd::ClearNotice => self.notice = None,
                Cmd::Copy(text) => {
                    self.notice = Some(format!(
                        "copied {} characters to the clipboard (by OSC 52: some terminals ask first or refuse; in tmux set-clipboard on)",
                        text.chars().count()
                    ));
                    self.copied = Some(text.clone());
                    self.copy_pending = Some(text);
                }
                Cmd::Quit => self.quit = true,
            }
        }
        for a in then {
            self.dispatch(Input::Action(a));
        }
    }

    /// Results of a popup's work go to the screen it was opened over (a run started from the
    /// picker belongs to the browse screen that opened it).
    fn owner_of(&self, from: ScreenId) -> ScreenId {
        if self.popups.iter().any(|p| p.id() == from) {
            self.top()
        } else {
            from
        }
    }

    fn open(&mut self, mut c: Box<dyn Component>, replace: bool) {
        if replace && self.screens.len() > 1 {
            self.screens.pop();
        }
        let cx = cx!(self);
        let more = c.on_open(&cx);
        let id = c.id();
        self.screens.push(c);
        self.perform(id, more);
    }

    /// A result of background work: what it changes in what the screens share first, then to
    /// the component that asked (when it is still open), or to every open screen.
    pub fn on_delivery(&mut self, d: Delivery) {
        let mut fx = Effects {
            session: &mut self.session,
            notice: &mut self.notice,
            judge: &mut self.judge,
            models: &self.models,
            undo: &mut self.undo,
            more: Vec::new(),
            show_run: false,
        };
        d.msg.outcome().apply(&mut fx);
        let (more, show_run) = (fx.more, fx.show_run);
        self.requests.extend(more.into_iter().map(|j| (d.to, j)));
        // A run shows its answers as they stream.
        if show_run && let Some(items) = self.session.active.as_ref().map(|r| r.items.clone()) {
            let replace = self.top() == ScreenId::Compare;
            self.popups.clear();
            self.open(Box::new(Compare::new(items, 0)), replace);
        }
        let to: Vec<ScreenId> = if d.msg.outcome().to_all() {
            self.screens.iter().map(|s| s.id()).collect()
        } else {
            vec![d.to]
        };
        for id in to {
            let cx = cx!(self);
            let cmds = match self.screens.iter_mut().rev().find(|s| s.id() == id) {
                Some(s) => s.on_msg(&d.msg, &cx),
                None => Vec::new(),
            };
            self.perform(id, cmds);
        }
    }

    /// Before a frame: summaries catch up with the scores that arrived.
    pub fn before_draw(&mut self) {
        self.session.refresh();
        // A message leaves by itself once read (a new one starts its own time).
        match (&self.notice, &self.notice_shown) {
            (Some(n), Some((shown, at))) if n == shown => {
                if at.elapsed() >= notice_ttl(n) {
                    self.notice = None;
                    self.notice_shown = None;
                }
            }
            (Some(n), _) => self.notice_shown = Some((n.clone(), std::time::Instant::now())),
            (None, _) => self.notice_shown = None,
        }
    }

    /// How long the message on screen has left, for the loop to wake and take it away.
    pub fn notice_left(&self) -> Option<std::time::Duration> {
        let (n, at) = self.notice_shown.as_ref()?;
        Some(notice_ttl(n).saturating_sub(at.elapsed()))
    }

    /// Draws the top screen and the popups over it.
    pub fn draw(&mut self, f: &mut Frame) {
        let area = f.area();
        self.area = area;
        let cx = cx!(self);
        if let Some(s) = self.screens.last_mut() {
            s.draw(f, area, &cx);
        }
        for p in self.popups.iter_mut() {
            p.draw(f, area, &cx);
        }
        if let Some(n) = &self.notice {
            crate::tui::widgets::long_notice(f, area, &self.theme, n);
        }
    }
}

/// How long a message stays: long enough to read it (10 s, and 50 ms a character more for a
/// long one, up to 30 s), then it leaves without a key press.
pub(crate) fn notice_ttl(notice: &str) -> std::time::Duration {
    let chars = notice.chars().count() as u64;
    std::time::Duration::from_millis((10_000 + 50 * chars.saturating_sub(80)).min(30_000))
}

#[cfg(test)]
mod tests;
