//! Where in the answer (`w` on a compare pane): one stored answer, each sentence shaded in place
//! by how little the model's other samples back it up (`sentences`: the prompt method with the
//! judge's stored verdicts, unigram, or the answer's tokens; `m` switches), a mark before each
//! so it reads without colour. `↑`/`↓` move over the sentences; under the answer, the sentence
//! under the cursor with its scores and each sample's verdict and text. `w` asks the judge (`u`
//! chooses it) the checks not stored yet, each shown as it is saved. `L` grades the sentence
//! under the cursor (accurate, minor or major inaccurate; `z` takes it back), as people's
//! labels the sentence methods are measured against (`prism signals`).

use crate::tui::jobs::read_or_fail;
use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use tokio_util::sync::CancellationToken;

use crate::sentences::labels::{Grade, SentenceLabel};
use crate::sentences::{Answer, Known, Method, Scored, SentenceEvent, Support, Verdict};
use crate::text::{one_line, sanitize};
use crate::theme::Theme;
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::jobs::{Effects, Failed, Job, JobCx, Msg, Outcome, Slot};
use crate::tui::keymap::{Action, Mode};
use crate::tui::widgets::{status_lines, status_rows, title_line, truncate};

pub struct Sentences {
    run: String,
    job: u32,
    /// The answer, its samples and the verdicts known, once read.
    pub view: Option<(Answer, Known)>,
    /// Why there is nothing to show, once read.
    missing: Option<String>,
    /// The judge whose verdicts are shown (the app's, when the screen opened or asked).
    judge: Option<String>,
    pub cursor: usize,
    pub method: Method,
    scroll: u16,
    asking: bool,
    /// People's grades of this answer's sentences (every reviewer's), and who "you" are.
    pub grades: Vec<SentenceLabel>,
    me: String,
}

impl Sentences {
    pub fn new(run: String, job: u32) -> Sentences {
        Sentences {
            run,
            job,
            view: None,
            missing: None,
            judge: None,
            cursor: 0,
            method: Method::Prompt,
            scroll: 0,
            asking: false,
            grades: Vec::new(),
            me: String::new(),
        }
    }

    /// Your newest grade of sentence `i`, and how many others graded it.
    fn grade_of(&self, i: usize) -> (Option<Grade>, usize) {
        let mut mine = None;
        let mut others = 0;
        for l in crate::sentences::labels::newest(&self.grades) {
            if l.sentence as usize == i {
                if l.reviewer == self.me {
                    mine = Some(l.label);
                } else {
                    others += 1;
                }
            }
        }
        (mine, others)
    }

    /// `L`: the popup grading the sentence under the cursor.
    fn grade(&self) -> Cmd {
        let Some((a, _)) = &self.view else {
            return Cmd::Notice("no answer to grade yet".into());
        };
        let Some(s) = a.sentences.get(self.cursor) else {
            return Cmd::Notice("no sentence in this answer to grade".into());
        };
        let pick = crate::tui::jobs::labels::SentencePick {
            index: self.cursor as u32,
            start: s.start as u32,
            end: s.end as u32,
            text: s.text.clone(),
        };
        Cmd::Popup(Box::new(
            crate::tui::popups::LabelAnswer::new(
                &self.run,
                self.job,
                &a.group.item_id,
                &a.group.model,
                &a.group.model,
            )
            .on_sentence(pick),
        ))
    }

    fn load(&mut self, cx: &Cx) -> Vec<Cmd> {
        self.judge = cx.judge.map(str::to_string);
        vec![
            Cmd::job(Load {
                run: self.run.clone(),
                job: self.job,
                judge: self.judge.clone(),
            }),
            Cmd::job(LoadGrades {
                run: self.run.clone(),
                job: self.job,
            }),
        ]
    }

    /// Every sentence scored, with its doubt in 0..=1 by the shading method (`None`: that method
    /// has no score for it).
    pub fn scored(&self) -> Vec<(Scored, Option<f64>)> {
        let Some((a, known)) = &self.view else {
            return Vec::new();
        };
        let scored = a.score(&Method::ALL, known);
        let doubt: Vec<Option<f64>> = match self.method {
            Method::Prompt => scored.iter().map(|s| s.scores.prompt).collect(),
            Method::Logprob => scored
                .iter()
                .map(|s| s.scores.logprob_avg.map(|v| 1.0 - (-v).exp()))
                .collect(),
            // Unbounded: relative to the answer's own sentences. By the average: with a few
            // samples the maximum saturates (every sentence holds a word no sample repeats).
            Method::Unigram => {
                let v: Vec<f64> = scored.iter().filter_map(|s| s.scores.unigram_avg).collect();
                let (lo, hi) = v
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
                scored
                    .iter()
                    .map(|s| {
                        s.scores
                            .unigram_avg
                            .map(|u| if hi > lo { (u - lo) / (hi - lo) } else { 0.0 })
                    })
                    .collect()
            }
        };
        scored.into_iter().zip(doubt).collect()
    }

