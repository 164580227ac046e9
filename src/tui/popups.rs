//! Popups: the help overlay (the keys of the screen it was opened from), the problems found while
//! loading, the run picker (models and samples per item), and the heatmap's rank correlations.
//! Each is a component on the popup stack, drawn over the screen below and given input first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Row, Table, Wrap};

use super::component::{Cmd, Component, Cx, Input, Open, ScreenId};
use super::keymap::{Action, Mode};
use super::widgets::{pane, popup_area};
use crate::report::Report;
use crate::taxonomy::Dimension;
use crate::text::one_line;

mod label;
mod name_run;
pub(crate) use label::LabelAnswer;
pub(crate) use name_run::NameRun;

/// A scrolling popup's input: `closes` close it, other actions and the wheel scroll it.
fn scrolling(s: &mut u16, input: Input, closes: &[Action]) -> Vec<Cmd> {
    use crossterm::event::MouseEventKind;
    match input {
        Input::Action(a) if closes.contains(&a) => return vec![Cmd::ClosePopup],
        Input::Action(a) => *s = super::nav::scroll(*s, a).unwrap_or(*s),
        Input::Mouse(m) => match m.kind {
            MouseEventKind::ScrollDown => *s = s.saturating_add(3),
            MouseEventKind::ScrollUp => *s = s.saturating_sub(3),
            _ => {}
        },
        _ => {}
    }
    Vec::new()
}

/// The keys of one mode.
pub(crate) struct Help {
    of: Mode,
    scroll: u16,
}

impl Help {
    pub(crate) fn new(of: Mode) -> Help {
        Help { of, scroll: 0 }
    }
}

