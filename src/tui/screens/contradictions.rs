//! The contradictions screen: one answer under test on top, its K sampled answers below, each
//! with its pair verdict and the judge's explanation; the OR-rule flag, the conflicts of K and
//! the judge in between. Sampling runs live (streaming, status per sample, cancel); `enter`
//! opens a pair side by side, `a` samples again (a new round, earlier rounds kept). For a claim,
//! the label and the model's classification of it from its own reference are shown too.

use std::collections::HashMap;

use crossterm::event::{MouseButton, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::detect::results::{Outcome, outcomes};
use crate::detect::run::{DetectEvent, Step, Stored};
use crate::store::{Class, DetectKind, DetectRun, PairRecord, SampleRecord, Target, Verdict};
use crate::text::{one_line, sanitize};
use crate::theme::Theme;
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::Msg;
use crate::tui::jobs::detect::DetectJob;
use crate::tui::keymap::{Action, Mode};
use crate::tui::pair::PairView;
use crate::tui::widgets::{pane, row_in, scrollbar, status_lines, status_rows, title_line};

/// A call in flight, as the front-end sees it.
#[derive(Debug, Clone, Default)]
struct Live {
    text: String,
    attempt: u32,
    retry: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Contradictions {
    /// What to start or load when opened.
    request: DetectJob,
    pub run: Option<DetectRun>,
    pub stored: Stored,
    /// The target shown (position in `stored.targets`), its round, the selected sample.
    pub pos: usize,
    pub round: u32,
    pub sel: usize,
    /// Whether this screen's detection is running.
    pub running: bool,
    live: HashMap<(u32, Step), Live>,
    /// Where the sample list was drawn, and the first sample shown there.
    list: Rect,
    list_off: usize,
    /// The stored entailment verdicts, per judge (semantic entropy, `prism entropy` or `e`).
    known: Vec<(String, crate::detect::semantic::Known)>,
    /// Whether a clustering (`e`) is running.
    pub clustering: bool,
    /// The running clustering's progress: verdicts in, the most it can need, the answers, the
    /// judge (said on every verdict, so a long clustering is seen to move).
    cluster_progress: (usize, usize, usize, String),
}

/// A target's answers clustered by meaning: the judge, each answer's meaning, the entropy.
type Meanings = (String, Vec<usize>, crate::eval::semantic::Entropy);

/// "semantic entropy 1.04 · 3 meanings of 4 answers (judge J) · m1 answer · m2 #1 #2 · m3 #3":
/// the meanings by their members ("answer" is the answer under test, #k sample k).
fn meanings_line((judge, ids, e): &Meanings, t: &Theme) -> Line<'static> {
    let name = |i: usize| {
        if i == 0 {
            "answer".to_string()
        } else {
            format!("#{i}")
        }
    };
    let listed: Vec<String> = crate::detect::semantic::members(ids)
        .iter()
        .enumerate()
        .map(|(m, v)| {
            format!(
                "m{} {}",
                m + 1,
                v.iter().map(|&i| name(i)).collect::<Vec<_>>().join(" ")
            )
        })
        .collect();
    let mut spans = vec![
        Span::styled(" semantic entropy ", t.muted()),
        Span::styled(
            format!("{:.2}", e.discrete),
            t.base().add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                " · {} meanings of {} answers (judge {}) · ",
                e.clusters,
                e.answers,
                one_line(judge)
            ),
            t.muted(),
        ),
        Span::styled(listed.join(" · "), t.base()),
    ];
    if let Some(w) = e.weighted {
        spans.insert(2, Span::styled(format!(" (p-weighted {w:.2})"), t.muted()));
    }
    Line::from(spans)
}

impl Contradictions {
    pub fn new(request: DetectJob) -> Contradictions {
        Contradictions {
            request,
            run: None,
            stored: Stored::default(),
            pos: 0,
            round: 0,
            sel: 0,
            running: false,
            live: HashMap::new(),
            list: Rect::default(),
            list_off: 0,
            known: Vec::new(),
            clustering: false,
            cluster_progress: (0, 0, 0, String::new()),
        }
    }

