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
    ) {
        for r in records {
            let mut a = Answer::from_record(r);
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
            Action::StopRun => {
                let running = cx.session.active.as_ref().is_some_and(|r| r.running());
                let armed = self
                    .stop_armed
                    .is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(5));
                if !running {
                    self.stop_armed = None;
                    out.push(Cmd::Notice("no run in progress".into()));
                } else if armed {
                    self.stop_armed = None;
                    out.push(Cmd::CancelRun);
                    out.push(Cmd::Notice(
                        "stopping the run: finished answers are kept".into(),
                    ));
                } else {
                    self.stop_armed = Some(std::time::Instant::now());
                    let key = cx.keymap.hint(Mode::Compare, Action::StopRun);
                    out.push(Cmd::Notice(format!(
                        "stop the run? press {key} again (finished answers are kept; any other key goes on)"
                    )));
                }
            }
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
            self.on_run_answers(a.item, &a.records, &a.scores);
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
        gauge(cx, f, a.gauge);
        status_lines(f, a.status, t, cx.notice, &hints);
        self.areas = Some(a);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Compare {
    fn header(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let Some(idx) = self.item() else {
            return;
        };
        let ds = cx.ds;
        let item = &ds.items[idx];
        let task = ds.task_of(item);
        // Narrow screens get the item's line without the task id and category name (the id
        // says the task), so it stays on one row.
        let wide = area.width >= 100;
        let mut first = vec![Span::styled(one_line(&item.id), t.accent())];
        if wide {
            first.push(Span::styled(format!("  {}", one_line(&task.id)), t.base()));
        }
        first.push(Span::styled(
            if wide {
                format!("  {} {}", task.dimension.code(), task.category.name)
            } else {
                format!("  {}", task.dimension.code())
            },
            Style::default().fg(t.dimension(task.dimension)),
        ));
        first.push(Span::styled(format!("  {}", task.evaluator), t.muted()));
        let mut lines = vec![Line::from(first)];
        // The item's own hallucination rate over every answer (all models and samples); while
        // some await a score, only how many are scored.
        let tally = cx.session.item_tally(idx);
        if tally.unscored > 0 {
            lines[0].spans.push(Span::styled(
                format!(
                    "  item: {}/{} answers scored",
                    tally.scored,
                    tally.scored + tally.unscored
                ),
                t.warning(),
            ));
        } else if tally.scored > 0 {
            let h = 100.0 - 100.0 * tally.sum / tally.scored as f64;
            lines[0].spans.push(Span::styled(
                format!("  item H {h:.1}% over {} scored", tally.scored),
                Style::default().fg(t.heat(h)),
            ));
        }
        // The question right after the item's line and before the reference: in a short header
        // (24 rows) what is cut is the end, and the question is what the answers are about.
        let q = crate::prompt::format_question(item);
        lines.push(Line::styled(sanitize(&q).into_owned(), t.base()));
        if let Some(ans) = &item.answer {
            lines.push(Line::from(vec![
                Span::styled("reference  ", t.muted()),
                Span::styled(one_line(ans), t.success().add_modifier(Modifier::BOLD)),
            ]));
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(false))
            .title(" Item ");
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block),
            area,
        );
    }

    /// With repeats: how many of the model's finished samples of this item say what the
    /// shown one says (PRISM's `loose` form), as `2/3 say this`; `None` with one sample or while
    /// the shown one is not finished.
    fn agreement(&self, session: &Session, model: &str) -> Option<String> {
        if self.run.is_some() {
            return None; // a stored run's own answers: not compared across samples here
        }
        let item = self.item()?;
        let n = session.samples_for(item);
        let done = |s: u32| {
            session
                .answers
                .get(&(item, model.to_string(), s))
                .filter(|a| a.status == Status::Done)
        };
        let shown = crate::eval::text::loose(&done(self.sample)?.text);
        if n < 2 {
            return None;
        }
        let finished: Vec<String> = (0..n)
            .filter_map(|s| done(s).map(|a| crate::eval::text::loose(&a.text)))
            .collect();
        let same = finished.iter().filter(|t| **t == shown).count();
        Some(format!("{same}/{} say this", finished.len()))
    }

    /// What a pane's title says of its answer, each fact with its rank (0 most important): a
    /// title that does not fit drops whole facts, the least important first ([`fitted`]), and
    /// never cuts one (a perplexity of 1.7 once read `ppl 1`).
    fn facts(&self, cx: &Cx, a: &Answer, model: &str) -> Vec<(u8, String)> {
        let mut facts: Vec<(u8, String)> = Vec::new();
        if let Some(ms) = a.latency_ms {
            facts.push((3, format!("{:.1}s", ms as f64 / 1000.0)));
        }
        if let Some(n) = a.tokens {
            facts.push((4, format!("{n} tok")));
        }
        if a.attempts > 1 {
            facts.push((2, format!("{} attempts", a.attempts)));
        }
        // On a shared store: which worker answered (another machine's name: one line).
        if let Some(w) = cx.session.answered_by.get(&(a.run_id.clone(), a.job_idx)) {
            facts.push((5, format!("by {}", crate::text::one_line(w))));
        }
        if let Some(same) = self.agreement(cx.session, model) {
            facts.push((1, same));
        }
        let mine: Vec<&crate::store::AnswerLabel> = self
            .people
            .iter()
            .filter(|l| l.run_id == a.run_id && l.job_idx == a.job_idx)
            .collect();
        if !mine.is_empty() {
            let owned: Vec<crate::store::AnswerLabel> = mine.into_iter().cloned().collect();
            let mut newest = crate::store::judging::newest_labels(&owned);
            // Yours first, then the others by name.
            newest.sort_by_key(|l| (l.reviewer != self.me, l.reviewer.clone()));
            let said: Vec<String> = newest
                .iter()
                .map(|l| {
                    let who = if l.reviewer == self.me {
                        "you".to_string()
                    } else {
                        crate::text::one_line(&l.reviewer)
                    };
                    format!("{who}: {}", l.label.words())
                })
                .collect();
            facts.push((0, said.join(", ")));
        }
        // White-box scores beside the verdict, where the answer has token probabilities.
        if let Some(w) = a
            .logprobs
            .as_deref()
            .and_then(crate::eval::whitebox::scores)
        {
            facts.push((
                0,
                format!("ppl {:.1} · min p {:.3}", w.perplexity, w.min_logprob.exp()),
            ));
        } else if self.show_tokens && a.status.is_final() {
            // Shading asked, but this answer has no tokens (its provider gives none, as
            // Anthropic's, or the run did not ask, or they did not spell the answer):
            // said, rather than shown plain.
            facts.push((
                0,
                a.tokens_note
                    .as_deref()
                    .filter(|n| *n == crate::eval::whitebox::TOKENS_MISMATCH)
                    .unwrap_or("tokens: not available")
                    .to_string(),
            ));
        }
        if self.show_tokens
            && let Some(n) = &a.tokens_note
            && n != crate::eval::whitebox::TOKENS_MISMATCH
        {
            facts.push((6, crate::text::one_line(n)));
        }
        facts
    }

    fn pane_draw(&self, cx: &Cx, f: &mut Frame, r: Rect, i: usize, model: &str) -> Drawn {
        let t = cx.theme;
        let focused = self.pane == i;
        let answer = self.answer(cx.session, model);
        let mut title = vec![
            Span::styled(format!(" {} ", one_line(model)), t.accent()),
            status_span(answer, t),
            Span::raw(" "),
        ];
        if let Some(a) = answer {
            let head: usize = title
                .iter()
                .map(|sp| unicode_width::UnicodeWidthStr::width(sp.content.as_ref()))
                .sum();
            let room = (r.width as usize).saturating_sub(2 + head);
            if let Some(facts) = fitted(self.facts(cx, a, model), room) {
                title.push(Span::styled(facts, t.muted()));
            }
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(if focused {
                BorderType::Thick
            } else {
                BorderType::Rounded
            })
            .border_style(t.border(focused))
            .title(Line::from(title));
        let block = match answer.and_then(|a| a.verdict.as_ref()) {
            Some(v) => block.title_bottom(verdict_line(
                v,
                t,
                (
                    self.show_judge,
                    &cx.keymap.hint(Mode::Compare, Action::ChooseJudge),
                ),
                (r.width as usize).saturating_sub(2),
            )),
            None => block,
        };
        let inner = block.inner(r);
        let mut text = answer
            .map(|a| sanitize(&a.text).into_owned())
            .unwrap_or_default();
        if self.show_judge
            && let Some(v) = answer.and_then(|a| a.verdict.as_ref())
            && let Some(reply) = &v.judge_reply
        {
            text.push_str(&format!(
                "\n\n── judge {} ({} attempt{}) ──\n{}",
                one_line(v.judge.as_deref().unwrap_or("")),
                v.judge_attempts,
                if v.judge_attempts == 1 { "" } else { "s" },
                sanitize(reply)
            ));
        }
        let shaded = match answer.and_then(|a| a.logprobs.as_deref()) {
            Some(tokens) if self.show_tokens && !self.show_judge => {
                Some(token_text(tokens, t, self.token_cursor.filter(|_| focused)))
            }
            _ => None,
        };
        // The row (after wrapping) the token cursor's line starts on, to keep it in sight.
        let width = inner.width.max(1);
        let cursor_row = shaded.as_ref().and_then(|lines| {
            let at = self.token_cursor.filter(|_| focused)?;
            let line = cursor_line(answer?.logprobs.as_deref()?, at);
            let before = lines[..line.min(lines.len())].to_vec();
            Some(
                Paragraph::new(before)
                    .wrap(Wrap { trim: false })
                    .line_count(width),
            )
        });
        let para = match shaded {
            Some(lines) => Paragraph::new(lines),
            None => Paragraph::new(text),
        }
        .wrap(Wrap { trim: false });
        let mut d = Drawn {
            lines: para.line_count(width),
            height: inner.height as usize,
            offset: 0,
        };
        let max = d.lines.saturating_sub(d.height) as u16;
        // A pane follows the tail while its answer comes; a finished (or stored) answer opens
        // at its top; the token cursor's line is always in sight.
        let coming = answer.is_some_and(|a| {
            matches!(
                a.status,
                Status::Queued
                    | Status::Sending { .. }
                    | Status::Streaming
                    | Status::Retrying { .. }
            )
        });
        let mut offset = match self.scroll.get(model) {
            Some(&(off, false)) => off.min(max),
            Some(&(_, true)) => max,
            None if coming => max,
            None => 0,
        };
        if let Some(row) = cursor_row {
            let row = row as u16;
            let h = (d.height as u16).max(1);
            if row < offset || row >= offset + h {
                offset = row.saturating_sub(h / 3).min(max);
            }
        }
        d.offset = offset;
        f.render_widget(para.scroll((offset, 0)).block(block).style(t.base()), r);
        scrollbar(f, r, d.lines, offset as usize, d.height);
        d
    }
}

