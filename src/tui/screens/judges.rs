//! The judges on trial (`J` on the heatmap; `prism judges` on the command line): evaluators as
//! rows, judges as columns, each cell the judge's Cohen's kappa against people's labels (`-`
//! under too few labelled answers). Under the grid: the chosen cell in full (accuracy, kappa,
//! confusion, with intervals), the row's agreement among judges, each judge's flips when asked
//! again, and what the choice of judge moves in each model's H-Score. `enter` on a cell lists the
//! answers where that judge and people disagree, each with the question, the reference, the
//! answer, every judge's verdicts and replies and every person's label; `L` labels it.
//!
//! The numbers are `review::judges`' (the same as `prism judges`); this screen only draws them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::review::judges::{Est, Group, JudgedAnswer, Trial, VsPeople};
use crate::text::{fixed, one_line, sanitize};
use crate::theme::Theme;
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::keymap::{Action, Mode};
use crate::tui::widgets::{pane, status_lines, status_rows, title_line, truncate};

pub struct Judges {
    run: Option<String>,
    /// `None` while it is read.
    trial: Option<Trial>,
    /// The row (group) and column (judge) chosen.
    row: usize,
    col: usize,
    /// The answers of the chosen cell where the judge and people disagree, once `enter` opened
    /// them.
    disputed: Option<Disputed>,
    /// Each judge's calibration standing (what `prism gate` trusts).
    standings: Vec<(String, crate::review::calibration::Standing)>,
}

struct Disputed {
    group: String,
    judge: String,
    answers: Vec<(String, u32)>,
    /// Each answer's item (the list names them).
    items: Vec<String>,
    pos: usize,
    /// The answer at `pos`, once read.
    shown: Option<JudgedAnswer>,
    scroll: u16,
}

impl Judges {
    pub fn new(run: Option<String>) -> Judges {
        Judges {
            run,
            trial: None,
            row: 0,
            col: 0,
            disputed: None,
            standings: Vec::new(),
        }
    }

    /// The trial, once read (tests look at it).
    pub fn trial(&self) -> Option<&Trial> {
        self.trial.as_ref()
    }

    /// The answer shown in the list of disagreements, once read.
    pub fn shown(&self) -> Option<&JudgedAnswer> {
        self.disputed.as_ref().and_then(|d| d.shown.as_ref())
    }

    fn group(&self) -> Option<&Group> {
        self.trial.as_ref()?.groups.get(self.row)
    }

    fn cell(&self) -> Option<&VsPeople> {
        self.group()?.vs_people.get(self.col)
    }

    fn load(&self, cx: &Cx) -> Vec<Cmd> {
        vec![Cmd::job(crate::tui::jobs::labels::LoadJudges {
            run: self.run.clone(),
            models: cx.models.to_vec(),
        })]
    }

    fn load_answer(&mut self) -> Vec<Cmd> {
        let Some(d) = self.disputed.as_mut() else {
            return Vec::new();
        };
        d.shown = None;
        d.scroll = 0;
        match d.answers.get(d.pos) {
            Some((run, job)) => vec![Cmd::job(crate::tui::jobs::labels::LoadJudgedAnswer {
                run: run.clone(),
                job: *job,
            })],
            None => Vec::new(),
        }
    }

    /// `enter`: the chosen cell's disagreements.
    fn open_cell(&mut self) -> Vec<Cmd> {
        let (Some(g), Some(c)) = (self.group(), self.cell()) else {
            return Vec::new();
        };
        if c.disagreements.is_empty() {
            let why = if c.n == 0 {
                "no answer here has both this judge's verdict and people's: label some (L in compare)"
            } else {
                "this judge and people agree on every answer both decided here"
            };
            return vec![Cmd::Notice(why.into())];
        }
        self.disputed = Some(Disputed {
            group: g.name.clone(),
            judge: c.judge.clone(),
            answers: c.disagreements.clone(),
            items: c.disagreement_items.clone(),
            pos: 0,
            shown: None,
            scroll: 0,
        });
        self.load_answer()
    }