    /// `w`: the judge asked the checks not stored yet.
    fn ask(&mut self, cx: &Cx) -> Vec<Cmd> {
        let Some((answer, known)) = &self.view else {
            return Vec::new();
        };
        let Some(judge) = cx
            .judge
            .and_then(|j| cx.models.iter().find(|m| m.name == j))
        else {
            return vec![Cmd::Notice(
                "choose a judge first (u): it is asked whether each sample supports each sentence"
                    .into(),
            )];
        };
        if answer.samples().is_empty() {
            return vec![Cmd::Notice(NO_SAMPLES.into())];
        }
        // Another judge than the one shown: its stored verdicts first (w again asks the rest).
        if self.judge.as_deref() != Some(judge.name.as_str()) {
            let mut out = self.load(cx);
            out.push(Cmd::Notice(format!(
                "showing judge {}'s stored verdicts: {} again asks what is missing",
                one_line(&judge.name),
                cx.keymap.hint(Mode::Where, Action::WhereInAnswer)
            )));
            return out;
        }
        let (todo, _) = crate::sentences::to_ask(std::slice::from_ref(answer), known);
        if todo.is_empty() {
            return vec![Cmd::Notice(format!(
                "every check is stored for judge {}",
                one_line(&judge.name)
            ))];
        }
        self.asking = true;
        self.method = Method::Prompt;
        vec![
            Cmd::Notice(format!(
                "asking {} {} sentence×sample check(s)...",
                one_line(&judge.name),
                todo.len(),
            )),
            Cmd::job(Ask {
                answer: answer.clone(),
                known: known.clone(),
                judge: Box::new(judge.clone()),
            }),
        ]
    }
}

const NO_SAMPLES: &str = "this answer has no samples: prism sentences RUN --samples 5 draws some, or x (contradictions) samples some";

