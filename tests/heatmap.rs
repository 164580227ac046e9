//! The heatmap screen in-process: snapshots of the three views with colours (Debug buffer form),
//! sorting, references and baselines, and the drill-down round trip with scripted keys.

mod common;

use std::sync::Arc;

use common::screen::{code, key, screen};
use crossterm::event::{Event, KeyCode};
use prism::dataset;
use prism::store::ScoreRecord;
use prism::theme::Theme;
use prism::tui::App;
use prism::tui::component::ScreenId;
use prism::tui::keymap::Keymap;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Three models with fixed scores on every sample item: `steady` right on 3 of 4 items,
/// `shaky` on 1 of 2, `poor` on none of KE and all of the rest.
fn app() -> App {
    let loaded = dataset::load_sample();
    let ds = Arc::new(loaded.dataset);
    let mut app = App::new(
        ds.clone(),
        Arc::new(loaded.problems),
        Theme::default_theme(),
        Keymap::default(),
    );
    for (k, it) in ds.items.iter().enumerate() {
        let task = ds.task_of(it);
        for model in ["steady", "shaky", "poor"] {
            let score = match model {
                "steady" => f64::from(k % 4 != 0),
                "shaky" => f64::from(k % 2 == 0),
                _ => f64::from(task.dimension != prism::taxonomy::Dimension::KE),
            };
            app.session.apply_score(ScoreRecord {
                run_id: "r".into(),
                job_idx: k as u32,
                item_id: it.id.to_string(),
                task_id: task.id.clone(),
                model: model.into(),
                sample: 0,
                evaluator: task.evaluator.as_str().into(),
                score: Some(score),
                detail: String::new(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            });
        }
    }
    app
}

fn press(app: &mut App, keys: &[Event]) {
    for k in keys {
        app.handle_event(k.clone());
    }
}

fn draw(app: &mut App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    term
}

#[test]
fn three_views_with_their_colours() {
    let mut app = app();
    press(&mut app, &[key('H')]);
    assert_eq!(app.top(), ScreenId::Heatmap);
    let term = draw(&mut app, 100, 12);
    insta::assert_snapshot!(
        "heatmap_dimensions",
        format!("{:?}", term.backend().buffer())
    );
    press(&mut app, &[key('v')]);
    let term = draw(&mut app, 100, 12);
    insta::assert_snapshot!(
        "heatmap_categories",
        format!("{:?}", term.backend().buffer())
    );
    press(
        &mut app,
        &[
            key('v'),
            code(KeyCode::End),
            key('l'),
            key('l'),
            key('l'),
            key('l'),
            key('l'),
            key('l'),
            key('l'),
            key('l'),
            key('l'),
        ],
    );
    let term = draw(&mut app, 100, 12);
    let s = screen(&term);
    // Scrolled horizontally to keep the cursor's sub-task in view.
    assert!(s.contains('◀'), "{s}");
    insta::assert_snapshot!("heatmap_subtasks", format!("{:?}", term.backend().buffer()));
}

#[test]
fn every_cell_prints_its_number_and_sorting_keeps_the_cursor_on_its_model() {
    let mut app = app();
    press(&mut app, &[key('H')]);
    let s = screen(&draw(&mut app, 120, 14));
    // poor: every KE item wrong, the rest right: KE 100, others 0, H-Score 25.
    let poor = s.lines().find(|l| l.contains("poor")).unwrap();
    let nums: Vec<&str> = poor
        .split_whitespace()
        .filter(|w| w.contains('.'))
        .collect();
    assert_eq!(nums, ["100.00", "0.00", "0.00", "0.00", "25.00"], "{poor}");
    // Rows start in name order; the cursor on steady (last), sort by KE: descending first, then
    // ascending, which puts steady first, and the cursor moves with it.
    let order: Vec<&str> = s
        .lines()
        .skip(3)
        .take(3)
        .map(|l| l.split_whitespace().next().unwrap().trim_start_matches('│'))
        .collect();
    assert_eq!(order, ["poor", "shaky", "steady"]);
    press(&mut app, &[key('j'), key('j'), key('o')]);
    let s = screen(&draw(&mut app, 120, 14));
    assert!(s.contains("sorted by KE ↓"), "{s}");
    press(&mut app, &[key('o')]);
    let s = screen(&draw(&mut app, 120, 14));
    assert!(s.contains("sorted by KE ↑"), "{s}");
    let first = s.lines().nth(3).unwrap();
    assert!(first.contains("steady"), "{s}");
    assert!(
        s.lines()
            .rev()
            .take(3)
            .any(|l| l.contains("steady · KE · 28.33")),
        "{s}"
    );
    // Published rows and a baseline.
    press(&mut app, &[key('R')]);
    let s = screen(&draw(&mut app, 120, 40));
    assert!(
        s.contains("GPT-5.2 (ref)") && s.contains("+ 24 published"),
        "{s}"
    );
    // Baseline: the row under the cursor (steady); poor is worse on KE, better elsewhere.
    press(&mut app, &[key('B')]);
    let s = screen(&draw(&mut app, 120, 40));
    assert!(s.contains("baseline steady"), "{s}");
    let poor = s.lines().find(|l| l.contains("│poor")).unwrap();
    assert!(poor.contains("▲+71.7") && poor.contains("▼-24.0"), "{poor}");
    // The correlation popup over 27 complete rows.
    press(&mut app, &[key('c')]);
    let s = screen(&draw(&mut app, 120, 40));
    assert!(
        s.contains("Spearman") && s.contains("over 27 complete rows"),
        "{s}"
    );
    assert_eq!(app.popup(), Some(ScreenId::Correlation));
    press(&mut app, &[code(KeyCode::Esc)]);
    assert!(app.popup().is_none());
}

#[test]
fn drill_down_to_items_then_compare_and_back_to_the_same_cell() {
    let mut app = app();
    // Cursor on shaky (row 2), column RE (3rd).
    press(&mut app, &[key('H'), key('j'), key('l'), key('l')]);
    let (row, col) = (app.heatmap().unwrap().row, app.heatmap().unwrap().col);
    press(&mut app, &[code(KeyCode::Enter)]);
    let d = app
        .heatmap()
        .unwrap()
        .drill
        .as_ref()
        .expect("drilled into the cell");
    assert_eq!(d.model, "shaky");
    assert_eq!(d.label, "RE");
    assert!(d.items.windows(2).all(|w| w[0].1 <= w[1].1), "worst first");
    assert!(d.items.iter().all(
        |(i, _)| app.ds.task_of(&app.ds.items[*i]).dimension == prism::taxonomy::Dimension::RE
    ));
    let first = d.items[0].0;
    let s = screen(&draw(&mut app, 120, 20));
    assert!(
        s.contains("shaky · RE ·") && s.contains("worst first"),
        "{s}"
    );
    // Enter opens the compare screen on that item, with every model's score.
    press(&mut app, &[code(KeyCode::Enter)]);
    assert_eq!(app.top(), ScreenId::Compare);
    assert_eq!(app.compare().unwrap().item(), Some(first));
    // Back: the item list; back again: the heatmap, on the same cell.
    press(&mut app, &[key('b')]);
    assert_eq!(app.top(), ScreenId::Heatmap);
    assert!(app.heatmap().unwrap().drill.is_some());
    press(&mut app, &[key('b')]);
    assert!(app.heatmap().unwrap().drill.is_none());
    assert_eq!(
        (app.heatmap().unwrap().row, app.heatmap().unwrap().col),
        (row, col)
    );
    // A published row has nothing to drill into.
    press(
        &mut app,
        &[key('R'), code(KeyCode::End), code(KeyCode::Enter)],
    );
    assert!(app.heatmap().unwrap().drill.is_none());
    assert!(app.notice.as_deref().unwrap_or("").contains("published"));
}

/// `m` cycles the cells to the share of items whose samples disagree: a model answering every
/// item three times, split (right, wrong, right) on every other item, shows 50 in every cell that
/// has items; a model with one sample per item has no row (nothing to disagree).
#[test]
fn the_consistency_metric_shows_the_share_of_items_whose_samples_disagree() {
    let mut app = app();
    let ds = app.ds.clone();
    for (k, it) in ds.items.iter().enumerate() {
        let task = ds.task_of(it);
        for sample in 0..3u32 {
            let right = k % 2 == 0 || sample != 1;
            app.session.apply_score(ScoreRecord {
                run_id: "r2".into(),
                job_idx: (k * 3) as u32 + sample,
                item_id: it.id.to_string(),
                task_id: task.id.clone(),
                model: "repeated".into(),
                sample,
                evaluator: task.evaluator.as_str().into(),
                score: Some(f64::from(right)),
                detail: String::new(),
                judge: None,
                judge_reply: None,
                judge_attempts: 0,
                created_at: 0,
                rule_score: None,
            });
        }
    }
    press(&mut app, &[key('H'), key('m'), key('m')]);
    let term = draw(&mut app, 120, 12);
    let s = screen(&term);
    assert!(s.contains("samples that disagree"), "{s}");
    let h = app.find::<prism::tui::screens::Heatmap>().unwrap();
    let rep = h.report.as_ref().unwrap();
    let names: Vec<&str> = rep.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["repeated"], "only a model with repeats has a row");
    // Every item of the sample data alternates, so each dimension's share is near half: the
    // exact value, counted from the items themselves.
    for (d, dim) in prism::taxonomy::Dimension::ALL.iter().enumerate() {
        let (mut split, mut n) = (0, 0);
        for (k, it) in ds.items.iter().enumerate() {
            if ds.task_of(it).dimension == *dim {
                n += 1;
                split += usize::from(k % 2 == 1);
            }
        }
        let want = 100.0 * split as f64 / n as f64;
        let got = rep.rows[0].dims[d].unwrap().rate;
        assert!((got - want).abs() < 1e-9, "{dim:?}: {got} vs {want}");
    }
    assert!(s.contains("repeated"), "{s}");
    // m twice more: past the signals (read from the store, none here), back to the rates,
    // every model there.
    press(&mut app, &[key('m'), key('m')]);
    let h = app.find::<prism::tui::screens::Heatmap>().unwrap();
    assert_eq!(h.report.as_ref().unwrap().rows.len(), 4);
}

/// A view with nothing to show says what it needs (issue 45: "samples that disagree" said "no
/// scored answers yet" over a heatmap of scored answers with one sample each).
#[test]
fn an_empty_view_says_what_it_needs() {
    let mut app = app();
    press(&mut app, &[key('H'), key('m'), key('m')]);
    let s = screen(&draw(&mut app, 120, 16));
    assert!(s.contains("samples that disagree"), "{s}");
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("No item has 2 or more scored samples yet"),
        "{s}"
    );
    assert!(!flat.contains("No scored answers yet"), "{s}");
}