impl Component for Help {
    fn id(&self) -> ScreenId {
        ScreenId::Help
    }
    fn mode(&self) -> Mode {
        Mode::Help
    }
    fn is_overlay(&self) -> bool {
        true
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        scrolling(
            &mut self.scroll,
            input,
            &[Action::Help, Action::Cancel, Action::Quit],
        )
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let rows = cx.keymap.help_rows(self.of);
        // As wide as the longest description needs (up to the screen), and a description that
        // still does not fit wraps onto more lines: never cut.
        const KEYS_W: u16 = 20;
        let longest = rows
            .iter()
            .map(|(_, d)| unicode_width::UnicodeWidthStr::width(*d))
            .max()
            .unwrap_or(0) as u16;
        let want = (KEYS_W + 1 + longest + 2).max(72);
        let w = want.min(area.width.saturating_sub(2));
        let desc_w = w.saturating_sub(KEYS_W + 1 + 2).max(10) as usize;
        let wrapped: Vec<(String, Vec<String>)> = rows
            .into_iter()
            .map(|(k, d)| (k, crate::text::wrap(d, desc_w)))
            .collect();
        let lines: u16 = wrapped.iter().map(|(_, d)| d.len() as u16).sum();
        let r = popup_area(area, w, lines + 6);
        f.render_widget(Clear, r);
        let block = pane(
            t,
            Line::from(format!(" Keys: {} (esc to close) ", self.of.title())),
            true,
        );
        let inner = block.inner(r);
        f.render_widget(block, r);
        let heights: Vec<u16> = wrapped.iter().map(|(_, d)| d.len() as u16).collect();
        let skipped: u16 = heights.iter().take(self.scroll as usize).sum();
        let [table_area, foot] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
        let table_rows: Vec<Row> = wrapped
            .into_iter()
            .skip(self.scroll as usize)
            // Whole rows only: a description is never cut off at the bottom.
            .scan(0u16, |used, row| {
                *used += row.1.len() as u16;
                (*used <= table_area.height).then_some(row)
            })
            .map(|(keys, desc)| {
                let h = desc.len() as u16;
                let desc: Vec<Line> = desc
                    .into_iter()
                    .map(|l| Line::styled(l, t.base()))
                    .collect();
                Row::new(vec![
                    Text::from(Span::styled(keys, t.accent())),
                    Text::from(desc),
                ])
                .height(h)
            })
            .collect();
        f.render_widget(
            Table::new(
                table_rows,
                [Constraint::Length(KEYS_W), Constraint::Min(10)],
            )
            .style(t.base()),
            table_area,
        );
        // More than fits (80x24): a scroll bar, and the first foot line says how much more.
        let mut shown = 0u16;
        for &d in heights.iter().skip(self.scroll as usize) {
            if shown + d > table_area.height {
                break;
            }
            shown += d;
        }
        let below = lines.saturating_sub(skipped + shown);
        super::widgets::scrollbar(
            f,
            r,
            lines as usize,
            skipped as usize,
            table_area.height as usize,
        );
        let more = if below > 0 {
            Line::styled(
                format!(
                    "↓ {below} more line{} ({} or pgdn)",
                    if below == 1 { "" } else { "s" },
                    cx.keymap.hint(Mode::Help, Action::Down)
                ),
                t.accent(),
            )
        } else {
            Line::raw("")
        };
        f.render_widget(
            Paragraph::new(Text::from(vec![
                more,
                Line::styled(
                    "Mouse: wheel scrolls the pane under it; click selects; click again opens.",
                    t.muted(),
                ),
            ])),
            foot,
        );
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Every problem found while loading the dataset.
#[derive(Default)]
pub(crate) struct Problems {
    scroll: u16,
}

impl Component for Problems {
    fn id(&self) -> ScreenId {
        ScreenId::Problems
    }
    fn mode(&self) -> Mode {
        Mode::Problems
    }
    fn is_overlay(&self) -> bool {
        true
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        scrolling(
            &mut self.scroll,
            input,
            &[Action::Problems, Action::Cancel, Action::Quit],
        )
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let r = popup_area(
            area,
            area.width.saturating_sub(8),
            area.height.saturating_sub(4),
        );
        f.render_widget(Clear, r);
        let n = cx.problems.len();
        let block = pane(
            t,
            Line::from(format!(
                " {n} problem{} found while loading (esc to close) ",
                if n == 1 { "" } else { "s" }
            )),
            true,
        );
        let lines: Vec<Line> = if cx.problems.is_empty() {
            vec![Line::styled("Every line loaded. No problems.", t.success())]
        } else {
            cx.problems
                .iter()
                .map(|p| {
                    Line::styled(
                        one_line(&p.to_string()),
                        if p.is_error() { t.error() } else { t.warning() },
                    )
                })
                .collect()
        };
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0))
                .block(block),
            r,
        );
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The most samples per item the picker offers.
pub(crate) const MAX_SAMPLES: u32 = 20;
/// Triples a self-detection run from the TUI starts with (six calls or more each; +/- change it).
pub(crate) const SELFCHECK_TRIPLES: usize = 10;

/// What the chosen models will do.
#[derive(Debug, Clone)]
pub(crate) enum PickFor {
    /// Answer items, `samples` answers each.
    Run { items: Vec<usize> },
    /// Detect contradictions in the models' answers to items, K samples each.
    DetectItems { items: Vec<usize> },
    /// AutoHall on claims, K samples each.
    DetectClaims {
        set: std::sync::Arc<crate::dataset::claims::ClaimSet>,
        claims: Vec<usize>,
        dataset: String,
        temperature: f64,
    },
    /// Self-detection over a triple set; `samples` is how many triples (taken in turn from
    /// each relation).
    Selfcheck {
        set: std::sync::Arc<crate::dataset::triples::TripleSet>,
        dataset: String,
        /// False sentences by swapping the object (else written by the model).
        swap: bool,
    },
    /// Only choose (the claims screen's `r`).
    Choose,
}

/// Choose the models of a run or a detection, and how many answers (samples) each gives per
/// item (K, for a detection).
pub(crate) struct Picker {
    purpose: PickFor,
    chosen: Vec<bool>,
    pub cursor: usize,
    pub samples: u32,
}

impl Picker {
    pub(crate) fn new(items: Vec<usize>, chosen: Vec<bool>) -> Picker {
        Picker::for_purpose(PickFor::Run { items }, chosen)
    }