    /// The shown answer and samples clustered by meaning, by the first judge whose stored
    /// verdicts cluster them all.
    fn meanings(&self) -> Option<Meanings> {
        let run = self.run.as_ref()?;
        let g = crate::detect::semantic::group_at(
            &run.id,
            self.target()?,
            self.round,
            self.k(),
            &self.stored.samples,
        )?;
        self.known.iter().find_map(|(judge, known)| {
            let (ids, e) = known.entropy(&g)?;
            Some((judge.clone(), ids, e))
        })
    }

    pub fn target(&self) -> Option<&Target> {
        self.stored.targets.get(self.pos)
    }

    fn k(&self) -> u32 {
        self.run.as_ref().map_or(1, |r| r.config.k.max(1))
    }

    /// The outcome of the shown target in the shown round.
    pub fn outcome(&self) -> Option<Outcome> {
        let t = self.target()?;
        outcomes(&self.stored, self.k(), self.round)
            .get(&t.idx)
            .copied()
    }

    fn sample(&self, k: u32) -> Option<&SampleRecord> {
        let t = self.target()?;
        self.stored
            .samples
            .iter()
            .find(|s| s.target == t.idx && s.round == self.round && s.k == k)
    }

    fn pair(&self, k: u32) -> Option<&PairRecord> {
        let t = self.target()?;
        self.stored
            .pairs
            .iter()
            .find(|p| p.target == t.idx && p.round == self.round && p.k == k && p.wording == 0)
    }

    fn judge_name(&self) -> String {
        let Some(run) = &self.run else {
            return String::new();
        };
        match &run.config.judge {
            Some(j) => j.name.clone(),
            None => self
                .target()
                .map(|t| format!("{} (itself)", t.model))
                .unwrap_or_default(),
        }
    }

