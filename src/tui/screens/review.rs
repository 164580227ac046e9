//! Human review (METHODS §2): a queue of items, ranked by triage signals, on the left; on the
//! right the current item as the model sees it, its reference and constraints, every stored
//! answer with its score, and the decisions so far; below them the reviewer's scores (Clarity,
//! Domain Relevance, Coherence, each band's meaning beside it), the decision and the rationale
//! editor. Everything typed is saved as a draft as it is typed, so a quit, crash or lost ssh
//! connection loses nothing; `ctrl-s` saves the decision and moves on.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui_textarea::{TextArea, WrapMode};

use crate::review::load::ReviewData;
use crate::review::queue::{self, StatusFilter};
use crate::review::rubric::{BAND_RANGES, HUMAN};
use crate::review::{Decision, ItemStatus, Panel, ReviewRecord, State};
use crate::store::{Draft, ResponseRecord, ScoreRecord};
use crate::text::{one_line, sanitize};
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::keymap::{Action, Mode};
use crate::tui::widgets::{pane, title_line, truncate};

mod draw;

/// A round converges when this many reviewers agree (the review rule, not the screen's).
pub use crate::review::MIN_REVIEWERS;

/// The scoring form's decision row (after the three criteria).
pub const DECISION_ROW: usize = 3;

/// What the editor is editing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editing {
    Rationale,
    Question,
}

pub struct Review {
    pub data: Option<ReviewData>,
    pub status: HashMap<String, ItemStatus>,
    pub queue: Vec<usize>,
    /// Position in `queue`.
    pub pos: usize,
    pub filter: StatusFilter,
    pub panel: Option<Panel>,
    /// Only items whose task id starts with this (a category or sub-task).
    pub scope: Option<String>,
    /// The draft of the current item (what the keys change; saved as it changes).
    pub draft: Draft,
    /// The focused row of the scoring form: 0 Clarity, 1 Domain Relevance, 2 Coherence (the
    /// digit keys set it, and the focus stays), or [`DECISION_ROW`]. ↑/↓ move between them;
    /// tab goes criteria → decision → rationale.
    pub criterion: usize,
    pub editor: TextArea<'static>,
    pub editing: Option<Editing>,
    /// The question editor's text for a revision.
    pub question: TextArea<'static>,
    /// The current item's stored answers and their scores.
    answers: Vec<ResponseRecord>,
    /// The stored answer `L` labels (`s` moves it), an index into `answers`.
    answer_sel: usize,
    /// The labels given from this screen, by answer (run, job): shown beside the answer.
    labels: std::collections::HashMap<(String, u32), crate::store::Label>,
    scores: Vec<ScoreRecord>,
    scroll: u16,
    error: Option<String>,
}

fn editor(text: &str) -> TextArea<'static> {
    let mut t = TextArea::new(text.split('\n').map(str::to_string).collect());
    t.set_wrap_mode(WrapMode::Word);
    t.move_cursor(ratatui_textarea::CursorMove::Bottom);
    t.move_cursor(ratatui_textarea::CursorMove::End);
    t
}

impl Default for Review {
    fn default() -> Self {
        Review::new()
    }
}

impl Review {
    pub fn new() -> Review {
        Review {
            data: None,
            status: HashMap::new(),
            queue: Vec::new(),
            pos: 0,
            filter: StatusFilter::All,
            panel: None,
            scope: None,
            draft: Draft::default(),
            criterion: 0,
            editor: editor(""),
            editing: None,
            question: editor(""),
            answers: Vec::new(),
            answer_sel: 0,
            labels: Default::default(),
            scores: Vec::new(),
            scroll: 0,
            error: None,
        }
    }

    /// The review of the items under a task-id prefix (all with `None`).
    pub fn scoped(scope: Option<String>) -> Review {
        Review {
            scope,
            ..Review::new()
        }
    }

    pub fn current(&self) -> Option<usize> {
        self.queue.get(self.pos).copied()
    }

