//! The browse screen: the taxonomy tree (dimension → category → sub-task, with counts, run
//! progress and per-model rates), the item list, and the item exactly as the model sees it;
//! `/` search, marks for a run.

use crossterm::event::{MouseButton, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::dataset::{Dataset, Item};
use crate::taxonomy::CATEGORIES;
use crate::text::{one_line, sanitize};
use crate::theme::Theme;
use crate::tui::component::{Cmd, Component, Cx, Input, Open, ScreenId};
use crate::tui::keymap::{Action, Mode};
use crate::tui::layout::Areas;
use crate::tui::popups::{Picker, Problems};
use crate::tui::session::NodeRate;
use crate::tui::tree::{NodeId, Tree};
use crate::tui::widgets::{clamp_add, fit, highlight, pane, scrollbar, title_line, truncate};

mod draw;
mod search;
pub use draw::{find_matches, item_detail};
pub use search::Search;

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

pub struct Browse {
    pub tree: Tree,
    /// Selected visible row of the tree, and the first row shown.
    pub tree_sel: usize,
    pub tree_offset: usize,
    /// Selected item within the selected node's range, and the first row shown.
    pub item_sel: usize,
    pub item_offset: usize,
    pub detail_scroll: u16,
    pub focus: Focus,
    pub search: Search,
    /// Items marked for a run (by dataset index), and how many.
    pub marked: Vec<bool>,
    pub marked_count: usize,
    /// Marked items per task (the tree shows them without scanning items).
    pub marked_per_task: Vec<usize>,
    /// Where the panes were last drawn, and how far the detail could scroll there.
    areas: Areas,
    detail_max: usize,
    /// The first of the scored models whose rates the tree shows (`M` moves it on when they
    /// do not all fit).
    pub model_offset: usize,
    /// How many models' rates fitted when the tree was last drawn.
    models_shown: std::cell::Cell<usize>,
}

impl Browse {
    pub fn new(ds: &Dataset) -> Browse {
        let mut tree = Tree::new(ds);
        // Open the first dimension so the first screen shows some structure.
        if let Some(&first) = tree.roots.first() {
            tree.set_expanded(first, true);
        }
        Browse {
            tree,
            tree_sel: 0,
            tree_offset: 0,
            item_sel: 0,
            item_offset: 0,
            detail_scroll: 0,
            focus: Focus::Tree,
            search: Search::default(),
            marked: vec![false; ds.items.len()],
            marked_count: 0,
            marked_per_task: vec![0; ds.tasks.len()],
            areas: Areas::new(Rect::new(0, 0, 120, 40)),
            model_offset: 0,
            models_shown: std::cell::Cell::new(0),
            detail_max: 0,
        }
    }

    /// Where the panes were last drawn.
    pub fn areas(&self) -> Areas {
        self.areas
    }

    /// The selected tree node, if the tree has any.
    fn node(&self) -> Option<usize> {
        self.tree.visible.get(self.tree_sel).copied()
    }

    /// The item range of the selected tree node.
    pub fn current_range(&self) -> std::ops::Range<usize> {
        self.node()
            .map(|n| self.tree.nodes[n].items.clone())
            .unwrap_or(0..0)
    }

    /// The dataset index of the selected item.
    pub fn current_item(&self) -> Option<usize> {
        let r = self.current_range();
        let i = r.start + self.item_sel;
        (i < r.end).then_some(i)
    }

    /// `M`: the tree's rate columns move on to the next models that fit; what is shown is said
    /// (and why nothing moves when every model fits or none has a score yet).
    fn next_models(&mut self, cx: &Cx) -> String {
        let n = cx.session.scored_models.len();
        let shown = self.models_shown.get().max(1);
        if n == 0 {
            return "no model has a scored answer yet (r runs the marked items)".into();
        }
        if n <= shown {
            self.model_offset = 0;
            return format!(
                "all {n} scored model{} shown",
                if n == 1 { " is" } else { "s are" }
            );
        }
        self.model_offset = (self.model_offset + shown) % n;
        let last = (self.model_offset + shown).min(n);
        format!(
            "rates of models {}-{last} of {n} (M shows the next)",
            self.model_offset + 1
        )
    }

    /// Unmarks every item.
    pub fn clear_marks(&mut self) {
        self.marked.fill(false);
        self.marked_per_task.fill(0);
        self.marked_count = 0;
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

    fn toggle_mark(&mut self, ds: &Dataset) {
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
                let t = ds.items[i].task as usize;
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

    fn open_run_picker(&self, cx: &Cx) -> Vec<Cmd> {
        let notice = |s: &str| vec![Cmd::Notice(s.to_string())];
        if !cx.can_run {
            return notice("runs need a store: start prism with a writable data dir or --db");
        }
        if cx.models.is_empty() {
            return notice(
                "no models configured: add [[models]] to models.toml (see prism config dirs)",
            );
        }
        if cx.session.active.as_ref().is_some_and(|r| r.running()) {
            return notice(
                "a run is in progress; wait for it or stop it (X twice in the compare screen)",
            );
        }
        let items = self.run_items();
        if items.is_empty() {
            return notice("no items to run here");
        }
        vec![Cmd::Popup(Box::new(Picker::new(items, cx.chosen.to_vec())))]
    }

    /// The picker for contradiction detection of the marked items (or the selection): each
    /// chosen model's newest stored answer to each item is tested (asked for first if none).
    fn open_detect_picker(&self, cx: &Cx) -> Vec<Cmd> {
        let notice = |s: &str| vec![Cmd::Notice(s.to_string())];
        if !cx.can_run {
            return notice("detection needs a store: start prism with a writable data dir or --db");
        }
        if cx.models.is_empty() {
            return notice(
                "no models configured: add [[models]] to models.toml (see prism config dirs)",
            );
        }
        let items = self.run_items();
        if items.is_empty() {
            return notice("no items here");
        }
        vec![Cmd::Popup(Box::new(
            crate::tui::popups::Picker::for_purpose(
                crate::tui::popups::PickFor::DetectItems { items },
                cx.chosen.to_vec(),
            ),
        ))]
    }

    /// Opens the compare screen on one item with whatever answers are stored for it.
    fn open_item(&self, item: usize) -> Vec<Cmd> {
        let items: Vec<usize> = self.current_range().collect();
        let pos = items.iter().position(|&i| i == item).unwrap_or(0);
        vec![Cmd::Push(Open::Compare { items, pos })]
    }

    /// Right or l: opens the tree's node, or goes to the pane on the right.
    fn expand(&mut self) {
        match (self.focus, self.node()) {
            (Focus::Tree, Some(n)) => {
                if self.tree.has_children(n) && !self.tree.is_expanded(n) {
                    self.tree.set_expanded(n, true);
                } else {
                    self.focus = Focus::Items;
                }
            }
            (Focus::Tree, None) => {}
            (Focus::Items, _) => self.focus = Focus::Detail,
            (Focus::Detail, _) => {}
        }
    }

    /// Left or h: closes the tree's node (else goes to its parent), or goes to the pane on the left.
    fn collapse(&mut self) {
        match (self.focus, self.node()) {
            (Focus::Tree, Some(n)) => {
                if self.tree.is_expanded(n) {
                    self.tree.set_expanded(n, false);
                } else if let Some(p) = self.tree.parent(n) {
                    self.reselect_node(Some(p));
                }
            }
            (Focus::Tree, None) => {}
            (Focus::Items, _) => self.focus = Focus::Tree,
            (Focus::Detail, _) => self.focus = Focus::Items,
        }
    }

    /// Enter: opens or closes the tree's node; on an item, opens it in the compare screen.
    fn toggle(&mut self) -> Vec<Cmd> {
        match (self.focus, self.node()) {
            (Focus::Tree, Some(n)) => {
                if self.tree.has_children(n) {
                    let open = !self.tree.is_expanded(n);
                    self.tree.set_expanded(n, open);
                } else {
                    self.focus = Focus::Items;
                }
            }
            (Focus::Tree, None) => {}
            (Focus::Items | Focus::Detail, _) => {
                if let Some(i) = self.current_item() {
                    return self.open_item(i);
                }
            }
        }
        Vec::new()
    }

    /// The review queue, of the category or sub-task under the cursor in the tree.
    fn open_review(&self, cx: &Cx) -> Cmd {
        if cx.can_run {
            // On a category or sub-task in the tree, the review covers just that (a
            // dimension is what the panel filter is for).
            let scope = match (self.focus, self.node().map(|n| self.tree.nodes[n].id)) {
                (Focus::Tree, Some(crate::tui::tree::NodeId::Cat(c))) => {
                    let cat = &crate::taxonomy::CATEGORIES[c];
                    Some(format!("{}-{}-", cat.dimension.code(), cat.code))
                }
                (Focus::Tree, Some(crate::tui::tree::NodeId::Task(t))) => {
                    Some(cx.ds.tasks[t].id.clone())
                }
                _ => None,
            };
            Cmd::Push(Open::Review { scope })
        } else {
            Cmd::Notice("review needs a store (start prism without --no-store)".into())
        }
    }

    /// Performs an action.
    fn apply(&mut self, a: Action, cx: &Cx) -> Vec<Cmd> {
        let mut out = Vec::new();
        match a {
            Action::Quit => out.push(Cmd::Quit),
            Action::Help => out.push(Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                Mode::Browse,
            )))),
            Action::Problems => out.push(Cmd::Popup(Box::new(Problems::default()))),
            Action::Rescore => {
                if let Some(item) = self.current_item() {
                    out.push(Cmd::job(crate::tui::jobs::answers::LoadStored {
                        item,
                        rescore: true,
                    }));
                    out.push(Cmd::Notice("scoring again".into()));
                }
            }
            Action::Runs => out.push(Cmd::Push(Open::Runs)),
            Action::ChooseJudge => out.push(Cmd::Popup(Box::new(
                crate::tui::popups::JudgePicker::new(cx),
            ))),
            Action::Heatmap => out.push(Cmd::Push(Open::Heatmap)),
            Action::Cancel if self.search.regex.is_some() => self.search = Search::default(),
            Action::NextPane => self.focus = self.focus.next(),
            Action::PrevPane => self.focus = self.focus.prev(),
            Action::Search => self.start_search(),
            Action::NextMatch => self.jump_match(true, cx.ds),
            Action::PrevMatch => self.jump_match(false, cx.ds),
            Action::ExpandAll => {
                let open = !self.tree.all_expanded();
                let node = self.node();
                self.tree.expand_all(open);
                self.reselect_node(node);
            }
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-(self.page() as isize)),
            Action::PageDown => self.move_by(self.page() as isize),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Expand => self.expand(),
            Action::Collapse => self.collapse(),
            Action::Toggle => out.extend(self.toggle()),
            Action::Mark => self.toggle_mark(cx.ds),
            Action::Models => out.push(Cmd::Notice(self.next_models(cx))),
            Action::Run => out.extend(self.open_run_picker(cx)),
            Action::Detect => out.extend(self.open_detect_picker(cx)),
            Action::Claims => {
                let loaded = crate::dataset::claims::sample_claims();
                out.push(Cmd::Push(Open::Claims {
                    set: std::sync::Arc::new(loaded.set),
                    dataset: "<sample-claims>".into(),
                }));
            }
            Action::Review => out.push(self.open_review(cx)),
            Action::SelfDetect => {
                let loaded = crate::dataset::triples::sample_triples();
                out.push(Cmd::Push(Open::Selfcheck {
                    set: std::sync::Arc::new(loaded.set),
                    dataset: "<sample-triples>".into(),
                }));
            }
            Action::Back => {
                // Back to the answers of the run in progress (or the last one).
                if let Some(run) = &cx.session.active {
                    out.push(Cmd::Push(Open::Compare {
                        items: run.items.clone(),
                        pos: 0,
                    }));
                }
            }
            _ => {}
        }
        self.keep_visible();
        out
    }

    /// Rows a page key moves in the focused pane.
    fn page(&self) -> usize {
        let a = self.areas;
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
                // The limit is what the last frame measured for the detail shown.
                let max = self.detail_max.max(self.detail_scroll as usize);
                self.detail_scroll = clamp_add(self.detail_scroll as usize, delta, max) as u16;
            }
        }
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
        let a = self.areas;
        let th = a.tree.height.saturating_sub(2).max(1) as usize;
        self.tree_offset = fit(self.tree_sel, self.tree_offset, th);
        let ih = a.items.height.saturating_sub(2).max(1) as usize;
        self.item_offset = fit(self.item_sel, self.item_offset, ih);
    }

    // ----- mouse -----

    fn on_mouse(&mut self, m: crossterm::event::MouseEvent, cx: &Cx) -> Vec<Cmd> {
        if self.search.input.is_some() {
            return Vec::new();
        }
        let a = self.areas;
        let pos = Position::new(m.column, m.row);
        let pane = if a.tree.contains(pos) {
            Focus::Tree
        } else if a.items.contains(pos) {
            Focus::Items
        } else if a.detail.contains(pos) {
            Focus::Detail
        } else {
            return Vec::new();
        };
        let mut out = Vec::new();
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
                let Some(row) = crate::tui::widgets::row_in(rect, m.row) else {
                    return out;
                };
                match pane {
                    Focus::Tree => {
                        let target = self.tree_offset + row;
                        if target < self.tree.visible.len() {
                            if target == self.tree_sel {
                                out = self.apply(Action::Toggle, cx);
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
        out
    }

    /// The label of a tree node, for the title of the item list.
    fn node_title(&self, ds: &Dataset, id: NodeId) -> String {
        match id {
            NodeId::Dim(d) => format!("{} {}", d.code(), d.name()),
            NodeId::Cat(c) => {
                let cat = &CATEGORIES[c];
                format!("{}-{} {}", cat.dimension, cat.code, cat.name)
            }
            NodeId::Task(t) => sanitize(&ds.tasks[t].id).into_owned(),
        }
    }
}

impl Component for Browse {
    fn id(&self) -> ScreenId {
        ScreenId::Browse
    }

    fn mode(&self) -> Mode {
        Mode::Browse
    }

    fn takes_text(&self) -> bool {
        self.search.input.is_some()
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Key(k) if self.search.input.is_some() => self.on_search_key(k, cx),
            Input::Paste(text) => {
                if let Some(input) = self.search.input.as_mut() {
                    input.paste(&text);
                    self.refresh_search(cx.ds);
                }
                Vec::new()
            }
            Input::Action(a) => {
                let mut out = vec![Cmd::ClearNotice];
                out.extend(self.apply(a, cx));
                out
            }
            Input::Mouse(m) => self.on_mouse(m, cx),
            Input::Key(_) => Vec::new(),
        }
    }

    /// A run of the marked items has started: the marks are cleared (else `r` again would
    /// quietly run them again), and the notice says so.
    fn on_msg(&mut self, msg: &crate::tui::jobs::Msg, cx: &Cx) -> Vec<Cmd> {
        if let Some(crate::tui::jobs::runs::AnswerMatches { query, items }) = msg.get() {
            return self.on_answer_matches(query, items, cx.ds);
        }
        let started = matches!(
            msg.get::<crate::engine::Event>(),
            Some(crate::engine::Event::Started { .. })
        );
        if !started || self.marked_count == 0 {
            return Vec::new();
        }
        let n = self.marked_count;
        self.clear_marks();
        let s = if n == 1 { "" } else { "s" };
        vec![Cmd::Notice(format!(
            "running the {n} marked item{s}; marks cleared"
        ))]
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let a = Areas::new(area);
        if a != self.areas {
            self.areas = a;
            self.keep_visible();
        }
        f.render_widget(Block::default().style(cx.theme.base()), area);
        draw::title_bar(cx, f, a.title);
        self.tree_pane(cx, f, a.tree);
        self.items_pane(cx, f, a.items);
        self.detail_max = self.detail_pane(cx, f, a.detail);
        self.status_bar(cx, f, a.status);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
