//! The app's own behaviour: what the status line says, and for how long.

use super::*;

fn app() -> App {
    let loaded = crate::dataset::load_sample();
    App::new(
        Arc::new(loaded.dataset),
        Arc::new(Vec::new()),
        crate::theme::Theme::default_theme(),
        Keymap::default(),
    )
}

#[test]
fn what_the_team_store_brought_does_not_push_aside_a_message_of_the_users_doing() {
    use crate::tui::jobs::{Delivery, Msg};
    let pulled = |answers| Delivery {
        to: ScreenId::Heatmap,
        msg: Msg::new(crate::store::mirror::Pulled {
            answers,
            ..Default::default()
        }),
    };
    let mut a = app();
    a.on_delivery(pulled(3));
    assert_eq!(
        a.notice.as_deref(),
        Some("from the team's store: 3 answer(s)")
    );
    // A later pull says its own news in place of the earlier one.
    a.on_delivery(pulled(5));
    assert_eq!(
        a.notice.as_deref(),
        Some("from the team's store: 5 answer(s)")
    );
    // A run pushed (or an error) stays until it leaves, whatever the mirror brings meanwhile.
    let pushed = "run r1 is on the team's store postgres://127.0.0.1/x (4 row(s) added)";
    a.on_delivery(Delivery {
        to: ScreenId::Browse,
        msg: Msg::notice(pushed),
    });
    a.on_delivery(pulled(7));
    assert_eq!(a.notice.as_deref(), Some(pushed));
    // Once it left, the mirror's news shows again.
    a.notice = None;
    a.on_delivery(pulled(2));
    assert_eq!(
        a.notice.as_deref(),
        Some("from the team's store: 2 answer(s)")
    );
}

#[test]
fn a_message_leaves_by_itself_once_its_time_is_up() {
    let mut a = app();
    a.notice = Some("judge: smol · scoring the 5 answers…".into());
    a.before_draw();
    assert!(a.notice.is_some(), "shown first");
    let left = a.notice_left().unwrap();
    assert!(left > std::time::Duration::from_secs(9) && left <= notice_ttl("x"));
    // Its time up (as if shown 31 s ago): the next frame is without it.
    a.notice_shown = Some((
        a.notice.clone().unwrap(),
        std::time::Instant::now() - std::time::Duration::from_secs(31),
    ));
    a.before_draw();
    assert_eq!(a.notice, None);
    assert_eq!(a.notice_left(), None);
    // A new message starts its own time.
    a.notice = Some("another".into());
    a.before_draw();
    assert!(a.notice_left().unwrap() > std::time::Duration::from_secs(9));
    // A long one stays longer, up to 30 s.
    assert!(notice_ttl(&"x".repeat(300)) > notice_ttl("short"));
    assert_eq!(
        notice_ttl(&"x".repeat(10_000)),
        std::time::Duration::from_secs(30)
    );
}
