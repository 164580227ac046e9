//! The claims browser: fact-checking claims by topic (topic → claim) on the left; on the right
//! the claim, its label, and for each model that was run on it (AutoHall) its reference, its
//! classification of the claim from that reference, whether that makes the reference a
//! hallucination, and the self-contradiction flag. `d` runs AutoHall on the marked claims (or
//! the selection) for the chosen models; `enter` on a claim opens its contradictions.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crossterm::event::{MouseButton, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::dataset::claims::ClaimSet;
use crate::detect::results::{Outcome, hallucinated, outcomes, outcomes_in};
use crate::detect::run::Stored;
use crate::store::{Class, DetectRun, Target};
use crate::text::{one_line, sanitize};
use crate::tui::component::{Cmd, Component, Cx, Input, Open, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::jobs::detect::DetectJob;
use crate::tui::keymap::{Action, Mode};
use crate::tui::nav;
use crate::tui::popups::{PickFor, Picker};
use crate::tui::widgets::{pane, row_in, scrollbar, status_lines, status_rows, title_line};

/// AutoHall's middle generation temperature: what the TUI runs at (the CLI runs all three).
pub(super) const TUI_TEMPERATURE: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimRow {
    Topic(usize),
    Claim(usize),
}

/// What one model's newest detection says about one claim.
#[derive(Debug, Clone)]
pub struct ClaimResult {
    pub detect_id: String,
    pub target: Target,
    pub outcome: Option<Outcome>,
    /// The outcomes in the run's other wordings of the pair check (wordings 1..), when it
    /// asked in more than one.
    pub other_wordings: Vec<Outcome>,
}

pub struct ClaimsBrowse {
    pub set: Arc<ClaimSet>,
    dataset: String,
    pub open: HashSet<usize>,
    pub sel: usize,
    pub marked: HashSet<usize>,
    /// Detections over this dataset, newest first (the running one is kept current).
    runs: Vec<(DetectRun, Stored)>,
    /// (claim id, model) → the newest result.
    pub results: BTreeMap<(String, String), ClaimResult>,
    /// The title line's results summary, made when the results change (not every frame).
    summary: Option<String>,
    running: bool,
    list: Rect,
    list_off: usize,
}

impl ClaimsBrowse {
    pub fn new(set: Arc<ClaimSet>, dataset: String) -> ClaimsBrowse {
        let open = (0..set.topics.len()).collect();
        ClaimsBrowse {
            set,
            dataset,
            open,
            sel: 0,
            marked: HashSet::new(),
            runs: Vec::new(),
            results: BTreeMap::new(),
            summary: None,
            running: false,
            list: Rect::default(),
            list_off: 0,
        }
    }

    pub fn rows(&self) -> Vec<ClaimRow> {
        let mut out = Vec::new();
        for (ti, (_, range)) in self.set.topics.iter().enumerate() {
            out.push(ClaimRow::Topic(ti));
            if self.open.contains(&ti) {
                out.extend(range.clone().map(ClaimRow::Claim));
            }
        }
        out
    }

    fn selected(&self) -> Option<ClaimRow> {
        self.rows().get(self.sel).copied()
    }

    /// The claims an action applies to: the marked ones, else the selected claim or topic.
    fn chosen_claims(&self) -> Vec<usize> {
        if !self.marked.is_empty() {
            let mut v: Vec<usize> = self.marked.iter().copied().collect();
            v.sort_unstable();
            return v;
        }
        match self.selected() {
            Some(ClaimRow::Claim(c)) => vec![c],
            Some(ClaimRow::Topic(t)) => self.set.topics[t].1.clone().collect(),
            None => Vec::new(),
        }
    }

    /// Rebuilds the newest result of each claim and model from the detections held.
    fn rebuild(&mut self) {
        self.results.clear();
        for (run, stored) in &self.runs {
            let k = run.config.k.max(1);
            let oc = outcomes(stored, k, 0);
            let others: Vec<_> = (1..run.config.templates.pair_wordings())
                .map(|w| outcomes_in(stored, k, 0, w))
                .collect();
            for t in &stored.targets {
                self.results
                    .entry((t.item_id.clone(), t.model.clone()))
                    .or_insert_with(|| ClaimResult {
                        detect_id: run.id.clone(),
                        target: t.clone(),
                        outcome: oc.get(&t.idx).copied(),
                        other_wordings: others
                            .iter()
                            .filter_map(|o| o.get(&t.idx).copied())
                            .collect(),
                    });
            }
        }
        self.summary = self.summarise();
    }

    fn results_for(&self, claim: &str) -> Vec<&ClaimResult> {
        self.results
            .range((claim.to_string(), String::new())..)
            .take_while(|((c, _), _)| c == claim)
            .map(|(_, r)| r)
            .collect()
    }

    fn apply(&mut self, a: Action, cx: &Cx) -> Vec<Cmd> {
        let n = self.rows().len();
        let last = n.saturating_sub(1);
        let mut out = vec![Cmd::ClearNotice];
        if let Some(sel) = nav::cursor(self.sel, a, n) {
            self.sel = sel;
            return out;
        }
        match a {
            Action::Quit => out.push(Cmd::Quit),
            Action::Help => out.push(Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                Mode::Claims,
            )))),
            Action::Expand => {
                if let Some(ClaimRow::Topic(t)) = self.selected() {
                    self.open.insert(t);
                }
            }
            Action::Collapse => match self.selected() {
                Some(ClaimRow::Topic(t)) => {
                    self.open.remove(&t);
                }
                Some(ClaimRow::Claim(c)) => {
                    let rows = self.rows();
                    if let Some(p) = rows.iter().rposition(
                        |r| matches!(r, ClaimRow::Topic(t) if self.set.topics[*t].1.contains(&c)),
                    ) {
                        self.sel = p;
                    }
                }
                None => {}
            },
            Action::Toggle => match self.selected() {
                Some(ClaimRow::Topic(t)) if !self.open.remove(&t) => {
                    self.open.insert(t);
                }
                Some(ClaimRow::Topic(_)) => {}
                Some(ClaimRow::Claim(c)) => {
                    let claim = &self.set.claims[c];
                    // The chosen model's result first, else any model's.
                    let chosen: Vec<&str> = cx
                        .models
                        .iter()
                        .zip(cx.chosen)
                        .filter(|(_, c)| **c)
                        .map(|(m, _)| m.name.as_str())
                        .collect();
                    let all = self.results_for(&claim.id);
                    let pick = all
                        .iter()
                        .find(|r| chosen.contains(&r.target.model.as_str()))
                        .or_else(|| all.first());
                    match pick {
                        Some(r) => out.push(Cmd::Push(Open::Contradictions(DetectJob::Load {
                            detect_id: r.detect_id.clone(),
                            target: r.target.idx,
                        }))),
                        None => out.push(Cmd::Notice(format!(
                            "no model has been run on this claim yet: {} runs AutoHall on it",
                            cx.keymap.hint(Mode::Claims, Action::Detect)
                        ))),
                    }
                }
                None => {}
            },
            Action::Mark => match self.selected() {
                Some(ClaimRow::Claim(c)) => {
                    if !self.marked.remove(&c) {
                        self.marked.insert(c);
                    }
                    self.sel = (self.sel + 1).min(last);
                }
                Some(ClaimRow::Topic(t)) => {
                    let r = self.set.topics[t].1.clone();
                    if r.clone().all(|c| self.marked.contains(&c)) {
                        for c in r {
                            self.marked.remove(&c);
                        }
                    } else {
                        self.marked.extend(r);
                    }
                }
                None => {}
            },
            Action::Run => out.push(Cmd::Popup(Box::new(Picker::for_purpose(
                PickFor::Choose,
                cx.chosen.to_vec(),
            )))),
            Action::Detect => {
                if !cx.can_run {
                    out.push(Cmd::Notice("detection needs a store".into()));
                } else if self.running {
                    out.push(Cmd::Notice("a detection is running here already".into()));
                } else {
                    let claims = self.chosen_claims();
                    if !claims.is_empty() {
                        out.push(Cmd::Popup(Box::new(Picker::for_purpose(
                            PickFor::DetectClaims {
                                set: self.set.clone(),
                                claims,
                                dataset: self.dataset.clone(),
                                temperature: TUI_TEMPERATURE,
                            },
                            cx.chosen.to_vec(),
                        ))));
                    }
                }
            }
            Action::Cancel if self.running => {
                out.push(Cmd::CancelDetect);
                out.push(Cmd::Notice("cancelling: what finished is kept".into()));
            }
            Action::Cancel if !self.marked.is_empty() => self.marked.clear(),
            Action::Cancel | Action::Back => out.push(Cmd::Pop),
            _ => {}
        }
        out
    }
}

