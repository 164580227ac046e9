//! The self-detection screen against the mock's scripted `selfcheck` model: opened from
//! browse (`D`) on the bundled triples, a run started from it (`d`, the picker, enter) over
//! triples that steer the mock (a triple set aside, unclean replies), the generator × detector
//! table, the heat row, the sentences wrong-first, and the stored run shown again in a new
//! session without a request.

mod common;

use std::sync::Arc;

use common::mock;
use common::screen::{code, key, screen};
use crossterm::event::KeyCode;
use prism::dataset;
use prism::selfcheck::results::{Stored, rows};
use prism::store::Store;
use prism::tui::component::{Open, ScreenId};
use prism::tui::screens::Selfcheck;
use prism::tui::{App, Services};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use common::screen::runtime;

fn session(rt: &tokio::runtime::Runtime, url: &str, db: &std::path::Path) -> (App, Services) {
    let models = common::screen::models(&format!(
        "[[models]]\nname = \"sc\"\nprovider = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"selfcheck\"\n"
    ));
    common::screen::session(rt, db, models)
}

fn play(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    services: &mut Services,
    keys: Vec<crossterm::event::Event>,
) -> Terminal<TestBackend> {
    common::screen::play_at(rt, app, services, keys, (120, 36))
}

fn triple(id: &str, subject: &str, relation: &str, object: &str, pop: f64) -> String {
    serde_json::json!({"id": id, "subject": subject, "relation": relation, "object": object,
                       "sentence": format!("{object} is the {relation} of {subject}."), "popularity": pop})
    .to_string()
}

#[test]
fn the_screen_opens_from_browse_on_the_bundled_triples() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &mock.url(), &dir.path().join("prism.db"));
    let term = play(&rt, &mut app, &mut services, vec![key('D')]);
    assert_eq!(app.top(), ScreenId::Selfcheck);
    let s = screen(&term);
    assert!(s.contains("No self-detection run yet"), "{s}");
    assert!(s.contains("70 triples over 10 relations"), "{s}");
    // The picker offers ten triples to start with, each relation in turn.
    let term = play(&rt, &mut app, &mut services, vec![key('d')]);
    assert_eq!(app.popup(), Some(ScreenId::Picker));
    let s = screen(&term);
    assert!(s.contains("Self-detection: 10 triples"), "{s}");
    let term = play(&rt, &mut app, &mut services, vec![key('+'), key('+')]);
    let s = screen(&term);
    assert!(s.contains("Self-detection: 30 triples"), "{s}");
    assert!(s.contains("false sentences: written by the model"), "{s}");
    // m: false sentences by swapping the object instead.
    let term = play(&rt, &mut app, &mut services, vec![key('m')]);
    let s = screen(&term);
    assert!(
        s.contains("object swapped for another of its relation"),
        "{s}"
    );
    // The only model starts chosen; unchosen, the picker says so and nothing is asked.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![key(' '), code(KeyCode::Enter)],
    );
    assert!(screen(&term).contains("choose at least one model"));
    assert_eq!(mock.requests(), 0);
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![code(KeyCode::Esc), code(KeyCode::Esc)],
    );
    assert_eq!(app.top(), ScreenId::Browse, "{}", screen(&term));
}