    fn view(&self) -> queue::View<'_> {
        queue::View {
            filter: self.filter,
            panel: self.panel,
            prefix: self.scope.as_deref(),
        }
    }

    /// Statuses and the queue from scratch (opening, a filter change).
    fn rebuild(&mut self, cx: &Cx) {
        let Some(data) = &self.data else { return };
        let keep = self.current();
        self.status = data.statuses(MIN_REVIEWERS);
        self.queue = queue::build(
            cx.ds,
            &self.status,
            &data.signals,
            &data.reviewer,
            self.view(),
        );
        self.pos = keep
            .and_then(|k| self.queue.iter().position(|&i| i == k))
            .unwrap_or(0)
            .min(self.queue.len().saturating_sub(1));
    }

    /// New decisions on `items`: their statuses again, and each moved in or out of the queue
    /// where the filter says so (a save must not cost a rebuild of a 100,000-item queue). The
    /// selection stays on the item it was on, or on the one that took its place.
    fn refresh_items(&mut self, cx: &Cx, items: &[String]) {
        let Some(data) = &self.data else { return };
        let view = queue::View {
            filter: self.filter,
            panel: self.panel,
            prefix: self.scope.as_deref(),
        };
        let cur = self.current();
        for id in items {
            let st = data.status_of(id, MIN_REVIEWERS);
            if let Some(i) = cx.ds.index_of(id) {
                queue::update(
                    &mut self.queue,
                    cx.ds,
                    i,
                    Some(&st),
                    &data.signals,
                    &data.reviewer,
                    view,
                );
            }
            self.status.insert(id.clone(), st);
        }
        if let Some(c) = cur
            && let Some(p) = self.queue.iter().position(|&i| i == c)
        {
            self.pos = p;
        }
        self.pos = self.pos.min(self.queue.len().saturating_sub(1));
    }

    /// Shows the item at `pos`: its draft (or a fresh one) and a request for its answers.
    fn enter_item(&mut self, cx: &Cx) -> Vec<Cmd> {
        self.scroll = 0;
        self.editing = None;
        // A new item starts on its first criterion.
        self.criterion = 0;
        self.answers.clear();
        self.answer_sel = 0;
        self.scores.clear();
        let Some(i) = self.current() else {
            return Vec::new();
        };
        let item = &cx.ds.items[i];
        let round = self.status.get(&*item.id).map_or(1, |s| s.round);
        let data = self.data.as_ref();
        self.draft = data
            .and_then(|d| d.drafts.get(&*item.id))
            .filter(|d| d.round == round)
            .cloned()
            .unwrap_or_else(|| Draft {
                item_id: item.id.to_string(),
                reviewer: data.map(|d| d.reviewer.clone()).unwrap_or_default(),
                round,
                ..Draft::default()
            });
        self.editor = editor(&self.draft.rationale);
        let q = self
            .draft
            .edited_question
            .clone()
            .or_else(|| {
                self.status
                    .get(&*item.id)
                    .and_then(|s| s.edited_question.clone())
            })
            .unwrap_or_else(|| item.question.to_string());
        self.question = editor(&q);
        vec![Cmd::job(crate::tui::jobs::answers::LoadStored {
            item: i,
            rescore: false,
        })]
    }

    /// The draft changed: keep it in memory and on disk.
    fn touched(&mut self) -> Vec<Cmd> {
        self.draft.rationale = self.editor.lines().join("\n");
        self.draft.updated_at = crate::store::now_secs() * 1000;
        if let Some(d) = self.data.as_mut() {
            d.drafts
                .insert(self.draft.item_id.clone(), self.draft.clone());
        }
        vec![Cmd::job(crate::tui::jobs::review::SaveDraft(
            self.draft.clone(),
        ))]
    }

    fn save(&mut self, cx: &Cx) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            return Vec::new();
        };
        // Each reviewer scores all three criteria (METHODS.md): a decision with one missing
        // is refused, the draft kept, and the focus put on the first one missing.
        if let Some(missing) = (0..3).find(|&c| self.score(c).is_none()) {
            self.criterion = missing;
            return vec![Cmd::Notice(format!(
                "score {} first (1-9, 0 = 10): each reviewer scores all three criteria",
                HUMAN[missing].name
            ))];
        }
        let Some(decision) = self.draft.decision else {
            self.criterion = DECISION_ROW;
            return vec![Cmd::Notice(
                "choose retain (y), remove (x) or revise (v) before saving".into(),
            )];
        };
        let item = &cx.ds.items[i];
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let edited = self.question.lines().join("\n");
        let rec = ReviewRecord {
            // Filled in by the job (the reviewer is the session's).
            uid: String::new(),
            item_id: item.id.to_string(),
            task_id: cx.ds.task_of(item).id.clone(),
            reviewer: self.draft.reviewer.clone(),
            round: self.draft.round,
            clarity: self.draft.clarity,
            relevance: self.draft.relevance,
            coherence: self.draft.coherence,
            decision,
            rationale: self.editor.lines().join("\n").trim().to_string(),
            edited_question: (decision == Decision::Revise
                && edited.trim() != item.question.trim())
            .then_some(edited),
            edited_answer: None,
            created_at: now,
        };
        vec![Cmd::job(crate::tui::jobs::review::SaveDecision(Box::new(
            rec,
        )))]
    }

    fn on_editor_key(&mut self, k: KeyEvent, cx: &Cx) -> Vec<Cmd> {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Esc => {
                self.editing = None;
                Vec::new()
            }
            KeyCode::Char('s') if ctrl => {
                self.editing = None;
                let mut out = self.touched();
                out.extend(self.save(cx));
                out
            }
            KeyCode::Char('c') if ctrl => vec![Cmd::Quit],
            _ => {
                match self.editing {
                    Some(Editing::Question) => {
                        self.question.input(k);
                        self.draft.edited_question = Some(self.question.lines().join("\n"));
                    }
                    _ => {
                        self.editor.input(k);
                    }
                }
                self.touched()
            }
        }
    }

    /// A digit sets the focused criterion and never moves the focus: what was typed lands
    /// where the reviewer sees the marker.
    fn set_score(&mut self, v: u8) -> Vec<Cmd> {
        let slot = match self.criterion {
            0 => &mut self.draft.clarity,
            1 => &mut self.draft.relevance,
            2 => &mut self.draft.coherence,
            _ => {
                return vec![Cmd::Notice(
                    "the decision row takes y, x or v; move up (↑) to a criterion to score it"
                        .into(),
                )];
            }
        };
        *slot = Some(v);
        self.touched()
    }

    /// The label popup for the selected stored answer, or why there is none.
    fn label_popup(&self, cx: &Cx) -> Cmd {
        let (Some(i), Some(a)) = (self.current(), self.answers.get(self.answer_sel)) else {
            return Cmd::Notice("no stored answer to label (run the item from browse: r)".into());
        };
        let item = &cx.ds.items[i].id;
        Cmd::Popup(Box::new(crate::tui::popups::LabelAnswer::new(
            &a.run_id,
            a.job_idx,
            item,
            &a.model,
            &self.model_label(item, &a.model),
        )))
    }

    /// A model's name as the review screen shows it: itself, or in blind review "model A",
    /// "model B", ... by the order of the names of the models with answers or scores for
    /// this item (so the same model keeps its letter on the item, and the letters say nothing
    /// about which model it is).
    fn model_label(&self, item_id: &str, model: &str) -> String {
        if !self.data.as_ref().is_some_and(|d| d.blind) {
            return one_line(model);
        }
        let mut names: Vec<&str> = self.answers.iter().map(|a| a.model.as_str()).collect();
        if let Some(e) = self.data.as_ref().and_then(|d| d.evidence.get(item_id)) {
            names.extend(e.scores.keys().map(String::as_str));
        }
        names.sort_unstable();
        names.dedup();
        match names.iter().position(|n| *n == model) {
            Some(i) => format!("model {}", crate::taxonomy::option_letter(i)),
            None => "model ?".into(),
        }
    }

    fn score(&self, c: usize) -> Option<u8> {
        match c {
            0 => self.draft.clarity,
            1 => self.draft.relevance,
            _ => self.draft.coherence,
        }
    }
}