impl Component for Sentences {
    fn id(&self) -> ScreenId {
        ScreenId::Sentences
    }
    fn mode(&self) -> Mode {
        Mode::Where
    }
    fn on_open(&mut self, cx: &Cx) -> Vec<Cmd> {
        self.load(cx)
    }
    fn update(&mut self, input: Input, cx: &Cx) -> Vec<Cmd> {
        let Input::Action(a) = input else {
            return Vec::new();
        };
        let n = self.view.as_ref().map_or(0, |(a, _)| a.sentences.len());
        match a {
            Action::Up => self.cursor = self.cursor.saturating_sub(1),
            Action::Down => self.cursor = (self.cursor + 1).min(n.saturating_sub(1)),
            Action::Metric => {
                self.method = match self.method {
                    Method::Prompt => Method::Unigram,
                    Method::Unigram => Method::Logprob,
                    Method::Logprob => Method::Prompt,
                };
            }
            Action::WhereInAnswer => return self.ask(cx),
            Action::Label => return vec![self.grade()],
            Action::ChooseJudge => {
                return vec![Cmd::Popup(Box::new(crate::tui::popups::JudgePicker::new(
                    cx,
                )))];
            }
            Action::PageUp | Action::PageDown => {
                self.scroll = crate::tui::nav::page(self.scroll, a).unwrap_or(self.scroll);
            }
            Action::Cancel | Action::Back => return vec![Cmd::Pop],
            Action::Quit => return vec![Cmd::Quit],
            Action::Help => {
                return vec![Cmd::Popup(Box::new(crate::tui::popups::Help::new(
                    Mode::Where,
                )))];
            }
            _ => {}
        }
        Vec::new()
    }
    fn on_msg(&mut self, msg: &Msg, _cx: &Cx) -> Vec<Cmd> {
        use crate::tui::jobs::labels::{LabelsChanged, SentenceLabelled};
        if let Some(SentenceLabelled(l)) = msg.get()
            && l.run_id == self.run
            && l.job_idx == self.job
        {
            self.grades.push(l.clone());
        }
        if msg.get::<LabelsChanged>().is_some() {
            return vec![Cmd::job(LoadGrades {
                run: self.run.clone(),
                job: self.job,
            })];
        }
        if let Some(Grades(g, me)) = msg.get() {
            self.grades = g.clone();
            self.me = me.clone();
        }
        if let Some(Loaded(got)) = msg.get() {
            match &**got {
                Some((answer, known, judge)) => {
                    self.cursor = self.cursor.min(answer.sentences.len().saturating_sub(1));
                    self.view = Some((answer.clone(), known.clone()));
                    self.judge = judge.clone();
                }
                None => {
                    self.missing = Some("the answer is not in the store, or has no text".into())
                }
            }
        }
        if let Some(ev) = msg.get::<SentenceEvent>() {
            match ev {
                SentenceEvent::Saved(r) => {
                    if let Some((_, known)) = &mut self.view {
                        known.add(r);
                    }
                }
                SentenceEvent::Life(crate::engine::harness::Lifecycle::Finished(s)) => {
                    self.asking = false;
                    return vec![Cmd::Notice(format!(
                        "the judge answered {} check(s){}",
                        s.done,
                        if s.failed > 0 {
                            format!(", {} failed (w asks them again)", s.failed)
                        } else {
                            String::new()
                        }
                    ))];
                }
                _ => {}
            }
        }
        if let Some(Failed(e)) = msg.get() {
            self.asking = false;
            return vec![Cmd::Notice(e.clone())];
        }
        Vec::new()
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        f.render_widget(Block::default().style(t.base()), area);
        let k = |a| cx.keymap.hint(Mode::Where, a);
        let hints = format!(
            " ↑↓ sentence  {} grade  {} shade by  {} ask the judge  {} judge  {} back  {} help",
            k(Action::Label),
            k(Action::Metric),
            k(Action::WhereInAnswer),
            k(Action::ChooseJudge),
            k(Action::Back),
            k(Action::Help)
        );
        let [title, legend, body, detail, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Percentage(45),
            Constraint::Min(4),
            Constraint::Length(status_rows(cx.notice, &hints, area.width)),
        ])
        .areas(area);
        let scored = self.scored();
        let head = match &self.view {
            Some((a, _)) => format!(
                "{} · {} · {} sample(s) · judge {}",
                one_line(&a.group.model),
                one_line(&a.group.item_id),
                a.samples().len(),
                self.judge.as_deref().map_or("none (u)".into(), one_line)
            ),
            None => self.missing.clone().unwrap_or_else(|| "reading...".into()),
        };
        f.render_widget(
            Paragraph::new(title_line(
                t,
                vec![
                    Span::styled(
                        " where in the answer ",
                        t.base().add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(
                        truncate(&head, area.width.saturating_sub(24) as usize),
                        t.muted(),
                    ),
                ],
            )),
            title,
        );
        f.render_widget(Paragraph::new(legend_line(t, self.method)), legend);
        let graded: Vec<Option<Grade>> = (0..scored.len()).map(|i| self.grade_of(i).0).collect();
        let text = answer_lines(
            self.view.as_ref().map(|v| &v.0),
            &scored,
            &graded,
            self.cursor,
            t,
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border(true))
            .title(Span::styled(" the answer ", t.accent()));
        f.render_widget(
            Paragraph::new(text)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0))
                .block(block),
            body,
        );
        let lines = self.detail_lines(&scored, detail.width.saturating_sub(2) as usize, t);
        f.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }).block(
                Block::default()
                    .borders(Borders::TOP)
                    .border_style(t.border(false)),
            ),
            detail,
        );
        status_lines(f, status, t, cx.notice, &hints);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Sentences {
    /// The sentence under the cursor: its scores, then each sample's verdict and text.
    fn detail_lines(
        &self,
        scored: &[(Scored, Option<f64>)],
        w: usize,
        t: &Theme,
    ) -> Vec<Line<'static>> {
        let Some((answer, known)) = &self.view else {
            return Vec::new();
        };
        let Some((s, _)) = scored.get(self.cursor) else {
            return vec![Line::styled(
                "no sentence in this answer".to_string(),
                t.muted(),
            )];
        };
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        let sc = &s.scores;
        let mut out = vec![Line::styled(
            format!(
                "sentence {}/{} · prompt {} · unigram {} (avg {}) · logprob {} (max {})",
                self.cursor + 1,
                scored.len(),
                f(sc.prompt),
                f(sc.unigram),
                f(sc.unigram_avg),
                f(sc.logprob_avg),
                f(sc.logprob_max)
            ),
            t.accent(),
        )];
        let (mine, others) = self.grade_of(self.cursor);
        out.push(Line::styled(
            format!(
                "your grade: {}{}",
                mine.map_or("none (L grades it)", |g| g.words()),
                match others {
                    0 => String::new(),
                    n => format!(" · {n} other reviewer(s) graded it"),
                }
            ),
            if mine.is_some_and(|g| g != Grade::Accurate) {
                t.warning()
            } else {
                t.muted()
            },
        ));
        if answer.samples().is_empty() {
            out.push(Line::styled(NO_SAMPLES.to_string(), t.muted()));
        }
        for (i, x) in answer.samples().iter().enumerate() {
            let (said, style) = match known.get(&s.sentence.text, x) {
                Some(Verdict::Yes) => ("yes    ", t.success()),
                Some(Verdict::No) => ("no     ", t.error()),
                Some(Verdict::Other) => ("neither", t.warning()),
                None if self.asking => ("asking ", t.muted()),
                None => ("-      ", t.muted()),
            };
            out.push(Line::from(vec![
                Span::styled(format!("{:>2} {said} ", i + 1), style),
                Span::styled(
                    truncate(&one_line(&sanitize(x)), w.saturating_sub(12)),
                    t.base(),
                ),
            ]));
        }
        out
    }
}

