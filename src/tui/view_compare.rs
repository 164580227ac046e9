//! Drawing the compare screen: one item, every model's answer side by side, the run gauge.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, BorderType, Borders, LineGauge, Paragraph, Scrollbar, ScrollbarOrientation,
    ScrollbarState, Wrap,
};

use super::app::App;
use super::keymap::Action;
use super::runs::{Answer, Status};
use crate::text::{one_line, sanitize};
use crate::theme::Theme;

pub fn render(app: &App, f: &mut Frame) {
    let t = &app.theme;
    let area = f.area();
    f.render_widget(Block::default().style(t.base()), area);
    let a = app.compare_areas();
    let models = app.compare_models();

    // Title.
    let pos = if app.compare.items.is_empty() {
        String::new()
    } else {
        format!("item {}/{}", app.compare.pos + 1, app.compare.items.len())
    };
    let mut title = vec![
        Span::styled(" prism ", t.accent().add_modifier(Modifier::REVERSED)),
        Span::styled(" compare ", t.base().add_modifier(Modifier::BOLD)),
        Span::styled(pos, t.muted()),
    ];
    if let Some(i) = app.compare.item() {
        let n = app.runs.samples_for(i);
        if n > 1 {
            title.push(Span::styled(
                format!("  sample {}/{n}", app.compare.sample + 1),
                t.warning(),
            ));
        }
    }
    f.render_widget(Paragraph::new(Line::from(title)), a.title);

    header(app, f, a.header);
    if models.is_empty() {
        let msg = if app.can_run {
            format!(
                "No answers stored for this item yet. Press {} to choose models and run it.",
                app.keymap.hint(Action::Run)
            )
        } else {
            "No answers stored for this item.".to_string()
        };
        let r = a.panes.first().copied().unwrap_or(a.header);
        f.render_widget(
            Paragraph::new(Line::styled(msg, t.muted()))
                .wrap(Wrap { trim: true })
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(t.border(false)),
                ),
            r,
        );
    }
    for (i, model) in models.iter().enumerate() {
        if let Some(r) = a.panes.get(i) {
            pane(app, f, *r, i, model);
        }
    }
    gauge(app, f, a.gauge);
    let k = &app.keymap;
    let hint = app.notice.clone().unwrap_or_else(|| {
        format!(
            " {}/{} item  {} pane  ↑↓ scroll  {} follow  {} sample  {} {}  {} browse  {} help  {} quit",
            k.hint(Action::PrevItem),
            k.hint(Action::NextItem),
            k.hint(Action::NextPane),
            k.hint(Action::Bottom),
            k.hint(Action::NextSample),
            k.hint(Action::Cancel),
            if app.runs.active.as_ref().is_some_and(|r| r.running()) {
                "cancel run"
            } else {
                "back"
            },
            k.hint(Action::Back),
            k.hint(Action::Help),
            k.hint(Action::Quit)
        )
    });
    let style = if app.notice.is_some() {
        t.warning()
    } else {
        t.muted()
    };
    f.render_widget(Paragraph::new(Line::styled(hint, style)), a.status);
    match app.popup {
        Some(super::app::Popup::Help { scroll }) => super::view::help_popup(app, f, area, scroll),
        Some(super::app::Popup::Models { cursor }) => {
            super::view::models_popup(app, f, area, cursor)
        }
        _ => {}
    }
}

