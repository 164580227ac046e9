//! The review screen drawn: the queue, the item, its stored answers and the decision form.

use super::*;

impl Review {
    pub(super) fn draw_queue(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        // A filter in force is named on the queue itself (the header drops it when narrow).
        let title = if self.filter == StatusFilter::All && self.panel.is_none() {
            " Queue (triage order) ".to_string()
        } else {
            format!(
                " Queue · {}, {} ",
                self.filter.label(),
                self.panel.map_or("both panels", Panel::label)
            )
        };
        let block = pane(t, Line::from(title), self.editing.is_none());
        let inner = block.inner(area);
        f.render_widget(block, area);
        if self.data.is_none() {
            f.render_widget(Paragraph::new("loading…").style(t.muted()), inner);
            return;
        }
        if self.queue.is_empty() {
            f.render_widget(
                Paragraph::new("no items match (f: status filter, P: panel)").style(t.muted()),
                inner,
            );
            return;
        }
        let room = inner.height as usize;
        let off = self.pos.saturating_sub(room.saturating_sub(1));
        let signals = self.data.as_ref().map(|d| &d.signals);
        let width = inner.width as usize;
        let lines: Vec<Line> = self
            .queue
            .iter()
            .enumerate()
            .skip(off)
            .take(room)
            .map(|(p, &i)| {
                let it = &cx.ds.items[i];
                let st = self.status.get(&*it.id);
                let mark = match st.map(|s| s.state) {
                    None | Some(State::Unreviewed | State::Converged(Decision::Withdrawn)) => "·",
                    Some(State::Open) => "○",
                    Some(State::Disputed) => "≠",
                    Some(State::Converged(Decision::Retain)) => "✓",
                    Some(State::Converged(Decision::Remove)) => "✗",
                    Some(State::Converged(Decision::Revise)) => "↻",
                };
                let tags = signals
                    .and_then(|s| s.get(&*it.id))
                    .map(|s| s.labels().join(", "))
                    .unwrap_or_default();
                let text = format!("{mark} {}  {}", one_line(&it.id), tags);
                let style = if p == self.pos {
                    t.selected(self.editing.is_none())
                } else {
                    Style::default().fg(t.dimension(cx.ds.task_of(it).dimension))
                };
                Line::styled(truncate(&text, width), style)
            })
            .collect();
        f.render_widget(Paragraph::new(lines), inner);
    }