/// The next (or previous) token below [`LOW_P`] from `from`, wrapping round; `None` when the
/// answer has none.
fn step_unlikely(
    tokens: &[crate::provider::TokenLogprob],
    from: Option<usize>,
    forward: bool,
) -> Option<usize> {
    let low: Vec<usize> = (0..tokens.len())
        .filter(|&i| f64::from(tokens[i].logprob).exp() < LOW_P)
        .collect();
    let (first, last) = (*low.first()?, *low.last()?);
    Some(match (from, forward) {
        (None, true) => first,
        (None, false) => last,
        (Some(c), true) => low.iter().copied().find(|&i| i > c).unwrap_or(first),
        (Some(c), false) => low.iter().rev().copied().find(|&i| i < c).unwrap_or(last),
    })
}

/// What the status line says of the token under the cursor: its probability and its top
/// alternatives, most likely first (the text sanitised: it comes from the model).
fn token_notice(tokens: &[crate::provider::TokenLogprob], i: usize) -> String {
    let tok = &tokens[i];
    let show = |s: &str| format!("{:?}", sanitize(s));
    let alts = alternatives(tok, 5);
    let mut out = format!(
        "token {}/{}: {} p {:.3}",
        i + 1,
        tokens.len(),
        show(&tok.token),
        f64::from(tok.logprob).exp()
    );
    if alts.is_empty() {
        out.push_str(" · no alternatives stored");
    } else {
        out.push_str(" · instead: ");
        out.push_str(
            &alts
                .iter()
                .map(|(s, p)| format!("{} {p:.3}", show(s)))
                .collect::<Vec<_>>()
                .join(" · "),
        );
    }
    out
}