impl Component for ClaimsBrowse {
    fn id(&self) -> ScreenId {
        ScreenId::Claims
    }

    fn mode(&self) -> Mode {
        Mode::Claims
    }

    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        vec![Cmd::job(crate::tui::jobs::detect::LoadClaims {
            dataset: self.dataset.clone(),
        })]
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Action(a) => self.apply(a, cx),
            Input::Mouse(m) => {
                let last = self.rows().len().saturating_sub(1);
                match m.kind {
                    MouseEventKind::ScrollDown => self.sel = (self.sel + 1).min(last),
                    MouseEventKind::ScrollUp => self.sel = self.sel.saturating_sub(1),
                    MouseEventKind::Down(MouseButton::Left) => {
                        if let Some(line) = row_in(self.list, m.row)
                            && line > 0
                        {
                            self.sel = (self.list_off + line - 1).min(last);
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
        use crate::detect::run::DetectEvent;
        use crate::tui::jobs::Failed;
        use crate::tui::jobs::detect::{Claims, Detection};
        if let Some(Claims(runs)) = msg.get() {
            // The list is read on the store thread: a detection started here before it
            // arrived stays first, with what it has gathered (it may be missing from the
            // list, or listed as the store had it then).
            let mine = if self.running {
                self.runs.first().cloned()
            } else {
                None
            };
            self.runs = runs.clone();
            if let Some(m) = mine {
                self.runs.retain(|(r, _)| r.id != m.0.id);
                self.runs.insert(0, m);
            }
            self.rebuild();
        }
        // The team's detections arrived on a shared store: the list is read again (one started
        // here keeps its place, above).
        if let Some(p) = msg.get::<crate::store::mirror::Pulled>()
            && p.lane_rows > 0
        {
            return vec![Cmd::job(crate::tui::jobs::detect::LoadClaims {
                dataset: self.dataset.clone(),
            })];
        }
        if let Some(Detection { run, stored, .. }) = msg.get() {
            self.runs.retain(|(r, _)| r.id != run.id);
            self.runs.insert(0, ((**run).clone(), stored.clone()));
            self.running = true;
            self.rebuild();
            return vec![Cmd::Notice(format!(
                "AutoHall on {} claim×model{}: references, classifications, then {} samples each",
                stored.targets.len(),
                if stored.targets.len() == 1 { "" } else { "s" },
                run.config.k
            ))];
        }
        if let Some(ev) = msg.get::<DetectEvent>() {
            if let Some((_, stored)) = self.runs.first_mut() {
                stored.apply(ev);
            }
            match ev {
                DetectEvent::Life(crate::engine::harness::Lifecycle::Finished(s)) => {
                    self.running = false;
                    self.rebuild();
                    return vec![Cmd::Notice(if s.cancelled > 0 {
                        "detection cancelled; what finished is kept".into()
                    } else {
                        format!("AutoHall done: {} calls, {} failed", s.done, s.failed)
                    })];
                }
                DetectEvent::Answer { .. }
                | DetectEvent::Classified { .. }
                | DetectEvent::Pair(_) => self.rebuild(),
                _ => {}
            }
        }
        if let Some(Failed(e)) = msg.get() {
            self.running = false;
            return vec![Cmd::Notice(e.clone())];
        }
        Vec::new()
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Claims, a);
        let hints = format!(
            " {} mark  {} AutoHall on marked  {} contradictions  {} models  {} {}  {} help",
            k(Action::Mark),
            k(Action::Detect),
            k(Action::Toggle),
            k(Action::Run),
            k(Action::Back),
            "back",
            k(Action::Help)
        );
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        let (tr, fa) = (
            self.set.count(crate::dataset::claims::Truth::True),
            self.set.count(crate::dataset::claims::Truth::False),
        );
        // The results first: on a narrow screen the dataset's path is what gets cut.
        let mut spans = vec![Span::styled(
            " claims ",
            t.base().add_modifier(Modifier::BOLD),
        )];
        if let Some(sum) = &self.summary {
            spans.push(Span::styled(format!("{sum} · "), t.base()));
        }
        spans.extend([Span::styled(
            format!(
                "{} · {} claims ({tr} true, {fa} false) in {} topics",
                one_line(&self.set.label),
                self.set.claims.len(),
                self.set.topics.len()
            ),
            t.muted(),
        )]);
        let left: usize = self.set.skipped.values().sum();
        if left > 0 {
            spans.push(Span::styled(
                format!(" · {left} left out (neither true nor false)"),
                t.muted(),
            ));
        }
        if !self.marked.is_empty() {
            spans.push(Span::styled(
                format!(" · {} marked", self.marked.len()),
                t.accent(),
            ));
        }
        if self.running {
            spans.push(Span::styled(" · running", t.accent()));
        }
        f.render_widget(Paragraph::new(title_line(t, spans)), title);
        let [list, detail] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(body);
        self.draw_list(cx, f, list);
        self.draw_detail(cx, f, detail);
        status_lines(f, status, t, cx.notice, &hints);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl ClaimsBrowse {
    fn draw_list(&mut self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        // The legend, in full where it fits, else in short.
        const LEGEND: [&str; 3] = [
            " ✗ caught  ! false alarm  H missed  ✓ clean  ? no truth  · unfinished ",
            " ✗caught !alarm Hmissed ✓clean ?unread ·open ",
            " ✗caught !alarm Hmissed ✓clean ",
        ];
        let room = usize::from(area.width.saturating_sub(2));
        let legend = LEGEND
            .iter()
            .find(|l| l.chars().count() <= room)
            .unwrap_or(&LEGEND[2]);
        let block = pane(t, Line::from(" Topics and claims "), true)
            .title_bottom(Line::styled(*legend, t.muted()));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let rows = self.rows();
        let room = inner.height as usize;
        let off = self.sel.saturating_sub(room.saturating_sub(1));
        self.list = area;
        self.list_off = off;
        let lines: Vec<Line> = rows
            .iter()
            .enumerate()
            .skip(off)
            .take(room)
            .map(|(pos, row)| {
                let line = match *row {
                    ClaimRow::Topic(ti) => {
                        let (name, r) = &self.set.topics[ti];
                        let open = if self.open.contains(&ti) {
                            "▾"
                        } else {
                            "▸"
                        };
                        Line::from(vec![
                            Span::styled(format!("{open} {}", one_line(name)), t.accent()),
                            Span::styled(format!("  {}", r.len()), t.muted()),
                        ])
                    }
                    ClaimRow::Claim(ci) => {
                        let c = &self.set.claims[ci];
                        let mark = if self.marked.contains(&ci) {
                            "●"
                        } else {
                            " "
                        };
                        let flags: Vec<Span> = self
                            .results_for(&c.id)
                            .iter()
                            .map(|r| {
                                let (mark, kind) = marker(r);
                                let style = match kind {
                                    Marker::Caught => t.error(),
                                    Marker::FalseAlarm | Marker::Missed => t.warning(),
                                    Marker::Clean => t.success(),
                                    Marker::Unknown | Marker::Unfinished => t.muted(),
                                };
                                Span::styled(mark, style)
                            })
                            .collect();
                        let mut spans = vec![
                            Span::styled(format!("  {mark} "), t.accent()),
                            Span::styled(
                                format!("{:<5} ", c.label.as_str()),
                                if c.label == crate::dataset::claims::Truth::True {
                                    t.success()
                                } else {
                                    t.error()
                                },
                            ),
                        ];
                        spans.extend(flags);
                        spans.push(Span::styled(format!(" {}", one_line(&c.claim)), t.base()));
                        Line::from(spans)
                    }
                };
                if pos == self.sel {
                    line.style(t.selected(true))
                } else {
                    line
                }
            })
            .collect();
        f.render_widget(Paragraph::new(lines), inner);
        scrollbar(f, area, rows.len(), off, room);
    }

    fn draw_detail(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let block = pane(t, Line::from(" Claim "), false);
        let mut lines: Vec<Line> = Vec::new();
        match self.selected() {
            Some(ClaimRow::Topic(ti)) => {
                let (name, r) = &self.set.topics[ti];
                lines.push(Line::styled(one_line(name), t.accent()));
                let n = r.len();
                let tr = r
                    .clone()
                    .filter(|&c| self.set.claims[c].label == crate::dataset::claims::Truth::True)
                    .count();
                lines.push(Line::styled(
                    format!("{n} claims: {tr} true, {} false", n - tr),
                    t.muted(),
                ));
            }
            Some(ClaimRow::Claim(ci)) => {
                let c = &self.set.claims[ci];
                lines.push(Line::from(vec![
                    Span::styled(one_line(&c.id), t.accent()),
                    Span::styled(format!("  {}  ", one_line(&c.topic)), t.muted()),
                    Span::styled(
                        format!(
                            "label {} ({})",
                            c.label.as_str().to_uppercase(),
                            one_line(&c.source_label)
                        ),
                        t.base().add_modifier(Modifier::BOLD),
                    ),
                ]));
                lines.push(Line::styled(sanitize(&c.claim).into_owned(), t.base()));
                for e in c.evidence.iter().take(3) {
                    lines.push(Line::styled(
                        format!("  evidence: {}", one_line(e)),
                        t.muted(),
                    ));
                }
                let results = self.results_for(&c.id);
                if results.is_empty() {
                    lines.push(Line::raw(""));
                    lines.push(Line::styled(
                        format!(
                            "No model has been run on this claim. {} chooses models, {} runs AutoHall.",
                            cx.keymap.hint(Mode::Claims, Action::Run),
                            cx.keymap.hint(Mode::Claims, Action::Detect)
                        ),
                        t.muted(),
                    ));
                }
                for r in results {
                    lines.push(Line::raw(""));
                    lines.extend(result_lines(r, t));
                }
            }
            None => {}
        }
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block),
            area,
        );
    }
}

/// What a claim's mark in the list says about one model's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    /// A hallucinated reference, flagged.
    Caught,
    /// A factual reference, flagged.
    FalseAlarm,
    /// A hallucinated reference, every pair checked, not flagged (or not checked at all).
    Missed,
    /// A factual reference, every pair checked, not flagged.
    Clean,
    /// Flagged, or every pair checked, but the classification could not be read: no truth to
    /// compare with (not "unfinished": nothing is left to ask).
    Unknown,
    Unfinished,
}

fn marker(r: &ClaimResult) -> (&'static str, Marker) {
    match (hallucinated(&r.target), r.outcome) {
        (Some(true), Some(o)) if o.flagged() => ("✗", Marker::Caught),
        (Some(false), Some(o)) if o.flagged() => ("!", Marker::FalseAlarm),
        (None, Some(o)) if o.flagged() || o.complete() => ("?", Marker::Unknown),
        (Some(true), Some(o)) if o.complete() => ("H", Marker::Missed),
        (Some(false), Some(o)) if o.complete() => ("✓", Marker::Clean),
        // Classified hallucinated, with no detection (yet): what the collection found.
        (Some(true), None) => ("H", Marker::Missed),
        _ => ("·", Marker::Unfinished),
    }
}

impl ClaimsBrowse {
    /// #N, #H, H% over the shown claims' newest results, and detection (OR rule accuracy and
    /// F1, AUROC of the conflict rate) over those with every pair checked. Not AutoHall's
    /// balanced set: every checked reference of the claims shown counts.
    fn summarise(&self) -> Option<String> {
        let shown: HashSet<&str> = self.set.claims.iter().map(|c| c.id.as_str()).collect();
        let rs: Vec<&ClaimResult> = self
            .results
            .iter()
            .filter(|((c, _), _)| shown.contains(c.as_str()))
            .map(|(_, r)| r)
            .collect();
        let judged: Vec<(&ClaimResult, bool)> = rs
            .iter()
            .filter_map(|r| Some((*r, hallucinated(&r.target)?)))
            .collect();
        if judged.is_empty() {
            return None;
        }
        let n = judged.len();
        let h = judged.iter().filter(|(_, h)| *h).count();
        let mut out = format!("#N {n} #H {h} ({:.0}%)", 100.0 * h as f64 / n as f64);
        let done: Vec<crate::detect::analysis::Row<'_>> = judged
            .iter()
            .filter_map(|(r, h)| Some((&r.target, *h, r.outcome?)))
            .filter(|(_, _, o)| o.complete())
            .collect();
        if !done.is_empty() {
            let d = crate::detect::analysis::slice(String::new(), &done);
            let p = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
            out.push_str(&format!(
                " · {} checked: acc {} F1 {} AUROC {}",
                done.len(),
                p(d.or_rule.accuracy),
                p(d.or_rule.f1),
                p(d.auroc)
            ));
        }
        Some(out)
    }
}

fn result_lines(r: &ClaimResult, t: &crate::theme::Theme) -> Vec<Line<'static>> {
    let tg = &r.target;
    let mut out = vec![Line::from(vec![
        Span::styled(format!("── {} ", one_line(&tg.model)), t.accent()),
        Span::styled(
            format!(
                "t={} · detection {}",
                tg.temperature.map_or("-".into(), |x| x.to_string()),
                r.detect_id
            ),
            t.muted(),
        ),
    ])];
    match (&tg.answer, &tg.answer_error) {
        (Some(a), _) => {
            for l in sanitize(a).lines().take(6) {
                out.push(Line::styled(format!("  {l}"), t.base()));
            }
        }
        (None, Some(e)) => out.push(Line::styled(
            format!("  failed: {}", one_line(e)),
            t.error(),
        )),
        (None, None) => out.push(Line::styled("  reference: waiting…", t.muted())),
    }
    if tg.refused {
        out.push(Line::styled(
            "  a refusal without content: set aside",
            t.warning(),
        ));
        return out;
    }
    let class = match tg.class {
        Some(Class::Unparsed) => "unreadable".to_string(),
        Some(c) => c.as_str().to_uppercase(),
        None => "…".into(),
    };
    let verdict = match hallucinated(tg) {
        Some(true) => Span::styled(
            "  → hallucinated reference",
            t.error().add_modifier(Modifier::BOLD),
        ),
        Some(false) => Span::styled("  → factual", t.success()),
        None => Span::raw(""),
    };
    out.push(Line::from(vec![
        Span::styled("  classified from it as ", t.muted()),
        Span::styled(class, t.base().add_modifier(Modifier::BOLD)),
        verdict,
    ]));
    if let Some(o) = r.outcome {
        let (word, style) = if o.flagged() {
            ("FLAGGED", t.error().add_modifier(Modifier::BOLD))
        } else if o.complete() {
            ("not flagged", t.success())
        } else {
            ("checking", t.accent())
        };
        let mut counts = format!("· {} of {} pairs conflict", o.conflicts, o.k);
        if o.unparsed > 0 {
            counts.push_str(&format!(", {} unreadable", o.unparsed));
        }
        let pending = o.k - o.conflicts - o.consistent - o.unparsed;
        if pending > 0 {
            counts.push_str(&format!(", {pending} not checked"));
        }
        out.push(Line::from(vec![
            Span::styled(format!("  self-contradiction: {word} "), style),
            Span::styled(counts, t.muted()),
        ]));
        if !r.other_wordings.is_empty() {
            let each: Vec<String> = r
                .other_wordings
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let flag = if o.flagged() { " flagged" } else { "" };
                    format!("W{} {} of {}{flag}", i + 1, o.conflicts, o.k)
                })
                .collect();
            out.push(Line::from(Span::styled(
                format!("  other pair wordings: {}", each.join(" · ")),
                t.muted(),
            )));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::claims::Truth;

