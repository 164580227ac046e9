//! The compare screen drawn: its header, each model's pane (title facts, the answer or its shaded tokens, the verdict line) and the gauge.

use super::*;

impl Compare {
    pub(super) fn header(&self, cx: &Cx, f: &mut Frame, area: Rect) {
        let t = cx.theme;
        let Some(idx) = self.item() else {
            return;
        };
        let ds = cx.ds;
        let item = &ds.items[idx];
        let task = ds.task_of(item);
        // Narrow screens get the item's line without the task id and category name (the id
        // says the task), so it stays on one row.
        let wide = area.width >= 100;
        let mut first = vec![Span::styled(one_line(&item.id), t.accent())];
        if wide {
            first.push(Span::styled(format!("  {}", one_line(&task.id)), t.base()));
        }
        first.push(Span::styled(
            if wide {
                format!("  {} {}", task.dimension.code(), task.category.name)
            } else {
                format!("  {}", task.dimension.code())
            },
            Style::default().fg(t.dimension(task.dimension)),
        ));
        first.push(Span::styled(format!("  {}", task.evaluator), t.muted()));
        let mut lines = vec![Line::from(first)];
        // The item's own hallucination rate over every answer (all models and samples); while
        // some await a score, only how many are scored.
        let tally = cx.session.item_tally(idx);
        if tally.unscored > 0 {
            lines[0].spans.push(Span::styled(
                format!(
                    "  item: {}/{} answers scored",
                    tally.scored,
                    tally.scored + tally.unscored
                ),
                t.warning(),
            ));
        } else if tally.scored > 0 {
            let h = 100.0 - 100.0 * tally.sum / tally.scored as f64;
            lines[0].spans.push(Span::styled(
                format!("  item H {h:.1}% over {} scored", tally.scored),
                Style::default().fg(t.heat(h)),
            ));
        }
        // The question right after the item's line and before the reference: in a short header
        // (24 rows) what is cut is the end, and the question is what the answers are about.
        let q = crate::prompt::format_question(item);
        lines.push(Line::styled(sanitize(&q).into_owned(), t.base()));
        if let Some(ans) = &item.answer {
            lines.push(Line::from(vec![
                Span::styled("reference  ", t.muted()),
                Span::styled(one_line(ans), t.success().add_modifier(Modifier::BOLD)),
            ]));
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(false))
            .title(" Item ");
        f.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block),
            area,
        );
    }

    /// With repeats: how many of the model's finished samples of this item say what the
    /// shown one says (PRISM's `loose` form), as `2/3 say this`; `None` with one sample or while
    /// the shown one is not finished.
    pub(super) fn agreement(&self, session: &Session, model: &str) -> Option<String> {
        if self.run.is_some() {
            return None; // a stored run's own answers: not compared across samples here
        }
        let item = self.item()?;
        let n = session.samples_for(item);
        let done = |s: u32| {
            session
                .answers
                .get(&(item, model.to_string(), s))
                .filter(|a| a.status == Status::Done)
        };
        let shown = crate::eval::text::loose(&done(self.sample)?.text);
        if n < 2 {
            return None;
        }
        let finished: Vec<String> = (0..n)
            .filter_map(|s| done(s).map(|a| crate::eval::text::loose(&a.text)))
            .collect();
        let same = finished.iter().filter(|t| **t == shown).count();
        Some(format!("{same}/{} say this", finished.len()))
    }

    /// What a pane's title says of its answer, each fact with its rank (0 most important): a
    /// title that does not fit drops whole facts, the least important first ([`fitted`]), and
    /// never cuts one (a perplexity of 1.7 once read `ppl 1`).
    pub(super) fn facts(&self, cx: &Cx, a: &Answer, model: &str) -> Vec<(u8, String)> {
        let mut facts: Vec<(u8, String)> = Vec::new();
        if let Some(ms) = a.latency_ms {
            facts.push((3, format!("{:.1}s", ms as f64 / 1000.0)));
        }
        if let Some(n) = a.tokens {
            facts.push((4, format!("{n} tok")));
        }
        if a.attempts > 1 {
            facts.push((2, format!("{} attempts", a.attempts)));
        }
        // On a shared store: which worker answered (another machine's name: one line).
        if let Some(w) = cx.session.answered_by.get(&(a.run_id.clone(), a.job_idx)) {
            facts.push((5, format!("by {}", crate::text::one_line(w))));
        }
        if let Some(same) = self.agreement(cx.session, model) {
            facts.push((1, same));
        }
        let mine: Vec<&crate::store::AnswerLabel> = self
            .people
            .iter()
            .filter(|l| l.run_id == a.run_id && l.job_idx == a.job_idx)
            .collect();
        if !mine.is_empty() {
            let owned: Vec<crate::store::AnswerLabel> = mine.into_iter().cloned().collect();
            let mut newest = crate::store::judging::newest_labels(&owned);
            // Yours first, then the others by name.
            newest.sort_by_key(|l| (l.reviewer != self.me, l.reviewer.clone()));
            let said: Vec<String> = newest
                .iter()
                .map(|l| {
                    let who = if l.reviewer == self.me {
                        "you".to_string()
                    } else {
                        crate::text::one_line(&l.reviewer)
                    };
                    format!("{who}: {}", l.label.words())
                })
                .collect();
            facts.push((0, said.join(", ")));
        }
        // White-box scores beside the verdict, where the answer has token probabilities.
        if let Some(w) = a
            .logprobs
            .as_deref()
            .and_then(crate::eval::whitebox::scores)
        {
            facts.push((
                0,
                format!("ppl {:.1} · min p {:.3}", w.perplexity, w.min_logprob.exp()),
            ));
        } else if self.show_tokens && a.status.is_final() {
            // Shading asked, but this answer has no tokens (its provider gives none, as
            // Anthropic's, or the run did not ask, or they did not spell the answer):
            // said, rather than shown plain.
            facts.push((
                0,
                a.tokens_note
                    .as_deref()
                    .filter(|n| *n == crate::eval::whitebox::TOKENS_MISMATCH)
                    .unwrap_or("tokens: not available")
                    .to_string(),
            ));
        }
        if let Some(v) = &a.source_verdict {
            facts.push((1, crate::text::one_line(v)));
        }
        if self.show_tokens
            && let Some(n) = &a.tokens_note
            && n != crate::eval::whitebox::TOKENS_MISMATCH
        {
            facts.push((6, crate::text::one_line(n)));
        }
        facts
    }

    pub(super) fn pane_draw(
        &self,
        cx: &Cx,
        f: &mut Frame,
        r: Rect,
        i: usize,
        model: &str,
    ) -> Drawn {
        let t = cx.theme;
        let focused = self.pane == i;
        let answer = self.answer(cx.session, model);
        let mut title = vec![
            Span::styled(format!(" {} ", one_line(model)), t.accent()),
            status_span(answer, t),
            Span::raw(" "),
        ];
        if let Some(a) = answer {
            let head: usize = title
                .iter()
                .map(|sp| unicode_width::UnicodeWidthStr::width(sp.content.as_ref()))
                .sum();
            let room = (r.width as usize).saturating_sub(2 + head);
            if let Some(facts) = fitted(self.facts(cx, a, model), room) {
                title.push(Span::styled(facts, t.muted()));
            }
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(if focused {
                BorderType::Thick
            } else {
                BorderType::Rounded
            })
            .border_style(t.border(focused))
            .title(Line::from(title));
        let block = match answer.and_then(|a| a.verdict.as_ref()) {
            Some(v) => block.title_bottom(verdict_line(
                v,
                t,
                (
                    self.show_judge,
                    // A judge chosen: the answer waits for it (scored as the run goes).
                    &if cx.judge.is_some() {
                        String::new()
                    } else {
                        cx.keymap.hint(Mode::Compare, Action::ChooseJudge)
                    },
                ),
                (r.width as usize).saturating_sub(2),
            )),
            None => block,
        };
        let inner = block.inner(r);
        let mut text = answer
            .map(|a| sanitize(&a.text).into_owned())
            .unwrap_or_default();
        if self.show_judge
            && let Some(v) = answer.and_then(|a| a.verdict.as_ref())
            && let Some(reply) = &v.judge_reply
        {
            text.push_str(&format!(
                "\n\n── judge {} ({} attempt{}) ──\n{}",
                one_line(v.judge.as_deref().unwrap_or("")),
                v.judge_attempts,
                if v.judge_attempts == 1 { "" } else { "s" },
                sanitize(reply)
            ));
        }
        let shaded = match answer.and_then(|a| a.logprobs.as_deref()) {
            Some(tokens) if self.show_tokens && !self.show_judge => {
                Some(token_text(tokens, t, self.token_cursor.filter(|_| focused)))
            }
            _ => None,
        };
        // The row (after wrapping) the token cursor's line starts on, to keep it in sight.
        let width = inner.width.max(1);
        let cursor_row = shaded.as_ref().and_then(|lines| {
            let at = self.token_cursor.filter(|_| focused)?;
            let line = cursor_line(answer?.logprobs.as_deref()?, at);
            let before = lines[..line.min(lines.len())].to_vec();
            Some(
                Paragraph::new(before)
                    .wrap(Wrap { trim: false })
                    .line_count(width),
            )
        });
        let para = match shaded {
            Some(lines) => Paragraph::new(lines),
            None => Paragraph::new(text),
        }
        .wrap(Wrap { trim: false });
        let mut d = Drawn {
            lines: para.line_count(width),
            height: inner.height as usize,
            offset: 0,
        };
        let max = d.lines.saturating_sub(d.height) as u16;
        // A pane follows the tail while its answer comes; a finished (or stored) answer opens
        // at its top; the token cursor's line is always in sight.
        let coming = answer.is_some_and(|a| {
            matches!(
                a.status,
                Status::Queued
                    | Status::Sending { .. }
                    | Status::Streaming
                    | Status::Retrying { .. }
            )
        });
        let mut offset = match self.scroll.get(model) {
            Some(&(off, false)) => off.min(max),
            Some(&(_, true)) => max,
            None if coming => max,
            None => 0,
        };
        if let Some(row) = cursor_row {
            let row = row as u16;
            let h = (d.height as u16).max(1);
            if row < offset || row >= offset + h {
                offset = row.saturating_sub(h / 3).min(max);
            }
        }
        d.offset = offset;
        f.render_widget(para.scroll((offset, 0)).block(block).style(t.base()), r);
        scrollbar(f, r, d.lines, offset as usize, d.height);
        d
    }
}