    fn label(&self) -> Vec<Cmd> {
        let Some(a) = self.shown() else {
            return vec![Cmd::Notice(
                "enter on a cell lists the answers to label".into(),
            )];
        };
        vec![Cmd::Popup(Box::new(crate::tui::popups::LabelAnswer::new(
            &a.run_id, a.job_idx, &a.item_id, &a.model, &a.model,
        )))]
    }

    fn on_grid(&mut self, a: Action) -> Vec<Cmd> {
        let (rows, cols) = self
            .trial
            .as_ref()
            .map_or((0, 0), |t| (t.groups.len(), t.judges.len()));
        match a {
            Action::Up => self.row = self.row.saturating_sub(1),
            Action::Down => self.row = (self.row + 1).min(rows.saturating_sub(1)),
            Action::Collapse => self.col = self.col.saturating_sub(1),
            Action::Expand => self.col = (self.col + 1).min(cols.saturating_sub(1)),
            Action::Top => self.row = 0,
            Action::Bottom => self.row = rows.saturating_sub(1),
            Action::Toggle => return self.open_cell(),
            Action::Cancel | Action::Back => return vec![Cmd::Pop],
            _ => {}
        }
        Vec::new()
    }

    fn on_list(&mut self, a: Action) -> Vec<Cmd> {
        let Some(d) = self.disputed.as_mut() else {
            return Vec::new();
        };
        match a {
            Action::Up if d.pos > 0 => {
                d.pos -= 1;
                return self.load_answer();
            }
            Action::Down if d.pos + 1 < d.answers.len() => {
                d.pos += 1;
                return self.load_answer();
            }
            Action::PageUp | Action::PageDown => {
                d.scroll = crate::tui::nav::page(d.scroll, a).unwrap_or(d.scroll);
            }
            Action::Cancel | Action::Back | Action::Collapse => self.disputed = None,
            _ => {}
        }
        Vec::new()
    }
}

