//! The browse screen's `/` search: the items' own text as typed (incremental, from where the
//! user stood), the stored answers once on enter, and n/N through the matches.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use regex::{Regex, RegexBuilder};

use super::{Browse, find_matches};
use crate::dataset::Dataset;
use crate::text::one_line;
use crate::tui::component::{Cmd, Cx};
use crate::tui::line_input::{Edit, LineInput};

/// `/` search: the input while typing, and the matches once there is a query.
#[derive(Debug, Default)]
pub struct Search {
    /// Present while the user is typing the query.
    pub(crate) input: Option<LineInput>,
    pub query: String,
    pub regex: Option<Regex>,
    /// Matching item indices, in dataset order.
    pub matches: Vec<usize>,
    /// Position in `matches` of the item jumped to last.
    pub current: Option<usize>,
    /// How many of `matches` came only from a stored answer's text (asked on enter).
    pub by_answer: usize,
    /// The selection before typing began, restored when the search is cancelled.
    saved: Option<(usize, usize)>,
}

impl Browse {
    /// The items whose stored answers hold the search: added to the matches (when the search is
    /// still the one asked), said, and jumped to when nothing matched before.
    pub(super) fn on_answer_matches(
        &mut self,
        query: &str,
        items: &[String],
        ds: &Dataset,
    ) -> Vec<Cmd> {
        if query != self.search.query.trim() || self.search.input.is_some() {
            return Vec::new();
        }
        let had = self.search.matches.len();
        let mut all = self.search.matches.clone();
        all.extend(items.iter().filter_map(|id| ds.index_of(id)));
        all.sort_unstable();
        all.dedup();
        self.search.by_answer = all.len() - had;
        // Keep the place the user stands on: the match shown stays "match k/n" in the new list.
        let standing = self.search.current.map(|p| self.search.matches[p]);
        self.search.current = standing.and_then(|m| all.iter().position(|&x| x == m));
        self.search.matches = all;
        if had == 0 && !self.search.matches.is_empty() {
            self.goto_match(0, ds);
        }
        vec![Cmd::Notice(format!(
            "\"{}\": {had} items by their text, {} more by a stored answer (n/N step through them)",
            one_line(query),
            self.search.by_answer
        ))]
    }

    pub(super) fn start_search(&mut self) {
        let input = LineInput::new(&self.search.query);
        self.search.saved = Some((self.tree_sel, self.item_sel));
        self.search.input = Some(input);
    }

    pub(super) fn on_search_key(&mut self, k: KeyEvent, cx: &Cx) -> Vec<Cmd> {
        // ctrl-c quits from the search as from anywhere else in the browse screen.
        if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
            return vec![Cmd::Quit];
        }
        let Some(input) = self.search.input.as_mut() else {
            return Vec::new();
        };
        match input.key(k) {
            Edit::Cancel => {
                let saved = self.search.saved.take();
                self.search = Search::default();
                if let Some((t, i)) = saved {
                    self.tree_sel = t.min(self.tree.visible.len().saturating_sub(1));
                    self.item_sel = i;
                }
                self.keep_visible();
            }
            Edit::Submit => {
                self.search.input = None;
                self.search.saved = None;
                if self.search.query.trim().is_empty() {
                    self.search = Search::default();
                } else if cx.can_run {
                    // The items' own text is searched as typed; the stored answers once, now.
                    let query = self.search.query.trim().to_string();
                    return vec![
                        Cmd::job(crate::tui::jobs::runs::SearchAnswers { query }),
                        Cmd::Notice(format!(
                            "{} items match; searching the stored answers too…",
                            self.search.matches.len()
                        )),
                    ];
                }
            }
            Edit::Typed => self.refresh_search(cx.ds),
        }
        Vec::new()
    }

    /// Re-runs the search for the current input text and jumps to the first match at or after
    /// the selection (incremental search).
    pub(super) fn refresh_search(&mut self, ds: &Dataset) {
        let Some(input) = &self.search.input else {
            return;
        };
        let query = input.text();
        if query == self.search.query {
            return;
        }
        self.search.query = query.clone();
        if query.trim().is_empty() {
            self.search.regex = None;
            self.search.matches.clear();
            self.search.current = None;
            return;
        }
        let re = RegexBuilder::new(&regex::escape(query.trim()))
            .case_insensitive(true)
            .build()
            .ok();
        self.search.matches = match &re {
            Some(re) => find_matches(ds, re),
            None => Vec::new(),
        };
        self.search.regex = re;
        self.search.current = None;
        self.search.by_answer = 0;
        // Incremental: jump from where the user was when they pressed `/`.
        let origin = self
            .search
            .saved
            .map(|(t, i)| {
                self.tree
                    .visible
                    .get(t)
                    .map(|&n| self.tree.nodes[n].items.start + i)
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        if let Some(pos) = self.search.matches.iter().position(|&m| m >= origin) {
            self.goto_match(pos, ds);
        } else if !self.search.matches.is_empty() {
            self.goto_match(0, ds);
        }
    }

    pub(super) fn jump_match(&mut self, forward: bool, ds: &Dataset) {
        let n = self.search.matches.len();
        if n == 0 {
            return;
        }
        let cur = self.current_item();
        let pos = match (self.search.current, forward) {
            (Some(p), true) if cur == Some(self.search.matches[p]) => (p + 1) % n,
            (Some(p), false) if cur == Some(self.search.matches[p]) => (p + n - 1) % n,
            // The user moved away since: continue from the selection.
            (_, true) => {
                let c = cur.unwrap_or(0);
                self.search.matches.iter().position(|&m| m > c).unwrap_or(0)
            }
            (_, false) => {
                let c = cur.unwrap_or(0);
                self.search
                    .matches
                    .iter()
                    .rposition(|&m| m < c)
                    .unwrap_or(n - 1)
            }
        };
        self.goto_match(pos, ds);
    }

    /// Selects the item of match `pos`: its task in the tree, the item in the list.
    pub(super) fn goto_match(&mut self, pos: usize, ds: &Dataset) {
        let idx = self.search.matches[pos];
        self.search.current = Some(pos);
        let task = ds.items[idx].task as usize;
        if let Some(row) = self.tree.reveal_task(task) {
            self.tree_sel = row;
            let start = self.tree.nodes[self.tree.visible[row]].items.start;
            self.item_sel = idx - start;
            self.detail_scroll = 0;
        }
        self.keep_visible();
    }
}
