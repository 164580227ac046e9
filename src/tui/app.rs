//! The TUI's state and its `update`: the only place state changes. Rendering (in `view`) reads it.

use std::sync::Arc;

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use ratatui_textarea::TextArea;
use regex::{Regex, RegexBuilder};

use super::keymap::{Action, Keymap};
use super::layout::Areas;
use super::runs::Runs;
use super::tree::{NodeId, Tree};
use crate::dataset::{Dataset, Problem};
use crate::provider::ModelConfig;
use crate::theme::Theme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Tree,
    Items,
    Detail,
}

impl Focus {
    fn next(self) -> Focus {
        match self {
            Focus::Tree => Focus::Items,
            Focus::Items => Focus::Detail,
            Focus::Detail => Focus::Tree,
        }
    }
    fn prev(self) -> Focus {
        match self {
            Focus::Tree => Focus::Detail,
            Focus::Items => Focus::Tree,
            Focus::Detail => Focus::Items,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Popup {
    Help {
        scroll: u16,
    },
    Problems {
        scroll: u16,
    },
    /// Choose the models of a run; `cursor` is the highlighted model.
    Models {
        cursor: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Browse,
    Compare,
    Heatmap,
}

/// Work the loop does for the app (update itself never blocks or spawns).
#[derive(Debug, Clone)]
pub enum Command {
    StartRun {
        items: Vec<usize>,
        models: Vec<ModelConfig>,
    },
    CancelRun,
    /// Read an item's stored answers into `runs`.
    LoadStored(usize),
    /// Score an item's answers again, once its stored answers are loaded.
    Rescore(usize),
    /// Score answers (rules; the judge too when `judge` is set and one is configured).
    Score {
        inputs: Vec<crate::engine::score::ToScore>,
        judge: bool,
    },
}

/// The compare screen: answers of every model side by side for one item at a time.
#[derive(Debug, Clone, Default)]
pub struct Compare {
    /// The items to step through with `[`/`]`.
    pub items: Vec<usize>,
    pub pos: usize,
    /// Focused pane.
    pub pane: usize,
    /// Per model: scroll offset and whether the pane follows the tail of a stream.
    pub scroll: std::collections::HashMap<String, (u16, bool)>,
    pub sample: u32,
    /// Show the judge's full reply under each judged answer.
    pub show_judge: bool,
    /// Where back leads (the heatmap's drill-down, else browsing).
    pub return_to: Option<Screen>,
}

impl Compare {
    pub fn item(&self) -> Option<usize> {
        self.items.get(self.pos).copied()
    }
}

/// `/` search: the input while typing, and the matches once there is a query.
#[derive(Debug, Default)]
pub struct Search {
    /// Present while the user is typing the query.
    pub input: Option<TextArea<'static>>,
    pub query: String,
    pub regex: Option<Regex>,
    /// Matching item indices, in dataset order.
    pub matches: Vec<usize>,
    /// Position in `matches` of the item jumped to last.
    pub current: Option<usize>,
    /// The selection before typing began, restored when the search is cancelled.
    saved: Option<(usize, usize)>,
}

pub struct App {
    pub ds: Arc<Dataset>,
    pub problems: Arc<Vec<Problem>>,
    pub theme: Theme,
    pub keymap: Keymap,
    pub tree: Tree,
    /// Selected visible row of the tree, and the first row shown.
    pub tree_sel: usize,
    pub tree_offset: usize,
    /// Selected item within the selected node's range, and the first row shown.
    pub item_sel: usize,
    pub item_offset: usize,
    pub detail_scroll: u16,
    pub focus: Focus,
    pub popup: Option<Popup>,
    pub search: Search,
    /// Warnings from config and theme loading, shown once in the status bar.
    pub notice: Option<String>,
    /// The terminal size the last frame was laid out for (mouse hits and paging use it).
    pub area: Rect,
    pub quit: bool,
    pub screen: Screen,
    /// Items marked for a run (by dataset index), and how many.
    pub marked: Vec<bool>,
    pub marked_count: usize,
    /// Marked items per task (the tree shows them without scanning items).
    pub marked_per_task: Vec<usize>,
    /// Configured models, and which are chosen in the picker.
    pub models: Vec<ModelConfig>,
    pub chosen: Vec<bool>,
    pub runs: Runs,
    pub compare: Compare,
    pub heat: super::heatmap::Heat,
    /// Work for the loop to do.
    pub commands: Vec<Command>,
    /// Whether runs can be started (a store is open).
    pub can_run: bool,
}

impl App {
    pub fn new(ds: Arc<Dataset>, problems: Arc<Vec<Problem>>, theme: Theme, keymap: Keymap) -> App {
        let n_items = ds.items.len();
        let n_tasks = ds.tasks.len();
        let mut tree = Tree::new(&ds);
        // Open the first dimension so the first screen shows some structure.
        if let Some(&first) = tree.roots.first() {
            tree.set_expanded(first, true);
        }
        App {
            ds,
            problems,
            theme,
            keymap,
            tree,
            tree_sel: 0,
            tree_offset: 0,
            item_sel: 0,
            item_offset: 0,
            detail_scroll: 0,
            focus: Focus::Tree,
            popup: None,
            search: Search::default(),
            notice: None,
            area: Rect::new(0, 0, 120, 40),
            quit: false,
            screen: Screen::Browse,
            marked: vec![false; n_items],
            marked_count: 0,
            marked_per_task: vec![0; n_tasks],
            models: Vec::new(),
            chosen: Vec::new(),
            runs: Runs::default(),
            compare: Compare::default(),
            heat: Default::default(),
            commands: Vec::new(),
            can_run: false,
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
    /// ignored, and with none left the first stays chosen.
    pub fn with_chosen(mut self, names: &[String]) -> App {
        let chosen: Vec<bool> = self
            .models
            .iter()
            .map(|m| names.contains(&m.name))
            .collect();
        if chosen.iter().any(|c| *c) {
            self.chosen = chosen;
        }
        self
    }

    /// Applies an engine event.
    pub fn on_engine(&mut self, ev: crate::engine::Event) {
        // A finished answer is scored at once (and saved with its score).
        if let crate::engine::Event::Done { response, .. }
        | crate::engine::Event::Failed { response, .. } = &ev
            && let Some(item) = self.ds.index_of(&response.item_id)
        {
            self.commands.push(Command::Score {
                inputs: vec![to_score(item, response)],
                judge: true,
            });
        }
        let ds = self.ds.clone();
        let start = matches!(ev, crate::engine::Event::Started { .. });
        self.runs.apply(ev, |i| ds.items[i].task as usize);
        if start && let Some(run) = &self.runs.active {
            self.compare = Compare {
                items: run.items.clone(),
                ..Compare::default()
            };
            self.screen = Screen::Compare;
        }
    }

    /// A score arrived: shown under its answer and counted in the tree.
    pub fn on_score(&mut self, rec: crate::store::ScoreRecord) {
        if let Some(item) = self.ds.index_of(&rec.item_id) {
            let task = self.ds.items[item].task as usize;
            self.runs.apply_score(item, task, rec);
            // Rebuilt once before the next frame, however many scores arrive in between.
            self.heat.dirty = true;
        }
    }

    /// Asks for the answers of `item` on screen to be scored again.
    pub fn rescore(&mut self, item: usize, judge: bool) {
        let inputs: Vec<_> = self
            .runs
            .answers
            .iter()
            .filter(|((i, _, _), a)| {
                *i == item && a.status.is_final() && a.status != super::runs::Status::Cancelled
            })
            .map(|((_, m, sample), a)| crate::engine::score::ToScore {
                run_id: a.run_id.clone(),
                job_idx: a.job_idx,
                item,
                model: m.clone(),
                sample: *sample,
                response: match &a.status {
                    super::runs::Status::Failed(e) => Some(format!("ERROR: {e}")),
                    _ => Some(a.text.clone()),
                },
            })
            .collect();
        if inputs.is_empty() {
            self.notice = Some("no finished answers to score".into());
        } else {
            self.commands.push(Command::Score { inputs, judge });
        }
    }

    pub fn areas(&self) -> Areas {
        Areas::new(self.area)
    }

    /// The item range of the selected tree node.
    pub fn current_range(&self) -> std::ops::Range<usize> {
        self.tree
            .visible
            .get(self.tree_sel)
            .map(|&n| self.tree.nodes[n].items.clone())
            .unwrap_or(0..0)
    }

    /// The dataset index of the selected item.
    pub fn current_item(&self) -> Option<usize> {
        let r = self.current_range();
        let i = r.start + self.item_sel;
        (i < r.end).then_some(i)
    }

    pub fn error_count(&self) -> usize {
        self.problems.iter().filter(|p| p.is_error()).count()
    }

    /// Applies one input event.
    pub fn handle_event(&mut self, ev: Event) {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            Event::Mouse(m) => self.on_mouse(m),
            Event::Resize(w, h) => {
                self.area = Rect::new(0, 0, w, h);
                self.keep_visible();
            }
            Event::Paste(text) => {
                if let Some(input) = self.search.input.as_mut() {
                    input.insert_str(text.replace(['\n', '\r'], " "));
                    self.refresh_search();
                }
            }
            _ => {}
        }
    }

    fn on_key(&mut self, k: KeyEvent) {
        if self.search.input.is_some() {
            self.on_search_key(k);
            return;
        }
        let action = self.keymap.action_for(&k);
        if let Some(p) = self.popup {
            self.on_popup_key(p, action);
            return;
        }
        self.notice = None;
        if let Some(a) = action {
            match self.screen {
                Screen::Browse => self.apply(a),
                Screen::Compare => self.apply_compare(a),
                Screen::Heatmap => self.apply_heatmap(a),
            }
        }
    }

    fn on_popup_key(&mut self, p: Popup, action: Option<Action>) {
        let scroll = |s: u16, a: Action| match a {
            Action::Down => s.saturating_add(1),
            Action::Up => s.saturating_sub(1),
            Action::PageDown => s.saturating_add(10),
            Action::PageUp => s.saturating_sub(10),
            Action::Top => 0,
            _ => s,
        };
        if let Popup::Models { cursor } = p {
            self.on_picker_key(cursor, action);
            return;
        }
        match (p, action) {
            (_, Some(Action::Quit)) if matches!(p, Popup::Help { .. } | Popup::Problems { .. }) => {
                // q closes a popup first; ctrl-c always quits.
                self.popup = None;
            }
            (_, Some(Action::Cancel)) | (Popup::Help { .. }, Some(Action::Help)) => {
                self.popup = None
            }
            (Popup::Problems { .. }, Some(Action::Problems)) => self.popup = None,
            (Popup::Help { scroll: s }, Some(a)) => {
                self.popup = Some(Popup::Help {
                    scroll: scroll(s, a),
                })
            }
            (Popup::Problems { scroll: s }, Some(a)) => {
                self.popup = Some(Popup::Problems {
                    scroll: scroll(s, a),
                })
            }
            _ => {}
        }
    }

    fn on_picker_key(&mut self, cursor: usize, action: Option<Action>) {
        let n = self.models.len();
        match action {
            Some(Action::Up) => {
                self.popup = Some(Popup::Models {
                    cursor: cursor.saturating_sub(1),
                })
            }
            Some(Action::Down) => {
                self.popup = Some(Popup::Models {
                    cursor: (cursor + 1).min(n.saturating_sub(1)),
                })
            }
            Some(Action::Mark) => {
                if let Some(c) = self.chosen.get_mut(cursor) {
                    *c = !*c;
                }
            }
            Some(Action::Toggle) | Some(Action::Run) => {
                let models: Vec<ModelConfig> = self
                    .models
                    .iter()
                    .zip(&self.chosen)
                    .filter(|(_, c)| **c)
                    .map(|(m, _)| m.clone())
                    .collect();
                if models.is_empty() {
                    self.notice = Some("choose at least one model (space)".into());
                    return;
                }
                let items = self.run_items();
                self.popup = None;
                self.commands.push(Command::StartRun { items, models });
            }
            Some(Action::Cancel) | Some(Action::Quit) => self.popup = None,
            _ => {}
        }
    }

    /// The items a run would use: the marked ones, else the selected item (when the item list or
    /// detail has focus), else every item under the selected tree node.
    pub fn run_items(&self) -> Vec<usize> {
        if self.marked_count > 0 {
            return (0..self.marked.len()).filter(|&i| self.marked[i]).collect();
        }
        match (self.focus, self.current_item()) {
            (Focus::Items | Focus::Detail, Some(i)) => vec![i],
            _ => self.current_range().collect(),
        }
    }

    fn toggle_mark(&mut self) {
        let range = match self.focus {
            Focus::Tree => self.current_range(),
            _ => match self.current_item() {
                Some(i) => i..i + 1,
                None => return,
            },
        };
        let all = range.clone().all(|i| self.marked[i]);
        for i in range {
            if self.marked[i] == all {
                self.marked[i] = !all;
                let t = self.ds.items[i].task as usize;
                if all {
                    self.marked_count -= 1;
                    self.marked_per_task[t] -= 1;
                } else {
                    self.marked_count += 1;
                    self.marked_per_task[t] += 1;
                }
            }
        }
        // Marking an item moves on to the next one, as in file managers.
        if self.focus == Focus::Items {
            self.move_by(1);
        }
    }

    fn open_run_picker(&mut self) {
        if !self.can_run {
            self.notice =
                Some("runs need a store: start prism with a writable data dir or --db".into());
            return;
        }
        if self.models.is_empty() {
            self.notice = Some(
                "no models configured: add [[models]] to models.toml (see prism config dirs)"
                    .into(),
            );
            return;
        }
        if self.runs.active.as_ref().is_some_and(|r| r.running()) {
            self.notice = Some(
                "a run is in progress; wait for it or cancel it (esc in the compare screen)".into(),
            );
            return;
        }
        self.popup = Some(Popup::Models { cursor: 0 });
    }

    /// Opens the compare screen on one item with whatever answers are stored for it.
    fn open_item(&mut self, item: usize) {
        self.commands.push(Command::LoadStored(item));
        let items: Vec<usize> = self.current_range().collect();
        let pos = items.iter().position(|&i| i == item).unwrap_or(0);
        self.compare = Compare {
            items,
            pos,
            ..Compare::default()
        };
        self.screen = Screen::Compare;
    }

    /// Performs an action in the browse screen.
    pub fn apply(&mut self, a: Action) {
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.popup = Some(Popup::Help { scroll: 0 }),
            Action::Problems => self.popup = Some(Popup::Problems { scroll: 0 }),
            Action::Rescore => {
                if let Some(i) = self.current_item() {
                    // Load first: the item's stored answers may not be in memory yet.
                    self.commands.push(Command::LoadStored(i));
                    self.commands.push(Command::Rescore(i));
                    self.notice = Some("scoring again".into());
                }
            }
            Action::ToggleJudge => self.compare.show_judge = !self.compare.show_judge,
            Action::Heatmap => self.open_heatmap(),
            Action::HeatView
            | Action::Sort
            | Action::Spearman
            | Action::References
            | Action::Baseline => {}
            Action::Cancel => {
                if self.search.regex.is_some() {
                    self.search = Search::default();
                }
            }
            Action::NextPane => self.focus = self.focus.next(),
            Action::PrevPane => self.focus = self.focus.prev(),
            Action::Search => self.start_search(),
            Action::NextMatch => self.jump_match(true),
            Action::PrevMatch => self.jump_match(false),
            Action::ExpandAll => {
                let open = !self.tree.all_expanded();
                let node = self.tree.visible.get(self.tree_sel).copied();
                self.tree.expand_all(open);
                self.reselect_node(node);
            }
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-(self.page() as isize)),
            Action::PageDown => self.move_by(self.page() as isize),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Expand => match self.focus {
                Focus::Tree => {
                    let n = self.tree.visible[self.tree_sel];
                    if self.tree.has_children(n) && !self.tree.is_expanded(n) {
                        self.tree.set_expanded(n, true);
                    } else {
                        self.focus = Focus::Items;
                    }
                }
                Focus::Items => self.focus = Focus::Detail,
                Focus::Detail => {}
            },
            Action::Collapse => match self.focus {
                Focus::Tree => {
                    let n = self.tree.visible[self.tree_sel];
                    if self.tree.is_expanded(n) {
                        self.tree.set_expanded(n, false);
                    } else if let Some(p) = self.tree.parent(n) {
                        self.reselect_node(Some(p));
                    }
                }
                Focus::Items => self.focus = Focus::Tree,
                Focus::Detail => self.focus = Focus::Items,
            },
            Action::Toggle => match self.focus {
                Focus::Tree => {
                    let n = self.tree.visible[self.tree_sel];
                    if self.tree.has_children(n) {
                        let open = !self.tree.is_expanded(n);
                        self.tree.set_expanded(n, open);
                    } else {
                        self.focus = Focus::Items;
                    }
                }
                Focus::Items | Focus::Detail => {
                    if let Some(i) = self.current_item() {
                        self.open_item(i);
                    }
                }
            },
            Action::Mark => self.toggle_mark(),
            Action::Run => self.open_run_picker(),
            Action::Back => {
                if self.runs.active.is_some() || !self.compare.items.is_empty() {
                    self.screen = Screen::Compare;
                }
            }
            Action::NextItem | Action::PrevItem | Action::NextSample => {}
        }
        self.keep_visible();
    }

    /// Rows a page key moves in the focused pane.
    fn page(&self) -> usize {
        let a = self.areas();
        let h = match self.focus {
            Focus::Tree => a.tree.height,
            Focus::Items => a.items.height,
            Focus::Detail => a.detail.height,
        };
        h.saturating_sub(3).max(1) as usize
    }

    fn move_by(&mut self, delta: isize) {
        match self.focus {
            Focus::Tree => {
                let last = self.tree.visible.len().saturating_sub(1);
                let new = clamp_add(self.tree_sel, delta, last);
                if new != self.tree_sel {
                    self.tree_sel = new;
                    self.item_sel = 0;
                    self.item_offset = 0;
                    self.detail_scroll = 0;
                }
            }
            Focus::Items => {
                let last = self.current_range().len().saturating_sub(1);
                let new = clamp_add(self.item_sel, delta, last);
                if new != self.item_sel {
                    self.item_sel = new;
                    self.detail_scroll = 0;
                }
            }
            Focus::Detail => {
                let max = self.detail_max_scroll();
                self.detail_scroll = clamp_add(self.detail_scroll as usize, delta, max) as u16;
            }
        }
    }

    /// The furthest the detail pane can scroll (last line at the bottom of the pane).
    pub fn detail_max_scroll(&self) -> usize {
        let a = self.areas();
        let inner_w = a.detail.width.saturating_sub(2);
        let inner_h = a.detail.height.saturating_sub(2) as usize;
        let lines = super::view::detail_line_count(self, inner_w);
        lines.saturating_sub(inner_h)
    }

    /// Selects a tree node by index (if visible), keeping it on screen.
    fn reselect_node(&mut self, node: Option<usize>) {
        if let Some(n) = node
            && let Some(row) = self.tree.visible.iter().position(|&v| v == n)
        {
            if row != self.tree_sel {
                self.item_sel = 0;
                self.item_offset = 0;
                self.detail_scroll = 0;
            }
            self.tree_sel = row;
        }
        self.tree_sel = self.tree_sel.min(self.tree.visible.len().saturating_sub(1));
    }

    /// Adjusts scroll offsets so the selections are inside their panes.
    pub fn keep_visible(&mut self) {
        let a = self.areas();
        let th = a.tree.height.saturating_sub(2).max(1) as usize;
        self.tree_offset = fit(self.tree_sel, self.tree_offset, th);
        let ih = a.items.height.saturating_sub(2).max(1) as usize;
        self.item_offset = fit(self.item_sel, self.item_offset, ih);
    }

    // ----- search -----

    fn start_search(&mut self) {
        let mut input = TextArea::default();
        input.insert_str(&self.search.query);
        self.search.saved = Some((self.tree_sel, self.item_sel));
        self.search.input = Some(input);
    }

    fn on_search_key(&mut self, k: KeyEvent) {
        match k.code {
            KeyCode::Esc => {
                let saved = self.search.saved.take();
                self.search = Search::default();
                if let Some((t, i)) = saved {
                    self.tree_sel = t.min(self.tree.visible.len().saturating_sub(1));
                    self.item_sel = i;
                }
                self.keep_visible();
            }
            KeyCode::Enter => {
                self.search.input = None;
                self.search.saved = None;
                if self.search.query.is_empty() {
                    self.search = Search::default();
                }
            }
            KeyCode::Char('c')
                if k.modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL) =>
            {
                self.quit = true;
            }
            _ => {
                if let Some(input) = self.search.input.as_mut() {
                    // Single-line input: never let Enter-like keys add lines.
                    input.input(k);
                }
                self.refresh_search();
            }
        }
    }

    /// Re-runs the search for the current input text and jumps to the first match at or after
    /// the selection (incremental search).
    fn refresh_search(&mut self) {
        let Some(input) = &self.search.input else {
            return;
        };
        let query = input.lines().join(" ");
        if query == self.search.query {
            return;
        }
        self.search.query = query.clone();
        if query.trim().is_empty() {
            self.search.regex = None;
            self.search.matches.clear();
            self.search.current = None;
            return;
        }
        let re = RegexBuilder::new(&regex::escape(query.trim()))
            .case_insensitive(true)
            .build()
            .ok();
        self.search.matches = match &re {
            Some(re) => find_matches(&self.ds, re),
            None => Vec::new(),
        };
        self.search.regex = re;
        self.search.current = None;
        // Incremental: jump from where the user was when they pressed `/`.
        let origin = self
            .search
            .saved
            .map(|(t, i)| {
                self.tree
                    .visible
                    .get(t)
                    .map(|&n| self.tree.nodes[n].items.start + i)
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        if let Some(pos) = self.search.matches.iter().position(|&m| m >= origin) {
            self.goto_match(pos);
        } else if !self.search.matches.is_empty() {
            self.goto_match(0);
        }
    }

    fn jump_match(&mut self, forward: bool) {
        let n = self.search.matches.len();
        if n == 0 {
            return;
        }
        let cur = self.current_item();
        let pos = match (self.search.current, forward) {
            (Some(p), true) if cur == Some(self.search.matches[p]) => (p + 1) % n,
            (Some(p), false) if cur == Some(self.search.matches[p]) => (p + n - 1) % n,
            // The user moved away since: continue from the selection.
            (_, true) => {
                let c = cur.unwrap_or(0);
                self.search.matches.iter().position(|&m| m > c).unwrap_or(0)
            }
            (_, false) => {
                let c = cur.unwrap_or(0);
                self.search
                    .matches
                    .iter()
                    .rposition(|&m| m < c)
                    .unwrap_or(n - 1)
            }
        };
        self.goto_match(pos);
    }

    /// Selects the item of match `pos`: its task in the tree, the item in the list.
    fn goto_match(&mut self, pos: usize) {
        let idx = self.search.matches[pos];
        self.search.current = Some(pos);
        let task = self.ds.items[idx].task as usize;
        if let Some(row) = self.tree.reveal_task(task) {
            self.tree_sel = row;
            let start = self.tree.nodes[self.tree.visible[row]].items.start;
            self.item_sel = idx - start;
            self.detail_scroll = 0;
        }
        self.keep_visible();
    }

    // ----- mouse -----

    fn on_mouse(&mut self, m: MouseEvent) {
        if self.popup.is_some() || self.search.input.is_some() {
            if let (Some(Popup::Help { scroll } | Popup::Problems { scroll }), true) = (
                self.popup.as_mut(),
                matches!(
                    m.kind,
                    MouseEventKind::ScrollDown | MouseEventKind::ScrollUp
                ),
            ) {
                *scroll = if m.kind == MouseEventKind::ScrollDown {
                    scroll.saturating_add(3)
                } else {
                    scroll.saturating_sub(3)
                };
            }
            return;
        }
        let a = self.areas();
        let pos = Position::new(m.column, m.row);
        let pane = if a.tree.contains(pos) {
            Some(Focus::Tree)
        } else if a.items.contains(pos) {
            Some(Focus::Items)
        } else if a.detail.contains(pos) {
            Some(Focus::Detail)
        } else {
            None
        };
        let Some(pane) = pane else { return };
        match m.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let prev = self.focus;
                self.focus = pane;
                let step = if pane == Focus::Detail { 3 } else { 1 };
                self.move_by(if m.kind == MouseEventKind::ScrollDown {
                    step
                } else {
                    -step
                });
                self.focus = prev;
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                let rect = match pane {
                    Focus::Tree => a.tree,
                    Focus::Items => a.items,
                    Focus::Detail => a.detail,
                };
                // Row inside the border.
                if m.row <= rect.y || m.row >= rect.y + rect.height - 1 {
                    return;
                }
                let row = (m.row - rect.y - 1) as usize;
                match pane {
                    Focus::Tree => {
                        let target = self.tree_offset + row;
                        if target < self.tree.visible.len() {
                            if target == self.tree_sel {
                                self.apply(Action::Toggle);
                                self.focus = Focus::Tree;
                            } else {
                                self.tree_sel = target;
                                self.item_sel = 0;
                                self.item_offset = 0;
                                self.detail_scroll = 0;
                            }
                        }
                    }
                    Focus::Items => {
                        let target = self.item_offset + row;
                        if target < self.current_range().len() {
                            self.item_sel = target;
                            self.detail_scroll = 0;
                        }
                    }
                    Focus::Detail => {}
                }
            }
            _ => {}
        }
        self.keep_visible();
    }

    /// The label of a tree node, for the title of the item list.
    pub fn node_title(&self, id: NodeId) -> String {
        match id {
            NodeId::Dim(d) => format!("{} {}", d.code(), d.name()),
            NodeId::Cat(c) => {
                let cat = &crate::taxonomy::CATEGORIES[c];
                format!("{}-{} {}", cat.dimension, cat.code, cat.name)
            }
            NodeId::Task(t) => self.ds.tasks[t].id.clone(),
        }
    }
}

/// Every item any of whose searchable fields matches, in dataset order.
pub fn find_matches(ds: &Dataset, re: &Regex) -> Vec<usize> {
    ds.items
        .iter()
        .enumerate()
        .filter(|(_, it)| it.search_fields().any(|f| re.is_match(f)))
        .map(|(i, _)| i)
        .collect()
}

fn clamp_add(v: usize, delta: isize, max: usize) -> usize {
    (v as isize).saturating_add(delta).clamp(0, max as isize) as usize
}

/// The offset that keeps `sel` inside a window of `height` rows starting near `offset`.
fn fit(sel: usize, offset: usize, height: usize) -> usize {
    if sel < offset {
        sel
    } else if sel >= offset + height {
        sel + 1 - height
    } else {
        offset
    }
}

/// A stored response as something to score.
pub fn to_score(item: usize, r: &crate::store::ResponseRecord) -> crate::engine::score::ToScore {
    crate::engine::score::ToScore {
        run_id: r.run_id.clone(),
        job_idx: r.job_idx,
        item,
        model: r.model.clone(),
        sample: r.sample,
        response: match (&r.text, &r.error) {
            (_, Some(e)) => Some(format!("ERROR: {e}")),
            (t, None) => t.clone(),
        },
    }
}