    fn apply(&mut self, a: Action, cx: &Cx) -> Vec<Cmd> {
        let k = self.k() as usize;
        let mut out = vec![Cmd::ClearNotice];
        match a {
            Action::Quit => out.push(Cmd::Quit),
            Action::Help => out.push(Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                Mode::Contradictions,
            )))),
            Action::Down => self.sel = (self.sel + 1).min(k.saturating_sub(1)),
            Action::Up => self.sel = self.sel.saturating_sub(1),
            Action::PageDown | Action::Bottom => self.sel = k.saturating_sub(1),
            Action::PageUp | Action::Top => self.sel = 0,
            Action::NextItem | Action::PrevItem => {
                let n = self.stored.targets.len();
                if n > 0 {
                    self.pos = if a == Action::NextItem {
                        (self.pos + 1).min(n - 1)
                    } else {
                        self.pos.saturating_sub(1)
                    };
                    self.round = 0;
                    self.sel = 0;
                }
            }
            Action::NextSample => {
                let rounds = self.target().map_or(1, |t| t.rounds.max(1));
                self.round = (self.round + 1) % rounds;
            }
            Action::Toggle => {
                let (Some(t), Some(s)) = (self.target(), self.sample(self.sel as u32)) else {
                    out.push(Cmd::Notice("this sample has not arrived yet".into()));
                    return out;
                };
                out.push(Cmd::Popup(Box::new(PairView::new(
                    t.clone(),
                    s.clone(),
                    self.pair(self.sel as u32).cloned(),
                ))));
            }
            Action::SampleAgain => {
                if self.running {
                    out.push(Cmd::Notice("sampling is still running".into()));
                } else if let (Some(run), Some(t)) = (&self.run, self.target()) {
                    if t.answer.is_none() || t.refused {
                        out.push(Cmd::Notice(
                            "no answer under test here: nothing to sample against".into(),
                        ));
                    } else {
                        out.push(Cmd::Job(Box::new(DetectJob::Again {
                            detect_id: run.id.clone(),
                            target: t.idx,
                            models: cx.models.to_vec(),
                        })));
                        out.push(Cmd::Notice(format!(
                            "sampling {} more (round {}; earlier rounds are kept)",
                            self.k(),
                            t.rounds + 1
                        )));
                    }
                }
            }
            Action::Entropy => out.extend(self.cluster(cx)),
            Action::Cancel if self.running => {
                out.push(Cmd::CancelDetect);
                out.push(Cmd::Notice(
                    "cancelling: finished samples and verdicts are kept".into(),
                ));
            }
            Action::Cancel | Action::Back => out.push(Cmd::Pop),
            _ => {}
        }
        out
    }

    /// `e`: the judge of the detection (the model itself when it has none) clusters the shown
    /// round's answers by meaning; only the verdicts not stored yet are asked.
    fn cluster(&mut self, cx: &Cx) -> Vec<Cmd> {
        if self.clustering {
            return vec![Cmd::Notice("the clustering is still running".into())];
        }
        let (Some(run), Some(t)) = (&self.run, self.target()) else {
            return vec![Cmd::Notice("nothing to cluster yet".into())];
        };
        let Some(group) = crate::detect::semantic::group_at(
            &run.id,
            t,
            self.round,
            self.k(),
            &self.stored.samples,
        ) else {
            return vec![Cmd::Notice(
                "the answer and all its samples of this round are needed first".into(),
            )];
        };
        let name = run
            .config
            .judge
            .as_ref()
            .map_or(t.model.clone(), |j| j.name.clone());
        let mut snapshots = run.config.models.clone();
        snapshots.extend(run.config.judge.clone());
        let judge = match crate::engine::models::model_named(&name, cx.models, &snapshots, &run.id)
        {
            Ok(j) => j,
            Err(e) => return vec![Cmd::Notice(format!("judge {name}: {e:#}"))],
        };
        self.clustering = true;
        let n = group.answers.len();
        // Greedy clustering asks each answer against each cluster's first answer, both ways:
        // never more than n(n-1) verdicts, fewer as answers join clusters or repeat verbatim.
        self.cluster_progress = (0, n * n.saturating_sub(1), n, one_line(&name));
        vec![
            Cmd::job(crate::tui::jobs::detect::Entropy {
                group: Box::new(group),
                judge: Box::new(judge),
            }),
            Cmd::Notice(self.cluster_notice()),
        ]
    }

    /// The last clustering's verdicts in and the most it could need.
    pub fn cluster_progress(&self) -> (usize, usize) {
        (self.cluster_progress.0, self.cluster_progress.1)
    }

    fn cluster_notice(&self) -> String {
        let (done, most, n, judge) = &self.cluster_progress;
        format!(
            "clustering {n} answers by meaning with {judge}: {done} verdicts in, at most {most} needed (stored ones reused)…"
        )
    }

    /// A clustering's news: verdicts join the stored ones (the meanings are recomputed from
    /// them as they arrive); the end says what came out.
    fn on_entropy(&mut self, ev: &crate::detect::semantic::EntropyEvent) -> Vec<Cmd> {
        use crate::detect::semantic::EntropyEvent;
        match ev {
            EntropyEvent::Saved(r) => {
                self.stored.entailments.push((**r).clone());
                self.known = crate::detect::semantic::by_judge(&self.stored.entailments);
                if !self.clustering {
                    return Vec::new();
                }
                self.cluster_progress.0 += 1;
                vec![Cmd::Notice(self.cluster_notice())]
            }
            EntropyEvent::Done((_, outcome)) => {
                self.clustering = false;
                vec![Cmd::Notice(match outcome {
                    Ok((_, e)) => format!(
                        "semantic entropy {:.2}: {} meanings of {} answers",
                        e.discrete, e.clusters, e.answers
                    ),
                    Err(why) => format!("clustering stopped: {} (e asks again)", one_line(why)),
                })]
            }
            EntropyEvent::Life(_) => Vec::new(),
        }
    }

    fn on_event(&mut self, ev: &DetectEvent) -> Vec<Cmd> {
        self.stored.apply(ev);
        match ev {
            DetectEvent::Started { .. } => self.running = true,
            DetectEvent::Sending {
                target,
                step,
                attempt,
                reason,
            } => {
                let l = self.live.entry((*target, *step)).or_default();
                l.attempt = *attempt;
                l.retry = reason.clone();
                if reason.is_some() {
                    l.text.clear();
                }
            }
            DetectEvent::Delta { target, step, text } => {
                self.live
                    .entry((*target, *step))
                    .or_default()
                    .text
                    .push_str(text);
            }
            DetectEvent::Answer { target, .. } => {
                self.live.remove(&(*target, Step::Answer));
            }
            DetectEvent::Classified { target, .. } => {
                self.live.remove(&(*target, Step::Classify));
            }
            DetectEvent::Sample(s) => {
                self.live.remove(&(
                    s.target,
                    Step::Sample {
                        round: s.round,
                        k: s.k,
                    },
                ));
            }
            DetectEvent::Pair(p) => {
                self.live.remove(&(
                    p.target,
                    Step::Pair {
                        round: p.round,
                        k: p.k,
                        wording: p.wording,
                    },
                ));
            }
            DetectEvent::Life(crate::engine::harness::Lifecycle::Finished(s)) => {
                self.running = false;
                self.live.clear();
                let mut msg = format!("detection done: {} calls", s.done);
                if s.cache_hits > 0 {
                    msg.push_str(&format!(" ({} from cache)", s.cache_hits));
                }
                if s.failed > 0 {
                    msg.push_str(&format!(", {} failed", s.failed));
                }
                if s.cancelled > 0 {
                    msg = "detection cancelled; what finished is kept".into();
                }
                return vec![Cmd::Notice(msg)];
            }
            _ => {}
        }
        Vec::new()
    }
}