    pub(crate) fn for_purpose(purpose: PickFor, chosen: Vec<bool>) -> Picker {
        let samples = match &purpose {
            PickFor::Run { .. } | PickFor::Choose => 1,
            PickFor::Selfcheck { set, .. } => set.triples.len().min(SELFCHECK_TRIPLES) as u32,
            _ => crate::tui::jobs::detect::DETECT_K,
        };
        Picker {
            purpose,
            chosen,
            cursor: 0,
            samples,
        }
    }
}

impl Component for Picker {
    fn id(&self) -> ScreenId {
        ScreenId::Picker
    }
    fn mode(&self) -> Mode {
        Mode::Picker
    }
    fn is_overlay(&self) -> bool {
        true
    }
    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        let Input::Action(a) = input else {
            return Vec::new();
        };
        let n = cx.models.len();
        self.chosen.resize(n, false);
        match a {
            Action::Up => self.cursor = self.cursor.saturating_sub(1),
            Action::Down => self.cursor = (self.cursor + 1).min(n.saturating_sub(1)),
            Action::Mark => {
                if let Some(c) = self.chosen.get_mut(self.cursor) {
                    *c = !*c;
                }
                return vec![Cmd::Choose(self.chosen.clone())];
            }
            Action::MoreSamples => {
                self.samples = match &self.purpose {
                    PickFor::Selfcheck { set, .. } => {
                        let step = if self.samples >= 10 { 10 } else { 1 };
                        (self.samples + step).min(set.triples.len().max(1) as u32)
                    }
                    _ => (self.samples + 1).min(MAX_SAMPLES),
                }
            }
            Action::FewerSamples => {
                let step = match self.purpose {
                    PickFor::Selfcheck { .. } if self.samples > 10 => 10,
                    _ => 1,
                };
                self.samples = self.samples.saturating_sub(step).max(1)
            }
            Action::Toggle | Action::Run => {
                let models: Vec<_> = cx
                    .models
                    .iter()
                    .zip(&self.chosen)
                    .filter(|(_, c)| **c)
                    .map(|(m, _)| m.clone())
                    .collect();
                if models.is_empty() {
                    return vec![Cmd::Notice("choose at least one model (space)".into())];
                }
                let k = self.samples;
                let then = match &self.purpose {
                    PickFor::Run { items } => Cmd::job(crate::tui::jobs::run::Run {
                        items: items.clone(),
                        models,
                        samples: k,
                    }),
                    PickFor::DetectItems { items } => Cmd::Push(Open::Contradictions(
                        crate::tui::jobs::detect::DetectJob::Items {
                            items: items.clone(),
                            models,
                            k,
                        },
                    )),
                    PickFor::DetectClaims {
                        set,
                        claims,
                        dataset,
                        temperature,
                    } => Cmd::Job(Box::new(crate::tui::jobs::detect::DetectJob::Claims {
                        set: set.clone(),
                        claims: claims.clone(),
                        models,
                        temperature: *temperature,
                        dataset: dataset.clone(),
                        k,
                    })),
                    PickFor::Selfcheck { set, dataset, swap } => {
                        let mut subset = (**set).clone();
                        subset.spread(k as usize);
                        Cmd::job(crate::tui::jobs::selfcheck::Selfcheck {
                            set: std::sync::Arc::new(subset),
                            pool: set.clone(),
                            dataset: dataset.clone(),
                            models,
                            swap: *swap,
                        })
                    }
                    PickFor::Choose => Cmd::ClearNotice,
                };
                return vec![Cmd::ClosePopup, then];
            }
            Action::Metric => {
                if let PickFor::Selfcheck { swap, .. } = &mut self.purpose {
                    *swap = !*swap;
                }
            }
            Action::Cancel | Action::Quit => return vec![Cmd::ClosePopup],
            _ => {}
        }
        Vec::new()
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let r = popup_area(area, 76, cx.models.len() as u16 + 9);
        f.render_widget(Clear, r);
        let chosen = self.chosen.iter().filter(|c| **c).count();
        let models = format!("{chosen} model{}", if chosen == 1 { "" } else { "s" });
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let title = match &self.purpose {
            PickFor::Run { items } => format!(
                " Run {} × {models}{} ",
                plural(items.len(), "item"),
                if self.samples > 1 {
                    format!(" × {} samples", self.samples)
                } else {
                    String::new()
                }
            ),
            PickFor::DetectItems { items } => format!(
                " Detect contradictions: {} × {models}, K = {} samples ",
                plural(items.len(), "item"),
                self.samples
            ),
            PickFor::DetectClaims {
                claims,
                temperature,
                ..
            } => format!(
                " AutoHall: {} × {models}, K = {}, t = {temperature} ",
                plural(claims.len(), "claim"),
                self.samples
            ),
            PickFor::Selfcheck { .. } => format!(
                " Self-detection: {} × {models}, each judging its own ",
                plural(self.samples as usize, "triple")
            ),
            PickFor::Choose => format!(" Models: {models} chosen "),
        };
        let block = pane(t, Line::from(title), true);
        let inner = block.inner(r);
        f.render_widget(block, r);
        let name_w = name_column(cx.models);
        let mut lines: Vec<Line> = cx
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let check = if self.chosen.get(i).copied().unwrap_or(false) {
                    "[x]"
                } else {
                    "[ ]"
                };
                let key = match m.key_status() {
                    crate::provider::config::KeyStatus::Missing(v) => format!("  {v} not set"),
                    _ => String::new(),
                };
                let line = Line::from(vec![
                    Span::styled(format!("{check} "), t.accent()),
                    Span::styled(format!("{:<w$} ", one_line(&m.name), w = name_w), t.base()),
                    Span::styled(
                        format!("{} {}", m.provider.as_str(), one_line(m.model_id())),
                        t.muted(),
                    ),
                    Span::styled(key, t.error()),
                ]);
                if i == self.cursor {
                    line.style(t.selected(true))
                } else {
                    line
                }
            })
            .collect();
        let k = |a| cx.keymap.hint(Mode::Picker, a);
        lines.push(Line::raw(""));
        let what = match self.purpose {
            PickFor::Run { .. } => Some("samples per item"),
            PickFor::Selfcheck { .. } => Some("triples, each relation in turn"),
            PickFor::Choose => None,
            _ => Some("K, samples per answer (1-20)"),
        };
        if let PickFor::Selfcheck { swap, .. } = self.purpose {
            lines.push(Line::styled(
                if swap {
                    format!(
                        "false sentences: object swapped for another of its relation ({})",
                        k(Action::Metric)
                    )
                } else {
                    format!(
                        "false sentences: written by the model ({}: swap objects instead)",
                        k(Action::Metric)
                    )
                },
                t.muted(),
            ));
        }
        if let Some(what) = what {
            lines.push(Line::styled(
                format!(
                    "{what}: {}  ({}/{} to change)",
                    self.samples,
                    k(Action::FewerSamples),
                    k(Action::MoreSamples)
                ),
                t.muted(),
            ));
        }
        lines.push(Line::styled(
            format!(
                "{} choose · {} start · {} cancel",
                k(Action::Mark),
                k(Action::Toggle),
                k(Action::Cancel)
            ),
            t.muted(),
        ));
        f.render_widget(Paragraph::new(lines), inner);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Choose the judge for judged evaluators among the configured models (`u`): the choice is
