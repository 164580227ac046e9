//! Tests of `keymap`.

use super::*;

fn ev(code: KeyCode, m: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, m)
}

fn keys(pairs: &[(&str, &[&str])]) -> BTreeMap<String, KeyEntry> {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                KeyEntry::Keys(v.iter().map(|s| s.to_string()).collect()),
            )
        })
        .collect()
}

#[test]
fn defaults_map_common_keys() {
    let km = Keymap::default();
    let none = KeyModifiers::NONE;
    assert_eq!(
        km.action_for(Mode::Browse, &ev(KeyCode::Char('q'), none)),
        Some(Action::Quit)
    );
    assert_eq!(
        km.action_for(
            Mode::Compare,
            &ev(KeyCode::Char('c'), KeyModifiers::CONTROL)
        ),
        Some(Action::Quit)
    );
    assert_eq!(
        km.action_for(Mode::Browse, &ev(KeyCode::Char('N'), KeyModifiers::SHIFT)),
        Some(Action::PrevMatch)
    );
    assert_eq!(
        km.action_for(Mode::Browse, &ev(KeyCode::Char('Z'), KeyModifiers::SHIFT)),
        None
    );
    // Keys act only where their action does: `s` steps samples in compare, nothing in browse.
    assert_eq!(
        km.action_for(Mode::Compare, &ev(KeyCode::Char('s'), none)),
        Some(Action::NextSample)
    );
    assert_eq!(
        km.action_for(Mode::Browse, &ev(KeyCode::Char('s'), none)),
        None
    );
    assert_eq!(
        km.action_for(Mode::Picker, &ev(KeyCode::Char('+'), none)),
        Some(Action::MoreSamples)
    );
}

#[test]
fn no_key_means_two_things_in_one_mode() {
    assert_eq!(Keymap::default().clashes(), Vec::<String>::new());
}

#[test]
fn overrides_replace_an_actions_keys_and_report_mistakes() {
    let mut o = keys(&[
        ("quit", &["x", "ctrl-q"]),
        ("fly", &["f"]),
        ("down", &["notakey"]),
    ]);
    o.insert(
        "compare".into(),
        KeyEntry::Mode([("next_sample".to_string(), vec!["z".to_string()])].into()),
    );
    o.insert(
        "nowhere".into(),
        KeyEntry::Mode([("quit".to_string(), vec!["y".to_string()])].into()),
    );
    o.insert(
        "heatmap".into(),
        KeyEntry::Mode([("search".to_string(), vec!["y".to_string()])].into()),
    );
    let (km, warnings) = Keymap::with_overrides(&o);
    let none = KeyModifiers::NONE;
    for m in [Mode::Browse, Mode::Compare, Mode::Heatmap] {
        assert_eq!(
            km.action_for(m, &ev(KeyCode::Char('x'), none)),
            Some(Action::Quit)
        );
        assert_eq!(km.action_for(m, &ev(KeyCode::Char('q'), none)), None);
    }
    assert_eq!(
        km.action_for(Mode::Compare, &ev(KeyCode::Char('z'), none)),
        Some(Action::NextSample)
    );
    assert_eq!(
        km.action_for(Mode::Compare, &ev(KeyCode::Char('s'), none)),
        None
    );
    // A bad override leaves the defaults in place.
    assert_eq!(
        km.action_for(Mode::Browse, &ev(KeyCode::Char('j'), none)),
        Some(Action::Down)
    );
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("search does nothing in heatmap"))
    );
}

#[test]
fn help_shows_the_keys_of_the_mode() {
    let km = Keymap::default();
    let compare: Vec<&str> = km.help_rows(Mode::Compare).iter().map(|r| r.1).collect();
    assert!(compare.contains(&"next sample"));
    assert!(!compare.contains(&"search ids and text"));
    let browse: Vec<&str> = km.help_rows(Mode::Browse).iter().map(|r| r.1).collect();
    assert!(browse.contains(&"search ids and text"));
    assert!(!browse.contains(&"next sample"));
}

#[test]
fn keys_round_trip_through_display() {
    for s in ["ctrl-d", "G", "enter", "f1", "space", "/"] {
        let k = Key::parse(s).unwrap();
        assert_eq!(
            Key::parse(&k.to_string().replace('↑', "up")).unwrap(),
            k,
            "{s}"
        );
    }
}
