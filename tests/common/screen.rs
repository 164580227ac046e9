//! Helpers shared by the TUI tests: scripted keys and the screen as text.
#![allow(dead_code)]

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

pub fn code(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

/// The terminal's cells as lines of text.
pub fn screen(term: &Terminal<TestBackend>) -> String {
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// One of two TUIs: the app, its services and its key batches.
pub struct Side<'a> {
    pub app: &'a mut prism::tui::App,
    pub services: &'a mut prism::tui::Services,
    pub keys: Vec<Vec<Event>>,
}

/// Two TUIs at once, as two reviewers in two terminals: `watcher` gets its key batches 200 ms apart (a screen opened by one batch has loaded for the next), and then
/// no more input; after `settle`, `between` runs (blocking both), then `actor` plays its batches (as far apart) to
/// the end (its saves are done then). `watcher` is stopped `after` that, and what it last drew, never
/// redrawn here, is returned: only what its loop drew on its own counts.
pub fn watch_while_other_acts(
    rt: &tokio::runtime::Runtime,
    watcher: Side,
    actor: Side,
    settle: std::time::Duration,
    between: impl FnOnce(),
    after: std::time::Duration,
) -> String {
    use futures::StreamExt;
    let mut tw = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut ta = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    rt.block_on(async {
        let keys = batches(watcher.keys)
            .chain(futures::stream::pending())
            .boxed_local();
        let stop = async {
            let _ = stop_rx.await;
        };
        let watching =
            prism::tui::run_loop_until(&mut tw, watcher.app, keys, watcher.services, stop);
        let acting = async {
            tokio::time::sleep(settle).await;
            between();
            prism::tui::run_loop_with(
                &mut ta,
                actor.app,
                batches(actor.keys).boxed_local(),
                actor.services,
            )
            .await
            .unwrap();
            tokio::time::sleep(after).await;
            let _ = stop_tx.send(());
        };
        let (w, ()) = futures::join!(watching, acting);
        w.unwrap();
    });
    screen(&tw)
}

/// One TUI played to the end of its key batches (200 ms apart, so a screen opened by one batch
/// has loaded for the next); the screen it drew last.
pub fn play(
    rt: &tokio::runtime::Runtime,
    app: &mut prism::tui::App,
    services: &mut prism::tui::Services,
    keys: Vec<Vec<Event>>,
    size: (u16, u16),
) -> String {
    use futures::StreamExt;
    let mut term = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
    rt.block_on(prism::tui::run_loop_with(
        &mut term,
        app,
        batches(keys).boxed_local(),
        services,
    ))
    .unwrap();
    screen(&term)
}

/// Key batches 200 ms apart, as typed by someone who waits for each screen.
fn batches(keys: Vec<Vec<Event>>) -> impl futures::Stream<Item = std::io::Result<Event>> {
    use futures::StreamExt;
    futures::stream::iter(keys)
        .then(|batch| async move {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            futures::stream::iter(batch.into_iter().map(Ok::<_, std::io::Error>))
        })
        .flatten()
}

/// A test terminal that keeps every frame it was asked to show, with when: for tests of what a
/// user sees *while* something else goes on (a frame redrawn late is a frozen screen).
pub struct Timed {
    pub inner: TestBackend,
    pub frames: Vec<(std::time::Instant, String)>,
}

impl Timed {
    pub fn new(w: u16, h: u16) -> Timed {
        Timed {
            inner: TestBackend::new(w, h),
            frames: Vec::new(),
        }
    }

    fn text(&self) -> String {
        let buf = self.inner.buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }
}

impl ratatui::backend::Backend for Timed {
    type Error = <TestBackend as ratatui::backend::Backend>::Error;
    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a ratatui::buffer::Cell)>,
    {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<ratatui::layout::Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<ratatui::layout::Position>>(
        &mut self,
        position: P,
    ) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ratatui::backend::ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<ratatui::layout::Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<ratatui::backend::WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()?;
        let frame = self.text();
        self.frames.push((std::time::Instant::now(), frame));
        Ok(())
    }
}

/// The runtime the TUI tests drive the loop on (two workers, as the TUI has).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh app on the bundled sample data offering `models`, with services on the store `db`.
pub fn session(
    rt: &tokio::runtime::Runtime,
    db: &std::path::Path,
    models: Vec<prism::provider::ModelConfig>,
) -> (prism::tui::App, prism::tui::Services) {
    let loaded = prism::dataset::load_sample();
    let app = prism::tui::App::new(
        std::sync::Arc::new(loaded.dataset),
        std::sync::Arc::new(loaded.problems),
        prism::theme::Theme::default_theme(),
        prism::tui::keymap::Keymap::default(),
    )
    .with_models(models);
    let services = rt
        .block_on(async {
            prism::tui::Services::with_store(
                db,
                prism::engine::http_backends(),
                "<sample-data>".into(),
            )
        })
        .unwrap();
    (app, services)
}

/// Models from a models.toml text.
pub fn models(toml_text: &str) -> Vec<prism::provider::ModelConfig> {
    toml::from_str::<prism::provider::ModelsFile>(toml_text)
        .unwrap()
        .models
}

/// Plays `keys` through the real loop on a `w`x`h` screen (the loop waits for the work the keys
/// start), then draws once more.
pub fn play_at(
    rt: &tokio::runtime::Runtime,
    app: &mut prism::tui::App,
    services: &mut prism::tui::Services,
    keys: Vec<Event>,
    (w, h): (u16, u16),
) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    rt.block_on(async {
        let stream = futures::stream::iter(keys.into_iter().map(Ok::<_, std::io::Error>));
        prism::tui::run_loop_with(&mut term, app, stream, services).await
    })
    .unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    term
}

/// A screen with what differs between runs of a test set aside: counts of calls (the response
/// cache can shorten them, by timing), run ids and the temporary directory.
pub fn stable(s: &str) -> String {
    let mut out = s.to_string();
    for (pat, with) in [
        (r"\d+ calls( \(\d+ from cache\))?", "N calls"),
        (r"r\d{8}-\d{6}-[0-9a-f]{4}", "RUN-ID"),
        (r"\S*\.tmp[A-Za-z0-9]+/", "TMP/"),
    ] {
        out = regex::Regex::new(pat)
            .unwrap()
            .replace_all(&out, with)
            .into_owned();
    }
    // What was replaced had its own length: the padding after it is not part of the screen.
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the real loop over scripted events at `w`x`h`; returns the terminal, drawn once more
/// after the loop so the buffer shows the final state.
pub fn drive(
    app: &mut prism::tui::App,
    w: u16,
    h: u16,
    events: Vec<Event>,
) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    let stream = futures::stream::iter(events.into_iter().map(Ok::<_, std::io::Error>));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(prism::tui::run_loop(&mut term, app, stream))
        .unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    term
}