/// How doubtful a sentence looks, by its doubt in 0..=1.
fn band(doubt: Option<f64>) -> (&'static str, u8) {
    match doubt {
        None => ("-", 0),
        Some(d) if d < 0.25 => ("ok", 1),
        Some(d) if d < 0.5 => ("?", 2),
        Some(d) if d < 0.75 => ("!", 3),
        Some(_) => ("!!", 4),
    }
}

/// The token view's colour scale: plain, accent, warning underlined, error bold underlined.
fn style_of(level: u8, t: &Theme) -> Style {
    match level {
        0 => t.muted(),
        1 => t.base(),
        2 => t.accent(),
        3 => t.warning().add_modifier(Modifier::UNDERLINED),
        _ => t
            .error()
            .add_modifier(Modifier::UNDERLINED)
            .add_modifier(Modifier::BOLD),
    }
}

fn legend_line(t: &Theme, method: Method) -> Line<'static> {
    let how = match method {
        Method::Prompt => "prompt: samples not backing it",
        Method::Unigram => "unigram: mean word surprise, relative",
        Method::Logprob => "tokens: 1 - geometric mean p",
    };
    let mut spans = vec![Span::styled(format!(" {how}: "), t.muted())];
    // Short enough for 80 columns with the longest method's words.
    for (mark, level, words) in [
        ("ok", 1, "<.25"),
        ("?", 2, "<.5"),
        ("!", 3, "<.75"),
        ("!!", 4, "≥.75"),
        ("-", 0, "none"),
    ] {
        spans.push(Span::styled(format!("[{mark}]"), style_of(level, t)));
        spans.push(Span::styled(format!("{words} "), t.muted()));
    }
    Line::from(spans)
}

/// The answer with each sentence in place, a mark `[n·mark]` before it, shaded by its doubt
/// (with your grade after the mark when you gave one: `·A` accurate, `·m` minor, `·M` major);
/// the sentence under the cursor reversed. Text between sentences is drawn plain.
fn answer_lines(
    answer: Option<&Answer>,
    scored: &[(Scored, Option<f64>)],
    graded: &[Option<Grade>],
    cursor: usize,
    t: &Theme,
) -> Vec<Line<'static>> {
    let Some(a) = answer else {
        return Vec::new();
    };
    let text = a.text();
    let mut lines = vec![Line::default()];
    let mut push = |piece: &str, style: Style| {
        // Model text is untrusted: control sequences out before it is drawn.
        let clean = sanitize(piece).into_owned();
        for (i, part) in clean.split('\n').enumerate() {
            if i > 0 {
                lines.push(Line::default());
            }
            if !part.is_empty() {
                lines
                    .last_mut()
                    .expect("one line at least")
                    .push_span(Span::styled(part.to_string(), style));
            }
        }
    };
    let mut at = 0;
    for (i, (s, doubt)) in scored.iter().enumerate() {
        let s = &s.sentence;
        if s.start > at {
            push(&text[at..s.start], t.base());
        }
        let (mark, level) = band(*doubt);
        let mut style = style_of(level, t);
        if i == cursor {
            style = style.add_modifier(Modifier::REVERSED);
        }
        let yours = match graded.get(i).copied().flatten() {
            Some(Grade::Accurate) => "·A",
            Some(Grade::Minor) => "·m",
            Some(Grade::Major) => "·M",
            _ => "",
        };
        push(&format!("[{}·{mark}{yours}] ", i + 1), style_of(level, t));
        push(&text[s.start..s.end], style);
        at = s.end;
    }
    if at < text.len() {
        push(&text[at..], t.base());
    }
    lines
}

