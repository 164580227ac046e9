//! A flipped item of a comparison (`enter` on one in the runs screen): both sides' answers side
//! by side, A left and B right, each with its score. With repeats, each side first lists its
//! samples grouped by what they say (with counts), then the sample shown (`s` steps through
//! them, on both sides at once). `[`/`]` go to the previous/next flipped item.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::eval::compare::{Flip as Flipped, Side};
use crate::eval::compare::{PairAnswers, SampleAnswer, answer_groups};
use crate::text::{one_line, sanitize};
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::keymap::{Action, Mode};
use crate::tui::widgets::{pane, status_lines, status_rows, title_line, truncate};

pub struct Flip {
    flips: Vec<Flipped>,
    pos: usize,
    sides: [Side; 2],
    /// The current item's answers, once loaded (`None` while loading).
    answers: Option<PairAnswers>,
    sample: u32,
    scroll: u16,
}

impl Flip {
    pub fn new(flips: Vec<Flipped>, pos: usize, sides: [Side; 2]) -> Flip {
        let pos = pos.min(flips.len().saturating_sub(1));
        Flip {
            flips,
            pos,
            sides,
            answers: None,
            sample: 0,
            scroll: 0,
        }
    }

    /// The flipped item shown.
    pub fn current(&self) -> Option<&Flipped> {
        self.flips.get(self.pos)
    }

    fn load(&mut self) -> Vec<Cmd> {
        self.answers = None;
        self.sample = 0;
        self.scroll = 0;
        match self.current() {
            Some(f) => vec![Cmd::job(crate::tui::jobs::runs::LoadPairAnswers {
                item_id: f.item_id.clone(),
                sides: Box::new(self.sides.clone()),
            })],
            None => Vec::new(),
        }
    }

    /// The most samples either side has.
    fn samples(&self) -> u32 {
        self.answers.as_ref().map_or(0, |a| {
            a.sides.iter().map(|s| s.len() as u32).max().unwrap_or(0)
        })
    }
}

