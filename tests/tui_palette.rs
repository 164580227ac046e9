//! The command palette: `:` (or `ctrl-p`) lists the actions of the screen on top with their
//! keys, typing narrows them (letters bound elsewhere are text here), `enter` does the chosen
//! action as its key would, and a remapped key shows as remapped. At 80x24 and 120x40.

mod common;

use std::sync::Arc;

use common::screen::{code, key, screen};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use prism::dataset;
use prism::theme::Theme;
use prism::tui::App;
use prism::tui::component::ScreenId;
use prism::tui::keymap::Keymap;

fn app_with(keymap: Keymap) -> App {
    App::new(
        Arc::new(dataset::load_sample().dataset),
        Arc::new(Vec::new()),
        Theme::default_theme(),
        keymap,
    )
}

/// The screen after the real loop ran the events.
fn drive(app: &mut App, w: u16, h: u16, events: Vec<Event>) -> String {
    screen(&common::screen::drive(app, w, h, events))
}

fn typed(s: &str) -> Vec<Event> {
    s.chars().map(key).collect()
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

#[test]
fn the_palette_lists_the_screens_actions_and_does_the_chosen_one() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = app_with(Keymap::default());
        let shown = drive(&mut app, w, h, vec![key(':')]);
        assert_eq!(app.popup(), Some(ScreenId::Palette), "{w}x{h}");
        assert!(shown.contains("Actions: browse"), "{w}x{h}:\n{shown}");
        // Every action with its key: the heatmap's and the run's among them.
        assert!(shown.contains("type to search"), "{w}x{h}:\n{shown}");
        insta::assert_snapshot!(format!("palette_{w}x{h}"), shown);

        // `q`, `j` and `k` are keys elsewhere; here they are the query. "heat" narrows to the
        // heatmap, and enter opens it as `H` would.
        let mut app = app_with(Keymap::default());
        let mut keys = vec![key(':')];
        keys.extend(typed("heat"));
        let shown = drive(&mut app, w, h, keys.clone());
        assert!(shown.contains("> heat"), "{w}x{h}:\n{shown}");
        let first = shown
            .lines()
            .find(|l| l.contains('❯'))
            .expect("a selected row");
        assert!(first.contains('H'), "the heatmap first: {first}");
        insta::assert_snapshot!(format!("palette_heat_{w}x{h}"), shown);
        keys.push(code(KeyCode::Enter));
        let mut app = app_with(Keymap::default());
        drive(&mut app, w, h, keys);
        assert_eq!(app.popup(), None);
        assert_eq!(app.top(), ScreenId::Heatmap, "{w}x{h}");
    }
}

#[test]
fn letters_are_the_query_and_esc_closes_without_acting() {
    let mut app = app_with(Keymap::default());
    // `q` would quit and `j` move: in the palette they are typed.
    let mut keys = vec![ctrl('p')];
    keys.extend(typed("qj"));
    let shown = drive(&mut app, 120, 40, keys.clone());
    assert!(shown.contains("> qj"), "{shown}");
    assert_eq!(app.popup(), Some(ScreenId::Palette));
    keys.push(code(KeyCode::Esc));
    let mut app = app_with(Keymap::default());
    drive(&mut app, 120, 40, keys);
    assert_eq!(app.popup(), None);
    assert_eq!(app.top(), ScreenId::Browse);
    // A query nothing matches: enter says so and does nothing.
    let mut app = app_with(Keymap::default());
    let mut keys = vec![key(':')];
    keys.extend(typed("zzzzzz"));
    keys.push(code(KeyCode::Enter));
    let shown = drive(&mut app, 120, 40, keys);
    assert!(shown.contains("no action matches"), "{shown}");
    assert_eq!(app.top(), ScreenId::Browse);
}

#[test]
fn the_palette_follows_the_screen_and_the_users_keys() {
    // On the heatmap it lists the heatmap's actions; `down` then enter does the second match.
    let mut app = app_with(Keymap::default());
    let mut keys = vec![key('H'), key(':')];
    keys.extend(typed("sort"));
    let shown = drive(&mut app, 120, 40, keys);
    assert!(shown.contains("Actions: heatmap"), "{shown}");
    assert!(shown.contains("sort"), "{shown}");
    // A remapped key is what the palette shows.
    let overrides: std::collections::BTreeMap<String, prism::tui::keymap::KeyEntry> =
        toml::from_str("[keys]\nheatmap = [\"ctrl-h\"]\n")
            .map(|v: toml::Table| v["keys"].clone().try_into().expect("a [keys] table"))
            .unwrap();
    let (keymap, problems) = Keymap::with_overrides(&overrides);
    assert!(problems.is_empty(), "{problems:?}");
    let mut app = app_with(keymap);
    let mut keys = vec![key(':')];
    keys.extend(typed("heatmap"));
    let shown = drive(&mut app, 120, 40, keys);
    let row = shown
        .lines()
        .find(|l| l.contains('❯'))
        .expect("a selected row");
    assert!(row.contains("ctrl-h"), "{row}");
}

fn mouse(kind: crossterm::event::MouseEventKind, column: u16, row: u16) -> Event {
    Event::Mouse(crossterm::event::MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

/// The mouse at 80x24 as at 120x40 (tests/tui_screens.rs): a click on a tree row selects it,
/// and in the palette the wheel moves the choice.
#[test]
fn the_mouse_selects_at_80x24_and_scrolls_the_palette() {
    use crossterm::event::{MouseButton, MouseEventKind};
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = app_with(Keymap::default());
        // Row 0 is the title, row 1 the tree's border: the third tree row is screen row 4.
        drive(
            &mut app,
            w,
            h,
            vec![mouse(MouseEventKind::Down(MouseButton::Left), 4, 4)],
        );
        assert_eq!(app.browse().tree_sel, 2, "{w}x{h}");
        let shown = drive(
            &mut app,
            w,
            h,
            vec![
                key(':'),
                mouse(MouseEventKind::ScrollDown, w / 2, h / 2),
                mouse(MouseEventKind::ScrollDown, w / 2, h / 2),
            ],
        );
        let chosen = shown
            .lines()
            .find(|l| l.contains('❯'))
            .expect("a selected row");
        // The third action of the browse screen: page up.
        assert!(chosen.contains("page up"), "{w}x{h}: {chosen}");
    }
}
