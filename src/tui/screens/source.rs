//! A run imported from another tool, in that tool's own tree (`o` on it in the runs screen):
//! its tasks and the samples' categories, each with a hallucination rate per model made from
//! the tool's own scores (100 × (1 − mean), as prism's rates read; the cell coloured as the
//! heatmap colours rates), then the node's samples, and the chosen sample as the tool had it:
//! input, target, each model's answer and the tool's verdict. Samples that are items of the
//! release open here too; `p` opens those in the compare screen, with PRISM's own scores.

use std::collections::BTreeMap;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::text::{one_line, sanitize};
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::jobs::runs::{SourceAnswer, SourceRun};
use crate::tui::keymap::{Action, Mode};
use crate::tui::widgets::{fit, pane, status_lines, status_rows, title_line, truncate};

/// A node of the tool's tree: a task, or a category under it.
#[derive(Debug, Clone, PartialEq)]
struct Node {
    task: String,
    category: Option<String>,
    /// Indices into the answers, ordered by sample then model.
    answers: Vec<usize>,
    /// Its samples, each once.
    samples: usize,
    /// Per model (in `Source::models` order), the rate the tool's scores make (`None`: the
    /// tool scored none of its answers); made once when the run loads, not per frame.
    rates: Vec<Option<f64>>,
}

pub struct Source {
    run: String,
    answers: Vec<SourceAnswer>,
    models: Vec<String>,
    nodes: Vec<Node>,
    node: usize,
    sample: usize,
    on_samples: bool,
    scroll: u16,
    loaded: bool,
}

impl Source {
    pub fn new(run: String) -> Source {
        Source {
            run,
            answers: Vec::new(),
            models: Vec::new(),
            nodes: Vec::new(),
            node: 0,
            sample: 0,
            on_samples: false,
            scroll: 0,
            loaded: false,
        }
    }

    fn set(&mut self, answers: Vec<SourceAnswer>) {
        let mut models: Vec<String> = answers.iter().map(|a| a.model.clone()).collect();
        models.sort();
        models.dedup();
        let mut tree: BTreeMap<(String, Option<String>), Vec<usize>> = BTreeMap::new();
        for (i, a) in answers.iter().enumerate() {
            let task = format!("{}/{}", a.source.tool, a.source.task);
            tree.entry((task.clone(), None)).or_default().push(i);
            if let Some(c) = &a.source.category {
                tree.entry((task, Some(c.clone()))).or_default().push(i);
            }
        }
        self.nodes = tree
            .into_iter()
            .map(|((task, category), mut idx)| {
                idx.sort_by(|&x, &y| {
                    let (a, b) = (&answers[x], &answers[y]);
                    (&a.source.sample_id, a.source.epoch, &a.model).cmp(&(
                        &b.source.sample_id,
                        b.source.epoch,
                        &b.model,
                    ))
                });
                let mut ids: Vec<&str> = idx
                    .iter()
                    .map(|&i| answers[i].source.sample_id.as_str())
                    .collect();
                ids.dedup();
                let rates = models.iter().map(|m| rate(&answers, &idx, m)).collect();
                Node {
                    task,
                    category,
                    samples: ids.len(),
                    answers: idx,
                    rates,
                }
            })
            .collect();
        self.models = models;
        self.answers = answers;
        self.loaded = true;
        self.node = self.node.min(self.nodes.len().saturating_sub(1));
        self.sample = 0;
    }

    /// The chosen node's answers (what its sample list and the sample pane look in).
    fn node_answers(&self) -> impl Iterator<Item = &SourceAnswer> {
        self.nodes
            .get(self.node)
            .into_iter()
            .flat_map(|n| n.answers.iter().map(|&i| &self.answers[i]))
    }

    /// The samples of the chosen node: (sample id, epoch) in order, each once.
    fn samples(&self) -> Vec<(&str, u32)> {
        let mut out: Vec<(&str, u32)> = Vec::new();
        if let Some(n) = self.nodes.get(self.node) {
            for &i in &n.answers {
                let s = &self.answers[i].source;
                let key = (s.sample_id.as_str(), s.epoch);
                if out.last() != Some(&key) {
                    out.push(key);
                }
            }
        }
        out
    }

    /// The release's items among the run's samples (what `p` opens in the compare screen).
    fn release_items(&self, cx: &Cx) -> Vec<usize> {
        let mut items: Vec<usize> = self
            .answers
            .iter()
            .filter_map(|a| cx.ds.index_of(&a.source.sample_id))
            .collect();
        items.sort_unstable();
        items.dedup();
        items
    }
}

