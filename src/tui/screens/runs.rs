//! The runs in the store (`R` from browsing): id, name, tags, date, status, models with their
//! H-Score. `space` marks up to two; `enter` compares the two marked (or the selected one with
//! the run before it): per H-Score, dimension and sub-task both rates, B - A with its paired
//! bootstrap interval and McNemar's p, and how many items flipped, as `prism compare` prints.
//! When a run has several models, the comparison takes a model both runs have, and `M` moves it
//! to the next one they share (the comparison's title names it and how many there are). `tab` moves to
//! the comparison's flipped items; `enter` on one opens both runs' answers side by side. Each
//! run's line ends with its models' H-Score history up to it (a sparkline, oldest first).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::eval::compare::{Comparison, Level};
use crate::runs::Listed;
use crate::store::format_time;
use crate::text::one_line;
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::keymap::{Action, Mode};
use crate::tui::widgets::{pane, status_lines, status_rows, title_line, truncate};

#[derive(Default)]
pub struct Runs {
    /// Newest first; `None` until loaded.
    pub runs: Option<Vec<Listed>>,
    pub sel: usize,
    /// Marked run ids, in marking order: two for a comparison, any number for the heatmap.
    pub marked: Vec<String>,
    pub comparison: Option<Box<Comparison>>,
    scroll: u16,
    /// The cursor is on the comparison's flipped items (else on the runs).
    pub on_flips: bool,
    /// The flipped item under the cursor.
    pub flip: usize,
    /// The models both compared runs have (the comparison is on one of them).
    pub common_models: Vec<String>,
    /// The runs compared last (A, B), for `M` to compare them again on another model.
    compared: Option<(String, String)>,
}

impl Runs {
    fn selected(&self) -> Option<&Listed> {
        self.runs.as_ref()?.get(self.sel)
    }

    /// The two runs to compare: the marked two, else the selected one against the run before
    /// it (the older is A).
    fn pair(&self) -> Option<(String, String)> {
        let runs = self.runs.as_ref()?;
        if self.marked.len() == 2 {
            let pos = |id: &String| runs.iter().position(|l| &l.run.id == id);
            let (x, y) = (&self.marked[0], &self.marked[1]);
            // Older first: the list is newest first.
            return Some(if pos(x) > pos(y) {
                (x.clone(), y.clone())
            } else {
                (y.clone(), x.clone())
            });
        }
        let now = runs.get(self.sel)?;
        let before = runs.get(self.sel + 1)?;
        Some((before.run.id.clone(), now.run.id.clone()))
    }
}