/// Reads one stored answer, its samples and the judge's verdicts on its sentences.
struct Load {
    run: String,
    job: u32,
    judge: Option<String>,
}

/// What [`Load`] read: `None` when the answer is not in the store (or has no text).
#[derive(Debug)]
pub struct Loaded(pub Box<Option<(Answer, Known, Option<String>)>>);

impl Outcome for Loaded {}

impl Job for Load {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let Load { run, job, judge } = *self;
        cx.on_reader(Some("where in the answer needs a store"), move |db| {
            match crate::sentences::of_stored(db, &run, job, judge.as_deref()) {
                Ok(v) => Msg::new(Loaded(Box::new(v))),
                Err(e) => Msg::failed(format!("reading the answer: {e}")),
            }
        });
    }
}

/// Reads people's grades of one answer's sentences.
struct LoadGrades {
    run: String,
    job: u32,
}

/// Every reviewer's grades of the answer's sentences, and who "you" are.
#[derive(Debug)]
pub struct Grades(pub Vec<SentenceLabel>, pub String);

impl Outcome for Grades {}

impl Job for LoadGrades {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        crate::tui::jobs::labels::watch_sentence_labels(cx);
        let LoadGrades { run, job } = *self;
        let me = cx.services.reviewer.clone();
        cx.on_reader(None, move |db| {
            let r = read_or_fail!(db);
            match r.records_where::<SentenceLabel>(Some(("run_id", &run))) {
                Ok(all) => Msg::new(Grades(
                    all.into_iter().filter(|l| l.job_idx == job).collect(),
                    me,
                )),
                Err(e) => Msg::failed(format!("reading the grades: {e}")),
            }
        });
    }
}

/// Asks the judge the checks of one answer not stored yet (the records lane of
/// `prism sentences`); each verdict reaches the screen as it is saved.
struct Ask {
    answer: Answer,
    known: Known,
    judge: Box<crate::provider::ModelConfig>,
}

impl Outcome for SentenceEvent {
    fn apply(&self, fx: &mut Effects<'_>) {
        if let SentenceEvent::Life(l) = self {
            fx.lifecycle(l, "where in the answer");
        }
    }
}

impl Job for Ask {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let Some(handle) = cx.services.store.clone() else {
            return cx.fail("asking the judge needs a store");
        };
        let judge = *self.judge;
        let caller = match crate::engine::Caller::new(
            &judge,
            &cx.services.factory,
            Some(handle.clone()),
            true,
            CancellationToken::new(),
        ) {
            Ok(c) => Arc::new(c),
            Err(e) => return cx.fail(format!("judge {}: {e:#}", judge.name)),
        };
        let answer = self.answer;
        let run = answer.group.source_run.clone().unwrap_or_default();
        let (todo, _) = crate::sentences::to_ask(std::slice::from_ref(&answer), &self.known);
        let unit = Arc::new(Support {
            answers: Arc::new(vec![answer]),
            caller,
            known: std::sync::Mutex::new(self.known),
        });
        let (reply, cancel) = (cx.reply(), CancellationToken::new());
        let (etx, erx) = tokio::sync::mpsc::unbounded_channel();
        let lane = crate::engine::Lane {
            store: handle,
            factory: cx.services.factory.clone(),
            events: etx,
            cancel: cancel.clone(),
        };
        let concurrency = cx.services.concurrency.clamp(1, 8);
        cx.spawn(Slot::Other, cancel, async move {
            let lock = unit.lock(&run);
            let work = async {
                if let Err(e) =
                    crate::engine::records::run(lane, concurrency, &lock, unit, todo).await
                {
                    reply.fail(format!("asking the judge: {e}"));
                }
            };
            tokio::join!(work, reply.forward(erx));
        });
    }
}
