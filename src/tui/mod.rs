//! The terminal front-end. `run` owns the terminal; [`run_loop`] is the app loop, generic over the
//! backend and the input stream so tests drive the real loop on `TestBackend` with scripted keys.

pub mod app;
pub mod keymap;
pub mod layout;
pub mod tree;
pub mod view;

use std::io;
use std::sync::Arc;

use crossterm::event::{DisableMouseCapture, EnableMouseCapture, Event, EventStream};
use crossterm::execute;
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;

pub use app::App;

use crate::dataset::{Dataset, Problem};
use crate::theme::Theme;
use keymap::Keymap;

/// Runs the app loop until the user quits or the input ends.
///
/// Input is taken in ready batches before each draw, so a burst of events (a held key, a pasted
/// string, a scroll wheel) costs one frame, not one per event. (`ready_chunks` polls the stream
/// with the loop's own waker; polling crossterm's `EventStream` with a throw-away waker, as
/// `now_or_never` does, loses its wake-ups and freezes input.)
pub async fn run_loop<B, S>(terminal: &mut Terminal<B>, app: &mut App, events: S) -> io::Result<()>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let size = terminal.size().map_err(io::Error::other)?;
    app.area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
    app.keep_visible();
    let mut batches = events.ready_chunks(256);
    loop {
        terminal
            .draw(|f| view::render(app, f))
            .map_err(io::Error::other)?;
        let Some(batch) = batches.next().await else {
            return Ok(());
        };
        for ev in batch {
            app.handle_event(ev?);
            if app.quit {
                return Ok(());
            }
        }
    }
}

/// Opens the TUI on a real terminal and restores it afterwards, also on error and on panic.
pub fn run(
    ds: Arc<Dataset>,
    problems: Arc<Vec<Problem>>,
    theme: Theme,
    keymap: Keymap,
    notices: Vec<String>,
) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // ratatui::init installs a panic hook that restores the terminal; ours also turns off the
    // mouse capture it does not know about.
    let mut terminal = ratatui::init();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(io::stdout(), DisableMouseCapture);
        hook(info);
    }));
    let _ = execute!(io::stdout(), EnableMouseCapture);
    let mut app = App::new(ds, problems, theme, keymap);
    app.notice = (!notices.is_empty()).then(|| notices.join(" · "));
    let result = rt.block_on(async {
        // A signal (kill, a closed terminal) ends the loop like `q` does, so the terminal is
        // restored below rather than left in raw mode.
        tokio::select! {
            r = run_loop(&mut terminal, &mut app, EventStream::new()) => r,
            _ = shutdown_signal() => Ok(()),
        }
    });
    let _ = execute!(io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result.map_err(Into::into)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).ok();
        let mut hup = signal(SignalKind::hangup()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
            _ = async { match hup.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
