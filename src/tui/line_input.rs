//! A one-line text field: a run's name, a label's note, the browse screen's search. What a key
//! does to it, pasted text kept on one line, and its drawing are here once; whoever holds one
//! decides what enter and esc mean.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui_textarea::TextArea;

use crate::theme::Theme;

/// What a key did to a [`LineInput`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Esc or ctrl-c: the holder closes the field (the text stays until it is dropped).
    Cancel,
    /// Enter: the holder takes [`LineInput::text`].
    Submit,
    /// Anything else went to the field (typing, moving, deleting).
    Typed,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct LineInput {
    area: TextArea<'static>,
}

impl LineInput {
    /// A field holding `text`, the cursor after it.
    pub(crate) fn new(text: &str) -> LineInput {
        let mut area = TextArea::default();
        area.insert_str(one_line(text));
        LineInput { area }
    }

    pub(crate) fn key(&mut self, k: KeyEvent) -> Edit {
        match k.code {
            KeyCode::Esc => Edit::Cancel,
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Edit::Cancel,
            // Never a second line: enter is the holder's.
            KeyCode::Enter => Edit::Submit,
            _ => {
                self.area.input(k);
                Edit::Typed
            }
        }
    }

    /// Pasted text, its line breaks made spaces.
    pub(crate) fn paste(&mut self, text: &str) {
        self.area.insert_str(one_line(text));
    }

    /// What the field holds.
    pub(crate) fn text(&self) -> String {
        self.area.lines().join(" ")
    }

    /// Draws the field in `area` (one row), in the theme's base style.
    pub(crate) fn draw(&mut self, f: &mut Frame, area: Rect, t: &Theme) {
        self.area.set_style(t.base());
        self.area.set_cursor_line_style(Style::default());
        f.render_widget(&self.area, area);
    }
}

fn one_line(text: &str) -> String {
    text.replace("\r\n", " ").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn typed(field: &mut LineInput, s: &str) {
        for c in s.chars() {
            assert_eq!(field.key(key(KeyCode::Char(c))), Edit::Typed);
        }
    }

    #[test]
    fn typing_editing_and_the_keys_that_end_it() {
        let mut field = LineInput::new("run ");
        typed(&mut field, "one");
        assert_eq!(field.text(), "run one");
        assert_eq!(field.key(key(KeyCode::Backspace)), Edit::Typed);
        assert_eq!(field.key(key(KeyCode::Left)), Edit::Typed);
        typed(&mut field, "x");
        assert_eq!(field.text(), "run oxn");
        assert_eq!(field.key(key(KeyCode::Enter)), Edit::Submit);
        assert_eq!(field.text(), "run oxn", "enter adds no line");
        assert_eq!(field.key(key(KeyCode::Esc)), Edit::Cancel);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(field.key(ctrl_c), Edit::Cancel);
        assert_eq!(field.text(), "run oxn");
    }

    #[test]
    fn pasted_and_given_text_stays_on_one_line() {
        let mut field = LineInput::new("a\nb");
        field.paste("c\r\nd\re");
        assert_eq!(field.text(), "a bc d e");
    }
}