impl Component for Flip {
    fn id(&self) -> ScreenId {
        ScreenId::Flip
    }
    fn mode(&self) -> Mode {
        Mode::Flip
    }
    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        self.load()
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        let Input::Action(a) = input else {
            return Vec::new();
        };
        match a {
            Action::NextItem if self.pos + 1 < self.flips.len() => {
                self.pos += 1;
                return self.load();
            }
            Action::PrevItem if self.pos > 0 => {
                self.pos -= 1;
                return self.load();
            }
            Action::NextSample => {
                let n = self.samples();
                if n > 1 {
                    self.sample = (self.sample + 1) % n;
                    self.scroll = 0;
                }
            }
            Action::Up | Action::Down | Action::PageUp | Action::PageDown => {
                self.scroll = crate::tui::nav::scroll(self.scroll, a).unwrap_or(self.scroll);
            }
            Action::Cancel | Action::Back => return vec![Cmd::Pop],
            Action::Quit => return vec![Cmd::Quit],
            Action::Help => {
                return vec![Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                    Mode::Flip,
                )))];
            }
            _ => {}
        }
        Vec::new()
    }
    fn on_msg(&mut self, msg: &Msg, _cx: &Cx) -> Vec<Cmd> {
        if let Some(crate::tui::jobs::runs::PairAnswers(p)) = msg.get()
            && self.current().is_some_and(|f| f.item_id == p.item_id)
        {
            self.answers = Some((**p).clone());
        }
        Vec::new()
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Flip, a);
        let hints = format!(
            " {}/{} flipped item  {} sample  ↑↓ scroll  {} back  {} help",
            k(Action::PrevItem),
            k(Action::NextItem),
            k(Action::NextSample),
            k(Action::Back),
            k(Action::Help)
        );
        let [title, head, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(4),
            Constraint::Min(3),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        let (what, style) = match self.current() {
            Some(f) if f.fixed => ("fixed: wrong on A, right on B", t.success()),
            Some(_) => ("broken: right on A, wrong on B", t.error()),
            None => ("no flipped item", t.muted()),
        };
        f.render_widget(
            Paragraph::new(title_line(
                t,
                vec![
                    Span::styled(" flipped item ", t.base().add_modifier(Modifier::BOLD)),
                    Span::styled(
                        format!("{}/{} · ", self.pos + 1, self.flips.len()),
                        t.muted(),
                    ),
                    Span::styled(what, style),
                ],
            )),
            title,
        );
        self.draw_head(cx, f, head);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(body);
        self.draw_side(cx, f, left, 0);
        self.draw_side(cx, f, right, 1);
        status_lines(f, status, t, cx.notice, &hints);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Flip {
    /// The item: id, sub-task, question and reference (when the dataset open is the run's).
    fn draw_head(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let Some(flip) = self.current() else {
            return;
        };
        let w = area.width as usize;
        let mut lines = vec![Line::from(vec![
            Span::styled(one_line(&flip.item_id), t.accent()),
            Span::styled(
                format!(
                    "  {}  A {:.2} → B {:.2}",
                    one_line(&flip.task_id),
                    flip.score_a,
                    flip.score_b
                ),
                t.muted(),
            ),
        ])];
        match cx.ds.item_by_id(&flip.item_id) {
            Some(item) => {
                lines.push(Line::styled(
                    truncate(&one_line(&item.question), w),
                    t.base(),
                ));
                if let Some(r) = &item.answer {
                    lines.push(Line::styled(
                        truncate(&format!("reference  {}", one_line(r)), w),
                        t.muted(),
                    ));
                }
            }
            None => lines.push(Line::styled(
                "(the item is not in the dataset open here; the answers are the store's)",
                t.muted(),
            )),
        }
        f.render_widget(Paragraph::new(lines), area);
    }

    /// One side's pane: its samples grouped (with repeats), then the sample shown.
    fn draw_side(&self, cx: &Cx, f: &mut Frame, area: Rect, k: usize) {
        let t = cx.theme;
        let side = &self.sides[k];
        let samples: &[SampleAnswer] = self.answers.as_ref().map_or(&[], |a| &a.sides[k]);
        let shown = samples.iter().find(|s| s.sample == self.sample);
        let one = |x: Option<f64>| x.map_or("unscored".to_string(), |x| format!("{x:.2}"));
        let score = if samples.len() > 1 {
            // The item's score is the mean over its samples (what the comparison counts).
            let scored: Vec<f64> = samples.iter().filter_map(|s| s.score).collect();
            let mean = (scored.len() == samples.len())
                .then(|| scored.iter().sum::<f64>() / scored.len() as f64);
            format!(
                "mean {} · sample {}: {}",
                one(mean),
                self.sample + 1,
                one(shown.and_then(|s| s.score))
            )
        } else {
            format!("score {}", one(shown.and_then(|s| s.score)))
        };
        let title = format!(
            " {} {} · {} · {} ",
            ["A", "B"][k],
            one_line(&side.run_id),
            one_line(&side.model),
            score
        );
        let block = pane(t, Line::from(title), false);
        let inner = block.inner(area);
        f.render_widget(block, area);
        if self.answers.is_none() {
            f.render_widget(Paragraph::new("loading…").style(t.muted()), inner);
            return;
        }
        if samples.is_empty() {
            f.render_widget(
                Paragraph::new("no answer stored for this item").style(t.muted()),
                inner,
            );
            return;
        }
        let mut lines: Vec<Line> = Vec::new();
        if samples.len() > 1 {
            let groups = answer_groups(samples);
            lines.push(Line::styled(
                format!(
                    "{} samples, {} different answers:",
                    samples.len(),
                    groups.len()
                ),
                t.accent(),
            ));
            let w = (inner.width as usize).saturating_sub(8).max(8);
            for (n, text, _) in &groups {
                lines.push(Line::styled(
                    format!("{n:>3}× {}", truncate(&one_line(text), w)),
                    t.base(),
                ));
            }
            lines.push(Line::styled(
                format!("── sample {} of {}", self.sample + 1, samples.len()),
                t.muted(),
            ));
        }
        match shown {
            Some(s) => {
                let style = if s.failed { t.error() } else { t.base() };
                for l in sanitize(&s.text).lines() {
                    lines.push(Line::styled(l.to_string(), style));
                }
                if !s.detail.is_empty() {
                    lines.push(Line::default());
                    lines.push(Line::styled(one_line(&s.detail), t.muted()));
                }
            }
            None => lines.push(Line::styled("(no such sample on this side)", t.muted())),
        }
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0)),
            inner,
        );
    }
}