#[test]
fn a_run_from_the_screen_scores_drills_and_reloads() {
    let mock = mock::start_background();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prism.db");
    let file = dir.path().join("triples.jsonl");
    std::fs::write(
        &file,
        [
            triple("b1", "Ada", "birthplace", "London", 90.0),
            triple("b2", "Bo [[chatty]]", "birthplace", "Paris", 40.0),
            triple("b3", "Cy [[no-object]]", "birthplace", "Rome", 10.0),
            triple("c1", "Dee", "capital", "Oslo", 70.0),
            triple("c2", "Eve [[retry-once]]", "capital", "Bern", 20.0),
        ]
        .join("\n"),
    )
    .unwrap();
    let set = dataset::triples::load_path(&file, &Default::default())
        .unwrap()
        .set;
    let rt = runtime();
    let (mut app, mut services) = session(&rt, &mock.url(), &db);
    app.push(Open::Selfcheck {
        set: Arc::new(set),
        dataset: file.display().to_string(),
    });
    // d (sc, the only model, starts chosen), all five triples, start; the loop waits for the
    // run to end.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![key('d'), key('+'), key('+'), key('+'), code(KeyCode::Enter)],
    );
    let sc = app.find::<Selfcheck>().unwrap();
    let (run, stored) = sc.run().unwrap();
    assert_eq!(stored.items.len(), 5);
    // From the store, the same scores the screen shows.
    let store = Store::open(&db).unwrap();
    let from_store = rows(
        run,
        &Stored::load(&prism::store::Db::file(&store.path().unwrap()), &run.id).unwrap(),
    );
    assert_eq!(sc.rows, from_store);
    assert_eq!(sc.rows.len(), 1);
    let r = &sc.rows[0];
    assert_eq!((r.items, r.set_aside), (4, 1));
    // The chatty triple: both its replies unclean in each mode (true flagged, false caught).
    assert_eq!((r.direct.unparsed, r.cot.unparsed), (2, 2));
    let c = r.direct.confusion;
    assert_eq!((c.tp, c.fn_, c.fp, c.tn), (4, 0, 1, 3));
    assert_eq!(r.direct.scores.recall, Some(100.0));
    assert_eq!(r.direct.scores.precision, Some(80.0));
    let s = screen(&term);
    assert!(s.contains("self-detection done"), "{s}");
    assert!(s.contains("100.0  80.0  88.9  87.5   2"), "{s}");
    assert!(s.contains("Recall per relation (direct)"), "{s}");
    assert!(s.contains("birthplace") && s.contains("capital"), "{s}");
    // Recall is 100 in every bin: no rank correlation to report.
    assert!(
        s.contains("recall against popularity over 4 equal bins: direct - · CoT -"),
        "{s}"
    );
    insta::assert_snapshot!("selfcheck_scores", common::screen::stable(&s));

    // enter: the sentences, the wrong verdicts first (the chatty triple's false alarms), the
    // set-aside triple last.
    let term = play(&rt, &mut app, &mut services, vec![code(KeyCode::Enter)]);
    let sc = app.find::<Selfcheck>().unwrap();
    let sv = sc.sentences.as_ref().unwrap();
    let item = |i: usize| {
        let idx = sv.list[i].0;
        let (_, st) = sc.run().unwrap();
        st.items
            .iter()
            .find(|x| x.idx == idx)
            .unwrap()
            .triple_id
            .clone()
    };
    assert_eq!(item(0), "b2");
    assert_eq!(sv.list[0].1, Some(2));
    assert_eq!(item(sv.list.len() - 1), "b3");
    assert_eq!(sv.list[sv.list.len() - 1].1, None);
    let s = screen(&term);
    assert!(s.contains("wrong verdicts first"), "{s}");
    assert!(s.contains("unparsed (counts as yes)"), "{s}");
    insta::assert_snapshot!("selfcheck_sentences", common::screen::stable(&s));
    assert!(s.contains("false alarm"), "{s}");
    assert!(s.contains("chain-of-thought on the true sentence"), "{s}");
    assert!(s.contains("It depends on the source."), "{s}");
    // The next triple: a clean one, both verdicts right, with the CoT units.
    let term = play(&rt, &mut app, &mut services, vec![key('j')]);
    let s = screen(&term);
    assert!(s.contains("Wrongville"), "{s}");
    assert!(s.contains("The object: wrong."), "{s}");
    assert!(!s.contains("false alarm"), "{s}");
    // To the set-aside triple: its reason.
    let term = play(&rt, &mut app, &mut services, vec![key('G')]);
    assert!(screen(&term).contains("set aside:"));
    // Back to the table, then the heat row with chain-of-thought.
    let term = play(
        &rt,
        &mut app,
        &mut services,
        vec![code(KeyCode::Esc), key('m')],
    );
    assert!(app.find::<Selfcheck>().unwrap().sentences.is_none());
    assert!(screen(&term).contains("Recall per relation (chain-of-thought)"));

    // A new session on the same store shows the stored run without asking anything.
    let asked = mock.requests();
    let (mut app2, mut services2) = session(&rt, &mock.url(), &db);
    let term = play(&rt, &mut app2, &mut services2, vec![key('D')]);
    let sc2 = app2.find::<Selfcheck>().unwrap();
    assert_eq!(sc2.rows, from_store);
    assert!(screen(&term).contains("100.0  80.0  88.9  87.5   2"));
    assert_eq!(mock.requests(), asked);
}