impl Review {
    /// Decisions stored after the last seen (the refresh worked: an error shown from the store
    /// is over). Other reviewers' decisions (a shared database) join the history; what this
    /// reviewer is typing stays.
    fn on_more(
        &mut self,
        decisions: &[crate::review::ReviewRecord],
        seq: i64,
        cx: &Cx,
    ) -> Vec<Cmd> {
        let mut out = Vec::new();
        if self.error.take().is_some() {
            out.push(Cmd::ClearNotice);
        }
        let Some(data) = self.data.as_mut() else {
            return out;
        };
        let changed = data.merge(decisions.to_vec(), seq);
        if changed.is_empty() {
            return out;
        }
        let before = self.current();
        self.refresh_items(cx, &changed);
        if self.current() != before {
            out.extend(self.enter_item(cx));
        }
        out
    }

    /// A decision is saved (a save that worked never shows an error): move on, to the next
    /// item, or, when the filter drops the saved one, to the item that took its place.
    fn on_saved(&mut self, r: &crate::review::ReviewRecord, cx: &Cx) -> Vec<Cmd> {
        self.error = None;
        let mut after = 0;
        if let Some(d) = self.data.as_mut() {
            d.merge(vec![r.clone()], d.seq);
            d.drafts.remove(&r.item_id);
            after = (d.seq - crate::review::REFRESH_LOOKBACK).max(0);
        }
        let note = format!("saved: {} ({})", r.decision.as_str(), one_line(&r.item_id));
        let at = self.pos;
        let saved = cx.ds.index_of(&r.item_id);
        self.refresh_items(cx, std::slice::from_ref(&r.item_id));
        let last = self.queue.len().saturating_sub(1);
        self.pos = match saved.and_then(|s| self.queue.iter().position(|&i| i == s)) {
            Some(p) => (p + 1).min(last),
            None => at.min(last),
        };
        let mut out = vec![Cmd::Notice(note)];
        out.extend(self.enter_item(cx));
        // Other reviewers' decisions (on a shared database) appear.
        out.push(Cmd::job(crate::tui::jobs::review::RefreshReview { after }));
        out
    }
}

