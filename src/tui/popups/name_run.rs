//! Naming a run (the runs screen's `n`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Wrap};

use crate::text::one_line;
use crate::tui::component::{Cmd, Component, Cx, Input, ScreenId};
use crate::tui::keymap::Mode;
use crate::tui::line_input::{Edit, LineInput};
use crate::tui::widgets::{pane, popup_area};

/// Names a run (the runs screen's `n`): one line, `enter` saves (an empty name takes the name
/// off), `esc` cancels. On a shared store the name is the team's.
pub(crate) struct NameRun {
    run: String,
    input: LineInput,
}

impl NameRun {
    pub(crate) fn new(run: &str, name: Option<&str>) -> NameRun {
        NameRun {
            run: run.to_string(),
            input: LineInput::new(name.unwrap_or_default()),
        }
    }
}

impl Component for NameRun {
    fn id(&self) -> ScreenId {
        ScreenId::NameRun
    }
    fn mode(&self) -> Mode {
        Mode::Picker
    }
    fn takes_text(&self) -> bool {
        true
    }
    fn update(&mut self, input: Input, _cx: &Cx) -> Vec<Cmd> {
        match input {
            Input::Key(k) => match self.input.key(k) {
                Edit::Cancel => vec![Cmd::ClosePopup],
                Edit::Submit => vec![
                    Cmd::ClosePopup,
                    Cmd::job(crate::tui::jobs::runs::NameRun {
                        run: self.run.clone(),
                        name: self.input.text(),
                    }),
                ],
                Edit::Typed => Vec::new(),
            },
            Input::Paste(text) => {
                self.input.paste(&text);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
    fn draw(&mut self, f: &mut Frame, area: Rect, cx: &Cx) {
        let t = cx.theme;
        let r = popup_area(area, 64, 6);
        f.render_widget(Clear, r);
        let block = pane(
            t,
            Line::from(format!(" Name run {} ", one_line(&self.run))),
            true,
        );
        let inner = block.inner(r);
        f.render_widget(block, r);
        let [field, hint] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
        self.input.draw(f, field, t);
        f.render_widget(
            Paragraph::new(Line::styled(
                "enter saves (an empty name takes it off) · esc cancels",
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