/// The next (or previous) token below [`LOW_P`] from `from`, wrapping round; `None` when the
/// answer has none.
pub(super) fn step_unlikely(
    tokens: &[crate::provider::TokenLogprob],
    from: Option<usize>,
    forward: bool,
) -> Option<usize> {
    let low: Vec<usize> = (0..tokens.len())
        .filter(|&i| f64::from(tokens[i].logprob).exp() < LOW_P)
        .collect();
    let (first, last) = (*low.first()?, *low.last()?);
    Some(match (from, forward) {
        (None, true) => first,
        (None, false) => last,
        (Some(c), true) => low.iter().copied().find(|&i| i > c).unwrap_or(first),
        (Some(c), false) => low.iter().rev().copied().find(|&i| i < c).unwrap_or(last),
    })
}

/// What the status line says of the token under the cursor: its probability and its top
/// alternatives, most likely first (the text sanitised: it comes from the model).
pub(super) fn token_notice(tokens: &[crate::provider::TokenLogprob], i: usize) -> String {
    let tok = &tokens[i];
    let show = |s: &str| format!("{:?}", sanitize(s));
    let alts = alternatives(tok, 5);
    let mut out = format!(
        "token {}/{}: {} p {:.3}",
        i + 1,
        tokens.len(),
        show(&tok.token),
        f64::from(tok.logprob).exp()
    );
    if alts.is_empty() {
        out.push_str(" · no alternatives stored");
    } else {
        out.push_str(" · instead: ");
        out.push_str(
            &alts
                .iter()
                .map(|(s, p)| format!("{} {p:.3}", show(s)))
                .collect::<Vec<_>>()
                .join(" · "),
        );
    }
    out
}

