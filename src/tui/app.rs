//! The app: what every screen shares (the dataset, theme, keymap, models, the [`Session`] of
//! background results), the stack of screens (browse at the bottom) and of popups, and the
//! routing between them. Input goes to the top popup, else the top screen; their commands are
//! carried out here; background results change the session and go back to whoever asked.

use std::sync::Arc;

use crossterm::event::{Event, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::component::{Cmd, Component, Cx, Input, ScreenId};
use super::jobs::{Delivery, JobRequest, Msg, to_score};
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
    requests: Vec<(ScreenId, JobRequest)>,
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
    pub fn request(&mut self, to: ScreenId, req: JobRequest) {
        self.requests.push((to, req));
    }

    pub(super) fn has_requests(&self) -> bool {
        !self.requests.is_empty()
    }

    pub(super) fn take_requests(&mut self) -> Vec<(ScreenId, JobRequest)> {
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
                    self.requests.push((top, JobRequest::Undo(u)));
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

    /// A result of background work: into the session, then to the component that asked (when it
    /// is still open).
    pub fn on_delivery(&mut self, d: Delivery) {
        match &d.msg {
            Msg::Engine(ev) => {
                // (The engine scores each answer as it arrives: its score follows as an event.)
                match ev {
                    crate::engine::Event::Life(l) => self.on_lifecycle(l, "the run"),
                    crate::engine::Event::ScoringFailed { reason } => {
                        self.notice = Some(format!(
                            "scoring: {}; the answers are stored (S scores them again)",
                            crate::text::one_line(reason)
                        ));
                    }
                    _ => {}
                }
                let started = matches!(ev, crate::engine::Event::Started { .. });
                self.session.apply(ev.clone());
                // A run shows its answers as they stream.
                let items = self.session.active.as_ref().map(|r| r.items.clone());
                if started && let Some(items) = items {
                    let replace = self.top() == ScreenId::Compare;
                    self.popups.clear();
                    self.open(Box::new(Compare::new(items, 0)), replace);
                }
            }
            Msg::Stored {
                item,
                records,
                scores,
                rescore,
            } => self.on_stored(d.to, *item, records, scores, *rescore),
            Msg::Scored(r) => self.session.apply_score(r.clone()),
            Msg::LatestScores(all) => {
                for r in all {
                    self.session.apply_stored_score(r);
                }
            }
            Msg::Unscored(inputs) if !inputs.is_empty() => self.request(
                ScreenId::Browse,
                JobRequest::Score {
                    inputs: inputs.clone(),
                    judge: false,
                },
            ),
            Msg::Failed(e) | Msg::Notice(e) => self.notice = Some(e.clone()),
            Msg::JudgeSet {
                name,
                waiting,
                not_remembered,
            } => self.on_judge_set(d.to, name, waiting, not_remembered.as_deref()),
            // Lifecycle news is said the same way for every lane; the rest of a detection's
            // events belong to the screen that asked.
            Msg::Detect(crate::detect::run::DetectEvent::Life(l)) => {
                self.on_lifecycle(l, "detection")
            }
            Msg::Selfcheck(crate::selfcheck::run::SelfcheckEvent::Life(l)) => {
                self.on_lifecycle(l, "self-detection")
            }
            Msg::Entropy(crate::detect::semantic::EntropyEvent::Life(l)) => {
                self.on_lifecycle(l, "semantic entropy")
            }
            Msg::Detection { .. }
            | Msg::Detect(_)
            | Msg::Flags(_)
            | Msg::Signals(_)
            | Msg::Judges(_)
            | Msg::JudgedAnswer(_)
            | Msg::Entropy(_)
            | Msg::Claims(_)
            | Msg::Selfchecks(_)
            | Msg::SelfcheckStarted { .. }
            | Msg::Selfcheck(_)
            | Msg::Review(_)
            | Msg::ReviewMore { .. }
            | Msg::ReviewChanged
            | Msg::SharedPulled(_)
            | Msg::Unscored(_)
            | Msg::Runs(_)
            | Msg::Comparison(..)
            | Msg::AnswerMatches { .. }
            | Msg::ItemLabels { .. }
            | Msg::LabelsChanged
            | Msg::RunItems { .. }
            | Msg::RunAnswers { .. }
            | Msg::PairAnswers(_)
            | Msg::RunRows { .. }
            | Msg::ReviewStoreOk => {}
            // What this session saved, newest last: `z` takes it back.
            Msg::DecisionSaved(r) => self.undo.push(super::undo::Undo::Decision(r.clone())),
            Msg::Labelled(l) => self.undo.push(super::undo::Undo::Label(l.clone())),
            Msg::Undone(what) => self.notice = Some(what.clone()),
        }
        if let Msg::SharedPulled(p) = &d.msg {
            return self.on_shared_pulled(p, &d.msg);
        }
        let cx = cx!(self);
        let mut cmds = Vec::new();
        if let Some(s) = self.screens.iter_mut().rev().find(|s| s.id() == d.to) {
            cmds = s.on_msg(&d.msg, &cx);
        }
        self.perform(d.to, cmds);
    }

    /// The shared store's runs changed (other workers' answers, a new run): the scores go into
    /// the session (the tree's and heatmap's rates), the notice says what came, and every open
    /// screen hears it (the runs list and a heatmap of chosen runs read again).
    fn on_shared_pulled(&mut self, p: &crate::store::mirror::Pulled, msg: &Msg) {
        for r in &p.score_records {
            self.session.apply_score(r.clone());
        }
        self.session
            .answered_by
            .extend(p.answered_by.iter().cloned());
        let mut said = Vec::new();
        for (n, what) in [
            (p.runs, "run(s)"),
            (p.answers, "answer(s)"),
            (p.scores, "score(s)"),
            (p.statuses, "run(s) finished"),
            (p.lane_rows, "detection/self-detection result(s)"),
        ] {
            if n > 0 {
                said.push(format!("{n} {what}"));
            }
        }
        if p.trusted > 0 {
            said.push(format!(
                "{} run(s) held by both stores linked to it once (mirrored before links were kept)",
                p.trusted
            ));
        }
        if let Some(r) = p.refused_words() {
            said.push(r);
        }
        // What the mirror brought is news in the background: it does not push aside a message
        // still on screen that the user's own doing raised (a run pushed, an error), which
        // would otherwise flash by unread when a pull lands just after it.
        let fresh_other = self
            .notice
            .as_deref()
            .is_some_and(|n| !n.starts_with(PULLED_NOTICE));
        if !fresh_other {
            self.notice = Some(format!("{PULLED_NOTICE}{}", said.join(", ")));
        }
        let ids: Vec<ScreenId> = self.screens.iter().map(|s| s.id()).collect();
        for id in ids {
            let cx = cx!(self);
            let cmds = match self.screens.iter_mut().rev().find(|s| s.id() == id) {
                Some(s) => s.on_msg(msg, &cx),
                None => Vec::new(),
            };
            self.perform(id, cmds);
        }
    }

    /// Saving stopped or works again, for any lane's run (`what` goes on); the end of a run is
    /// its screen's to tell.
    fn on_lifecycle(&mut self, l: &crate::engine::harness::Lifecycle, what: &str) {
        use crate::engine::harness::Lifecycle;
        match l {
            Lifecycle::StoreDown { reason } => {
                let goes_on = format!("{what} goes on");
                self.notice = Some(crate::store::store_down_advice(
                    &crate::text::one_line(reason),
                    &goes_on,
                ));
            }
            Lifecycle::StoreUp => self.notice = Some("saving results works again".into()),
            // On a shared store, a run started here goes to the team's store as it ends.
            Lifecycle::Finished(c) => {
                let top = self.top();
                self.perform(
                    top,
                    vec![Cmd::Job(crate::tui::jobs::JobRequest::PushShared {
                        run: c.run_id.clone(),
                        what: what.to_string(),
                    })],
                );
            }
        }
    }

    /// An item's stored answers and scores arrived: into the session; scored again with the
    /// judge when asked (`rescore`), else those never scored are scored by rule (browsing must
    /// not spend judge calls; `S` asks the judge).
    fn on_stored(
        &mut self,
        to: ScreenId,
        item: usize,
        records: &[crate::store::ResponseRecord],
        scores: &[crate::store::ScoreRecord],
        rescore: bool,
    ) {
        self.session.load_stored(item, records);
        for s in scores {
            self.session.apply_score(s.clone());
        }
        if rescore {
            let inputs = self.session.score_inputs(item);
            if inputs.is_empty() {
                self.notice = Some("no finished answers to score".into());
            } else {
                self.requests.push((
                    to,
                    JobRequest::Score {
                        inputs,
                        judge: true,
                    },
                ));
            }
        } else {
            // Answers never scored are scored by rule now (browsing must not spend
            // judge calls; `S` asks the judge).
            let unscored: Vec<_> = records
                .iter()
                .filter(|r| {
                    !scores
                        .iter()
                        .any(|s| s.run_id == r.run_id && s.job_idx == r.job_idx)
                })
                .map(|r| to_score(item, r))
                .collect();
            if !unscored.is_empty() {
                self.requests.push((
                    to,
                    JobRequest::Score {
                        inputs: unscored,
                        judge: false,
                    },
                ));
            }
        }
    }

    /// The judge is set: the answers that waited for one are scored, and the notice says so.
    fn on_judge_set(
        &mut self,
        to: ScreenId,
        name: &str,
        waiting: &[crate::engine::score::ToScore],
        not_remembered: Option<&str>,
    ) {
        self.judge = Some(name.to_string());
        let caveat = self
            .models
            .iter()
            .find(|m| m.name == *name)
            .and_then(super::popups::judge_caveat)
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let scoring = match waiting.len() {
            0 => "no answer waits for a judge".to_string(),
            1 => "scoring the 1 answer that waited for a judge".to_string(),
            n => format!("scoring the {n} answers that waited for a judge"),
        };
        if !waiting.is_empty() {
            self.requests.push((
                to,
                JobRequest::Score {
                    inputs: waiting.to_vec(),
                    judge: true,
                },
            ));
        }
        let memory = match not_remembered {
            None => "; remembered in config.toml".to_string(),
            Some(e) => format!("; not remembered: {e}"),
        };
        self.notice = Some(format!(
            "judge: {}{caveat}: {scoring}{memory}",
            crate::text::one_line(name)
        ));
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

/// How a notice of what the team's store brought starts (see [`App::on_shared_pulled`]).
const PULLED_NOTICE: &str = "from the team's store: ";

/// How long a message stays: long enough to read it (10 s, and 50 ms a character more for a
/// long one, up to 30 s), then it leaves without a key press.
pub(crate) fn notice_ttl(notice: &str) -> std::time::Duration {
    let chars = notice.chars().count() as u64;
    std::time::Duration::from_millis((10_000 + 50 * chars.saturating_sub(80)).min(30_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> App {
        let loaded = crate::dataset::load_sample();
        App::new(
            Arc::new(loaded.dataset),
            Arc::new(Vec::new()),
            crate::theme::Theme::default_theme(),
            Keymap::default(),
        )
    }

    #[test]
    fn what_the_team_store_brought_does_not_push_aside_a_message_of_the_users_doing() {
        use crate::tui::jobs::{Delivery, Msg};
        let pulled = |answers| Delivery {
            to: ScreenId::Heatmap,
            msg: Msg::SharedPulled(Box::new(crate::store::mirror::Pulled {
                answers,
                ..Default::default()
            })),
        };
        let mut a = app();
        a.on_delivery(pulled(3));
        assert_eq!(
            a.notice.as_deref(),
            Some("from the team's store: 3 answer(s)")
        );
        // A later pull says its own news in place of the earlier one.
        a.on_delivery(pulled(5));
        assert_eq!(
            a.notice.as_deref(),
            Some("from the team's store: 5 answer(s)")
        );
        // A run pushed (or an error) stays until it leaves, whatever the mirror brings meanwhile.
        let pushed = "run r1 is on the team's store postgres://127.0.0.1/x (4 row(s) added)";
        a.on_delivery(Delivery {
            to: ScreenId::Browse,
            msg: Msg::Notice(pushed.into()),
        });
        a.on_delivery(pulled(7));
        assert_eq!(a.notice.as_deref(), Some(pushed));
        // Once it left, the mirror's news shows again.
        a.notice = None;
        a.on_delivery(pulled(2));
        assert_eq!(
            a.notice.as_deref(),
            Some("from the team's store: 2 answer(s)")
        );
    }

    #[test]
    fn a_message_leaves_by_itself_once_its_time_is_up() {
        let mut a = app();
        a.notice = Some("judge: smol · scoring the 5 answers…".into());
        a.before_draw();
        assert!(a.notice.is_some(), "shown first");
        let left = a.notice_left().unwrap();
        assert!(left > std::time::Duration::from_secs(9) && left <= notice_ttl("x"));
        // Its time up (as if shown 31 s ago): the next frame is without it.
        a.notice_shown = Some((
            a.notice.clone().unwrap(),
            std::time::Instant::now() - std::time::Duration::from_secs(31),
        ));
        a.before_draw();
        assert_eq!(a.notice, None);
        assert_eq!(a.notice_left(), None);
        // A new message starts its own time.
        a.notice = Some("another".into());
        a.before_draw();
        assert!(a.notice_left().unwrap() > std::time::Duration::from_secs(9));
        // A long one stays longer, up to 30 s.
        assert!(notice_ttl(&"x".repeat(300)) > notice_ttl("short"));
        assert_eq!(
            notice_ttl(&"x".repeat(10_000)),
            std::time::Duration::from_secs(30)
        );
    }
}
