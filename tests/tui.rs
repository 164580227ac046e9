//! The TUI driven in-process: the real app loop on `TestBackend` with scripted input, and
//! snapshots of the browse screen in every bundled theme.

mod common;

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use common::screen::{code, drive, key, screen};
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use prism::dataset::{self, Loaded};
use prism::theme::Theme;
use prism::tui::component::ScreenId;
use prism::tui::keymap::Keymap;
use prism::tui::screens::Focus;
use prism::tui::{App, run_loop};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn typed(s: &str) -> Vec<Event> {
    s.chars().map(key).collect()
}

fn click(col: u16, row: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: col,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

fn wheel_down(col: u16, row: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: col,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

fn app_with(loaded: Loaded, theme: Theme, keymap: Keymap) -> App {
    App::new(
        Arc::new(loaded.dataset),
        Arc::new(loaded.problems),
        theme,
        keymap,
    )
}

fn sample_app(theme: Theme) -> App {
    app_with(dataset::load_sample(), theme, Keymap::default())
}

#[test]
fn browse_screen_snapshots_in_every_theme() {
    for (name, _) in prism::theme::BUNDLED {
        let mut app = sample_app(Theme::bundled(name).unwrap());
        // Open a sub-task so all three panes have content.
        let term = drive(
            &mut app,
            100,
            30,
            vec![key('j'), code(KeyCode::Enter), key('j')],
        );
        insta::assert_snapshot!(format!("browse_text_{name}"), screen(&term));
        insta::assert_snapshot!(
            format!("browse_styled_{name}"),
            format!("{:?}", term.backend().buffer())
        );
    }
}

#[test]
fn no_color_snapshot_uses_no_colours() {
    let mut app = sample_app(Theme::monochrome());
    let term = drive(
        &mut app,
        100,
        30,
        vec![key('j'), code(KeyCode::Enter), key('j')],
    );
    let buf = term.backend().buffer();
    for cell in buf.content() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset);
        assert_eq!(cell.bg, ratatui::style::Color::Reset);
    }
    insta::assert_snapshot!("browse_styled_no_color", format!("{buf:?}"));
}

#[test]
fn navigation_reaches_an_item_and_its_detail() {
    let mut app = sample_app(Theme::default_theme());
    // KE is open at start: j → FD, enter opens it, j → Myths, tab → items, j → second item.
    let term = drive(
        &mut app,
        120,
        40,
        vec![
            key('j'),
            code(KeyCode::Enter),
            key('j'),
            code(KeyCode::Tab),
            key('j'),
        ],
    );
    assert_eq!(app.browse().focus, Focus::Items);
    let idx = app.browse().current_item().unwrap();
    assert_eq!(&*app.ds.items[idx].id, "KE-FD-Myths-0002");
    let s = screen(&term);
    assert!(s.contains("KE-FD-Myths-0002"), "{s}");
    assert!(s.contains("fact_judge"));
    assert!(s.contains("as the model sees it"));
    // The detail shows the question as sent, after the task prompt.
    assert!(s.contains("Is the Great Wall of China visible"));
}