/// An answer's tokens, each shaded by its probability: the theme's text colour when likely, the
/// accent, warning and error colours as it falls; underlined below 0.5 and bold below 0.2. The
/// token under `cursor` is drawn reversed.
pub(super) fn token_text(
    tokens: &[crate::provider::TokenLogprob],
    t: &Theme,
    cursor: Option<usize>,
) -> Vec<Line<'static>> {
    let mut lines = vec![Line::default()];
    for (at, tok) in tokens.iter().enumerate() {
        let style = match band(f64::from(tok.logprob).exp()) {
            Band::Likely => t.base(),
            Band::Fair => t.accent(),
            Band::Unlikely => t.warning().add_modifier(Modifier::UNDERLINED),
            Band::VeryUnlikely => t
                .error()
                .add_modifier(Modifier::UNDERLINED)
                .add_modifier(Modifier::BOLD),
        };
        let style = if cursor == Some(at) {
            style.add_modifier(Modifier::REVERSED)
        } else {
            style
        };
        // Model text is untrusted: control sequences out before it is drawn.
        let clean = sanitize(&tok.token).into_owned();
        for (i, piece) in clean.split('\n').enumerate() {
            if i > 0 {
                lines.push(Line::default());
            }
            if !piece.is_empty() {
                lines
                    .last_mut()
                    .expect("one line at least")
                    .push_span(Span::styled(piece.to_string(), style));
            }
        }
    }
    lines
}