/// An answer's tokens, each shaded by its probability: the theme's text colour when likely, the
/// accent, warning and error colours as it falls; underlined below 0.5 and bold below 0.2. The
/// token under `cursor` is drawn reversed.
fn token_text(
    tokens: &[crate::provider::TokenLogprob],
    t: &Theme,
    cursor: Option<usize>,
) -> Vec<Line<'static>> {
    let mut lines = vec![Line::default()];
    for (at, tok) in tokens.iter().enumerate() {
        let style = match band(f64::from(tok.logprob).exp()) {
            Band::Likely => t.base(),
            Band::Fair => t.accent(),
            Band::Unlikely => t.warning().add_modifier(Modifier::UNDERLINED),
            Band::VeryUnlikely => t
                .error()
                .add_modifier(Modifier::UNDERLINED)
                .add_modifier(Modifier::BOLD),
        };
        let style = if cursor == Some(at) {
            style.add_modifier(Modifier::REVERSED)
        } else {
            style
        };
        // Model text is untrusted: control sequences out before it is drawn.
        let clean = sanitize(&tok.token).into_owned();
        for (i, piece) in clean.split('\n').enumerate() {
            if i > 0 {
                lines.push(Line::default());
            }
            if !piece.is_empty() {
                lines
                    .last_mut()
                    .expect("one line at least")
                    .push_span(Span::styled(piece.to_string(), style));
            }
        }
    }
    lines
}