#[test]
fn search_highlights_and_jumps_with_n_and_shift_n() {
    let mut app = sample_app(Theme::default_theme());
    let mut ev = vec![key('/')];
    ev.extend(typed("moon"));
    ev.push(code(KeyCode::Enter));
    let term = drive(&mut app, 120, 40, ev);
    let n = app.browse().search.matches.len();
    assert!(n >= 2, "several sample items mention the Moon");
    let first = app.browse().current_item().unwrap();
    assert!(app.ds.items[first].question.to_lowercase().contains("moon"));
    assert!(screen(&term).contains("match 1/"), "{}", screen(&term));
    // The match is highlighted in the theme's match colours somewhere on screen.
    let hit = app.theme.match_bg;
    assert!(
        term.backend()
            .buffer()
            .content()
            .iter()
            .any(|c| c.bg == hit)
    );

    let term = drive(&mut app, 120, 40, vec![key('n')]);
    let second = app.browse().current_item().unwrap();
    assert_ne!(first, second);
    assert!(
        app.ds.items[second]
            .question
            .to_lowercase()
            .contains("moon")
    );
    assert!(screen(&term).contains("match 2/"));
    drive(
        &mut app,
        120,
        40,
        vec![Event::Key(KeyEvent::new(
            KeyCode::Char('N'),
            KeyModifiers::SHIFT,
        ))],
    );
    assert_eq!(app.browse().current_item(), Some(first));
    // N from the first match wraps to the last.
    drive(
        &mut app,
        120,
        40,
        vec![Event::Key(KeyEvent::new(
            KeyCode::Char('N'),
            KeyModifiers::SHIFT,
        ))],
    );
    assert_eq!(
        app.browse().current_item(),
        Some(*app.browse().search.matches.last().unwrap())
    );
    // Esc clears the search.
    drive(&mut app, 120, 40, vec![code(KeyCode::Esc)]);
    assert!(app.browse().search.matches.is_empty());
}

#[test]
fn search_by_id_and_escape_restores_the_selection() {
    let mut app = sample_app(Theme::default_theme());
    let mut ev = vec![key('/')];
    ev.extend(typed("RE-PF-Chains-0003"));
    ev.push(code(KeyCode::Enter));
    drive(&mut app, 120, 40, ev);
    assert_eq!(
        &*app.ds.items[app.browse().current_item().unwrap()].id,
        "RE-PF-Chains-0003"
    );

    let mut app = sample_app(Theme::default_theme());
    let before = (app.browse().tree_sel, app.browse().item_sel);
    let mut ev = vec![key('/')];
    ev.extend(typed("spider"));
    ev.push(code(KeyCode::Esc));
    drive(&mut app, 120, 40, ev);
    assert_eq!((app.browse().tree_sel, app.browse().item_sel), before);
    assert!(app.browse().search.regex.is_none());
}

#[test]
fn help_is_generated_from_the_keymap_including_overrides() {
    let mut overrides = BTreeMap::new();
    overrides.insert(
        "search".to_string(),
        prism::config::KeyEntry::Keys(vec!["s".to_string()]),
    );
    let (km, warnings) = Keymap::with_overrides(&overrides);
    assert!(warnings.is_empty());
    let mut app = app_with(dataset::load_sample(), Theme::default_theme(), km);
    let term = drive(&mut app, 100, 30, vec![key('?')]);
    assert!(app.popup() == Some(ScreenId::Help));
    let s = screen(&term);
    assert!(s.contains("search ids and text"), "{s}");
    let line = s
        .lines()
        .find(|l| l.contains("search ids and text"))
        .unwrap();
    let keys = line.trim_matches(|c: char| c == '┃' || c == ' ' || c == '█');
    assert!(
        keys.starts_with("s "),
        "the overridden key is shown: {line}"
    );
    assert!(!line.contains('/'), "the default key is replaced: {line}");
    // q closes the popup before it quits.
    drive(&mut app, 100, 30, vec![key('q')]);
    assert!(app.popup().is_none());
    assert!(!app.quit);
    drive(&mut app, 100, 30, vec![key('q')]);
    assert!(app.quit);
}

#[test]
fn quit_stops_the_loop_before_later_input() {
    let mut app = sample_app(Theme::default_theme());
    drive(&mut app, 100, 30, vec![key('q'), key('j'), key('j')]);
    assert!(app.quit);
    assert_eq!(app.browse().tree_sel, 0, "events after q are not processed");
    let mut app = sample_app(Theme::default_theme());
    drive(
        &mut app,
        100,
        30,
        vec![Event::Key(KeyEvent::new(
            KeyCode::Char('c'),
            KeyModifiers::CONTROL,
        ))],
    );
    assert!(app.quit);
}

