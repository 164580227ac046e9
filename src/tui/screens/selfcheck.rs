//! Self-detection: can a model spot its own false sentences? One row per generator × detector
//! with recall, precision, F1 and accuracy (the false sentence is the positive), directly and
//! with chain-of-thought side by side; below, recall per relation as a heat row per pair and the
//! recall/popularity correlation of the selected pair. `enter` drills to the pair's sentences,
//! the wrong verdicts first: the triple, the true and false sentences, each verdict in both
//! modes, and the chain-of-thought text. `d` starts a run over the screen's triples for the
//! chosen models (each judges its own); `[`/`]` step through the stored runs.

use std::sync::Arc;

use crossterm::event::{MouseButton, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::dataset::triples::TripleSet;
use crate::selfcheck::results::{Row, Stored, detected, rows, sentences_for};
use crate::selfcheck::run::SelfcheckEvent;
use crate::store::{Answer, Mode as Ask, RunStatus, SelfcheckItem, SelfcheckRun, Sentence};
use crate::text::{one_line, sanitize};
use crate::theme::Theme;
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::keymap::{Action, Mode};
use crate::tui::nav;
use crate::tui::popups::{PickFor, Picker};
use crate::tui::widgets::{
    pane, row_in, scrollbar, status_lines, status_rows, title_line, truncate,
};

/// The sentences of one generator × detector pair.
pub struct Sentences {
    pub generator: String,
    pub detector: String,
    /// Item index and how many of its four verdicts are wrong (`None`: set aside), wrong first.
    pub list: Vec<(u32, Option<usize>)>,
    pub sel: usize,
    scroll: u16,
    area: Rect,
    off: usize,
}

pub struct Selfcheck {
    set: Arc<TripleSet>,
    dataset: String,
    /// Stored runs, newest first, with what each stored (the running one kept current).
    runs: Vec<(SelfcheckRun, Stored)>,
    pub run_pos: usize,
    /// The scores of the shown run (recomputed before drawing when results arrived).
    pub rows: Vec<Row>,
    dirty: bool,
    pub sel: usize,
    /// The heat row shows recall with chain-of-thought (else direct).
    pub cot_heat: bool,
    pub sentences: Option<Sentences>,
    /// The run started here, while it runs, with (calls answered, calls expected).
    running: Option<(String, usize, usize)>,
    loaded: bool,
    table: Rect,
}

impl Selfcheck {
    pub fn new(set: Arc<TripleSet>, dataset: String) -> Selfcheck {
        Selfcheck {
            set,
            dataset,
            runs: Vec::new(),
            run_pos: 0,
            rows: Vec::new(),
            dirty: false,
            sel: 0,
            cot_heat: false,
            sentences: None,
            running: None,
            loaded: false,
            table: Rect::default(),
        }
    }

    pub fn run(&self) -> Option<&(SelfcheckRun, Stored)> {
        self.runs.get(self.run_pos)
    }

    /// Recomputes the scores (and the open sentence list) from what the shown run stored.
    pub fn refresh(&mut self) {
        self.dirty = false;
        self.rows = self.run().map(|(r, s)| rows(r, s)).unwrap_or_default();
        self.sel = self.sel.min(self.rows.len().saturating_sub(1));
        if let Some(sv) = &mut self.sentences {
            match self.runs.get(self.run_pos) {
                Some((_, stored)) => {
                    let keep = sv.list.get(sv.sel).map(|x| x.0);
                    sv.list = sentence_list(stored, &sv.generator, &sv.detector);
                    if let Some(k) = keep {
                        sv.sel = sv.list.iter().position(|x| x.0 == k).unwrap_or(0);
                    }
                }
                None => self.sentences = None,
            }
        }
    }

    fn show_run(&mut self, pos: usize) {
        if pos < self.runs.len() && pos != self.run_pos {
            self.run_pos = pos;
            self.sel = 0;
            self.sentences = None;
            self.refresh();
        }
    }

    fn apply(&mut self, a: Action, cx: &Cx) -> Vec<Cmd> {
        let mut out = vec![Cmd::ClearNotice];
        if self.sentences.is_some() {
            self.apply_sentences(a, &mut out);
            return out;
        }
        if let Some(sel) = nav::cursor(self.sel, a, self.rows.len()) {
            self.sel = sel;
            return out;
        }
        match a {
            Action::Quit => out.push(Cmd::Quit),
            Action::Help => out.push(Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                Mode::Selfcheck,
            )))),
            Action::NextItem => self.show_run(self.run_pos + 1),
            Action::PrevItem => self.show_run(self.run_pos.saturating_sub(1)),
            Action::Metric => self.cot_heat = !self.cot_heat,
            Action::Toggle | Action::Expand => {
                if let (Some(row), Some((_, stored))) = (self.rows.get(self.sel), self.run()) {
                    self.sentences = Some(Sentences {
                        generator: row.generator.clone(),
                        detector: row.detector.clone(),
                        list: sentence_list(stored, &row.generator, &row.detector),
                        sel: 0,
                        scroll: 0,
                        area: Rect::default(),
                        off: 0,
                    });
                }
            }
            Action::Run => out.push(Cmd::Popup(Box::new(Picker::for_purpose(
                PickFor::Choose,
                cx.chosen.to_vec(),
            )))),
            Action::Detect => {
                if !cx.can_run {
                    out.push(Cmd::Notice("self-detection needs a store".into()));
                } else if self.running.is_some() {
                    out.push(Cmd::Notice("a self-detection run is going already".into()));
                } else if self.set.triples.is_empty() {
                    out.push(Cmd::Notice("no triples to run".into()));
                } else {
                    out.push(Cmd::Popup(Box::new(Picker::for_purpose(
                        PickFor::Selfcheck {
                            set: self.set.clone(),
                            dataset: self.dataset.clone(),
                            swap: false,
                        },
                        cx.chosen.to_vec(),
                    ))));
                }
            }
            Action::Cancel if self.running.is_some() => {
                out.push(Cmd::CancelDetect);
                out.push(Cmd::Notice(
                    "cancelling: what finished is kept (prism selfcheck --resume finishes it)"
                        .into(),
                ));
            }
            Action::Cancel | Action::Back => out.push(Cmd::Pop),
            _ => {}
        }
        out
    }

    fn apply_sentences(&mut self, a: Action, out: &mut Vec<Cmd>) {
        let Some(sv) = &mut self.sentences else {
            return;
        };
        let before = sv.sel;
        // Page keys scroll the sentence's text; the other moves go over the list.
        if let Some(s) = nav::page(sv.scroll, a) {
            sv.scroll = s;
        } else if let Some(sel) = nav::cursor(sv.sel, a, sv.list.len()) {
            sv.sel = sel;
        }
        match a {
            Action::Quit => out.push(Cmd::Quit),
            Action::Help => out.push(Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                Mode::Sentences,
            )))),
            Action::Collapse | Action::Back | Action::Cancel => self.sentences = None,
            Action::NextItem => self.show_run(self.run_pos + 1),
            Action::PrevItem => self.show_run(self.run_pos.saturating_sub(1)),
            _ => {}
        }
        if let Some(sv) = &mut self.sentences
            && sv.sel != before
        {
            sv.scroll = 0;
        }
    }

    fn on_event(&mut self, ev: &SelfcheckEvent) -> Vec<Cmd> {
        let Some((id, done, calls)) = &mut self.running else {
            return Vec::new();
        };
        let Some(pos) = self.runs.iter().position(|(r, _)| r.id == *id) else {
            return Vec::new();
        };
        let (run, stored) = &mut self.runs[pos];
        stored.apply(ev);
        match ev {
            SelfcheckEvent::Started { calls: c, .. } => *calls = *c,
            SelfcheckEvent::Item(_) | SelfcheckEvent::Verdict(_) => {
                *done += 1;
                self.dirty |= pos == self.run_pos;
            }
            SelfcheckEvent::Life(crate::engine::harness::Lifecycle::Finished(s)) => {
                run.status = if s.cancelled > 0 {
                    RunStatus::Cancelled
                } else {
                    RunStatus::Finished
                };
                self.running = None;
                self.dirty = true;
                return vec![Cmd::Notice(if s.cancelled > 0 {
                    format!(
                        "self-detection cancelled; what finished is kept (prism selfcheck --resume {})",
                        s.run_id
                    )
                } else {
                    format!("self-detection done: {} calls, {} failed", s.done, s.failed)
                })];
            }
            _ => {}
        }
        Vec::new()
    }
}