/// The facts that fit in `room` columns as `· a · b `, dropping the least important (the
/// highest rank, the later of equals) until they do; `None` when none is left.
pub(super) fn fitted(mut facts: Vec<(u8, String)>, room: usize) -> Option<String> {
    let shown = |fs: &[(u8, String)]| {
        let texts: Vec<&str> = fs.iter().map(|f| f.1.as_str()).collect();
        format!("· {} ", texts.join(" · "))
    };
    while !facts.is_empty() && unicode_width::UnicodeWidthStr::width(shown(&facts).as_str()) > room
    {
        let least = facts
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.0, *i))
            .map(|(i, _)| i)?;
        facts.remove(least);
    }
    (!facts.is_empty()).then(|| shown(&facts))
}

/// The line (before wrapping) token `at` starts on: the newlines in the tokens before it.
pub(super) fn cursor_line(tokens: &[crate::provider::TokenLogprob], at: usize) -> usize {
    tokens
        .iter()
        .take(at)
        .map(|t| sanitize(&t.token).matches('\n').count())
        .sum()
}

pub(super) fn status_span(a: Option<&Answer>, t: &Theme) -> Span<'static> {
    let Some(a) = a else {
        return Span::styled("no answer", t.muted());
    };
    match &a.status {
        Status::Queued => Span::styled("queued", t.muted()),
        Status::Sending { attempt } if *attempt > 1 => {
            Span::styled(format!("sending (attempt {attempt})"), t.warning())
        }
        Status::Sending { .. } => Span::styled("sending", t.muted()),
        Status::Streaming => Span::styled("streaming", t.accent()),
        Status::Retrying {
            attempt,
            max,
            reason,
        } => Span::styled(
            format!("retry {attempt} of {max}: {}", one_line(reason)),
            t.warning(),
        ),
        Status::Done if a.cached => Span::styled("done (cached)", t.success()),
        Status::Done => Span::styled("done", t.success()),
        Status::Stored => Span::styled("stored", t.success()),
        Status::Failed(e) => Span::styled(format!("failed: {}", one_line(e)), t.error()),
        Status::Cancelled => Span::styled("cancelled", t.warning()),
    }
}