#[test]
fn mouse_clicks_select_and_the_wheel_scrolls() {
    let mut app = sample_app(Theme::default_theme());
    let a = app.browse().areas();
    drive(&mut app, 100, 30, vec![]);
    assert_ne!(
        a,
        app.browse().areas(),
        "the loop lays out for the real size"
    );
    drive(&mut app, 120, 40, vec![]);
    let a2 = app.browse().areas();
    // Click the third tree row (inside the border: row + 1).
    drive(&mut app, 120, 40, vec![click(a2.tree.x + 3, a2.tree.y + 3)]);
    assert_eq!(app.browse().tree_sel, 2);
    assert_eq!(app.browse().focus, Focus::Tree);
    // Clicking it again opens it.
    let n = app.browse().tree.visible.len();
    drive(&mut app, 120, 40, vec![click(a2.tree.x + 3, a2.tree.y + 3)]);
    assert!(app.browse().tree.visible.len() > n);
    // The wheel over the item list moves its selection without stealing focus.
    drive(
        &mut app,
        120,
        40,
        vec![wheel_down(a2.items.x + 5, a2.items.y + 3)],
    );
    assert_eq!(app.browse().item_sel, 1);
    assert_eq!(app.browse().focus, Focus::Tree);
    // A click on an item row selects it and focuses the list.
    drive(
        &mut app,
        120,
        40,
        vec![click(a2.items.x + 5, a2.items.y + 3)],
    );
    assert_eq!(app.browse().item_sel, 2);
    assert_eq!(app.browse().focus, Focus::Items);
}

#[test]
fn every_size_down_to_tiny_renders_without_panic() {
    for (w, h) in [(80, 24), (200, 60), (60, 20), (20, 6), (1, 1), (0, 0)] {
        let mut app = sample_app(Theme::default_theme());
        let mut ev = vec![
            key('e'),
            key('G'),
            code(KeyCode::Tab),
            key('G'),
            code(KeyCode::Tab),
        ];
        ev.extend([key('G'), key('?'), code(KeyCode::Esc), key('!')]);
        drive(&mut app, w, h, ev);
    }
    // 80x24 keeps all three panes and the status line readable.
    let mut app = sample_app(Theme::default_theme());
    let term = drive(
        &mut app,
        80,
        24,
        vec![key('j'), code(KeyCode::Enter), key('j')],
    );
    let s = screen(&term);
    assert!(
        s.contains("Taxonomy") && s.contains("Item") && s.contains("KE-FD-Myths-0001"),
        "{s}"
    );
    assert!(s.lines().last().unwrap().contains("help"));
}

#[test]
fn resize_relayouts() {
    let mut app = sample_app(Theme::default_theme());
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run_loop(&mut term, &mut app, futures::stream::empty()))
        .unwrap();
    assert_eq!(app.browse().areas().tree.height, 38);
    // The terminal shrinks (as a real one does before it sends the event); the next frame is
    // laid out for the new size, and the layout the screen recorded follows.
    term.backend_mut().resize(80, 24);
    let events = futures::stream::iter([Ok::<_, io::Error>(Event::Resize(80, 24))]);
    rt.block_on(run_loop(&mut term, &mut app, events)).unwrap();
    assert_eq!(app.area.width, 80);
    assert_eq!(app.browse().areas().tree.height, 22);
}

#[test]
fn expand_all_shows_every_task() {
    let mut app = sample_app(Theme::default_theme());
    drive(&mut app, 120, 40, vec![key('e')]);
    let tasks = app.ds.tasks.len();
    assert_eq!(app.browse().tree.visible.len(), 4 + 15 + tasks);
    drive(&mut app, 120, 40, vec![key('e')]);
    assert_eq!(app.browse().tree.visible.len(), 4);
}