fn header(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let Some(idx) = app.compare.item() else {
        return;
    };
    let ds = &app.ds;
    let item = &ds.items[idx];
    let task = ds.task_of(item);
    let mut lines = vec![Line::from(vec![
        Span::styled(item.id.to_string(), t.accent()),
        Span::styled(format!("  {}  ", task.id), t.base()),
        Span::styled(
            format!("{} {}", task.dimension.code(), task.category.name),
            Style::default().fg(t.dimension(task.dimension)),
        ),
        Span::styled(format!("  {}", task.evaluator), t.muted()),
    ])];
    // The item's own hallucination rate over every scored answer (all models and samples).
    if let Some(&(sum, n)) = app.runs.item_scores.get(&idx).filter(|(_, n)| *n > 0) {
        let h = 100.0 - 100.0 * sum / n as f64;
        lines[0].spans.push(Span::styled(
            format!("  item H {h:.1}% over {n} scored"),
            Style::default().fg(t.heat(h)),
        ));
    }
    if let Some(ans) = &item.answer {
        lines.push(Line::from(vec![
            Span::styled("reference  ", t.muted()),
            Span::styled(one_line(ans), t.success().add_modifier(Modifier::BOLD)),
        ]));
    }
    let q = crate::prompt::format_question(item);
    lines.push(Line::styled(sanitize(&q).into_owned(), t.base()));
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

fn status_span(a: Option<&Answer>, t: &Theme) -> Span<'static> {
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

fn pane(app: &App, f: &mut Frame, r: Rect, i: usize, model: &str) {
    let t = &app.theme;
    let focused = app.compare.pane == i;
    let answer = app.compare.item().and_then(|item| {
        app.runs
            .answers
            .get(&(item, model.to_string(), app.compare.sample))
    });
    let mut title = vec![
        Span::styled(format!(" {} ", sanitize(model)), t.accent()),
        status_span(answer, t),
        Span::raw(" "),
    ];
    if let Some(a) = answer {
        let mut facts = Vec::new();
        if let Some(ms) = a.latency_ms {
            facts.push(format!("{:.1}s", ms as f64 / 1000.0));
        }
        if let Some(n) = a.tokens {
            facts.push(format!("{n} tok"));
        }
        if a.attempts > 1 {
            facts.push(format!("{} attempts", a.attempts));
        }
        if !facts.is_empty() {
            title.push(Span::styled(format!("· {} ", facts.join(" · ")), t.muted()));
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
        Some(v) => block.title_bottom(verdict_line(v, t, app.compare.show_judge)),
        None => block,
    };
    let inner = block.inner(r);
    let mut text = answer
        .map(|a| sanitize(&a.text).into_owned())
        .unwrap_or_default();
    if app.compare.show_judge
        && let Some(v) = answer.and_then(|a| a.verdict.as_ref())
        && let Some(reply) = &v.judge_reply
    {
        text.push_str(&format!(
            "\n\n── judge {} ({} attempt{}) ──\n{}",
            sanitize(v.judge.as_deref().unwrap_or("")),
            v.judge_attempts,
            if v.judge_attempts == 1 { "" } else { "s" },
            sanitize(reply)
        ));
    }
    let offset = app.pane_offset(model, i);
    let para = Paragraph::new(text).wrap(Wrap { trim: false });
    let total = para.line_count(inner.width.max(1));
    f.render_widget(para.scroll((offset, 0)).block(block).style(t.base()), r);
    if total > inner.height as usize && r.height > 2 {
        let mut state = ScrollbarState::new(total.saturating_sub(inner.height as usize))
            .position(offset as usize);
        f.render_stateful_widget(
            Scrollbar::new(ScrollbarOrientation::VerticalRight)
                .begin_symbol(None)
                .end_symbol(None),
            r.inner(ratatui::layout::Margin {
                vertical: 1,
                horizontal: 0,
            }),
            &mut state,
        );
    }
}

/// The verdict under an answer: a mark and the score (so it reads without colour), the
/// evaluator's detail, and who judged.
fn verdict_line(v: &crate::store::ScoreRecord, t: &Theme, showing: bool) -> Line<'static> {
    let (mark, style) = match v.score {
        Some(s) if s >= 1.0 => ("✓".to_string(), t.success()),
        Some(s) if s <= 0.0 => ("✗".to_string(), t.error()),
        Some(_) => ("~".to_string(), t.accent()),
        None => ("?".to_string(), t.muted()),
    };
    let score = v
        .score
        .map_or("unscored".to_string(), |s| format!("{s:.2}"));
    let mut spans = vec![
        Span::styled(
            format!(" {mark} {score} "),
            style.add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!("{} · {} ", sanitize(&v.detail), v.evaluator),
            t.base(),
        ),
    ];
    if let Some(j) = &v.judge {
        let hint = if showing { "J hides" } else { "J shows" };
        spans.push(Span::styled(
            format!("· judge {} ({hint} reply) ", sanitize(j)),
            t.muted(),
        ));
    }
    Line::from(spans)
}

fn gauge(app: &App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let Some(run) = &app.runs.active else {
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
    let label = format!(
        " {} {finished}/{} · {} failed · {:.1}/s · {state} ",
        run.run_id,
        run.total,
        run.failed,
        run.rate()
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