    fn result(label: Truth, class: Class, conflicts: u32, missing: u32) -> ClaimResult {
        ClaimResult {
            detect_id: "d".into(),
            target: crate::detect::test_support::target(0, label, class),
            outcome: Some(Outcome {
                k: 3,
                conflicts,
                consistent: 3 - conflicts - missing,
                unparsed: 0,
                missing,
            }),
            other_wordings: Vec::new(),
        }
    }

    /// A true and a false positive no longer look the same; a miss is told from a clean pass.
    #[test]
    fn the_mark_tells_caught_from_false_alarm_and_missed_from_clean() {
        use Marker::*;
        let (t, f) = (Truth::True, Truth::False);
        assert_eq!(marker(&result(t, Class::False, 1, 0)).1, Caught);
        assert_eq!(marker(&result(t, Class::True, 1, 0)).1, FalseAlarm);
        assert_eq!(marker(&result(t, Class::False, 0, 0)).1, Missed);
        assert_eq!(marker(&result(f, Class::False, 0, 0)).1, Clean);
        assert_eq!(marker(&result(f, Class::False, 0, 1)).1, Unfinished);
        assert_eq!(marker(&result(f, Class::Unparsed, 2, 0)).1, Unknown);
        // Every pair checked and none conflicting, the class unreadable: nothing is left to
        // ask, so it is not "unfinished" either.
        assert_eq!(marker(&result(f, Class::Unparsed, 0, 0)).1, Unknown);
        assert_eq!(marker(&result(f, Class::Unparsed, 0, 1)).1, Unfinished);
    }
}