#[test]
fn load_problems_are_counted_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.jsonl");
    std::fs::write(
        &p,
        "{\"id\":\"a\",\"task\":\"KE-FD-X\",\"dimension\":\"KE\",\"category\":\"FD\",\"question\":\"q\",\"answer\":\"x\"}\nbroken\n",
    )
    .unwrap();
    let loaded = dataset::load_path(&p).unwrap();
    let mut app = app_with(loaded, Theme::default_theme(), Keymap::default());
    let term = drive(&mut app, 120, 30, vec![]);
    assert!(screen(&term).contains("1 skipped"), "{}", screen(&term));
    let term = drive(&mut app, 120, 30, vec![key('!')]);
    let s = screen(&term);
    assert!(s.contains("x.jsonl:2: -: invalid JSON"), "{s}");
}

#[test]
fn escape_sequences_in_data_never_reach_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("evil.jsonl");
    std::fs::write(
        &p,
        "{\"id\":\"e\\u001b[2J1\",\"task\":\"KE-FD-X\",\"dimension\":\"KE\",\"category\":\"FD\",\"question\":\"hi\\u001b]0;pwned\\u0007 there\\u001b[31m red\",\"answer\":\"x\"}\n",
    )
    .unwrap();
    let loaded = dataset::load_path(&p).unwrap();
    assert!(loaded.problems.is_empty());
    let mut app = app_with(loaded, Theme::default_theme(), Keymap::default());
    let term = drive(&mut app, 120, 30, vec![key('j'), key('j')]);
    let s = screen(&term);
    assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'));
    assert!(s.contains("hi there red"), "{s}");
}

/// A notice longer than the status line is shown whole, wrapped in a box above it, at every
/// size; a short one stays on the status line alone.
#[test]
fn a_long_notice_is_shown_whole_never_cut() {
    let long = "run not started: model file /home/someone/.local/share/prism/models/gemma-3-270m-q4_k_m.gguf does not exist (install the default with `prism model install`) END";
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let mut app = sample_app(Theme::default_theme());
        app.notice = Some(long.into());
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| app.draw(f)).unwrap();
        let s = screen(&term);
        let joined: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
        let inside: String = joined
            .replace(" │ │ ", " ")
            .replace("│ ", "")
            .replace(" │", "");
        for word in [
            "prism/models/gemma-3-270m-q4_k_m.gguf",
            "`prism model install`)",
            "END",
        ] {
            assert!(
                inside.contains(word) || w >= 200,
                "{w}x{h}: {word:?} missing\n{s}"
            );
        }
        assert_eq!(s.contains(" message "), w < 200, "{w}x{h}\n{s}");
    }
    let mut app = sample_app(Theme::default_theme());
    app.notice = Some("short".into());
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    assert!(!screen(&term).contains(" message "));
}

/// The help popup is as wide as the screen allows and wraps what still does not fit: every
/// description is there in full at 80x24 (scrolled to), 120x40 and 200x60.
#[test]
fn the_help_popup_never_cuts_a_description() {
    let want =
        "mark the item for a run (the cursor moves to the next), or every item under the node";
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let mut app = sample_app(Theme::default_theme());
        let mut seen = String::new();
        // Open help, then scroll through it a row at a time.
        let mut events = vec![key('?')];
        for _ in 0..30 {
            let term = drive(&mut app, w, h, std::mem::take(&mut events));
            let s = screen(&term);
            let text: String = s
                .lines()
                .map(|l| l.replace(['│', '┃', '║'], " "))
                .collect::<Vec<_>>()
                .join(" ");
            seen.push_str(&text.split_whitespace().collect::<Vec<_>>().join(" "));
            seen.push(' ');
            events.push(key('j'));
        }
        assert!(seen.contains(want), "{w}x{h}: {seen}");
        assert!(
            !seen.contains("for a run (the cursor moves to the…"),
            "{w}x{h}"
        );
    }
}

/// `M` with no scored model says why nothing moves, at 80x24 (it did nothing, silently).
#[test]
fn m_with_no_scored_model_says_so() {
    let mut app = sample_app(Theme::default_theme());
    let term = drive(&mut app, 80, 24, vec![key('M')]);
    let s = screen(&term);
    assert!(s.contains("no model has a scored answer yet"), "{s}");
}