impl Component for Runs {
    fn id(&self) -> ScreenId {
        ScreenId::Runs
    }
    fn mode(&self) -> Mode {
        Mode::Runs
    }
    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        vec![Cmd::job(crate::tui::jobs::runs::LoadRuns)]
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        let Input::Action(a) = input else {
            return Vec::new();
        };
        let n = self.runs.as_ref().map_or(0, Vec::len);
        if self.on_flips
            && let Some(cmds) = self.on_flip_action(a)
        {
            return cmds;
        }
        match a {
            Action::NextPane | Action::PrevPane => {
                if self
                    .comparison
                    .as_ref()
                    .is_some_and(|c| !c.flips.is_empty())
                {
                    self.on_flips = true;
                } else {
                    return vec![Cmd::Notice(
                        "no flipped items: compare two runs first (enter)".into(),
                    )];
                }
            }
            Action::Up => self.sel = self.sel.saturating_sub(1),
            Action::Down => self.sel = (self.sel + 1).min(n.saturating_sub(1)),
            Action::PageDown | Action::PageUp => {
                self.scroll = crate::tui::nav::page(self.scroll, a).unwrap_or(self.scroll);
            }
            Action::Mark => {
                if let Some(id) = self.selected().map(|l| l.run.id.clone()) {
                    if let Some(p) = self.marked.iter().position(|m| *m == id) {
                        self.marked.remove(p);
                    } else {
                        self.marked.push(id);
                    }
                }
                // The cursor stays on the run marked: two runs to compare are rarely
                // neighbours, and a cursor that moved on had the next key mark the wrong one.
            }
            Action::Heatmap => {
                let runs = if self.marked.is_empty() {
                    self.selected()
                        .map(|l| vec![l.run.id.clone()])
                        .unwrap_or_default()
                } else {
                    self.marked.clone()
                };
                if !runs.is_empty() {
                    return vec![Cmd::Push(crate::tui::component::Open::HeatmapOf(runs))];
                }
            }
            Action::Toggle if self.marked.len() > 2 => {
                return vec![Cmd::Notice(format!(
                    "{} runs marked: a comparison takes two (space unmarks); H shows them all in the heatmap",
                    self.marked.len()
                ))];
            }
            Action::Models => return self.next_model(),
            Action::OpenRun => {
                return match self.selected() {
                    // A run imported from another tool opens in that tool's own tree (its
                    // samples that are items of the release open from there).
                    Some(l) if l.run.config.source.is_some() => {
                        vec![Cmd::Push(crate::tui::component::Open::Source(
                            l.run.id.clone(),
                        ))]
                    }
                    Some(l) => vec![
                        Cmd::job(crate::tui::jobs::runs::LoadRunItems {
                            run: l.run.id.clone(),
                        }),
                        Cmd::Notice(format!("opening {}…", l.run.id)),
                    ],
                    None => vec![Cmd::Notice("no run to open".into())],
                };
            }
            Action::NameRun => {
                return match self.selected() {
                    Some(l) => vec![Cmd::Popup(Box::new(crate::tui::popups::NameRun::new(
                        &l.run.id,
                        l.name.as_deref(),
                    )))],
                    None => vec![Cmd::Notice("no run to name".into())],
                };
            }
            Action::Toggle => {
                return match self.pair() {
                    Some((a, b)) => {
                        self.scroll = 0;
                        self.compared = Some((a.clone(), b.clone()));
                        vec![
                            Cmd::Notice(format!("comparing {a} (A) with {b} (B)…")),
                            Cmd::job(crate::tui::jobs::runs::CompareRuns { a, b, model: None }),
                        ]
                    }
                    None => vec![Cmd::Notice(
                        "mark two runs (space) to compare them, or select one with an older run after it"
                            .into(),
                    )],
                };
            }
            Action::Cancel | Action::Back => return vec![Cmd::Pop],
            Action::Quit => return vec![Cmd::Quit],
            Action::Help => {
                return vec![Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                    Mode::Runs,
                )))];
            }
            _ => {}
        }
        Vec::new()
    }
    fn on_msg(&mut self, msg: &Msg, _cx: &Cx) -> Vec<Cmd> {
        use crate::tui::jobs::runs::{Comparison, RunItems, Runs};
        // The team's store brought runs or answers: the list again (done counts, scores).
        if msg.get::<crate::store::mirror::Pulled>().is_some() {
            return vec![Cmd::job(crate::tui::jobs::runs::LoadRuns)];
        }
        if let Some(Runs(runs)) = msg.get() {
            self.sel = self.sel.min(runs.len().saturating_sub(1));
            self.marked.retain(|m| runs.iter().any(|l| l.run.id == *m));
            self.runs = Some(runs.clone());
        }
        if let Some(RunItems {
            run,
            items,
            missing,
        }) = msg.get()
        {
            if items.is_empty() {
                return vec![Cmd::Notice(format!(
                    "none of {run}'s {missing} items is in the dataset open here: open prism on the run's dataset"
                ))];
            }
            let mut out = vec![Cmd::Push(crate::tui::component::Open::RunAnswers {
                run: run.clone(),
                items: items.clone(),
            })];
            if *missing > 0 {
                out.push(Cmd::Notice(format!(
                    "{missing} of {run}'s items are not in the dataset open here: left out"
                )));
            }
            return out;
        }
        if let Some(Comparison(c, common)) = msg.get() {
            self.comparison = Some(c.clone());
            self.common_models = common.clone();
            self.flip = 0;
            self.on_flips = false;
            return vec![Cmd::ClearNotice];
        }
        Vec::new()
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Runs, a);
        let hints = if self.on_flips {
            format!(
                " ↑↓ flipped item  {} both answers  {} back to the runs  {}/{} scroll  {} help",
                k(Action::Toggle),
                k(Action::NextPane),
                k(Action::PageUp),
                k(Action::PageDown),
                k(Action::Help)
            )
        } else {
            let model = if self.common_models.len() > 1 {
                format!("  {} next model", k(Action::Models))
            } else {
                String::new()
            };
            format!(
                " ↑↓ run  {} mark  {} compare two{model}  {} flipped items  {} heatmap  {} open  {} name  {}/{} scroll  {} back  {} help",
                k(Action::Mark),
                k(Action::Toggle),
                k(Action::NextPane),
                k(Action::Heatmap),
                k(Action::OpenRun),
                k(Action::NameRun),
                k(Action::PageUp),
                k(Action::PageDown),
                k(Action::Back),
                k(Action::Help)
            )
        };
        let [title, list, cmp, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Percentage(40),
            Constraint::Min(4),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        let n = self.runs.as_ref().map_or(0, Vec::len);
        f.render_widget(
            Paragraph::new(title_line(
                t,
                vec![
                    Span::styled(" runs ", t.base().add_modifier(Modifier::BOLD)),
                    Span::styled(
                        format!("{n} in the store · {} marked", self.marked.len()),
                        t.muted(),
                    ),
                ],
            )),
            title,
        );
        self.draw_list(cx, f, list);
        self.draw_comparison(cx, f, cmp);
        status_lines(f, status, t, cx.notice, &hints);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Runs {
    /// The comparison's title in `room` columns: the runs, which of the models both have it is
    /// on (and that `M` moves on), then the model's name in what is left (a name may be
    /// shortened; the runs and the counts never are).
    fn comparison_title(&self, c: &Comparison, room: usize) -> String {
        let Some([sa, sb]) = c.sides.as_ref() else {
            return format!(" A {} · B {} ", one_line(&c.a), one_line(&c.b));
        };
        if sa.model != sb.model {
            return format!(" A {} · B {} ", one_line(&c.a), one_line(&c.b));
        }
        let n = self.common_models.len();
        let which = match self.common_models.iter().position(|x| *x == sa.model) {
            Some(i) if n > 1 => format!("· model {} of {n} (M next) ", i + 1),
            _ => String::new(),
        };
        let runs = format!(" A {} · B {} ", one_line(&sa.run_id), one_line(&sb.run_id));
        let used = runs.chars().count() + which.chars().count() + 3;
        let name = one_line(&sa.model);
        let left = room.saturating_sub(used);
        if left < 4 {
            return format!("{runs}{which}");
        }
        format!(" {} ·{runs}{which}", truncate(&name, left))
    }

    /// `M`: the last two runs compared again, on the next model both have.
    fn next_model(&mut self) -> Vec<Cmd> {
        let (Some((a, b)), Some(c)) = (&self.compared, &self.comparison) else {
            return vec![Cmd::Notice(
                "compare two runs first (enter); M then moves to the next model they both have"
                    .into(),
            )];
        };
        let now = c.sides.as_ref().map(|s| s[0].model.clone());
        let n = self.common_models.len();
        if n < 2 {
            return vec![Cmd::Notice(format!(
                "{} is the only model both runs have",
                now.as_deref().unwrap_or("this")
            ))];
        }
        let at = now
            .and_then(|m| self.common_models.iter().position(|x| *x == m))
            .unwrap_or(0);
        let next = self.common_models[(at + 1) % n].clone();
        vec![
            Cmd::Notice(format!(
                "comparing on {next} ({} of {n})…",
                (at + 1) % n + 1
            )),
            Cmd::job(crate::tui::jobs::runs::CompareRuns {
                a: a.clone(),
                b: b.clone(),
                model: Some(next),
            }),
        ]
    }

    /// An action while the cursor is on the flipped items; `None` for those that do what they
    /// do on the runs.
    fn on_flip_action(&mut self, a: Action) -> Option<Vec<Cmd>> {
        let c = self.comparison.as_ref()?;
        let n = c.flips.len();
        match a {
            Action::Up => self.flip = self.flip.saturating_sub(1),
            Action::Down => self.flip = (self.flip + 1).min(n.saturating_sub(1)),
            Action::NextPane | Action::PrevPane | Action::Mark => self.on_flips = false,
            Action::Toggle => {
                return Some(match &c.sides {
                    Some(sides) => vec![Cmd::Push(crate::tui::component::Open::Flip {
                        flips: c.flips.clone(),
                        pos: self.flip,
                        sides: Box::new(sides.clone()),
                    })],
                    None => Vec::new(),
                });
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn draw_list(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let block = pane(t, Line::from(" Runs (newest first) "), true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(runs) = &self.runs else {
            f.render_widget(Paragraph::new("loading…").style(t.muted()), inner);
            return;
        };
        if runs.is_empty() {
            f.render_widget(
                Paragraph::new("No runs yet: mark items in browse (space) and press r.")
                    .style(t.muted()),
                inner,
            );
            return;
        }
        let h = inner.height as usize;
        let off = self.sel.saturating_sub(h.saturating_sub(1));
        let w = inner.width as usize;
        let lines: Vec<Line> = runs
            .iter()
            .enumerate()
            .skip(off)
            .take(h)
            .map(|(i, l)| {
                let mark = match self.marked.iter().position(|m| *m == l.run.id) {
                    Some(k) => format!("[{}]", k + 1),
                    None => "[ ]".into(),
                };
                let name = l.name.as_deref().map(one_line).unwrap_or_default();
                let tags = if l.tags.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", one_line(&l.tags.join(" ")))
                };
                let models: Vec<String> = l
                    .scores
                    .iter()
                    .map(|(m, h, _)| {
                        format!(
                            "{} {}",
                            one_line(m),
                            h.map_or("-".into(), |h| format!("H {h:.1}"))
                        )
                    })
                    .collect();
                let models = if models.is_empty() {
                    l.run
                        .config
                        .models
                        .iter()
                        .map(|m| one_line(&m.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                } else {
                    models.join(", ")
                };
                let spark = h_history(runs, i)
                    .iter()
                    .map(|(m, line)| format!("  {} {line}", one_line(m)))
                    .collect::<String>();
                let asked = l.run.config.describe();
                let asked = if asked.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", one_line(&asked))
                };
                // What tells runs apart first (a narrow terminal keeps the start): the name
                // and tags, the models with their H-Score; then when, the counts, the settings.
                let text = format!(
                    "{mark} {}{}{}  {}  {}  {}  {} items, {} done, {} failed{asked}{spark}",
                    l.run.id,
                    if name.is_empty() {
                        String::new()
                    } else {
                        format!("  \"{name}\"")
                    },
                    tags,
                    models,
                    l.run.status.word(),
                    format_time(l.run.created_at),
                    l.items,
                    l.done,
                    l.failed,
                );
                let line = Line::styled(truncate(&text, w), t.base());
                if i == self.sel {
                    line.style(t.selected(true))
                } else {
                    line
                }
            })
            .collect();
        f.render_widget(Paragraph::new(lines), inner);
    }

    fn draw_comparison(&mut self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let title = match &self.comparison {
            Some(c) => self.comparison_title(c, area.width.saturating_sub(2) as usize),
            None => " Comparison ".into(),
        };
        let block = pane(t, Line::from(title), false);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(c) = &self.comparison else {
            f.render_widget(
                Paragraph::new(
                    "Mark two runs with space and press enter (or enter on a run: it against the \
                     one before). Both rates, B - A with a 95% paired bootstrap interval, McNemar's \
                     exact p, and the items that flipped.",
                )
                .wrap(ratatui::widgets::Wrap { trim: true })
                .style(t.muted()),
                inner,
            );
            return;
        };
        let num = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
        // The name column gives way on a narrow screen; the numbers keep their width.
        let nw = (inner.width as usize).saturating_sub(64).clamp(10, 30);
        let fixed = c.flips.iter().filter(|f| f.fixed).count();
        // The spread over repeats, a column only when a side has repeats.
        let repeats = c.rows.iter().any(|r| !r.split_text().is_empty());
        let split = |t: String| {
            if repeats {
                format!(" {t:>10}")
            } else {
                String::new()
            }
        };
        let mut lines = vec![
            Line::styled(
                format!(
                    "{} items on both ({} left out) · flipped: {fixed} fixed, {} broken · {} \
                     resamples, seed {}",
                    c.paired,
                    c.unpaired,
                    c.flips.len() - fixed,
                    c.resamples,
                    c.seed
                ),
                t.muted(),
            ),
            Line::styled(
                format!(
                    "{:<nw$} {:>6} {:>8} {:>8} {:>8} {:>18} {:>8}{}",
                    "",
                    "items",
                    "A",
                    "B",
                    "B-A",
                    "95% interval",
                    "p",
                    split("split A/B".into())
                ),
                t.accent(),
            ),
        ];
        for r in &c.rows {
            let name = match r.level {
                Level::Task => format!("  {}", one_line(&r.name)),
                _ => one_line(&r.name),
            };
            let ci = r.ci_text();
            let p = r.p_text();
            let style = match (r.significant(), r.diff) {
                (true, Some(d)) if d < 0.0 => t.success(),
                (true, Some(_)) => t.error(),
                _ => t.base(),
            };
            lines.push(Line::styled(
                format!(
                    "{:<nw$} {:>6} {:>8} {:>8} {:>8} {:>18} {:>8}{}{}",
                    truncate(&name, nw),
                    r.items,
                    num(r.rate_a),
                    num(r.rate_b),
                    r.diff.map_or("-".into(), |d| format!("{d:+.2}")),
                    ci,
                    p,
                    split(r.split_text()),
                    if r.significant() { " *" } else { "" }
                ),
                style,
            ));
        }
        self.flip_lines(cx, c, &mut lines);
        if self.on_flips {
            // Keep the flipped item under the cursor in view: it is the line after the table,
            // a blank line and the list's title.
            let at = (2 + c.rows.len() + 2 + self.flip) as u16;
            let h = inner.height.max(1);
            if at < self.scroll {
                self.scroll = at;
            } else if at >= self.scroll + h {
                self.scroll = at + 1 - h;
            }
        }
        f.render_widget(Paragraph::new(lines).scroll((self.scroll, 0)), inner);
    }

    /// The flipped items under the table: fixed first, then broken; the cursor's marked when
    /// the flips have focus.
    fn flip_lines(&self, cx: &Cx, c: &Comparison, lines: &mut Vec<Line<'static>>) {
        let t = cx.theme;
        if c.flips.is_empty() {
            return;
        }
        lines.push(Line::default());
        lines.push(Line::styled(
            format!(
                "Flipped items ({}){}",
                c.flips.len(),
                if self.on_flips {
                    " · enter: both answers"
                } else {
                    " · tab to choose one"
                }
            ),
            t.accent(),
        ));
        for (i, fl) in c.flips.iter().enumerate() {
            let line = Line::styled(
                format!(
                    "{} {:<7} {:<28} {:<22} A {:.2} → B {:.2}",
                    if self.on_flips && i == self.flip {
                        "▶"
                    } else {
                        " "
                    },
                    if fl.fixed { "fixed" } else { "broken" },
                    truncate(&one_line(&fl.item_id), 28),
                    truncate(&one_line(&fl.task_id), 22),
                    fl.score_a,
                    fl.score_b
                ),
                if fl.fixed { t.success() } else { t.error() },
            );
            lines.push(if self.on_flips && i == self.flip {
                line.style(t.selected(true))
            } else {
                line
            });
        }
    }
}

/// The run at `i` of the list (newest first): each of its models' H-Score over its runs up to
/// and including this one, oldest first, as a sparkline of the last 8 (`·` where a run has no
/// H-Score). Empty for a model with a single run. Asked only for the rows drawn.
fn h_history(runs: &[crate::runs::Listed], i: usize) -> Vec<(String, String)> {
    runs[i]
        .scores
        .iter()
        .filter_map(|(m, _, _)| {
            // Older runs come after this one in the list.
            let mut hs: Vec<Option<f64>> = runs[i..]
                .iter()
                .filter_map(|o| o.scores.iter().find(|s| &s.0 == m).map(|s| s.1))
                .take(8)
                .collect();
            hs.reverse();
            (hs.len() > 1).then(|| (m.clone(), crate::runs::sparkline(&hs)))
        })
        .collect()
}