impl Component for Judges {
    fn id(&self) -> ScreenId {
        ScreenId::Judges
    }
    fn mode(&self) -> Mode {
        Mode::Judges
    }
    fn on_open(&mut self, cx: &Cx) -> Vec<Cmd> {
        let mut cmds = self.load(cx);
        cmds.push(Cmd::Notice(
            "reading the judges' verdicts and the labels…".into(),
        ));
        cmds
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        let Input::Action(a) = input else {
            return Vec::new();
        };
        match a {
            Action::Quit => vec![Cmd::Quit],
            Action::Help => vec![Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                Mode::Judges,
            )))],
            Action::Label => self.label(),
            _ if self.disputed.is_some() => self.on_list(a),
            _ => self.on_grid(a),
        }
    }
    fn on_msg(&mut self, msg: &Msg, cx: &Cx) -> Vec<Cmd> {
        use crate::tui::jobs::labels::{JudgedAnswer, Labelled, LabelsChanged, Trial};
        if let Some(Trial(t, standings)) = msg.get() {
            self.trial = Some((**t).clone());
            self.standings = standings.clone();
            self.row = self.row.min(t.groups.len().saturating_sub(1));
            self.col = self.col.min(t.judges.len().saturating_sub(1));
            // With nothing judged, the body says what to do; a message would cover it.
            return vec![Cmd::ClearNotice];
        }
        if let Some(JudgedAnswer(a)) = msg.get() {
            if let Some(d) = self.disputed.as_mut()
                && d.answers.get(d.pos) == Some(&(a.run_id.clone(), a.job_idx))
            {
                d.shown = Some((**a).clone());
            }
            return Vec::new();
        }
        // A new label (here, or anyone's: the store is watched) changes the numbers and the
        // answer's list of labels: read both again (the list of disagreements stays as opened,
        // so the place in it holds).
        if msg.get::<Labelled>().is_some() || msg.get::<LabelsChanged>().is_some() {
            let mut cmds = self.load(cx);
            if let Some(d) = &self.disputed
                && let Some((run, job)) = d.answers.get(d.pos)
            {
                cmds.push(Cmd::job(crate::tui::jobs::labels::LoadJudgedAnswer {
                    run: run.clone(),
                    job: *job,
                }));
            }
            return cmds;
        }
        Vec::new()
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Judges, a);
        let hints = if self.disputed.is_some() {
            format!(
                " ↑↓ answer  {} label  pgup/pgdn scroll  {} back to the grid  {} help",
                k(Action::Label),
                k(Action::Cancel),
                k(Action::Help)
            )
        } else {
            format!(
                " ↑↓ evaluator  ←→ judge  {} disagreements  {} back  {} help",
                k(Action::Toggle),
                k(Action::Cancel),
                k(Action::Help)
            )
        };
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        f.render_widget(Paragraph::new(self.title(t)), title);
        match &self.trial {
            None => f.render_widget(
                Paragraph::new(Line::styled(" reading…", t.muted())),
                body,
            ),
            Some(trial) if trial.judges.is_empty() => f.render_widget(
                Paragraph::new(vec![
                    Line::styled(" No judge verdicts are stored yet.", t.base()),
                    Line::styled(
                        " prism score --run RUN --judge a,b --judge-repeats 3 asks each judge three times and keeps every verdict;",
                        t.muted(),
                    ),
                    Line::styled(
                        " L in the compare screen (or prism labels) records people's verdicts to measure them against.",
                        t.muted(),
                    ),
                ])
                .wrap(Wrap { trim: false }),
                body,
            ),
            Some(trial) => {
                // Borders, the header and the legend around the rows.
                let grid_h = (trial.groups.len() as u16 + 4).min(body.height / 2).max(5);
                let [grid, below] =
                    Layout::vertical([Constraint::Length(grid_h), Constraint::Min(3)]).areas(body);
                self.draw_grid(f, grid, t, trial);
                if self.disputed.is_some() {
                    self.draw_disputed(f, below, cx);
                } else {
                    self.draw_details(f, below, t, trial);
                }
            }
        }
        status_lines(f, status, t, cx.notice, &hints);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A kappa's colour: good agreement (0.6 and over, "substantial" on Landis and Koch's scale),
/// moderate (0.4 to 0.6), else poor.
fn kappa_style(t: &Theme, k: f64) -> Style {
    if k >= 0.6 {
        t.success()
    } else if k >= 0.4 {
        t.warning()
    } else {
        t.error()
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| fixed(v, 2))
}

fn est(e: &Est) -> String {
    match (e.value, e.low, e.high) {
        (Some(v), Some(a), Some(b)) => {
            format!("{} [{}, {}]", fixed(v, 2), fixed(a, 2), fixed(b, 2))
        }
        (v, _, _) => num(v),
    }
}