    pub(super) fn draw_detail(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let block = pane(t, Line::from(" Item "), false);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(i) = self.current() else { return };
        let item = &cx.ds.items[i];
        let mut lines = crate::tui::screens::item_detail(cx.ds, item, t, None);
        let head = |s: &str| Line::styled(s.to_string(), t.accent().add_modifier(Modifier::BOLD));
        // Lines above the item itself (triage, quality), where the decisions go.
        let mut top = 0;
        if let Some(d) = &self.data {
            let why = d
                .signals
                .get(&*item.id)
                .map(|s| s.labels().join(", "))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "no signal (no scored answers or nothing unusual)".into());
            let mut l = vec![
                Span::styled(format!("{:<12}", "triage"), t.muted()),
                Span::styled(why, t.warning()),
            ];
            if let Some(e) = d.evidence.get(&*item.id) {
                let mut models: Vec<_> = e.scores.iter().collect();
                models.sort_by(|a, b| a.0.cmp(b.0));
                let mut per: Vec<String> = models
                    .iter()
                    .map(|(m, s)| {
                        format!(
                            "{} {:.2}",
                            self.model_label(&item.id, m),
                            s.iter().sum::<f64>() / s.len().max(1) as f64
                        )
                    })
                    .collect();
                per.sort();
                l.push(Span::styled(format!("  ({})", per.join(", ")), t.muted()));
            }
            lines.insert(0, Line::from(l));
            top = 1;
            if let Some(e) = d.evidence.get(&*item.id)
                && !e.quality.is_empty()
            {
                let qs: Vec<String> = e
                    .quality
                    .iter()
                    .map(|(m, [a, b, c])| {
                        format!(
                            "{}: A{a} B{b} C{c} S {:.1}",
                            one_line(m),
                            crate::review::rubric::weighted_quality(
                                *a as f64, *b as f64, *c as f64
                            )
                        )
                    })
                    .collect();
                top = 2;
                lines.insert(
                    1,
                    Line::from(vec![
                        Span::styled(format!("{:<12}", "quality"), t.muted()),
                        Span::styled(qs.join(" · "), t.base()),
                    ]),
                );
            }
        }
        if let Some(st) = self.status.get(&*item.id)
            && let Some(q) = &st.edited_question
        {
            lines.push(Line::default());
            lines.push(head(&format!("Revised question (round {})", st.round)));
            for l in q.lines() {
                lines.push(Line::styled(sanitize(l).to_string(), t.base()));
            }
        }
        // The stored answers go before the long prompt ("as the model sees it"), so they are
        // in view without scrolling past it.
        let ans = self.answer_lines(cx, item);
        let prompt_at = lines
            .iter()
            .position(|l| {
                l.spans
                    .first()
                    .is_some_and(|s| s.content.starts_with("── as the model sees it"))
            })
            .unwrap_or(lines.len());
        // Before the blank line that opens the prompt's section, so one blank line parts them.
        let prompt_at = if prompt_at > 0 && lines[prompt_at - 1].width() == 0 {
            prompt_at - 1
        } else {
            prompt_at
        };
        lines.splice(prompt_at..prompt_at, ans);
        // Decisions so far come right after why the item is here: they are what a disputed
        // item is about. (The long prompt follows.)
        lines.splice(top..top, self.decision_lines(cx, item));
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0)),
            inner,
        );
    }

    /// The item's stored answers, each with its verdict (and the rule's, where it differs) and
    /// the start of its text.
    pub(super) fn answer_lines(&self, cx: &Cx, item: &crate::dataset::Item) -> Vec<Line<'static>> {
        let t = cx.theme;
        let head = |s: &str| Line::styled(s.to_string(), t.accent().add_modifier(Modifier::BOLD));
        let mut ans: Vec<Line> = Vec::new();
        let blind = self.data.as_ref().is_some_and(|d| d.blind);
        ans.push(Line::default());
        ans.push(head(&format!("Stored answers ({})", self.answers.len())));
        if self.answers.is_empty() {
            ans.push(Line::styled("none yet (run it from browse: r)", t.muted()));
        }
        for (k, r) in self.answers.iter().enumerate() {
            // The answer `L` labels (`s` moves it), marked when there is a choice.
            let mark = match (self.answers.len() > 1, k == self.answer_sel) {
                (true, true) => "▸ ",
                (true, false) => "  ",
                _ => "",
            };
            let score = self
                .scores
                .iter()
                .find(|s| s.run_id == r.run_id && s.job_idx == r.job_idx);
            let labelled = self.labels.get(&(r.run_id.clone(), r.job_idx));
            // Blind review hides a judge's verdict until you have labelled the answer, so your
            // label is your own reading (the rules' verdicts are no one's opinion: shown).
            let hidden = blind && labelled.is_none() && score.is_some_and(|s| s.judge.is_some());
            let score = score.filter(|_| !hidden);
            let verdict = match score.and_then(|s| s.score) {
                _ if hidden => {
                    Span::styled("judge's verdict hidden until you label it (L)", t.muted())
                }
                Some(s) if s >= 0.5 => Span::styled(format!("{s:.2} ✓"), t.success()),
                Some(s) => Span::styled(format!("{s:.2} ✗"), t.error()),
                None => Span::styled("unscored", t.muted()),
            };
            ans.push(Line::from(vec![
                Span::styled(
                    format!(
                        "{mark}{} #{} ",
                        self.model_label(&item.id, &r.model),
                        r.sample
                    ),
                    t.accent(),
                ),
                // A run id can name the model (`r-gpt`): in blind review it is left out.
                Span::styled(
                    if blind {
                        String::new()
                    } else {
                        format!("run {} ", one_line(&r.run_id))
                    },
                    t.muted(),
                ),
                verdict,
                // Where the rule had its own verdict and the judge went the other way.
                Span::styled(
                    match score.and_then(|s| Some((s.score?, s.rule_score?))) {
                        Some((j, r)) if (j >= 0.5) != (r >= 0.5) => {
                            format!("  rule says {}", if r >= 0.5 { "✓" } else { "✗" })
                        }
                        _ => String::new(),
                    },
                    t.warning(),
                ),
                Span::styled(
                    labelled.map_or(String::new(), |l| format!("  you: {}", l.words())),
                    t.accent(),
                ),
                Span::styled(
                    score.map_or(String::new(), |s| format!("  {}", one_line(&s.detail))),
                    t.muted(),
                ),
            ]));
            let text = r.text.as_deref().or(r.error.as_deref()).unwrap_or("");
            ans.push(Line::styled(truncate(&one_line(text), 400), t.base()));
        }
        ans
    }

    /// The decisions so far on the item, oldest first, and a blank line after them.
    pub(super) fn decision_lines(
        &self,
        cx: &Cx,
        item: &crate::dataset::Item,
    ) -> Vec<Line<'static>> {
        let t = cx.theme;
        let head = |s: &str| Line::styled(s.to_string(), t.accent().add_modifier(Modifier::BOLD));
        if let Some(d) = &self.data {
            let hist: Vec<&ReviewRecord> = d
                .decisions
                .iter()
                .filter(|r| *r.item_id == *item.id)
                .collect();
            let mut hl = Vec::new();
            if !hist.is_empty() {
                hl.push(head(&format!("Decisions ({})", hist.len())));
            }
            for r in hist {
                let s = |v: Option<u8>| v.map_or("-".to_string(), |v| v.to_string());
                hl.push(Line::from(vec![
                    Span::styled(
                        format!("round {} {} ", r.round, one_line(&r.reviewer)),
                        t.accent(),
                    ),
                    Span::styled(r.decision.as_str(), t.base().add_modifier(Modifier::BOLD)),
                    Span::styled(
                        format!(
                            "  C{} R{} H{}  {}  {}",
                            s(r.clarity),
                            s(r.relevance),
                            s(r.coherence),
                            crate::store::format_time(r.created_at / 1000),
                            one_line(&r.rationale)
                        ),
                        t.muted(),
                    ),
                ]));
            }
            if !hl.is_empty() {
                hl.push(Line::default());
            }
            hl
        } else {
            Vec::new()
        }
    }

    pub(super) fn draw_form(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let round = self.draft.round.max(1);
        let block = pane(
            t,
            Line::from(format!(" Your review · round {round} ")),
            self.editing.is_some(),
        );
        let inner = block.inner(area);
        f.render_widget(block, area);
        if self.current().is_none() {
            return;
        }
        let [scores, decision, text] = Layout::vertical([
            Constraint::Length(3),
            Constraint::Length(1),
            Constraint::Min(2),
        ])
        .areas(inner);
        let lines: Vec<Line> = HUMAN
            .iter()
            .enumerate()
            .map(|(c, crit)| {
                let v = self.score(c);
                let sel = c == self.criterion && self.editing.is_none();
                let name = Span::styled(
                    format!("{}{:<17}", if sel { "▸ " } else { "  " }, crit.name),
                    if sel { t.accent() } else { t.base() },
                );
                let val = Span::styled(
                    format!("{:>3}  ", v.map_or("-".into(), |v| v.to_string())),
                    t.base().add_modifier(Modifier::BOLD),
                );
                let band = match v {
                    Some(v) => format!(
                        "{}: {}",
                        BAND_RANGES[crate::review::rubric::band_index(v)],
                        crit.band(v)
                    ),
                    None => crit.question.to_string(),
                };
                Line::from(vec![name, val, Span::styled(band, t.muted())])
            })
            .collect();
        f.render_widget(Paragraph::new(lines), scores);
        let on_row = self.criterion == DECISION_ROW && self.editing.is_none();
        let mut d = vec![Span::styled(
            format!("{}Decision         ", if on_row { "▸ " } else { "  " }),
            if on_row { t.accent() } else { t.base() },
        )];
        for dec in Decision::ALL {
            let on = self.draft.decision == Some(dec);
            d.push(Span::styled(
                // Brackets mark the choice without colour too (NO_COLOR, monochrome).
                if on {
                    format!("[{}]", dec.as_str())
                } else {
                    format!(" {} ", dec.as_str())
                },
                if on { t.selected(true) } else { t.muted() },
            ));
        }
        f.render_widget(Paragraph::new(Line::from(d)), decision);
        let (ta, label) = match self.editing {
            Some(Editing::Question) => (&self.question, " Question for the next round (esc done) "),
            _ => (&self.editor, " Rationale "),
        };
        let mut ta = ta.clone();
        ta.set_style(t.base());
        ta.set_cursor_line_style(Style::default());
        if self.editing.is_none() {
            ta.set_cursor_style(t.base());
        }
        ta.set_block(
            Block::bordered()
                .title(label)
                .border_style(t.border(self.editing.is_some())),
        );
        f.render_widget(&ta, text);
    }
}
