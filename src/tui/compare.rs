//! Key handling of the compare screen (answers side by side).

use ratatui::widgets::{Paragraph, Wrap};

use super::app::{App, Command, Screen};
use super::keymap::Action;
use super::layout::CompareAreas;

impl App {
    /// The models shown as panes for the current compare item.
    pub fn compare_models(&self) -> Vec<String> {
        match self.compare.item() {
            Some(i) => self.runs.models_for(i),
            None => Vec::new(),
        }
    }

    pub fn compare_areas(&self) -> CompareAreas {
        CompareAreas::new(self.area, self.compare_models().len())
    }

    /// Rows the text of a model's answer takes in its pane, and the pane's inner height.
    pub fn pane_lines(&self, model: &str, pane: usize) -> (usize, usize) {
        let areas = self.compare_areas();
        let Some(rect) = areas.panes.get(pane) else {
            return (0, 0);
        };
        let inner_w = rect.width.saturating_sub(2).max(1);
        let inner_h = rect.height.saturating_sub(2) as usize;
        let text = self
            .compare
            .item()
            .and_then(|i| {
                self.runs
                    .answers
                    .get(&(i, model.to_string(), self.compare.sample))
            })
            .map(|a| crate::text::sanitize(&a.text).into_owned())
            .unwrap_or_default();
        let lines = Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .line_count(inner_w);
        (lines, inner_h)
    }

    /// The scroll offset a pane shows: the tail while following, else its own offset.
    pub fn pane_offset(&self, model: &str, pane: usize) -> u16 {
        let (lines, h) = self.pane_lines(model, pane);
        let max = lines.saturating_sub(h) as u16;
        match self.compare.scroll.get(model) {
            Some(&(off, false)) => off.min(max),
            _ => max,
        }
    }

    fn scroll_pane(&mut self, delta: i32) {
        let models = self.compare_models();
        let Some(model) = models.get(self.compare.pane).cloned() else {
            return;
        };
        let (lines, h) = self.pane_lines(&model, self.compare.pane);
        let max = lines.saturating_sub(h) as i32;
        let cur = self.pane_offset(&model, self.compare.pane) as i32;
        let new = (cur + delta).clamp(0, max);
        // Scrolling to the bottom resumes following the stream.
        let follow = new >= max && delta > 0;
        self.compare.scroll.insert(model, (new as u16, follow));
    }

    fn step_item(&mut self, forward: bool) {
        let n = self.compare.items.len();
        if n == 0 {
            return;
        }
        self.compare.pos = if forward {
            (self.compare.pos + 1).min(n - 1)
        } else {
            self.compare.pos.saturating_sub(1)
        };
        self.compare.scroll.clear();
        self.compare.sample = 0;
        if let Some(i) = self.compare.item() {
            self.commands.push(Command::LoadStored(i));
        }
    }

    pub fn apply_compare(&mut self, a: Action) {
        let panes = self.compare_models().len();
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.popup = Some(super::app::Popup::Help { scroll: 0 }),
            Action::Cancel => {
                if self.runs.active.as_ref().is_some_and(|r| r.running()) {
                    self.commands.push(Command::CancelRun);
                    self.notice = Some("cancelling: finished answers are kept".into());
                } else {
                    self.screen = self.compare.return_to.unwrap_or(Screen::Browse);
                }
            }
            Action::Back => self.screen = self.compare.return_to.unwrap_or(Screen::Browse),
            Action::Heatmap => self.open_heatmap(),
            Action::NextPane | Action::Expand if panes > 0 => {
                self.compare.pane = (self.compare.pane + 1) % panes;
            }
            Action::PrevPane | Action::Collapse if panes > 0 => {
                self.compare.pane = (self.compare.pane + panes - 1) % panes;
            }
            Action::Down => self.scroll_pane(1),
            Action::Up => self.scroll_pane(-1),
            Action::PageDown => self.scroll_pane(10),
            Action::PageUp => self.scroll_pane(-10),
            Action::Top => self.scroll_pane(i32::MIN / 2),
            Action::Bottom => self.scroll_pane(i32::MAX / 2),
            Action::NextItem => self.step_item(true),
            Action::PrevItem => self.step_item(false),
            Action::NextSample => {
                if let Some(i) = self.compare.item() {
                    let n = self.runs.samples_for(i);
                    self.compare.sample = (self.compare.sample + 1) % n.max(1);
                    self.compare.scroll.clear();
                }
            }
            Action::Rescore => {
                if let Some(i) = self.compare.item() {
                    self.rescore(i, true);
                    self.notice = Some("scoring again".into());
                }
            }
            Action::ToggleJudge => self.compare.show_judge = !self.compare.show_judge,
            Action::Run => {
                self.screen = Screen::Browse;
                self.apply(Action::Run);
            }
            _ => {}
        }
        self.compare.pane = self.compare.pane.min(panes.saturating_sub(1));
    }
}