/// The hallucination rate `model`'s answers among `idx` make from the tool's scores (100 × (1 −
/// mean)), none when the tool scored none of them.
fn rate(answers: &[SourceAnswer], idx: &[usize], model: &str) -> Option<f64> {
    let scores: Vec<f64> = idx
        .iter()
        .map(|&i| &answers[i])
        .filter(|a| a.model == model)
        .filter_map(|a| a.source.score)
        .collect();
    (!scores.is_empty()).then(|| 100.0 * (1.0 - scores.iter().sum::<f64>() / scores.len() as f64))
}

impl Component for Source {
    fn id(&self) -> ScreenId {
        ScreenId::Source
    }
    fn mode(&self) -> Mode {
        Mode::Source
    }
    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        vec![Cmd::job(crate::tui::jobs::runs::LoadSource {
            run: self.run.clone(),
        })]
    }
    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        let Input::Action(a) = input else {
            return Vec::new();
        };
        let samples = self.samples().len();
        match a {
            Action::Up if self.on_samples => {
                self.sample = self.sample.saturating_sub(1);
                self.scroll = 0;
            }
            Action::Down if self.on_samples => {
                self.sample = (self.sample + 1).min(samples.saturating_sub(1));
                self.scroll = 0;
            }
            Action::Up => {
                self.node = self.node.saturating_sub(1);
                (self.sample, self.scroll) = (0, 0);
            }
            Action::Down => {
                self.node = (self.node + 1).min(self.nodes.len().saturating_sub(1));
                (self.sample, self.scroll) = (0, 0);
            }
            Action::NextPane | Action::PrevPane | Action::Toggle => {
                self.on_samples = !self.on_samples;
            }
            Action::PageUp | Action::PageDown => {
                self.scroll = crate::tui::nav::page(self.scroll, a).unwrap_or(self.scroll);
            }
            Action::OpenRun => {
                let items = self.release_items(cx);
                if items.is_empty() {
                    return vec![Cmd::Notice(
                        "none of the run's samples is an item of the dataset open here".into(),
                    )];
                }
                return vec![Cmd::Push(crate::tui::component::Open::RunAnswers {
                    run: self.run.clone(),
                    items,
                })];
            }
            Action::Cancel | Action::Back => return vec![Cmd::Pop],
            Action::Quit => return vec![Cmd::Quit],
            Action::Help => {
                return vec![Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                    Mode::Source,
                )))];
            }
            _ => {}
        }
        Vec::new()
    }
    fn on_msg(&mut self, msg: &Msg, _cx: &Cx) -> Vec<Cmd> {
        if let Some(SourceRun { run, answers }) = msg.get()
            && *run == self.run
        {
            self.set(answers.clone());
        }
        Vec::new()
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Source, a);
        let hints = format!(
            " ↑↓ move  {} tree/samples  {}/{} scroll  {} the release's items  {} back  {} help",
            k(Action::NextPane),
            k(Action::PageUp),
            k(Action::PageDown),
            k(Action::OpenRun),
            k(Action::Back),
            k(Action::Help)
        );
        let [title, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(4),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        let tool = self
            .answers
            .first()
            .map(|a| a.source.tool.clone())
            .unwrap_or_default();
        f.render_widget(
            Paragraph::new(title_line(
                t,
                vec![
                    Span::styled(" imported run ", t.base().add_modifier(Modifier::BOLD)),
                    Span::styled(
                        format!(
                            "{} · {} answers · rates from {}'s own scores",
                            one_line(&self.run),
                            self.answers.len(),
                            one_line(&tool)
                        ),
                        t.muted(),
                    ),
                ],
            )),
            title,
        );
        if !self.loaded {
            f.render_widget(Paragraph::new(" loading…").style(t.muted()), body);
        } else if self.answers.is_empty() {
            f.render_widget(
                Paragraph::new(" this run was not imported from another tool's log")
                    .style(t.muted()),
                body,
            );
        } else {
            let [tree, right] =
                Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                    .areas(body);
            self.draw_tree(cx, f, tree);
            let [list, detail] =
                Layout::vertical([Constraint::Percentage(35), Constraint::Min(4)]).areas(right);
            self.draw_samples(cx, f, list);
            self.draw_sample(cx, f, detail);
        }
        status_lines(f, status, t, cx.notice, &hints);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Source {
    fn draw_tree(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let block = pane(
            t,
            Line::from(" the tool's tree · H% per model "),
            !self.on_samples,
        );
        let inner = block.inner(area);
        f.render_widget(block, area);
        let col = 7usize;
        let name_w = (inner.width as usize)
            .saturating_sub(5 + col * self.models.len())
            .max(8);
        let mut head = vec![Span::styled(
            format!("{:<name_w$}{:>5}", "", "n"),
            t.muted(),
        )];
        for m in &self.models {
            head.push(Span::styled(
                format!("{:>col$}", truncate(&one_line(m), col - 1)),
                t.muted(),
            ));
        }
        let mut lines = vec![Line::from(head)];
        let rows = (inner.height as usize).saturating_sub(1);
        let start = fit(self.node, self.node.saturating_sub(rows / 2), rows);
        for (i, n) in self.nodes.iter().enumerate().skip(start).take(rows) {
            let label = match &n.category {
                None => one_line(&n.task),
                Some(c) => format!("  {}", one_line(c)),
            };
            let style = if i == self.node {
                t.selected(!self.on_samples)
            } else {
                t.base()
            };
            let mut spans = vec![Span::styled(
                format!("{:<name_w$}{:>5}", truncate(&label, name_w), n.samples),
                style,
            )];
            for rate in &n.rates {
                let cell = match *rate {
                    Some(r) => Span::styled(format!("{r:>col$.1}"), Style::default().fg(t.heat(r))),
                    None => Span::styled(format!("{:>col$}", "-"), t.muted()),
                };
                spans.push(cell);
            }
            lines.push(Line::from(spans));
        }
        f.render_widget(Paragraph::new(lines), inner);
    }

    fn draw_samples(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let samples = self.samples();
        let block = pane(
            t,
            Line::from(format!(" samples {} ", samples.len())),
            self.on_samples,
        );
        let inner = block.inner(area);
        f.render_widget(block, area);
        let rows = inner.height as usize;
        let start = fit(self.sample, self.sample.saturating_sub(rows / 2), rows);
        let w = inner.width as usize;
        let lines: Vec<Line> = samples
            .iter()
            .enumerate()
            .skip(start)
            .take(rows)
            .map(|(i, (id, epoch))| {
                let input = self
                    .node_answers()
                    .find(|a| a.source.sample_id == *id && a.source.epoch == *epoch)
                    .map(|a| a.source.input.as_str())
                    .unwrap_or_default();
                let shown = if *epoch > 1 {
                    format!("{id} (epoch {epoch})")
                } else {
                    id.to_string()
                };
                let style = if i == self.sample {
                    t.selected(self.on_samples)
                } else {
                    t.base()
                };
                Line::styled(
                    truncate(&format!("{}  {}", one_line(&shown), one_line(input)), w),
                    style,
                )
            })
            .collect();
        f.render_widget(Paragraph::new(lines), inner);
    }

    /// The chosen sample as the tool had it: input, target, each model's answer and verdict.
    fn draw_sample(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let samples = self.samples();
        let block = pane(t, Line::from(" the sample "), false);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some((id, epoch)) = samples.get(self.sample).copied() else {
            return;
        };
        let these: Vec<&SourceAnswer> = self
            .node_answers()
            .filter(|a| a.source.sample_id == id && a.source.epoch == epoch)
            .collect();
        let Some(first) = these.first() else {
            return;
        };
        let mut lines = vec![Line::styled(one_line(id), t.accent())];
        for l in sanitize(&first.source.input).lines() {
            lines.push(Line::styled(l.to_string(), t.base()));
        }
        if let Some(target) = &first.source.target {
            lines.push(Line::styled(
                format!("target  {}", one_line(target)),
                t.muted(),
            ));
        }
        let choices = first.source.choice_list();
        if !choices.is_empty() {
            lines.push(Line::styled(
                format!("choices  {}", one_line(&choices.join(" | "))),
                t.muted(),
            ));
        }
        for a in these {
            lines.push(Line::default());
            let verdict = a.source.verdict().unwrap_or_else(|| "no score".into());
            let style = match a.source.score {
                Some(s) if s >= 0.5 => t.success(),
                Some(_) => t.error(),
                None => t.muted(),
            };
            lines.push(Line::from(vec![
                Span::styled(format!("── {} ", one_line(&a.model)), t.accent()),
                Span::styled(one_line(&verdict), style),
            ]));
            match (&a.text, &a.error) {
                (Some(text), _) => {
                    for l in sanitize(text).lines() {
                        lines.push(Line::styled(l.to_string(), t.base()));
                    }
                }
                (None, Some(e)) => lines.push(Line::styled(one_line(e), t.error())),
                (None, None) => lines.push(Line::styled("(no answer kept)", t.muted())),
            }
            if let Some(e) = &a.source.explanation {
                lines.push(Line::styled(
                    format!("the tool's reason: {}", one_line(e)),
                    t.muted(),
                ));
            }
        }
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0)),
            inner,
        );
    }
}