/// A pair's sentences, wrong verdicts first, then the triples set aside.
fn sentence_list(stored: &Stored, generator: &str, detector: &str) -> Vec<(u32, Option<usize>)> {
    let mut v: Vec<(u32, Option<usize>)> = sentences_for(stored, generator, detector)
        .into_iter()
        .map(|(it, wrong)| (it.idx, Some(wrong)))
        .collect();
    v.extend(
        stored
            .items
            .iter()
            .filter(|it| it.generator == generator && it.set_aside.is_some())
            .map(|it| (it.idx, None)),
    );
    v
}

impl Component for Selfcheck {
    fn id(&self) -> ScreenId {
        ScreenId::Selfcheck
    }

    fn mode(&self) -> Mode {
        if self.sentences.is_some() {
            Mode::Sentences
        } else {
            Mode::Selfcheck
        }
    }

    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        vec![Cmd::job(crate::tui::jobs::selfcheck::LoadSelfchecks)]
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Action(a) => self.apply(a, cx),
            Input::Mouse(m) => {
                match (&mut self.sentences, m.kind) {
                    (Some(sv), MouseEventKind::ScrollDown) => {
                        sv.sel = (sv.sel + 1).min(sv.list.len().saturating_sub(1))
                    }
                    (Some(sv), MouseEventKind::ScrollUp) => sv.sel = sv.sel.saturating_sub(1),
                    (Some(sv), MouseEventKind::Down(MouseButton::Left)) => {
                        if let Some(line) = row_in(sv.area, m.row)
                            && line > 0
                        {
                            sv.sel = (sv.off + line - 1).min(sv.list.len().saturating_sub(1));
                            sv.scroll = 0;
                        }
                    }
                    (None, MouseEventKind::ScrollDown) => {
                        self.sel = (self.sel + 1).min(self.rows.len().saturating_sub(1))
                    }
                    (None, MouseEventKind::ScrollUp) => self.sel = self.sel.saturating_sub(1),
                    (None, MouseEventKind::Down(MouseButton::Left)) => {
                        // The table: a border, a header, then the rows.
                        if let Some(line) = row_in(self.table, m.row)
                            && line > 1
                        {
                            self.sel = (line - 2).min(self.rows.len().saturating_sub(1));
                        }
                    }
                    _ => {}
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn on_msg(&mut self, msg: &Msg, _cx: &Cx) -> Vec<Cmd> {
        use crate::tui::jobs::Failed;
        use crate::tui::jobs::selfcheck::{SelfcheckStarted, Selfchecks};
        if let Some(Selfchecks(runs)) = msg.get() {
            let shown = self
                .loaded
                .then(|| self.run().map(|(r, _)| r.id.clone()))
                .flatten();
            // A run started here before the list arrived stays first.
            let mine = self
                .running
                .as_ref()
                .and_then(|(id, ..)| self.runs.iter().find(|(r, _)| &r.id == id).cloned());
            self.runs = runs.clone();
            if let Some(m) = mine {
                self.runs.retain(|(r, _)| r.id != m.0.id);
                self.runs.insert(0, m);
            }
            // The run on screen stays on screen when the list is read again (the team's
            // runs arriving on a shared store); the first load shows the newest.
            self.run_pos = shown
                .and_then(|id| self.runs.iter().position(|(r, _)| r.id == id))
                .unwrap_or(0);
            self.loaded = true;
            self.refresh();
        }
        // The team's self-detection runs arrived on a shared store: the list is read again (one
        // started here keeps its place).
        if let Some(p) = msg.get::<crate::store::mirror::Pulled>()
            && p.lane_rows > 0
        {
            return vec![Cmd::job(crate::tui::jobs::selfcheck::LoadSelfchecks)];
        }
        if let Some(SelfcheckStarted { run, stored }) = msg.get() {
            self.running = Some((run.id.clone(), 0, 0));
            self.runs.retain(|(r, _)| r.id != run.id);
            self.runs.insert(0, ((**run).clone(), stored.clone()));
            self.run_pos = 0;
            self.sel = 0;
            self.sentences = None;
            self.refresh();
            let n = stored.items.len();
            return vec![Cmd::Notice(format!(
                "self-detection on {n} triple×model{}: sentences, then verdicts direct and with chain-of-thought",
                if n == 1 { "" } else { "s" }
            ))];
        }
        if let Some(ev) = msg.get() {
            return self.on_event(ev);
        }
        if let Some(Failed(e)) = msg.get() {
            self.running = None;
            return vec![Cmd::Notice(e.clone())];
        }
        Vec::new()
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        if self.dirty {
            self.refresh();
        }
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let mode = self.mode();
        let k = |a| cx.keymap.hint(mode, a);
        let hints = {
            if self.sentences.is_some() {
                format!(
                    " ↑↓ triple  {}/{} scroll  {}/{} run  {} back  {} help",
                    k(Action::PageUp),
                    k(Action::PageDown),
                    k(Action::PrevItem),
                    k(Action::NextItem),
                    k(Action::Back),
                    k(Action::Help)
                )
            } else {
                format!(
                    " ↑↓ pair  {} sentences  {} direct/CoT heat  {}/{} run  {} new run  {} models  {} back  {} help",
                    k(Action::Toggle),
                    k(Action::Metric),
                    k(Action::PrevItem),
                    k(Action::NextItem),
                    k(Action::Detect),
                    k(Action::Run),
                    k(Action::Back),
                    k(Action::Help)
                )
            }
        };
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        f.render_widget(Paragraph::new(title_line(t, self.title_spans(t))), title);
        if self.sentences.is_some() {
            self.draw_sentences(f, body, t);
        } else {
            self.draw_scores(f, body, cx);
        }
        status_lines(f, status, t, cx.notice, &hints);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn num(x: Option<f64>) -> String {
    x.map_or("    -".into(), |v| format!("{v:5.1}"))
}

impl Selfcheck {
    fn title_spans(&self, t: &Theme) -> Vec<Span<'static>> {
        let mut spans = vec![Span::styled(
            " self-detection ",
            t.base().add_modifier(Modifier::BOLD),
        )];
        match self.run() {
            Some((run, stored)) => {
                let gens = run.config.generators.len().max(1);
                let name = std::path::Path::new(&run.dataset)
                    .file_name()
                    .map_or(run.dataset.clone(), |n| n.to_string_lossy().into_owned());
                spans.push(Span::styled(
                    format!(
                        "{} ({}/{}) · {} · {} triples × {gens} generator{}{} · {}",
                        run.id,
                        self.run_pos + 1,
                        self.runs.len(),
                        one_line(&name),
                        stored.items.len() / gens,
                        if gens == 1 { "" } else { "s" },
                        if run.config.false_by == crate::store::FalseBy::Swap {
                            " · swapped"
                        } else {
                            ""
                        },
                        run.status.word()
                    ),
                    t.muted(),
                ));
            }
            None => spans.push(Span::styled(
                format!(
                    "{} · {} triples over {} relations",
                    one_line(&self.set.label),
                    self.set.triples.len(),
                    self.set.relations.len()
                ),
                t.muted(),
            )),
        }
        if let Some((_, done, calls)) = &self.running {
            spans.push(Span::styled(
                format!(" · running {done}/{calls}"),
                t.accent(),
            ));
        }
        if let Some(sv) = &self.sentences {
            spans.push(Span::styled(
                format!(
                    " › {} judged by {}",
                    one_line(&sv.generator),
                    one_line(&sv.detector)
                ),
                t.accent(),
            ));
        }
        spans
    }

    /// What the scores pane says while it has no row: reading, no run yet, or why a run has
    /// no scores.
    fn empty_message(&self, cx: &Cx) -> String {
        let k = |a| cx.keymap.hint(Mode::Selfcheck, a);
        if !self.loaded {
            "reading the stored runs…".to_string()
        } else if self.runs.is_empty() {
            format!(
                "No self-detection run yet. {} chooses models, {} runs them on {} ({} triples over {} relations): each model writes a true and a false sentence per fact, then says whether each contains false information, directly and with chain-of-thought.\n\nFrom the shell: prism selfcheck --models smol",
                k(Action::Run),
                k(Action::Detect),
                one_line(&self.set.label),
                self.set.triples.len(),
                self.set.relations.len()
            )
        } else {
            match self.run() {
                Some((_, stored))
                    if self.running.is_none()
                        && !stored.items.is_empty()
                        && stored.items.iter().all(|it| it.set_aside.is_some()) =>
                {
                    let why = stored
                        .items
                        .iter()
                        .find_map(|it| it.set_aside.as_deref())
                        .map(one_line)
                        .unwrap_or_default();
                    format!(
                        "Every triple of this run was set aside: the model could not write sentences that pass their checks (e.g. {why}).\n\nThat is a finding in itself. To measure the detection half anyway, start a run whose false sentences swap the object for another of its relation ({} in the picker), or use a larger generator.",
                        cx.keymap.hint(Mode::Picker, Action::Metric),
                    )
                }
                _ => "This run has no scores yet: sentences are being written.".to_string(),
            }
        }
    }

    fn draw_scores(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        if self.rows.is_empty() {
            let msg = self.empty_message(cx);
            f.render_widget(
                Paragraph::new(msg)
                    .style(t.muted())
                    .wrap(Wrap { trim: false })
                    .block(pane(t, Line::from(" Generator × detector "), true)),
                area,
            );
            return;
        }
        // Borders, two header lines, the rows.
        let table_h = (self.rows.len() as u16 + 4).min(area.height.saturating_sub(6).max(5));
        let heat_h = (self.rows.len() as u16 + 3).min(area.height.saturating_sub(table_h));
        let [table, heat, foot] = Layout::vertical([
            Constraint::Length(table_h),
            Constraint::Length(heat_h),
            Constraint::Min(0),
        ])
        .areas(area);
        self.table = table;
        let label = |r: &Row| {
            if r.generator == r.detector {
                one_line(&r.generator)
            } else {
                format!("{} → {}", one_line(&r.generator), one_line(&r.detector))
            }
        };
        let lw = self
            .rows
            .iter()
            .map(|r| label(r).chars().count())
            .max()
            .unwrap_or(8)
            .clamp(8, 28);
        // The table.
        let block = pane(
            t,
            Line::from(" Generator → detector: the false sentence is the positive "),
            true,
        );
        let inner = block.inner(table);
        f.render_widget(block, table);
        // Whole percents when one decimal would not fit (80 columns).
        let wide_head = "    R     P    F1     A unp";
        let narrow = (inner.width as usize) < lw + 15 + 2 * (wide_head.len() + 2);
        let mode_head = if narrow {
            "   R    P   F1    A unp"
        } else {
            wide_head
        };
        let cell = |x: Option<f64>| {
            if narrow {
                x.map_or("   -".into(), |v| format!("{v:4.0}"))
            } else {
                num(x)
            }
        };
        let mut lines = vec![Line::styled(
            format!(
                "{:<lw$} {:>7} {:>5} │ direct{} │ chain-of-thought",
                "pair",
                "triples",
                "aside",
                " ".repeat(mode_head.len() - 6)
            ),
            t.muted(),
        )];
        lines.push(Line::styled(
            format!("{:<lw$} {:>7} {:>5} │{mode_head} │{mode_head}", "", "", ""),
            t.muted(),
        ));
        let room = inner.height.saturating_sub(2) as usize;
        let off = self.sel.saturating_sub(room.saturating_sub(1));
        for (i, r) in self.rows.iter().enumerate().skip(off).take(room) {
            let m = |s: &crate::selfcheck::results::ModeScores| {
                format!(
                    "{} {} {} {} {:>3}",
                    cell(s.scores.recall),
                    cell(s.scores.precision),
                    cell(s.scores.f1),
                    cell(s.scores.accuracy),
                    s.unparsed
                )
            };
            let line = Line::from(vec![
                Span::styled(
                    format!("{:<lw$} ", truncate(&label(r), lw)),
                    t.base().add_modifier(Modifier::BOLD),
                ),
                Span::styled(format!("{:>7} {:>5} ", r.items, r.set_aside), t.base()),
                Span::styled(format!("│{} ", m(&r.direct)), t.base()),
                Span::styled(format!("│{}", m(&r.cot)), t.base()),
            ]);
            lines.push(if i == self.sel {
                line.style(t.selected(true))
            } else {
                line
            });
        }
        // Drop the second header line when there is no room for it and a row.
        if inner.height < 3 {
            lines.remove(1);
        }
        f.render_widget(Paragraph::new(lines), inner);
        self.draw_heat(f, heat, t, lw, &label);
        self.draw_foot(f, foot, t);
    }

    fn draw_heat(
        &self,
        f: &mut Frame,
        area: Rect,
        t: &Theme,
        lw: usize,
        label: &dyn Fn(&Row) -> String,
    ) {
        if area.height < 3 {
            return;
        }
        let which = if self.cot_heat {
            "chain-of-thought"
        } else {
            "direct"
        };
        let block = pane(
            t,
            Line::from(format!(
                " Recall per relation ({which}): share of false sentences caught "
            )),
            false,
        );
        let inner = block.inner(area);
        f.render_widget(block, area);
        let relations: Vec<&str> = self
            .rows
            .first()
            .map(|r| r.relations.iter().map(|x| x.relation.as_str()).collect())
            .unwrap_or_default();
        let mut names: Vec<String> = relations.iter().map(|s| s.to_string()).collect();
        for r in &self.rows {
            for x in &r.relations {
                if !names.contains(&x.relation) {
                    names.push(x.relation.clone());
                }
            }
        }
        names.sort();
        let avail = (inner.width as usize).saturating_sub(lw + 1);
        let cw = if names.is_empty() {
            8
        } else {
            (avail / names.len()).clamp(6, 14)
        };
        let fits = (avail / cw).min(names.len());
        let mut head = vec![Span::raw(format!("{:<lw$} ", ""))];
        for n in names.iter().take(fits) {
            head.push(Span::styled(
                format!("{:<cw$}", truncate(&one_line(n), cw - 1)),
                t.muted(),
            ));
        }
        if fits < names.len() {
            head.push(Span::styled(
                format!(" +{} more (prism report --selfcheck)", names.len() - fits),
                t.muted(),
            ));
        }
        let mut lines = vec![Line::from(head)];
        for (i, r) in self.rows.iter().enumerate() {
            let sel = i == self.sel;
            let mut spans = vec![Span::styled(
                format!("{:<lw$} ", truncate(&label(r), lw)),
                if sel { t.selected(true) } else { t.base() },
            )];
            for n in names.iter().take(fits) {
                let v = r
                    .relations
                    .iter()
                    .find(|x| &x.relation == n)
                    .and_then(|x| if self.cot_heat { x.cot } else { x.direct });
                spans.push(match v {
                    // Missed false sentences are what is hot: the heat is 100 - recall.
                    Some(v) => {
                        let bg = t.heat(100.0 - v);
                        Span::styled(
                            format!("{:^w$}", format!("{v:.0}"), w = cw - 1),
                            Style::default().bg(bg).fg(crate::theme::ink_on(bg)),
                        )
                    }
                    None => Span::styled(format!("{:^w$}", "·", w = cw - 1), t.muted()),
                });
                spans.push(Span::raw(" "));
            }
            lines.push(Line::from(spans));
        }
        f.render_widget(Paragraph::new(lines), inner);
    }

    fn draw_foot(&self, f: &mut Frame, area: Rect, t: &Theme) {
        let Some(r) = self.rows.get(self.sel) else {
            return;
        };
        let mut lines = Vec::new();
        let p = |s: &crate::eval::binary::Scores| {
            format!(
                "R {} P {} F1 {} A {}",
                num(s.recall).trim(),
                num(s.precision).trim(),
                num(s.f1).trim(),
                num(s.accuracy).trim()
            )
        };
        lines.push(Line::styled(
            format!(
                " unp: replies that were not a clean yes/no; they count as \"contains false information\". Over clean replies only: direct {} · CoT {}",
                p(&r.direct.parsed_only),
                p(&r.cot.parsed_only)
            ),
            t.muted(),
        ));
        let pop = match &r.popularity {
            Some(pp) => {
                let rp = |rho: Option<f64>, pv: Option<f64>| match (rho, pv) {
                    (Some(r), Some(p)) => format!("rho {r:.2} (p {p:.3})"),
                    (Some(r), None) => format!("rho {r:.2}"),
                    _ => "-".into(),
                };
                format!(
                    " recall against popularity over {} equal bins: direct {} · CoT {}",
                    pp.bins,
                    rp(pp.rho_direct, pp.p_direct),
                    rp(pp.rho_cot, pp.p_cot)
                )
            }
            None => " no popularity in these triples (or too few): no correlation".into(),
        };
        lines.push(Line::styled(pop, t.muted()));
        let c = &r.direct.confusion;
        lines.push(Line::styled(
            format!(
                " direct: {} false sentences caught, {} missed; {} true sentences called false, {} passed",
                c.tp, c.fn_, c.fp, c.tn
            ),
            t.muted(),
        ));
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
    }

    fn draw_sentences(&mut self, f: &mut Frame, area: Rect, t: &Theme) {
        let Some((_, stored)) = self.runs.get(self.run_pos) else {
            return;
        };
        let Some(sv) = &mut self.sentences else {
            return;
        };
        let [list, detail] =
            Layout::horizontal([Constraint::Percentage(38), Constraint::Percentage(62)])
                .areas(area);
        let block = pane(
            t,
            Line::from(format!(" {} triples, wrong verdicts first ", sv.list.len())),
            true,
        );
        let inner = block.inner(list);
        f.render_widget(block, list);
        let room = inner.height as usize;
        let off = sv.sel.saturating_sub(room.saturating_sub(1));
        sv.area = list;
        sv.off = off;
        let item = |idx: u32| stored.items.iter().find(|it| it.idx == idx);
        let lines: Vec<Line> = sv
            .list
            .iter()
            .enumerate()
            .skip(off)
            .take(room)
            .map(|(pos, (idx, wrong))| {
                let (mark, style) = match wrong {
                    None => ("aside".to_string(), t.warning()),
                    Some(0) => ("  ✓  ".to_string(), t.success()),
                    Some(n) => (format!("{n} ✗  "), t.error()),
                };
                let name = item(*idx).map_or(String::new(), |it| {
                    format!("{} · {}", one_line(&it.triple_id), one_line(&it.relation))
                });
                let line = Line::from(vec![
                    Span::styled(format!("{mark:<6}"), style),
                    Span::styled(name, t.base()),
                ]);
                if pos == sv.sel {
                    line.style(t.selected(true))
                } else {
                    line
                }
            })
            .collect();
        f.render_widget(Paragraph::new(lines), inner);
        scrollbar(f, list, sv.list.len(), off, room);
        let lines = match sv.list.get(sv.sel).and_then(|(idx, _)| item(*idx)) {
            Some(it) => detail_lines(it, stored, &sv.detector, t),
            None => vec![Line::styled("No sentences for this pair yet.", t.muted())],
        };
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((sv.scroll, 0))
                .block(pane(t, Line::from(" Triple "), false)),
            detail,
        );
    }
}

/// How one verdict reads: the answer, and whether it is right for a sentence of this truth.
fn verdict_span(
    stored: &Stored,
    it: &SelfcheckItem,
    s: Sentence,
    detector: &str,
    m: Ask,
    t: &Theme,
) -> Vec<Span<'static>> {
    let label = match m {
        Ask::Direct => "direct",
        Ask::Cot => "CoT",
    };
    let Some(v) = stored.verdict(it.idx, s, detector, m) else {
        return vec![Span::styled(format!("{label}: …  "), t.muted())];
    };
    let positive = s == Sentence::False;
    if v.answer == Answer::Failed {
        return vec![Span::styled(
            format!(
                "{label}: failed ({})  ",
                one_line(v.error.as_deref().unwrap_or("no reply"))
            ),
            t.error(),
        )];
    }
    let right = detected(v.answer) == positive;
    let word = match v.answer {
        Answer::Yes => "yes, false information",
        Answer::No => "no, all true",
        _ => "unparsed (counts as yes)",
    };
    let why = match (right, positive) {
        (true, _) => "✓",
        (false, true) => "✗ missed",
        (false, false) => "✗ false alarm",
    };
    vec![
        Span::styled(format!("{label}: "), t.muted()),
        Span::styled(format!("{word} "), t.base().add_modifier(Modifier::BOLD)),
        Span::styled(
            format!("{why}   "),
            if right { t.success() } else { t.error() },
        ),
    ]
}

fn detail_lines(
    it: &SelfcheckItem,
    stored: &Stored,
    detector: &str,
    t: &Theme,
) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(vec![
        Span::styled(one_line(&it.subject), t.base().add_modifier(Modifier::BOLD)),
        Span::styled(format!("  {}  ", one_line(&it.relation)), t.muted()),
        Span::styled(one_line(&it.object), t.accent()),
    ])];
    let mut meta = format!("triple {}", one_line(&it.triple_id));
    if let Some(p) = it.popularity {
        meta.push_str(&format!(" · popularity {p}"));
    }
    meta.push_str(&format!(" · written by {}", one_line(&it.generator)));
    out.push(Line::styled(meta, t.muted()));
    if let Some(src) = &it.source {
        out.push(Line::styled(
            format!("dataset: {}", one_line(src)),
            t.muted(),
        ));
    }
    if let Some(why) = &it.set_aside {
        out.push(Line::raw(""));
        out.push(Line::styled(
            format!("set aside: {}", one_line(why)),
            t.warning(),
        ));
    }
    if let Some(e) = &it.error {
        out.push(Line::styled(format!("failed: {}", one_line(e)), t.error()));
    }
    for (s, text, attempts) in [
        (Sentence::True, &it.true_sentence, it.true_attempts),
        (Sentence::False, &it.false_sentence, it.false_attempts),
    ] {
        out.push(Line::raw(""));
        let (name, style) = match s {
            Sentence::True => ("TRUE ", t.success()),
            Sentence::False => ("FALSE", t.error()),
        };
        out.push(Line::from(vec![
            Span::styled(format!("{name} "), style.add_modifier(Modifier::BOLD)),
            Span::styled(
                text.as_deref().map_or("(not written)".into(), one_line),
                t.base(),
            ),
            Span::styled(
                if attempts > 1 {
                    format!("  ({attempts} attempts)")
                } else {
                    String::new()
                },
                t.muted(),
            ),
        ]));
        if text.is_some() && it.set_aside.is_none() {
            let mut spans = vec![Span::raw("      ")];
            for m in Ask::BOTH {
                spans.extend(verdict_span(stored, it, s, detector, m, t));
            }
            out.push(Line::from(spans));
        }
    }
    for s in [Sentence::True, Sentence::False] {
        if let Some(v) = stored.verdict(it.idx, s, detector, Ask::Cot)
            && let Some(reply) = &v.reply
        {
            out.push(Line::raw(""));
            out.push(Line::styled(
                format!("── chain-of-thought on the {} sentence ──", s.as_str()),
                t.accent(),
            ));
            for l in sanitize(reply).lines() {
                out.push(Line::styled(l.to_string(), t.base()));
            }
        }
    }
    let direct: Vec<String> = [Sentence::True, Sentence::False]
        .iter()
        .filter_map(|&s| {
            stored
                .verdict(it.idx, s, detector, Ask::Direct)
                .and_then(|v| v.reply.as_deref())
                .map(|r| format!("{}: {}", s.as_str(), one_line(r)))
        })
        .collect();
    if !direct.is_empty() {
        out.push(Line::raw(""));
        out.push(Line::styled("── direct replies ──", t.accent()));
        for d in direct {
            out.push(Line::styled(d, t.base()));
        }
    }
    out
}