/// The verdict under an answer: a mark and the score (so it reads without colour), the
/// evaluator's detail, and who judged, in `room` columns: parts that do not fit are dropped
/// whole, least important first (the evaluator's name, the judge, the detail, the hint), so no
/// part, and no number in it, is ever cut. `(showing, choose_judge)`: whether the judge's reply
/// is shown, and the key that chooses a judge (empty: a judge is chosen, and the answer waits
/// for it rather than asking for one).
pub(super) fn verdict_line(
    v: &crate::store::ScoreRecord,
    t: &Theme,
    (showing, choose_judge): (bool, &str),
    room: usize,
) -> Line<'static> {
    let (mark, style) = match v.score {
        Some(s) if s >= 1.0 => ("✓".to_string(), t.success()),
        Some(s) if s <= 0.0 => ("✗".to_string(), t.error()),
        Some(_) => ("~".to_string(), t.accent()),
        None => ("?".to_string(), t.muted()),
    };
    let score = v
        .score
        .map_or("unscored".to_string(), |s| format!("{s:.2}"));
    let head = Span::styled(
        format!(" {mark} {score} "),
        style.add_modifier(Modifier::BOLD),
    );
    // (rank: lower is kept longer, text, style), in the order shown, joined by " · ".
    let mut parts: Vec<(u8, String, ratatui::style::Style)> = Vec::new();
    // Waiting for a judge: how to get one comes first, so a narrow pane still shows it.
    if v.score.is_none() && v.judge.is_none() && v.detail.starts_with("needs the ") {
        parts.push((
            1,
            if choose_judge.is_empty() {
                "the judge is asked".to_string()
            } else {
                format!("{choose_judge}: choose a judge")
            },
            t.accent().add_modifier(Modifier::BOLD),
        ));
    }
    let detail = one_line(&v.detail);
    if !detail.trim().is_empty() {
        parts.push((2, detail.trim().to_string(), t.base()));
    }
    parts.push((4, v.evaluator.clone(), t.base()));
    if let Some(j) = &v.judge {
        let hint = if showing { "J hides" } else { "J shows" };
        parts.push((
            3,
            format!("judge {} ({hint} reply)", one_line(j)),
            t.muted(),
        ));
    }
    let width = |ps: &[(u8, String, ratatui::style::Style)]| -> usize {
        let w = unicode_width::UnicodeWidthStr::width;
        // Each part is followed by a space, and all but the first led by "· ".
        w(head.content.as_ref()) + ps.iter().map(|p| w(p.1.as_str()) + 3).sum::<usize>()
            - if ps.is_empty() { 0 } else { 2 }
    };
    while !parts.is_empty() && width(&parts) > room {
        let least = parts
            .iter()
            .enumerate()
            .max_by_key(|(i, p)| (p.0, *i))
            .map_or(0, |(i, _)| i);
        parts.remove(least);
    }
    let mut spans = vec![head];
    for (i, (_, text, st)) in parts.into_iter().enumerate() {
        let sep = if i == 0 { "" } else { "· " };
        spans.push(Span::styled(format!("{sep}{text} "), st));
    }
    Line::from(spans)
}

/// The run's progress; for a stored run opened from the runs screen (`stored`, with its
/// `answers`), that run, never the progress of another one going on.
pub(super) fn gauge(cx: &Cx, f: &mut Frame, area: Rect, stored: Option<&str>, answers: usize) {
    let t = cx.theme;
    let active = cx.session.active.as_ref();
    if let Some(id) = stored.filter(|id| active.is_none_or(|r| r.run_id != *id)) {
        let going = active
            .filter(|r| r.running())
            .map(|r| format!(" · run {} goes on", one_line(&r.run_id)))
            .unwrap_or_default();
        f.render_widget(
            Paragraph::new(Line::styled(
                format!(" stored run {} · {answers} answers{going}", one_line(id)),
                t.muted(),
            )),
            area,
        );
        return;
    }
    let Some(run) = active else {
        f.render_widget(
            Paragraph::new(Line::styled(" no run in progress", t.muted())),
            area,
        );
        return;
    };
    let finished = run.done + run.failed;
    let ratio = if run.total == 0 {
        1.0
    } else {
        finished as f64 / run.total as f64
    };
    let state = if run.running() {
        match run.eta() {
            Some(eta) => format!("ETA {}s", eta.as_secs()),
            None => "running".into(),
        }
    } else if run.cancelled {
        "cancelled".into()
    } else {
        "finished".into()
    };
    let cached = if run.cached > 0 {
        format!(" · {} from cache", run.cached)
    } else {
        String::new()
    };
    let rate = if run.done + run.failed > run.cached {
        format!(" · {:.1} answers/s", run.rate())
    } else {
        String::new()
    };
    let label = format!(
        " {} {finished}/{} · {} failed{rate}{cached} · {state} ",
        run.run_id, run.total, run.failed,
    );
    let filled = if run.failed > 0 {
        t.warning()
    } else {
        t.success()
    };
    f.render_widget(
        LineGauge::default()
            .ratio(ratio.clamp(0.0, 1.0))
            .label(label)
            .filled_style(filled)
            .unfilled_style(t.muted()),
        area,
    );
}