impl Judges {
    fn title(&self, t: &Theme) -> Line<'static> {
        let scope = match &self.run {
            Some(r) => format!("run {}", one_line(r)),
            None => "every run".into(),
        };
        let mut spans = vec![
            Span::styled(" judges on trial ", t.base().add_modifier(Modifier::BOLD)),
            Span::styled(scope, t.muted()),
        ];
        // Whose disagreements are listed first: the title is cut at the right.
        if let Some(d) = &self.disputed {
            spans.push(Span::styled(
                format!(
                    " · {} vs people on {}: {}/{}",
                    one_line(&d.judge),
                    one_line(&d.group),
                    d.pos + 1,
                    d.answers.len()
                ),
                t.accent(),
            ));
        }
        if let Some(trial) = &self.trial {
            // The cells count answers both a judge and people decided: said here beside all
            // that people labelled (rule-scored answers and "can't tell" have no cell).
            let all = trial.groups.first();
            spans.push(Span::styled(
                format!(
                    " · {} judged answers, {} of them with people's verdict · people decided {} in all, {} can't tell",
                    all.map_or(0, |g| g.judged),
                    all.map_or(0, |g| g.labelled),
                    trial.people.decided,
                    trial.people.cant_tell
                ),
                t.muted(),
            ));
        }
        title_line(t, spans)
    }

    fn draw_grid(&self, f: &mut Frame, area: Rect, t: &Theme, trial: &Trial) {
        let name_w = trial
            .groups
            .iter()
            .map(|g| g.name.chars().count())
            .max()
            .unwrap_or(3)
            .clamp(9, 22);
        let col_w = 16usize;
        let mut head = vec![Span::styled(
            format!(" {:<name_w$} {:>6} ", "evaluator", "n"),
            t.muted(),
        )];
        for j in &trial.judges {
            head.push(Span::styled(
                format!("{:>col_w$}", truncate(&one_line(j), col_w - 1)),
                t.muted(),
            ));
        }
        // The judges among themselves, where the width allows (else in the details below).
        let among = name_w + 9 + trial.judges.len() * col_w + 22 <= area.width as usize;
        if among {
            head.push(Span::styled(format!("{:>14}", "among: Fleiss"), t.muted()));
            head.push(Span::styled(format!("{:>8}", "α"), t.muted()));
        }
        let mut lines = vec![Line::from(head)];
        let visible = area.height.saturating_sub(4) as usize;
        let start = self.row.saturating_sub(visible.saturating_sub(1));
        for (r, g) in trial.groups.iter().enumerate().skip(start).take(visible) {
            let mut spans = vec![Span::styled(
                format!(
                    " {:<name_w$} {:>6} ",
                    truncate(&one_line(&g.name), name_w),
                    g.labelled
                ),
                if r == self.row { t.accent() } else { t.base() },
            )];
            for (c, v) in g.vs_people.iter().enumerate() {
                let text = match v.kappa.value {
                    _ if v.too_few => format!("- (n {})", v.n),
                    Some(k) => format!("κ {} (n {})", fixed(k, 2), v.n),
                    None => format!("κ - (n {})", v.n),
                };
                let mut style = match v.kappa.value {
                    Some(k) if !v.too_few => kappa_style(t, k),
                    _ => t.muted(),
                };
                if r == self.row && c == self.col && self.disputed.is_none() {
                    style = t.selected(true);
                } else if r == self.row && c == self.col {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                spans.push(Span::raw(" "));
                spans.push(Span::styled(format!("{:>w$}", text, w = col_w - 1), style));
            }
            if among {
                spans.push(Span::styled(
                    format!("{:>14}", num(g.among.fleiss_kappa)),
                    t.base(),
                ));
                spans.push(Span::styled(
                    format!("{:>8}", num(g.among.krippendorff_alpha)),
                    t.base(),
                ));
            }
            lines.push(Line::from(spans));
        }
        lines.push(Line::styled(
            format!(
                " κ: the judge against people (1 perfect, 0 chance, below 0 worse than chance) · n: answers both decided (\"can't tell\" left out); - under {} · {}",
                trial.min_labels,
                if among {
                    "Fleiss and α: the judges among themselves"
                } else {
                    "the judges among themselves: below, per row"
                }
            ),
            t.muted(),
        ));
        f.render_widget(
            Paragraph::new(lines).block(pane(t, Line::from(" each judge against people "), true)),
            area,
        );
    }

    /// The chosen cell in full, the row's flips, and what the judge moves in each model.
    fn draw_details(&self, f: &mut Frame, area: Rect, t: &Theme, trial: &Trial) {
        let mut lines = Vec::new();
        if let (Some(g), Some(c)) = (self.group(), self.cell()) {
            lines.push(Line::from(vec![
                Span::styled(
                    format!(" {} on {}", one_line(&c.judge), one_line(&g.name)),
                    t.accent(),
                ),
                Span::styled(
                    format!(
                        "  over {} answers both decided{}",
                        c.n,
                        if c.too_few { " (too few)" } else { "" }
                    ),
                    t.muted(),
                ),
            ]));
            if c.too_few {
                // As `prism judges`: no agreement read from a handful of labels.
                lines.push(Line::styled(
                    format!(
                        "   too few labels to measure it (fewer than {}): L labels more",
                        trial.min_labels
                    ),
                    t.warning(),
                ));
            } else {
                lines.push(Line::raw(format!(
                    "   accuracy {} (always the commoner verdict: {})   kappa {}   (95% bootstrap intervals)",
                    est(&c.accuracy),
                    num(c.constant_accuracy),
                    est(&c.kappa)
                )));
                lines.push(Line::raw(format!(
                    "   people call {} hallucinated · AC1 {}  PABAK {} (they hold up where kappa collapses on one-sided labels; kappa 0 is chance, 1 perfect)",
                    c.base_rate
                        .map_or("-".into(), |b| format!("{}%", fixed(100.0 * b, 0))),
                    est(&c.ac1),
                    num(c.pabak.value)
                )));
            }
            if let Some((_, st)) = self.standings.iter().find(|(j, _)| *j == c.judge) {
                let style = if st.trusted() {
                    t.success()
                } else {
                    t.warning()
                };
                lines.push(Line::styled(
                    format!("   calibration: {}", one_line(&st.say())),
                    style,
                ));
            }
            lines.push(Line::raw(format!(
                "   judge correct / people hallucinated {}   judge hallucinated / people correct {}   both hallucinated {}   both correct {}",
                c.judge_correct_people_hallucinated,
                c.judge_hallucinated_people_correct,
                c.both_hallucinated,
                c.both_correct
            )));
            let flips: Vec<String> = g
                .flips
                .iter()
                .map(|fl| match fl.share {
                    Some(s) => format!(
                        "{} {}/{} ({}%)",
                        one_line(&fl.judge),
                        fl.flipped,
                        fl.n,
                        fixed(100.0 * s, 0)
                    ),
                    None => format!("{} - (asked once)", one_line(&fl.judge)),
                })
                .collect();
            lines.push(Line::raw(format!(
                "   flips when asked again: {}",
                flips.join("   ")
            )));
            lines.push(Line::raw(format!(
                "   among the judges: {} answers, Fleiss' kappa {}, Krippendorff's alpha {}",
                g.among.n,
                num(g.among.fleiss_kappa),
                num(g.among.krippendorff_alpha)
            )));
        }
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            " What the choice of judge moves (H-Score as stored, and under each judge alone):",
            t.muted(),
        ));
        for m in &trial.models {
            let readings: Vec<String> = m
                .readings
                .iter()
                .map(|r| format!("{} {}", one_line(&r.under), num(r.h_score)))
                .collect();
            let spread = m
                .spread()
                .map(|(what, s)| format!("  → the judge moves {what} by {} points", fixed(s, 1)))
                .unwrap_or_default();
            lines.push(Line::raw(format!(
                "   {:<16} {}{spread}",
                truncate(&one_line(&m.model), 16),
                readings.join("   ")
            )));
        }
        f.render_widget(
            Paragraph::new(lines)
                .block(pane(t, Line::from(" the chosen cell "), false))
                .wrap(Wrap { trim: false }),
            area,
        );
    }

    fn draw_disputed(&self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let Some(d) = &self.disputed else { return };
        let [list, detail] =
            Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
        let visible = list.height.saturating_sub(2) as usize;
        let start = d.pos.saturating_sub(visible.saturating_sub(1));
        let rows: Vec<Line> = d
            .answers
            .iter()
            .enumerate()
            .skip(start)
            .take(visible)
            .map(|(i, (run, job))| {
                let style = if i == d.pos {
                    t.selected(true)
                } else {
                    t.base()
                };
                // The item names the answer; the run and job tell answers of one item apart.
                let name = match d.items.get(i) {
                    Some(item) => format!(" {} #{job}", truncate(&one_line(item), 24)),
                    None => format!(" {} #{job}", truncate(&one_line(run), 22)),
                };
                Line::styled(name, style)
            })
            .collect();
        f.render_widget(
            Paragraph::new(rows).block(pane(t, Line::from(" disagreements "), false)),
            list,
        );
        let lines = match &d.shown {
            None => vec![Line::styled(" reading…", t.muted())],
            Some(a) => answer_lines(a, cx),
        };
        f.render_widget(
            Paragraph::new(lines)
                .block(pane(t, Line::from(" the answer "), true))
                .wrap(Wrap { trim: false })
                .scroll((d.scroll, 0)),
            detail,
        );
    }
}