impl Component for Review {
    fn id(&self) -> ScreenId {
        ScreenId::Review
    }

    fn mode(&self) -> Mode {
        Mode::Review
    }

    fn takes_text(&self) -> bool {
        self.editing.is_some()
    }

    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        vec![Cmd::job(crate::tui::jobs::review::LoadReview)]
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Key(k) if self.editing.is_some() => self.on_editor_key(k, cx),
            Input::Paste(text) => {
                // Pasted text keeps its lines and tabs; other control characters (escape
                // sequences from a terminal copy) are dropped before they reach the store.
                let text: String = text
                    .replace("\r\n", "\n")
                    .chars()
                    .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
                    .collect();
                if self.editing.is_none() {
                    self.editing = Some(Editing::Rationale);
                }
                match self.editing {
                    Some(Editing::Question) => {
                        self.question.insert_str(&text);
                        self.draft.edited_question = Some(self.question.lines().join("\n"));
                    }
                    _ => {
                        self.editor.insert_str(&text);
                    }
                }
                self.touched()
            }
            Input::Key(k) => match k.code {
                KeyCode::Char(c @ '0'..='9') if k.modifiers.is_empty() => {
                    let v = if c == '0' { 10 } else { c as u8 - b'0' };
                    self.set_score(v)
                }
                _ => Vec::new(),
            },
            Input::Mouse(_) => Vec::new(),
            Input::Action(a) => {
                let mut out = vec![Cmd::ClearNotice];
                match a {
                    Action::Quit => out.push(Cmd::Quit),
                    Action::Back | Action::Cancel => out.push(Cmd::Pop),
                    Action::Help => out.push(Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                        Mode::Review,
                    )))),
                    Action::ReviewNext | Action::ReviewPrev => {
                        let n = self.queue.len();
                        if n > 0 {
                            self.pos = if a == Action::ReviewNext {
                                (self.pos + 1).min(n - 1)
                            } else {
                                self.pos.saturating_sub(1)
                            };
                            out.extend(self.enter_item(cx));
                        }
                    }
                    // ↑/↓ move through the form (three criteria, then the decision row); the
                    // item's text scrolls with page up/down.
                    Action::Up => self.criterion = self.criterion.saturating_sub(1),
                    Action::Down => self.criterion = (self.criterion + 1).min(DECISION_ROW),
                    Action::PageUp => self.scroll = self.scroll.saturating_sub(5),
                    Action::PageDown => self.scroll = self.scroll.saturating_add(5),
                    // tab: criteria → decision → rationale (esc leaves it) → criteria.
                    Action::NextPane if self.current().is_some() => {
                        if self.criterion < DECISION_ROW {
                            self.criterion = DECISION_ROW;
                        } else {
                            self.criterion = 0;
                            self.editing = Some(Editing::Rationale);
                        }
                    }
                    Action::PrevPane if self.current().is_some() => {
                        if self.criterion == DECISION_ROW {
                            self.criterion = 0;
                        } else {
                            self.criterion = DECISION_ROW;
                            self.editing = Some(Editing::Rationale);
                        }
                    }
                    Action::Retain | Action::Remove | Action::Revise
                        if self.current().is_some() =>
                    {
                        self.draft.decision = Some(match a {
                            Action::Retain => Decision::Retain,
                            Action::Remove => Decision::Remove,
                            _ => Decision::Revise,
                        });
                        out.extend(self.touched());
                    }
                    Action::EditRationale if self.current().is_some() => {
                        self.editing = Some(Editing::Rationale);
                    }
                    Action::EditQuestion if self.current().is_some() => {
                        self.editing = Some(Editing::Question);
                    }
                    Action::SaveDecision => out.extend(self.save(cx)),
                    // s: the next stored answer, L: label it (hallucinated, correct, can't
                    // tell), as in the compare screen; in blind review it is named "model A".
                    Action::NextSample if !self.answers.is_empty() => {
                        self.answer_sel = (self.answer_sel + 1) % self.answers.len();
                    }
                    Action::Label => out.push(self.label_popup(cx)),
                    Action::StatusFilter => {
                        self.filter = self.filter.next();
                        self.rebuild(cx);
                        out.extend(self.enter_item(cx));
                    }
                    Action::PanelFilter => {
                        self.panel = match self.panel {
                            None => Some(Panel::Knowledge),
                            Some(Panel::Knowledge) => Some(Panel::Reasoning),
                            Some(Panel::Reasoning) => None,
                        };
                        self.rebuild(cx);
                        out.extend(self.enter_item(cx));
                    }
                    _ => {}
                }
                out
            }
        }
    }

    fn on_msg(&mut self, msg: &Msg, cx: &Cx) -> Vec<Cmd> {
        use crate::tui::jobs::answers::{Scored, Stored};
        use crate::tui::jobs::labels::Labelled;
        use crate::tui::jobs::review::{
            self as jobs, DecisionSaved, ReviewChanged, ReviewMore, ReviewStoreOk,
        };
        use crate::tui::jobs::{Failed, review::RefreshReview};
        if let Some(Labelled(l)) = msg.get() {
            self.labels.insert((l.run_id.clone(), l.job_idx), l.label);
        }
        if let Some(jobs::Review(d)) = msg.get() {
            self.error = None;
            self.data = Some((**d).clone());
            self.rebuild(cx);
            return self.enter_item(cx);
        }
        // The store answered: whatever error was shown is over (the error was also the app's
        // notice: that goes with it).
        if msg.get::<ReviewStoreOk>().is_some() && self.error.take().is_some() {
            return vec![Cmd::ClearNotice];
        }
        if let Some(ReviewMore { decisions, seq }) = msg.get() {
            return self.on_more(decisions, *seq, cx);
        }
        // Someone else stored decisions: read from a little before the last one seen.
        if msg.get::<ReviewChanged>().is_some()
            && let Some(d) = &self.data
        {
            return vec![Cmd::job(RefreshReview {
                after: (d.seq - crate::review::REFRESH_LOOKBACK).max(0),
            })];
        }
        if let Some(DecisionSaved(r)) = msg.get() {
            return self.on_saved(r, cx);
        }
        // The item's stored answers, from every run and model, with their scores (the ones
        // never scored are scored by rule and arrive as `Scored`).
        if let Some(st) = msg.get::<Stored>()
            && Some(st.item) == self.current()
        {
            self.answers = st.records.clone();
            self.scores = st.scores.clone();
        }
        if let Some(Scored(r)) = msg.get()
            && self.answers.iter().any(|a| a.item_id == r.item_id)
        {
            match self
                .scores
                .iter_mut()
                .find(|s| s.run_id == r.run_id && s.job_idx == r.job_idx)
            {
                Some(s) => *s = r.clone(),
                None => self.scores.push(r.clone()),
            }
        }
        if let Some(Failed(e)) = msg.get() {
            self.error = Some(e.clone());
        }
        Vec::new()
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Review, a);
        let hint = if let Some(e) = &self.error {
            one_line(e)
        } else if let Some(n) = cx.notice {
            one_line(n)
        } else if self.editing.is_some() {
            " typing: esc done · ctrl-s save · ctrl-u undo · ctrl-r redo · saved as you type".into()
        } else {
            format!(
                " 1-9,0 score  ↑↓ row  {} field  {}/{}/{} decide  {} rationale  {} save  {}/{} item  {} show  {} panel  {} help",
                k(Action::NextPane),
                k(Action::Retain),
                k(Action::Remove),
                k(Action::Revise),
                k(Action::EditRationale),
                k(Action::SaveDecision),
                k(Action::ReviewNext),
                k(Action::ReviewPrev),
                k(Action::StatusFilter),
                k(Action::PanelFilter),
                k(Action::Help)
            )
        };
        let status_h = if self.error.is_some() || cx.notice.is_some() {
            1
        } else {
            crate::tui::widgets::wrap_hints(&hint, area.width).len() as u16
        };
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(status_h),
        ])
        .areas(area);
        let reviewer = self.data.as_ref().map_or("", |d| d.reviewer.as_str());
        // The items you hold a decision on in their current round: a changed mind counts
        // once, and a decision undone (withdrawn) not at all.
        let mine = self
            .status
            .values()
            .filter(|s| s.current.contains_key(reviewer))
            .count();
        let converged = self
            .status
            .values()
            .filter(|s| matches!(s.state, State::Converged(_)))
            .count();
        let disputed = self
            .status
            .values()
            .filter(|s| s.state == State::Disputed)
            .count();
        let full = format!(
            "{} · {} in queue ({}, {}{}) · {} decision{} by you · {} converged · {} disputed",
            one_line(reviewer),
            self.queue.len(),
            self.filter.label(),
            self.panel.map_or("both panels", Panel::label),
            self.scope
                .as_deref()
                .map_or(String::new(), |s| format!(", {}", s.trim_end_matches('-'))),
            mine,
            if mine == 1 { "" } else { "s" },
            converged,
            disputed
        );
        // On a narrow terminal the counts still show, in fewer words (the filter and panel
        // are on the queue's title).
        let head =
            if unicode_width::UnicodeWidthStr::width(full.as_str()) + 16 > area.width as usize {
                format!(
                    "{} · {} queued · {mine} yours · {converged} converged · {disputed} disputed",
                    one_line(reviewer),
                    self.queue.len(),
                )
            } else {
                full
            };
        let spans = vec![
            Span::styled(" review ", t.base().add_modifier(Modifier::BOLD)),
            Span::styled(head, t.muted()),
        ];
        f.render_widget(Paragraph::new(title_line(t, spans)), title);
        let [list, right] =
            Layout::horizontal([Constraint::Percentage(32), Constraint::Percentage(68)])
                .areas(body);
        self.draw_queue(cx, f, list);
        // The form keeps the scores, the decision and a few lines of rationale; on a short
        // terminal the item gets the rest.
        let form_h = if right.height >= 34 { 12 } else { 9 };
        let [detail, form] =
            Layout::vertical([Constraint::Min(5), Constraint::Length(form_h)]).areas(right);
        self.draw_detail(cx, f, detail);
        self.draw_form(cx, f, form);
        let style = if self.error.is_some() || cx.notice.is_some() {
            t.warning()
        } else {
            t.muted()
        };
        // Key hints wrap onto as many rows as they need; a message takes one.
        let hint_lines: Vec<Line> = if self.error.is_some() || cx.notice.is_some() {
            vec![Line::styled(hint, style)]
        } else {
            crate::tui::widgets::wrap_hints(&hint, area.width)
                .into_iter()
                .map(|l| Line::styled(l, style))
                .collect()
        };
        f.render_widget(Paragraph::new(hint_lines), status);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