/// The facts that fit in `room` columns as `· a · b `, dropping the least important (the
/// highest rank, the later of equals) until they do; `None` when none is left.
fn fitted(mut facts: Vec<(u8, String)>, room: usize) -> Option<String> {
    let shown = |fs: &[(u8, String)]| {
        let texts: Vec<&str> = fs.iter().map(|f| f.1.as_str()).collect();
        format!("· {} ", texts.join(" · "))
    };
    while !facts.is_empty() && unicode_width::UnicodeWidthStr::width(shown(&facts).as_str()) > room
    {
        let least = facts
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.0, *i))
            .map(|(i, _)| i)?;
        facts.remove(least);
    }
    (!facts.is_empty()).then(|| shown(&facts))
}

/// The line (before wrapping) token `at` starts on: the newlines in the tokens before it.
fn cursor_line(tokens: &[crate::provider::TokenLogprob], at: usize) -> usize {
    tokens
        .iter()
        .take(at)
        .map(|t| sanitize(&t.token).matches('\n').count())
        .sum()
}

fn status_span(a: Option<&Answer>, t: &Theme) -> Span<'static> {
    let Some(a) = a else {
        return Span::styled("no answer", t.muted());
    };
    match &a.status {
        Status::Queued => Span::styled("queued", t.muted()),
        Status::Sending { attempt } if *attempt > 1 => {
            Span::styled(format!("sending (attempt {attempt})"), t.warning())
        }
        Status::Sending { .. } => Span::styled("sending", t.muted()),
        Status::Streaming => Span::styled("streaming", t.accent()),
        Status::Retrying {
            attempt,
            max,
            reason,
        } => Span::styled(
            format!("retry {attempt} of {max}: {}", one_line(reason)),
            t.warning(),
        ),
        Status::Done if a.cached => Span::styled("done (cached)", t.success()),
        Status::Done => Span::styled("done", t.success()),
        Status::Stored => Span::styled("stored", t.success()),
        Status::Failed(e) => Span::styled(format!("failed: {}", one_line(e)), t.error()),
        Status::Cancelled => Span::styled("cancelled", t.warning()),
    }
}

