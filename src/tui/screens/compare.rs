//! The compare screen: one item at a time, every model's answer side by side (streaming live
//! during a run), each with its status and verdict; the run's gauge below.

use std::collections::HashMap;

use crossterm::event::{MouseButton, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, LineGauge, Paragraph, Wrap};

use crate::eval::whitebox::{Band, LOW_P, alternatives, band};
use crate::text::{one_line, sanitize};
use crate::theme::Theme;
use crate::tui::component::{Cmd, Component, Cx, Input, Open, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::keymap::{Action, Mode};
use crate::tui::layout::CompareAreas;
use crate::tui::session::{Answer, Session, Status};
use crate::tui::widgets::{scrollbar, status_lines, status_rows, title_line};

mod draw;
use draw::{gauge, step_unlikely, token_notice};

/// What the last frame drew for one pane.
#[derive(Debug, Clone, Copy, Default)]
struct Drawn {
    /// Rows the answer takes wrapped, and the rows the pane shows.
    lines: usize,
    height: usize,
    /// The first row shown.
    offset: u16,
}

#[derive(Debug, Clone, Default)]
pub struct Compare {
    /// The items to step through with `[`/`]`.
    pub items: Vec<usize>,
    pub pos: usize,
    /// Focused pane.
    pub pane: usize,
    /// Per model: scroll offset and whether the pane follows the tail of a stream.
    pub scroll: HashMap<String, (u16, bool)>,
    pub sample: u32,
    /// Show the judge's full reply under each judged answer.
    pub show_judge: bool,
    /// Shade each token by its probability, where the answer has them.
    pub show_tokens: bool,
    /// The token under the cursor in the focused pane (`.`/`,` step through the unlikely ones).
    pub token_cursor: Option<usize>,
    /// When `X` was pressed once: a second press within 5 s stops the run.
    stop_armed: Option<std::time::Instant>,
    /// Where the panes were last drawn, and what each showed.
    areas: Option<CompareAreas>,
    drawn: HashMap<String, Drawn>,
    /// Opened on one stored run (the runs screen's `o`): its answers, kept here rather than in
    /// the session, whose answers and rates are the newest of every run.
    pub run: Option<String>,
    own: HashMap<(usize, String, u32), Answer>,
    /// People's labels on the shown item's answers (every reviewer's, read from the store
    /// and kept current as anyone labels), and who "you" are: each reviewer's newest label
    /// shows in the answer's pane title.
    people: Vec<crate::store::AnswerLabel>,
    me: String,
}

impl Compare {
    pub fn new(items: Vec<usize>, pos: usize) -> Compare {
        Compare {
            items,
            pos,
            ..Compare::default()
        }
    }

    /// The answers of the stored run `run`, item by item.
    pub fn of_run(run: String, items: Vec<usize>) -> Compare {
        Compare {
            items,
            run: Some(run),
            ..Compare::default()
        }
    }

    /// A stored run's answers to an item arrive: each with its score, as the panes show them.
    fn on_run_answers(
        &mut self,
        item: usize,
        records: &[crate::store::ResponseRecord],
        scores: &[crate::store::ScoreRecord],
        sources: &[crate::foreign::record::SourceRecord],
    ) {
        for r in records {
            let mut a = Answer::from_record(r);
            a.source_verdict = sources
                .iter()
                .find(|s| s.job_idx == r.job_idx)
                .and_then(|s| s.verdict());
            a.verdict = scores
                .iter()
                .find(|s| s.job_idx == r.job_idx && s.run_id == r.run_id)
                .cloned();
            self.own.insert((item, r.model.clone(), r.sample), a);
        }
    }

    /// Where the panes were last drawn.
    pub fn areas(&self) -> Option<CompareAreas> {
        self.areas.clone()
    }

    pub fn item(&self) -> Option<usize> {
        self.items.get(self.pos).copied()
    }

    /// The models shown as panes for the current item.
    pub fn models(&self, session: &Session) -> Vec<String> {
        let Some(i) = self.item() else {
            return Vec::new();
        };
        if self.run.is_some() {
            let mut ms: Vec<String> = self
                .own
                .keys()
                .filter(|(item, _, _)| *item == i)
                .map(|(_, m, _)| m.clone())
                .collect();
            ms.sort();
            ms.dedup();
            return ms;
        }
        session.models_for(i)
    }

    fn answer<'s>(&'s self, session: &'s Session, model: &str) -> Option<&'s Answer> {
        let item = self.item()?;
        let key = (item, model.to_string(), self.sample);
        if self.run.is_some() {
            return self.own.get(&key);
        }
        session.answers.get(&key)
    }

    /// The most samples any model has for the current item.
    fn samples(&self, session: &Session) -> u32 {
        let Some(i) = self.item() else {
            return 1;
        };
        if self.run.is_some() {
            return self
                .own
                .keys()
                .filter(|(item, _, _)| *item == i)
                .map(|(_, _, s)| s + 1)
                .max()
                .unwrap_or(1);
        }
        session.samples_for(i)
    }

    /// The scroll offset a pane showed in the last frame.
    fn offset(&self, model: &str) -> u16 {
        self.drawn.get(model).map_or(0, |d| d.offset)
    }

    fn scroll_pane(&mut self, model: &str, delta: i32) {
        let d = self.drawn.get(model).copied().unwrap_or_default();
        let max = d.lines.saturating_sub(d.height) as i32;
        let cur = self.offset(model) as i32;
        let new = (cur + delta).clamp(0, max);
        // Scrolling to the bottom resumes following the stream.
        let follow = new >= max && delta > 0;
        self.scroll.insert(model.to_string(), (new as u16, follow));
    }

    fn step_item(&mut self, forward: bool) -> Vec<Cmd> {
        let n = self.items.len();
        if n == 0 {
            return Vec::new();
        }
        self.pos = if forward {
            (self.pos + 1).min(n - 1)
        } else {
            self.pos.saturating_sub(1)
        };
        self.scroll.clear();
        self.sample = 0;
        self.load()
    }

    fn load(&self) -> Vec<Cmd> {
        let mut out = self.load_labels();
        if let (Some(run), Some(item)) = (&self.run, self.item()) {
            out.push(Cmd::job(crate::tui::jobs::runs::LoadRunAnswers {
                run: run.clone(),
                item,
            }));
            return out;
        }
        if let Some(item) = self.item() {
            out.push(Cmd::job(crate::tui::jobs::answers::LoadStored {
                item,
                rescore: false,
            }));
        }
        out
    }

    /// People's labels on the item's answers (read again whenever anyone labels).
    fn load_labels(&self) -> Vec<Cmd> {
        self.item()
            .map(|item| Cmd::job(crate::tui::jobs::labels::LoadItemLabels { item }))
            .into_iter()
            .collect()
    }

    /// A screen on the focused pane's finished answer (its contradictions, its sentences), or
    /// why there is none.
    fn on_answer(&self, focused: Option<&str>, cx: &Cx, open: impl FnOnce(&Answer) -> Open) -> Cmd {
        match focused.and_then(|m| self.answer(cx.session, m)) {
            Some(a) if a.status.is_final() && a.error.is_none() && !a.text.is_empty() => {
                Cmd::Push(open(a))
            }
            Some(a) if !a.status.is_final() => Cmd::Notice("wait for the answer to finish".into()),
            _ => Cmd::Notice(
                "no answer in this pane (a failed or empty answer has nothing to test)".into(),
            ),
        }
    }

    /// `t` shades the tokens; `[`/`]` step the token cursor through the unlikely ones.
    fn token_action(
        &mut self,
        a: Action,
        focused: Option<&str>,
        models: &[String],
        cx: &Cx,
    ) -> Vec<Cmd> {
        let mut out = Vec::new();
        match a {
            Action::ToggleTokens => {
                let any = models.iter().any(|m| {
                    self.answer(cx.session, m)
                        .is_some_and(|a| a.logprobs.is_some())
                });
                if any || self.show_tokens {
                    self.show_tokens = !self.show_tokens;
                } else {
                    out.push(Cmd::Notice(
                        "no token probabilities on this item: run it with prism run --logprobs 5 \
                         (OpenAI-compatible servers, Gemini and the built-in models give them)"
                            .into(),
                    ));
                }
            }
            Action::NextToken | Action::PrevToken => {
                let tokens = focused
                    .and_then(|m| self.answer(cx.session, m))
                    .and_then(|a| a.logprobs.clone());
                match tokens.as_deref() {
                    Some(tokens) => {
                        self.show_tokens = true;
                        self.token_cursor =
                            step_unlikely(tokens, self.token_cursor, a == Action::NextToken);
                        out.push(Cmd::Notice(match self.token_cursor {
                            Some(i) => token_notice(tokens, i),
                            None => "no token below probability 0.5 in this answer".into(),
                        }));
                    }
                    None => out.push(Cmd::Notice(
                        "no token probabilities in this pane: run it with prism run --logprobs 5"
                            .into(),
                    )),
                }
            }
            _ => {}
        }
        out
    }

    /// The label popup for the focused answer, or why there is none to label.
    fn label_popup(&self, focused: Option<&str>, cx: &Cx) -> Cmd {
        let answer = focused.and_then(|m| Some((m, self.answer(cx.session, m)?)));
        let item = self.item().map(|i| cx.ds.items[i].id.to_string());
        match (answer, item) {
            (Some((m, a)), Some(item)) if a.status.is_final() && !a.run_id.is_empty() => {
                Cmd::Popup(Box::new(crate::tui::popups::LabelAnswer::new(
                    &a.run_id, a.job_idx, &item, m, m,
                )))
            }
            (Some(_), Some(_)) => {
                Cmd::Notice("this answer is not finished yet: label it once it is".into())
            }
            _ => Cmd::Notice("no answer in this pane to label".into()),
        }
    }

    /// Stopping the run takes the key twice within five seconds (finished answers are kept).
    fn stop_run(&mut self, cx: &Cx) -> Vec<Cmd> {
        let running = cx.session.active.as_ref().is_some_and(|r| r.running());
        let armed = self
            .stop_armed
            .is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(5));
        if !running {
            self.stop_armed = None;
            vec![Cmd::Notice("no run in progress".into())]
        } else if armed {
            self.stop_armed = None;
            vec![
                Cmd::CancelRun,
                Cmd::Notice("stopping the run: finished answers are kept".into()),
            ]
        } else {
            self.stop_armed = Some(std::time::Instant::now());
            let key = cx.keymap.hint(Mode::Compare, Action::StopRun);
            vec![Cmd::Notice(format!(
                "stop the run? press {key} again (finished answers are kept; any other key goes on)"
            ))]
        }
    }

    fn apply(&mut self, a: Action, cx: &Cx) -> Vec<Cmd> {
        let models = self.models(cx.session);
        let panes = models.len();
        let focused = models.get(self.pane).cloned();
        let mut out = vec![Cmd::ClearNotice];
        if a != Action::StopRun {
            self.stop_armed = None;
        }
        match a {
            Action::Quit => out.push(Cmd::Quit),
            Action::Help => out.push(Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                Mode::Compare,
            )))),
            // esc means back here as everywhere: a run goes on (stopping it is `X`, twice).
            Action::Cancel => out.push(Cmd::Pop),
            Action::StopRun => out.extend(self.stop_run(cx)),
            Action::Back => out.push(Cmd::Pop),
            Action::Heatmap => out.push(Cmd::Push(Open::Heatmap)),
            Action::NextPane | Action::Expand if panes > 0 => {
                self.pane = (self.pane + 1) % panes;
                self.token_cursor = None;
            }
            Action::PrevPane | Action::Collapse if panes > 0 => {
                self.pane = (self.pane + panes - 1) % panes;
                self.token_cursor = None;
            }
            Action::Down
            | Action::Up
            | Action::PageDown
            | Action::PageUp
            | Action::Top
            | Action::Bottom => {
                if let Some(m) = focused {
                    let delta = match a {
                        Action::Down => 1,
                        Action::Up => -1,
                        Action::PageDown => 10,
                        Action::PageUp => -10,
                        Action::Top => i32::MIN / 2,
                        _ => i32::MAX / 2,
                    };
                    self.scroll_pane(&m, delta);
                }
            }
            Action::NextItem => {
                self.token_cursor = None;
                out.extend(self.step_item(true))
            }
            Action::PrevItem => {
                self.token_cursor = None;
                out.extend(self.step_item(false))
            }
            Action::NextSample => {
                self.token_cursor = None;
                if self.item().is_some() {
                    let n = self.samples(cx.session);
                    self.sample = (self.sample + 1) % n.max(1);
                    self.scroll.clear();
                }
            }
            Action::Rescore => {
                if let Some(item) = self.item() {
                    out.push(Cmd::job(crate::tui::jobs::answers::LoadStored {
                        item,
                        rescore: true,
                    }));
                    out.push(Cmd::Notice("scoring again".into()));
                }
            }
            Action::Copy => match focused.as_deref().and_then(|m| self.answer(cx.session, m)) {
                // The answer as shown: control sequences out (a model's text is untrusted, and
                // a clipboard pasted into a shell must not carry them).
                Some(a) if !a.text.is_empty() => {
                    out.push(Cmd::Copy(sanitize(&a.text).into_owned()));
                }
                _ => out.push(Cmd::Notice("no answer in this pane to copy".into())),
            },
            Action::ChooseJudge => out.push(Cmd::Popup(Box::new(
                crate::tui::popups::JudgePicker::new(cx),
            ))),
            Action::ToggleJudge => {
                // Only worth a toggle where a judge replied: otherwise say why nothing shows.
                let judged = models.iter().any(|m| {
                    self.answer(cx.session, m)
                        .and_then(|a| a.verdict.as_ref())
                        .is_some_and(|v| v.judge_reply.is_some())
                });
                if judged || self.show_judge {
                    self.show_judge = !self.show_judge;
                } else {
                    out.push(Cmd::Notice(
                        "no judge reply on this item: its answers were scored by rule, or wait \
                         for a judge (J shows the reply under each judged answer)"
                            .into(),
                    ));
                }
            }
            Action::ToggleTokens | Action::NextToken | Action::PrevToken => {
                out.extend(self.token_action(a, focused.as_deref(), &models, cx))
            }
            Action::Label => out.push(self.label_popup(focused.as_deref(), cx)),
            Action::Contradictions => out.push(self.on_answer(focused.as_deref(), cx, |a| {
                Open::Contradictions(crate::tui::jobs::detect::DetectJob::Answer {
                    run_id: a.run_id.clone(),
                    job_idx: a.job_idx,
                    model: focused.clone().unwrap_or_default(),
                    models: cx.models.to_vec(),
                })
            })),
            Action::WhereInAnswer => {
                out.push(self.on_answer(focused.as_deref(), cx, |a| Open::Sentences {
                    run: a.run_id.clone(),
                    job: a.job_idx,
                }))
            }
            // Runs are chosen while browsing: back there, then the run picker.
            Action::Run => {
                out.push(Cmd::Pop);
                out.push(Cmd::Then(Action::Run));
            }
            _ => {}
        }
        self.pane = self.pane.min(panes.saturating_sub(1));
        out
    }

    fn on_mouse(&mut self, m: crossterm::event::MouseEvent, cx: &Cx) -> Vec<Cmd> {
        let Some(areas) = &self.areas else {
            return Vec::new();
        };
        let models = self.models(cx.session);
        let pos = Position::new(m.column, m.row);
        let Some(i) = areas.panes.iter().position(|r| r.contains(pos)) else {
            return Vec::new();
        };
        let Some(model) = models.get(i).cloned() else {
            return Vec::new();
        };
        match m.kind {
            MouseEventKind::ScrollDown => self.scroll_pane(&model, 3),
            MouseEventKind::ScrollUp => self.scroll_pane(&model, -3),
            MouseEventKind::Down(MouseButton::Left) => self.pane = i,
            _ => {}
        }
        Vec::new()
    }
}