/// The answer with its item, every judge's verdicts and every person's label. Every text from
/// the store or a model is stripped of control sequences before it is drawn.
fn answer_lines(a: &JudgedAnswer, cx: &Cx) -> Vec<Line<'static>> {
    let t = cx.theme;
    let mut lines = vec![Line::from(vec![
        Span::styled(one_line(&a.item_id), t.accent()),
        Span::styled(
            format!("  {}  {}", one_line(&a.task_id), one_line(&a.model)),
            t.muted(),
        ),
    ])];
    match cx.ds.item_by_id(&a.item_id) {
        Some(item) => {
            lines.push(Line::raw(format!(
                "question   {}",
                sanitize(&item.question)
            )));
            if let Some(r) = &item.answer {
                lines.push(Line::styled(
                    format!("reference  {}", sanitize(r)),
                    t.muted(),
                ));
            }
        }
        None => lines.push(Line::styled(
            "(the item is not in the dataset open here)",
            t.muted(),
        )),
    }
    lines.push(Line::raw(""));
    match (&a.text, &a.error) {
        (Some(text), _) => {
            lines.push(Line::styled("answer", t.muted()));
            lines.extend(sanitize(text).lines().map(|l| Line::raw(l.to_string())));
        }
        (None, Some(e)) => lines.push(Line::styled(format!("failed: {}", sanitize(e)), t.error())),
        (None, None) => lines.push(Line::styled("(no answer)", t.muted())),
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("judges", t.muted()));
    for v in &a.verdicts {
        let (what, style) = match v.hallucinated() {
            Some(true) => ("hallucinated", t.error()),
            Some(false) => ("correct", t.success()),
            None => ("no verdict", t.muted()),
        };
        lines.push(Line::from(vec![
            Span::raw(format!("  {} #{} ", one_line(&v.judge), v.repeat + 1)),
            Span::styled(what, style),
            Span::styled(
                format!(
                    "  {}{}",
                    v.score
                        .map_or(String::new(), |s| format!("score {} ", fixed(s, 2))),
                    one_line(&sanitize(&v.detail))
                ),
                t.muted(),
            ),
        ]));
        // A reply that says two things or none is marked (verdicts stored before the mark
        // went into their detail get it here).
        if let Some(m) = crate::eval::judge::reply_mark(&v.evaluator, v.reply.as_deref())
            && !v.detail.contains(m)
        {
            lines.push(Line::styled(format!("    ⚠ {m}"), t.warning()));
        }
        if let Some(reply) = &v.reply {
            lines.push(Line::styled(
                format!("    {}", one_line(&sanitize(reply))),
                t.muted(),
            ));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("people", t.muted()));
    if a.labels.is_empty() {
        lines.push(Line::styled("  (no label)", t.muted()));
    }
    for l in &a.labels {
        let style = match l.label.hallucinated() {
            Some(true) => t.error(),
            Some(false) => t.success(),
            None => t.muted(),
        };
        lines.push(Line::from(vec![
            Span::raw(format!(
                "  {} {} ",
                crate::store::format_time(l.created_at.div_euclid(1000)),
                one_line(&l.reviewer)
            )),
            Span::styled(l.label.words(), style),
            Span::styled(
                if l.note.is_empty() {
                    String::new()
                } else {
                    format!("  {}", one_line(&sanitize(&l.note)))
                },
                t.muted(),
            ),
        ]));
    }
    lines
}