/// The verdict under an answer: a mark and the score (so it reads without colour), the
/// evaluator's detail, and who judged, in `room` columns: parts that do not fit are dropped
/// whole, least important first (the evaluator's name, the judge, the detail, the hint), so no
/// part, and no number in it, is ever cut. `(showing, choose_judge)`: whether the judge's reply
/// is shown, and the key that chooses a judge.
fn verdict_line(
    v: &crate::store::ScoreRecord,
    t: &Theme,
    (showing, choose_judge): (bool, &str),
    room: usize,
) -> Line<'static> {
    let (mark, style) = match v.score {
        Some(s) if s >= 1.0 => ("✓".to_string(), t.success()),
        Some(s) if s <= 0.0 => ("✗".to_string(), t.error()),
        Some(_) => ("~".to_string(), t.accent()),
        None => ("?".to_string(), t.muted()),
    };
    let score = v
        .score
        .map_or("unscored".to_string(), |s| format!("{s:.2}"));
    let head = Span::styled(
        format!(" {mark} {score} "),
        style.add_modifier(Modifier::BOLD),
    );
    // (rank: lower is kept longer, text, style), in the order shown, joined by " · ".
    let mut parts: Vec<(u8, String, ratatui::style::Style)> = Vec::new();
    // Waiting for a judge: how to get one comes first, so a narrow pane still shows it.
    if v.score.is_none() && v.judge.is_none() && v.detail.starts_with("needs the ") {
        parts.push((
            1,
            format!("{choose_judge}: choose a judge"),
            t.accent().add_modifier(Modifier::BOLD),
        ));
    }
    let detail = one_line(&v.detail);
    if !detail.trim().is_empty() {
        parts.push((2, detail.trim().to_string(), t.base()));
    }
    parts.push((4, v.evaluator.clone(), t.base()));
    if let Some(j) = &v.judge {
        let hint = if showing { "J hides" } else { "J shows" };
        parts.push((
            3,
            format!("judge {} ({hint} reply)", one_line(j)),
            t.muted(),
        ));
    }
    let width = |ps: &[(u8, String, ratatui::style::Style)]| -> usize {
        let w = unicode_width::UnicodeWidthStr::width;
        // Each part is followed by a space, and all but the first led by "· ".
        w(head.content.as_ref()) + ps.iter().map(|p| w(p.1.as_str()) + 3).sum::<usize>()
            - if ps.is_empty() { 0 } else { 2 }
    };
    while !parts.is_empty() && width(&parts) > room {
        let least = parts
            .iter()
            .enumerate()
            .max_by_key(|(i, p)| (p.0, *i))
            .map_or(0, |(i, _)| i);
        parts.remove(least);
    }
    let mut spans = vec![head];
    for (i, (_, text, st)) in parts.into_iter().enumerate() {
        let sep = if i == 0 { "" } else { "· " };
        spans.push(Span::styled(format!("{sep}{text} "), st));
    }
    Line::from(spans)
}

fn gauge(cx: &Cx, f: &mut Frame, area: Rect) {
    let t = cx.theme;
    let Some(run) = &cx.session.active else {
        f.render_widget(
            Paragraph::new(Line::styled(" no run in progress", t.muted())),
            area,
        );
        return;
    };
    let finished = run.done + run.failed;
    let ratio = if run.total == 0 {
        1.0
    } else {
        finished as f64 / run.total as f64
    };
    let state = if run.running() {
        match run.eta() {
            Some(eta) => format!("ETA {}s", eta.as_secs()),
            None => "running".into(),
        }
    } else if run.cancelled {
        "cancelled".into()
    } else {
        "finished".into()
    };
    let cached = if run.cached > 0 {
        format!(" · {} from cache", run.cached)
    } else {
        String::new()
    };
    let rate = if run.done + run.failed > run.cached {
        format!(" · {:.1} answers/s", run.rate())
    } else {
        String::new()
    };
    let label = format!(
        " {} {finished}/{} · {} failed{rate}{cached} · {state} ",
        run.run_id, run.total, run.failed,
    );
    let filled = if run.failed > 0 {
        t.warning()
    } else {
        t.success()
    };
    f.render_widget(
        LineGauge::default()
            .ratio(ratio.clamp(0.0, 1.0))
            .label(label)
            .filled_style(filled)
            .unfilled_style(t.muted()),
        area,
    );
}

#[cfg(test)]
mod tests;