impl Component for Compare {
    fn id(&self) -> ScreenId {
        ScreenId::Compare
    }

    fn mode(&self) -> Mode {
        Mode::Compare
    }

    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        self.load()
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Action(a) => self.apply(a, cx),
            Input::Mouse(m) => self.on_mouse(m, cx),
            _ => Vec::new(),
        }
    }

    fn on_msg(&mut self, msg: &Msg, _cx: &Cx) -> Vec<Cmd> {
        use crate::tui::jobs::Failed;
        use crate::tui::jobs::labels::{ItemLabels, Labelled, LabelsChanged};
        use crate::tui::jobs::runs::RunAnswers;
        if let Some(Failed(e)) = msg.get() {
            return vec![Cmd::Notice(e.clone())];
        }
        if let Some(a) = msg.get::<RunAnswers>()
            && self.run.as_ref() == Some(&a.run)
        {
            self.on_run_answers(a.item, &a.records, &a.scores, &a.sources);
        }
        if let Some(Labelled(l)) = msg.get() {
            if !self.people.iter().any(|p| p.uid == l.uid) {
                self.people.push(l.clone());
            }
            if self.me.is_empty() {
                self.me = l.reviewer.clone();
            }
        }
        if let Some(l) = msg.get::<ItemLabels>()
            && self.item() == Some(l.item)
        {
            self.people = l.labels.clone();
            self.me = l.me.clone();
        }
        if msg.get::<LabelsChanged>().is_some() {
            return self.load_labels();
        }
        Vec::new()
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let models = self.models(cx.session);
        let k = |a| cx.keymap.hint(Mode::Compare, a);
        let running = cx.session.active.as_ref().is_some_and(|r| r.running());
        let hints = format!(
            " {}/{} item  {} pane  ↑↓ scroll  {} follow  {} sample  {} contradictions  {} back{}  {} browse  {} help  {} quit",
            k(Action::PrevItem),
            k(Action::NextItem),
            k(Action::NextPane),
            k(Action::Bottom),
            k(Action::NextSample),
            k(Action::Contradictions),
            k(Action::Cancel),
            if running {
                format!("  {} stop run", k(Action::StopRun))
            } else {
                String::new()
            },
            k(Action::Back),
            k(Action::Help),
            k(Action::Quit)
        );
        let a = CompareAreas::new(
            area,
            models.len(),
            status_rows(cx.notice, &hints, area.width),
        );

        let pos = if self.items.is_empty() {
            String::new()
        } else {
            format!("item {}/{}", self.pos + 1, self.items.len())
        };
        let mut title = vec![
            Span::styled(" compare ", t.base().add_modifier(Modifier::BOLD)),
            Span::styled(pos, t.muted()),
        ];
        if let Some(run) = &self.run {
            title.push(Span::styled(
                format!("  run {}: its own answers", one_line(run)),
                t.accent(),
            ));
        }
        if self.item().is_some() {
            let n = self.samples(cx.session);
            if n > 1 {
                title.push(Span::styled(
                    format!("  sample {}/{n}", self.sample + 1),
                    t.warning(),
                ));
            }
        }
        f.render_widget(Paragraph::new(title_line(t, title)), a.title);

        self.header(cx, f, a.header);
        if models.is_empty() {
            let msg = if cx.can_run {
                format!(
                    "No answers stored for this item yet. Press {} to choose models and run it.",
                    cx.keymap.hint(Mode::Compare, Action::Run)
                )
            } else {
                "No answers stored for this item.".to_string()
            };
            let r = a.panes.first().copied().unwrap_or(a.header);
            f.render_widget(
                Paragraph::new(Line::styled(msg, t.muted()))
                    .wrap(Wrap { trim: true })
                    .block(
                        Block::default()
                            .borders(Borders::ALL)
                            .border_style(t.border(false)),
                    ),
                r,
            );
        }
        let mut drawn = HashMap::new();
        for (i, model) in models.iter().enumerate() {
            if let Some(r) = a.panes.get(i) {
                drawn.insert(model.clone(), self.pane_draw(cx, f, *r, i, model));
            }
        }
        self.drawn = drawn;
        gauge(cx, f, a.gauge, self.run.as_deref(), self.own.len());
        status_lines(f, a.status, t, cx.notice, &hints);
        self.areas = Some(a);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests;