/// remembered in the config and every answer waiting for a judge is scored with it.
#[derive(Default)]
pub(crate) struct JudgePicker {
    pub cursor: usize,
}

impl JudgePicker {
    /// Starts on the current judge, if it is configured.
    pub(crate) fn new(cx: &Cx) -> JudgePicker {
        JudgePicker {
            cursor: cx
                .judge
                .and_then(|j| cx.models.iter().position(|m| m.name == j))
                .unwrap_or(0),
        }
    }
}

/// The width of the model-name column: the longest name (at least 17), so a long name never
/// runs into the provider beside it.
fn name_column(models: &[crate::provider::ModelConfig]) -> usize {
    models
        .iter()
        .map(|m| unicode_width::UnicodeWidthStr::width(one_line(&m.name).as_str()))
        .max()
        .unwrap_or(0)
        .max(17)
}

/// A word on a judge this small: its verdicts are a demo's, not a measurement's.
impl Component for JudgePicker {
    fn id(&self) -> ScreenId {
        ScreenId::JudgePicker
    }
    fn mode(&self) -> Mode {
        Mode::Picker
    }
    fn is_overlay(&self) -> bool {
        true
    }
    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        let Input::Action(a) = input else {
            return Vec::new();
        };
        let n = cx.models.len();
        match a {
            Action::Up => self.cursor = self.cursor.saturating_sub(1),
            Action::Down => self.cursor = (self.cursor + 1).min(n.saturating_sub(1)),
            Action::Toggle | Action::Run | Action::Mark => {
                let Some(m) = cx.models.get(self.cursor) else {
                    return vec![
                        Cmd::ClosePopup,
                        Cmd::Notice("no models configured (models.toml) to judge with".into()),
                    ];
                };
                return vec![
                    Cmd::ClosePopup,
                    Cmd::job(crate::tui::jobs::answers::SetJudge(m.clone())),
                ];
            }
            Action::Cancel | Action::Quit => return vec![Cmd::ClosePopup],
            _ => {}
        }
        Vec::new()
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let r = popup_area(area, 76, cx.models.len() as u16 + 8);
        f.render_widget(Clear, r);
        let block = pane(t, Line::from(" Judge for judged answers "), true);
        let inner = block.inner(r);
        f.render_widget(block, r);
        let mut lines: Vec<Line> = vec![Line::styled(
            match cx.judge {
                Some(j) => format!("now: {}", one_line(j)),
                None => "now: none (judged answers wait unscored)".to_string(),
            },
            t.muted(),
        )];
        let name_w = name_column(cx.models);
        for (i, m) in cx.models.iter().enumerate() {
            let mark = if cx.judge == Some(m.name.as_str()) {
                "● "
            } else {
                "  "
            };
            // The highlight is patched onto every span: a span's own background (the name's
            // base style) would otherwise hide the line's, leaving the name column unlit.
            let sel = i == self.cursor;
            let st = |s: ratatui::style::Style| {
                if sel { s.patch(t.selected(true)) } else { s }
            };
            lines.push(Line::from(vec![
                Span::styled(mark, st(t.accent())),
                Span::styled(
                    format!("{:<w$} ", one_line(&m.name), w = name_w),
                    st(t.base()),
                ),
                Span::styled(
                    format!("{} {}", m.provider.as_str(), one_line(m.model_id())),
                    st(t.muted()),
                ),
            ]));
        }
        lines.push(Line::raw(""));
        if let Some(c) = cx
            .models
            .get(self.cursor)
            .and_then(crate::tui::jobs::answers::judge_caveat)
        {
            lines.push(Line::styled(c, t.warning()));
        }
        let k = |a| cx.keymap.hint(Mode::Picker, a);
        lines.push(Line::styled(
            format!(
                "{} judge with it (remembered in the config) · {} cancel",
                k(Action::Toggle),
                k(Action::Cancel)
            ),
            t.muted(),
        ));
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The Spearman rank correlation between dimensions over the heatmap's rows (paper Figure 4).
pub(crate) struct Correlation {
    matrix: [[Option<f64>; 4]; 4],
    rows: usize,
}

impl Correlation {
    pub(crate) fn of(rep: &Report) -> Correlation {
        Correlation {
            matrix: rep.correlations(),
            rows: rep
                .rows
                .iter()
                .filter(|r| r.dims.iter().all(|d| d.is_some_and(|d| d.complete())))
                .count(),
        }
    }
}

impl Component for Correlation {
    fn id(&self) -> ScreenId {
        ScreenId::Correlation
    }
    fn mode(&self) -> Mode {
        Mode::Correlation
    }
    fn is_overlay(&self) -> bool {
        true
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Action(Action::Spearman | Action::Cancel | Action::Back | Action::Quit) => {
                vec![Cmd::ClosePopup]
            }
            _ => Vec::new(),
        }
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let w = 46.min(area.width);
        let hgt = 10.min(area.height);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - hgt) / 2,
            w,
            hgt,
        );
        f.render_widget(Clear, r);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(true))
            .title(" Spearman ρ between dimensions ")
            .style(t.base());
        let mut lines = vec![Line::from(
            std::iter::once(Span::raw("      "))
                .chain(
                    Dimension::ALL
                        .iter()
                        .map(|d| Span::styled(format!("{:>8}", d.code()), t.muted())),
                )
                .collect::<Vec<_>>(),
        )];
        for (i, a) in Dimension::ALL.iter().enumerate() {
            let mut spans = vec![Span::styled(format!("{:<6}", a.code()), t.muted())];
            for v in self.matrix[i] {
                spans.push(Span::styled(
                    v.map_or(format!("{:>8}", "-"), |v| format!("{v:>8.2}")),
                    t.base(),
                ));
            }
            lines.push(Line::from(spans));
        }
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!(" over {} complete rows (3 needed)", self.rows),
            t.muted(),
        ));
        f.render_widget(Paragraph::new(lines).block(block), r);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
