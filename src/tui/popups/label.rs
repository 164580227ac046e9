//! The label popup (`L`): a person's verdict on an answer, or their grade of one sentence of it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use crate::text::one_line;
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::keymap::Mode;
use crate::tui::line_input::{Edit, LineInput};
use crate::tui::widgets::{pane, popup_area};

/// Labels the focused answer (the compare screen's `L`): hallucinated, correct or can't tell
/// (`tab` or the arrows choose), an optional note, `enter` saves, `esc` cancels. A label never
/// replaces an earlier one: it is added, and the newest of a reviewer's counts. On one sentence
/// of the answer (the where-in-the-answer screen's `L`): accurate, minor or major inaccurate.
pub(crate) struct LabelAnswer {
    run: String,
    job: u32,
    item_id: String,
    model: String,
    /// What the pane is called (the model's name, or "model A" in blind mode).
    shown: String,
    /// The sentence graded, when it is one sentence of the answer.
    sentence: Option<crate::tui::jobs::labels::SentencePick>,
    choice: usize,
    note: LineInput,
}

impl LabelAnswer {
    pub(crate) fn new(run: &str, job: u32, item_id: &str, model: &str, shown: &str) -> LabelAnswer {
        LabelAnswer {
            run: run.to_string(),
            job,
            item_id: item_id.to_string(),
            model: model.to_string(),
            shown: shown.to_string(),
            sentence: None,
            choice: 0,
            note: LineInput::default(),
        }
    }

    /// The popup grading one sentence of the answer instead.
    pub(crate) fn on_sentence(mut self, s: crate::tui::jobs::labels::SentencePick) -> Self {
        self.sentence = Some(s);
        self
    }

    pub(crate) fn label(&self) -> crate::store::Label {
        crate::store::Label::ALL[self.choice % crate::store::Label::ALL.len()]
    }

    pub(crate) fn grade(&self) -> crate::sentences::labels::Grade {
        use crate::sentences::labels::Grade;
        Grade::ALL[self.choice % Grade::ALL.len()]
    }

    /// The choices' words, in order.
    fn choices(&self) -> Vec<&'static str> {
        match self.sentence {
            Some(_) => crate::sentences::labels::Grade::ALL
                .iter()
                .map(|g| g.words())
                .collect(),
            None => crate::store::Label::ALL.iter().map(|l| l.words()).collect(),
        }
    }

    fn save(&self) -> Cmd {
        let note = self.note.text().trim().to_string();
        match &self.sentence {
            Some(s) => Cmd::job(crate::tui::jobs::labels::SaveSentenceLabel {
                run: self.run.clone(),
                job: self.job,
                item_id: self.item_id.clone(),
                model: self.model.clone(),
                sentence: s.clone(),
                grade: self.grade(),
                note,
            }),
            None => Cmd::job(crate::tui::jobs::labels::SaveLabel {
                run: self.run.clone(),
                job: self.job,
                item_id: self.item_id.clone(),
                model: self.model.clone(),
                label: self.label(),
                note,
            }),
        }
    }
}

impl Component for LabelAnswer {
    fn id(&self) -> ScreenId {
        ScreenId::LabelAnswer
    }
    fn mode(&self) -> Mode {
        Mode::Picker
    }
    fn takes_text(&self) -> bool {
        true
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        use crossterm::event::KeyCode;
        let n = self.choices().len();
        match input {
            Input::Key(k) => match k.code {
                KeyCode::Tab | KeyCode::Down | KeyCode::Right => {
                    self.choice = (self.choice + 1) % n;
                    Vec::new()
                }
                KeyCode::BackTab | KeyCode::Up | KeyCode::Left => {
                    self.choice = (self.choice + n - 1) % n;
                    Vec::new()
                }
                _ => match self.note.key(k) {
                    Edit::Cancel => vec![Cmd::ClosePopup],
                    Edit::Submit => vec![Cmd::ClosePopup, self.save()],
                    Edit::Typed => Vec::new(),
                },
            },
            Input::Paste(text) => {
                self.note.paste(&text);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let r = popup_area(area, 64, 8);
        f.render_widget(Clear, r);
        let title = match &self.sentence {
            Some(s) => format!(
                " Grade sentence {} of {}'s answer ",
                s.index + 1,
                one_line(&self.shown)
            ),
            None => format!(" Label {}'s answer ", one_line(&self.shown)),
        };
        let block = pane(t, Line::from(title), true);
        let inner = block.inner(r);
        f.render_widget(block, r);
        let [choices, note_label, field, hint] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(1),
        ])
        .areas(inner);
        let spans: Vec<Span> = self
            .choices()
            .into_iter()
            .enumerate()
            .flat_map(|(i, words)| {
                let style = if i == self.choice {
                    t.selected(true)
                } else {
                    t.base()
                };
                [Span::styled(format!(" {words} "), style), Span::raw(" ")]
            })
            .collect();
        f.render_widget(Paragraph::new(Line::from(spans)), choices);
        f.render_widget(
            Paragraph::new(Line::styled("note (optional):", t.muted())),
            note_label,
        );
        self.note.draw(f, field, t);
        f.render_widget(
            Paragraph::new(Line::styled(
                "tab chooses · enter saves (earlier labels are kept) · esc cancels",
                t.muted(),
            ))
            .wrap(Wrap { trim: true }),
            hint,
        );
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