impl Component for Contradictions {
    fn id(&self) -> ScreenId {
        ScreenId::Contradictions
    }

    fn mode(&self) -> Mode {
        Mode::Contradictions
    }

    fn on_open(&mut self, _cx: &Cx) -> Vec<Cmd> {
        vec![
            Cmd::Job(Box::new(self.request.clone())),
            Cmd::Notice("looking for a stored detection, else sampling".into()),
        ]
    }

    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Action(a) => self.apply(a, cx),
            Input::Mouse(m) => {
                match m.kind {
                    MouseEventKind::ScrollDown => {
                        self.sel = (self.sel + 1).min(self.k() as usize - 1)
                    }
                    MouseEventKind::ScrollUp => self.sel = self.sel.saturating_sub(1),
                    MouseEventKind::Down(MouseButton::Left) => {
                        if self.list.contains(Position::new(m.column, m.row))
                            && let Some(line) = row_in(self.list, m.row)
                        {
                            // Two lines per sample, inside the border.
                            let k = self.list_off + line.saturating_sub(1) / 2;
                            if k < self.k() as usize {
                                self.sel = k;
                            }
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
        use crate::tui::jobs::detect::Detection;
        if let Some(Detection { run, stored, focus }) = msg.get() {
            self.run = Some((**run).clone());
            self.stored = stored.clone();
            self.pos = self
                .stored
                .targets
                .iter()
                .position(|t| t.idx == *focus)
                .unwrap_or(0);
            self.round = self.target().map_or(0, |t| t.rounds.max(1) - 1);
            self.sel = 0;
            self.known = crate::detect::semantic::by_judge(&self.stored.entailments);
            return vec![Cmd::ClearNotice];
        }
        if let Some(ev) = msg.get() {
            return self.on_event(ev);
        }
        if let Some(ev) = msg.get() {
            return self.on_entropy(ev);
        }
        match msg.get() {
            Some(Failed(e)) => vec![Cmd::Notice(e.clone())],
            None => Vec::new(),
        }
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Contradictions, a);
        let hints = format!(
            " ↑↓ sample  {} pair side by side  {} sample again  {} meanings  {} round  {}/{} answer  {} {}  {} help",
            k(Action::Toggle),
            k(Action::SampleAgain),
            k(Action::Entropy),
            k(Action::NextSample),
            k(Action::PrevItem),
            k(Action::NextItem),
            k(Action::Cancel),
            if self.running { "cancel" } else { "back" },
            k(Action::Help)
        );
        let meanings = self.meanings();
        // The summary wraps on a narrow terminal: as many rows as it takes (up to 6), then a
        // blank one before the samples.
        let summary_para =
            Paragraph::new(self.summary_lines(cx, meanings.as_ref().map(|m| meanings_line(m, t))))
                .wrap(Wrap { trim: false });
        let summary_rows = (summary_para.line_count(area.width.max(1)) as u16).clamp(1, 6) + 1;
        let [title, top, summary, list, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Percentage(30),
            Constraint::Length(summary_rows),
            Constraint::Min(4),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        self.draw_title(cx, f, title);
        self.draw_answer(cx, f, top);
        f.render_widget(summary_para, summary);
        self.draw_list(cx, f, list, meanings.as_ref());
        status_lines(f, status, t, cx.notice, &hints);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Contradictions {
    fn draw_title(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let mut spans = vec![Span::styled(
            " contradictions ",
            t.base().add_modifier(Modifier::BOLD),
        )];
        if let Some(tg) = self.target() {
            spans.push(Span::styled(one_line(&tg.item_id), t.accent()));
            spans.push(Span::styled(
                format!(
                    " · {} · K={} · judge {}",
                    one_line(&tg.model),
                    self.k(),
                    one_line(&self.judge_name())
                ),
                t.muted(),
            ));
            if let Some(temp) = tg.temperature {
                spans.push(Span::styled(format!(" · t={temp}"), t.muted()));
            }
            let rounds = tg.rounds.max(1);
            spans.push(Span::styled(
                format!(
                    " · round {}/{rounds}{}",
                    self.round + 1,
                    if self.round == 0 {
                        " (counted)"
                    } else {
                        " (extra, not counted)"
                    }
                ),
                if self.round == 0 {
                    t.muted()
                } else {
                    t.warning()
                },
            ));
            let n = self.stored.targets.len();
            if n > 1 {
                spans.push(Span::styled(
                    format!(" · answer {}/{n}", self.pos + 1),
                    t.muted(),
                ));
            }
        }
        if self.running {
            spans.push(Span::styled(" · running", t.accent()));
        }
        f.render_widget(Paragraph::new(title_line(t, spans)), area);
    }

    fn draw_answer(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let Some(tg) = self.target() else {
            f.render_widget(
                Paragraph::new(Line::styled(" loading…", t.muted())).block(pane(
                    t,
                    Line::from(" Answer under test "),
                    false,
                )),
                area,
            );
            return;
        };
        let claims = self
            .run
            .as_ref()
            .is_some_and(|r| r.kind == DetectKind::Claims);
        let what = if claims {
            " Reference under test "
        } else {
            " Answer under test "
        };
        let mut lines = vec![Line::from(vec![
            Span::styled(if claims { "claim  " } else { "question  " }, t.muted()),
            Span::styled(one_line(&tg.question), t.base()),
        ])];
        let body = match (&tg.answer, &tg.answer_error) {
            (Some(a), _) => sanitize(a).into_owned(),
            (None, Some(e)) => format!("failed: {}", one_line(e)),
            (None, None) => match self.live.get(&(tg.idx, Step::Answer)) {
                Some(l) => sanitize(&l.text).into_owned(),
                None => "waiting…".into(),
            },
        };
        for l in body.lines() {
            lines.push(Line::styled(l.to_string(), t.base()));
        }
        let para = Paragraph::new(lines).wrap(Wrap { trim: false });
        f.render_widget(para.block(pane(t, Line::from(what), false)), area);
    }

    /// The lines between the answer and the samples: the flag, the meanings, the claim's label.
    fn summary_lines(&self, cx: &Cx, meanings: Option<Line<'static>>) -> Vec<Line<'static>> {
        let t = cx.theme;
        let Some(tg) = self.target() else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        if tg.refused {
            lines.push(Line::styled(
                " a refusal without content: set aside (not classified, not sampled)",
                t.warning(),
            ));
        } else if let Some(o) = self.outcome() {
            let checked = o.conflicts + o.consistent + o.unparsed;
            let mut spans = if o.flagged() {
                vec![Span::styled(
                    " FLAGGED ",
                    t.error().add_modifier(Modifier::BOLD | Modifier::REVERSED),
                )]
            } else if o.undecided() {
                vec![Span::styled(
                    " undecided: no verdict could be read ",
                    t.warning().add_modifier(Modifier::BOLD),
                )]
            } else if o.complete() {
                vec![Span::styled(
                    " not flagged ",
                    t.success().add_modifier(Modifier::BOLD),
                )]
            } else {
                vec![Span::styled(" checking ", t.accent())]
            };
            spans.push(Span::styled(
                format!(
                    " {} of {} pairs conflict (OR rule: any conflict flags){}",
                    o.conflicts,
                    o.k,
                    if checked < o.k {
                        format!(" · {checked}/{} checked", o.k)
                    } else {
                        String::new()
                    }
                ),
                t.base(),
            ));
            if let Some(r) = o.rate() {
                // Said where it is shown: an unreadable verdict counts half in the rate.
                let half = if o.unparsed > 0 {
                    " (an unreadable verdict counts 0.5)"
                } else {
                    ""
                };
                spans.push(Span::styled(
                    format!(" · conflict rate {r:.2}{half}"),
                    t.muted(),
                ));
            }
            if o.unparsed > 0 {
                spans.push(Span::styled(
                    format!(" · {} unreadable verdicts", o.unparsed),
                    t.warning(),
                ));
            }
            lines.push(Line::from(spans));
        }
        if let Some(m) = meanings {
            lines.push(m);
        }
        if let Some(label) = tg.label {
            let class = match (tg.class, &tg.class_error) {
                (Some(Class::Unparsed), _) => "unreadable".to_string(),
                (Some(c), _) => c.as_str().to_uppercase(),
                (None, Some(e)) => format!("failed ({})", one_line(e)),
                (None, None) => "…".into(),
            };
            let verdict = match crate::detect::results::hallucinated(tg) {
                Some(true) => Span::styled(
                    " → hallucinated reference",
                    t.error().add_modifier(Modifier::BOLD),
                ),
                Some(false) => Span::styled(" → factual reference", t.success()),
                None => Span::raw(""),
            };
            lines.push(Line::from(vec![
                Span::styled(" label ", t.muted()),
                Span::styled(
                    label.as_str().to_uppercase(),
                    t.base().add_modifier(Modifier::BOLD),
                ),
                Span::styled(
                    " · the model classifies it from its reference as ",
                    t.muted(),
                ),
                Span::styled(class, t.base().add_modifier(Modifier::BOLD)),
                verdict,
            ]));
        }
        lines
    }

    fn draw_list(&mut self, cx: &Cx, f: &mut Frame, area: Rect, meanings: Option<&Meanings>) {
        let t = cx.theme;
        let block = pane(t, Line::from(" Samples and pair verdicts "), true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        self.list = area;
        let Some(tg) = self.target().cloned() else {
            return;
        };
        let k = self.k();
        let rows_fit = (inner.height as usize / 2).max(1);
        let off = self.sel.saturating_sub(rows_fit.saturating_sub(1));
        self.list_off = off;
        let mut lines = Vec::new();
        for kk in (0..k).skip(off).take(rows_fit) {
            let step_s = Step::Sample {
                round: self.round,
                k: kk,
            };
            // The run's first wording is the one shown (other wordings are reported per
            // wording by the claims table).
            let step_p = Step::Pair {
                round: self.round,
                k: kk,
                wording: 0,
            };
            let sample = self.sample(kk);
            let pair = self.pair(kk);
            let (mark, verdict) = verdict_spans(pair, t);
            let selected = kk as usize == self.sel;
            let mut head = vec![
                Span::styled(
                    format!("{} #{:<2} ", if selected { "▶" } else { " " }, kk + 1),
                    if selected { t.accent() } else { t.muted() },
                ),
                mark,
                verdict,
            ];
            // The sample's meaning (answers are 0, the answer under test; then the samples).
            if let Some(m) = meanings.and_then(|(_, ids, _)| ids.get(kk as usize + 1)) {
                head.push(Span::styled(format!("  m{}", m + 1), t.accent()));
            }
            match (pair, sample) {
                (Some(p), _) => {
                    if let Some(e) = &p.explanation {
                        head.push(Span::styled(format!("  {}", one_line(e)), t.base()));
                        // The clashing phrases, marked as the pair view marks them.
                        for (side, q) in [("A", &p.quote_a), ("B", &p.quote_b)] {
                            if let Some(q) = q.as_deref().filter(|q| !q.trim().is_empty()) {
                                head.push(Span::styled(format!("  {side} "), t.muted()));
                                head.push(Span::styled(
                                    format!("“{}”", one_line(q)),
                                    t.error().add_modifier(Modifier::BOLD | Modifier::REVERSED),
                                ));
                            }
                        }
                    } else if let Some(e) = &p.error {
                        head.push(Span::styled(format!("  {}", one_line(e)), t.error()));
                    }
                }
                (None, Some(s)) if s.text.is_some() => {
                    let live = self.live.get(&(tg.idx, step_p));
                    head.push(Span::styled(
                        if live.is_some() {
                            "  checking the pair…"
                        } else {
                            "  waiting for the pair check"
                        },
                        t.muted(),
                    ));
                }
                _ => {}
            }
            let preview = match sample {
                Some(s) => match (&s.text, &s.error) {
                    (Some(text), _) => Span::styled(
                        format!(
                            "      {}{}",
                            if s.cached { "(cached) " } else { "" },
                            one_line(text)
                        ),
                        t.muted(),
                    ),
                    (None, Some(e)) => {
                        Span::styled(format!("      sample failed: {}", one_line(e)), t.error())
                    }
                    _ => Span::raw(""),
                },
                None => match self.live.get(&(tg.idx, step_s)) {
                    Some(l) if l.retry.is_some() => Span::styled(
                        format!(
                            "      retry {}: {}",
                            l.attempt,
                            one_line(l.retry.as_deref().unwrap_or(""))
                        ),
                        t.warning(),
                    ),
                    Some(l) if l.text.is_empty() => Span::styled("      sending…", t.muted()),
                    Some(l) => Span::styled(
                        format!("      streaming: {}", one_line(&l.text)),
                        t.accent(),
                    ),
                    None if self.running => Span::styled("      queued", t.muted()),
                    None => Span::styled("      not sampled", t.muted()),
                },
            };
            let mut l1 = Line::from(head);
            let mut l2 = Line::from(vec![preview]);
            if selected {
                l1 = l1.style(t.selected(true));
                l2 = l2.style(t.selected(true));
            }
            lines.push(l1);
            lines.push(l2);
        }
        f.render_widget(Paragraph::new(lines), inner);
        scrollbar(f, area, k as usize * 2, off * 2, inner.height as usize);
    }
}

/// The mark and word of a pair verdict (readable without colour).
fn verdict_spans(p: Option<&PairRecord>, t: &Theme) -> (Span<'static>, Span<'static>) {
    match p.map(|p| p.verdict) {
        Some(Verdict::Conflict) => (
            Span::styled("✗ ", t.error().add_modifier(Modifier::BOLD)),
            Span::styled("CONFLICT  ", t.error().add_modifier(Modifier::BOLD)),
        ),
        Some(Verdict::Consistent) => (
            Span::styled("✓ ", t.success()),
            Span::styled("consistent", t.success()),
        ),
        Some(Verdict::Unparsed) => (
            Span::styled("? ", t.warning()),
            Span::styled("unreadable", t.warning()),
        ),
        Some(Verdict::Failed) => (
            Span::styled("! ", t.error()),
            Span::styled("judge failed", t.error()),
        ),
        None => (
            Span::styled("· ", t.muted()),
            Span::styled("…         ", t.muted()),
        ),
    }
}
