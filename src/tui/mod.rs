//! The terminal front-end. `run` owns the terminal; [`run_loop`] is the app loop, generic over the
//! backend and the input stream so tests drive the real loop on `TestBackend` with scripted keys.
//!
//! Shape (each screen is one component; see `component.rs`):
//! - `app`: the shared context, the screen and popup stacks, routing of input and results;
//! - `screens/`: browse, compare, heatmap, contradictions, claims, selfcheck; `popups`: help,
//!   problems, run picker, correlation; `pair`: one contradicting pair side by side;
//! - `session`: what background work produced (answers, runs, scores and their summaries);
//! - `jobs`: the hub of background work (a job trait; each feature's jobs under `jobs/`),
//!   results routed back to who asked; `services`: what the jobs need from outside;
//! - `keymap` (keys by mode), `layout`, `tree`, `widgets`: pieces the screens share.

pub(crate) mod app;
pub mod component;
pub mod jobs;
pub mod keymap;
pub(crate) mod layout;
pub(crate) mod line_input;
pub(crate) mod nav;
pub(crate) mod pair;
pub(crate) mod palette;
pub(crate) mod popups;
pub(crate) mod screen_id;
pub mod screens;
pub mod services;
pub mod session;
pub mod store_worker;
pub(crate) mod tree;
pub mod undo;
pub(crate) mod widgets;

use std::io;
use std::time::{Duration, Instant};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture, Event, EventStream};
use crossterm::execute;
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;

pub use app::App;
pub use services::Services;

use jobs::Jobs;

/// Panics of background threads while the TUI runs, for the status bar.
static BACKGROUND_PANICS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The longest the loop waits before drawing again after a change (about 60 frames a second).
const FRAME: Duration = Duration::from_millis(16);

/// Runs the app loop with no store (browsing only) until the user quits or the input ends.
pub async fn run_loop<B, S>(terminal: &mut Terminal<B>, app: &mut App, events: S) -> io::Result<()>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    run_loop_with(terminal, app, events, &mut Services::offline()).await
}

/// The app loop: input and background results in, `update`, then a coalesced draw.
///
/// Input is taken in ready batches and results are drained before each draw, so a burst (a held
/// key, a pasted string, a fast token stream) costs one frame, and frames are capped at about 60
/// a second. (`ready_chunks` polls the input with the loop's own waker; polling crossterm's
/// `EventStream` with a throw-away waker, as `now_or_never` does, loses wake-ups.) When the input
/// ends (scripted tests), the loop still waits for work in progress to finish.
pub async fn run_loop_with<B, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: S,
    services: &mut Services,
) -> io::Result<()>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    run_loop_until(terminal, app, events, services, std::future::pending()).await
}

/// [`run_loop_with`] that also quits, as `q` does, when `stop` completes (a signal).
pub async fn run_loop_until<B, S, F>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: S,
    services: &mut Services,
    stop: F,
) -> io::Result<()>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
    F: std::future::Future<Output = ()>,
{
    let size = terminal.size().map_err(io::Error::other)?;
    app.area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
    let mut jobs = Jobs::new(std::mem::replace(services, Services::offline()));
    let result = drive(terminal, app, events, &mut jobs, stop).await;
    // Also when the loop failed (a terminal that closed under a draw fails with EIO): the run
    // is still stopped in order and marked interrupted. (After `q` this finds nothing left.)
    jobs.shutdown().await;
    *services = jobs.services;
    result
}

async fn drive<B, S, F>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: S,
    jobs: &mut Jobs,
    stop: F,
) -> io::Result<()>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
    F: std::future::Future<Output = ()>,
{
    let mut stop = std::pin::pin!(stop);
    let mut batches = events.ready_chunks(256);
    let mut input_done = false;
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    loop {
        for (to, job) in app.take_requests() {
            jobs.start(to, job, &app.ds);
        }
        if std::mem::take(&mut app.cancel_detect) {
            jobs.cancel(jobs::Slot::Detect);
        }
        if std::mem::take(&mut app.cancel_run) {
            jobs.cancel(jobs::Slot::Run);
        }
        if let Some(p) = BACKGROUND_PANICS.lock().ok().and_then(|mut p| p.pop()) {
            app.notice = Some(format!(
                "internal error in a background task (its job is recorded as failed): {p}"
            ));
            dirty = true;
        }
        if let Some(text) = app.copy_pending.take()
            && app.osc52
        {
            write_clipboard(&text)?;
        }
        let running = jobs.busy();
        if app.quit {
            jobs.shutdown().await;
            return Ok(());
        }
        let since = last_draw.map(|t| t.elapsed()).unwrap_or(FRAME);
        if dirty && since >= FRAME {
            app.before_draw();
            terminal.draw(|f| app.draw(f)).map_err(io::Error::other)?;
            dirty = false;
            last_draw = Some(Instant::now());
        }
        if input_done && !running && jobs.rx.is_empty() && !app.has_requests() {
            // The last results are drawn even when they came within a frame of the one before.
            if dirty {
                app.before_draw();
                terminal.draw(|f| app.draw(f)).map_err(io::Error::other)?;
            }
            return Ok(());
        }
        let wait = if dirty {
            FRAME.saturating_sub(since)
        } else {
            Duration::from_secs(3600)
        };
        // A message on screen leaves by itself: wake when its time is up.
        let notice_left = app.notice_left();
        tokio::select! {
            biased;
            _ = &mut stop => app.quit = true,
            batch = batches.next(), if !input_done => match batch {
                Some(batch) => {
                    for ev in batch {
                        app.handle_event(ev?);
                        if app.quit {
                            break;
                        }
                    }
                    dirty = true;
                }
                None => input_done = true,
            },
            msg = jobs.rx.recv() => {
                let mut next = msg;
                while let Some(d) = next {
                    app.on_delivery(d);
                    next = jobs.rx.try_recv().ok();
                }
                dirty = true;
            }
            _ = tokio::time::sleep(wait), if dirty => {}
            _ = tokio::time::sleep(notice_left.unwrap_or_default()), if notice_left.is_some() && !dirty => {
                dirty = true;
            }
            // While work is in progress and nothing else happens, still tick (rate and ETA).
            _ = tokio::time::sleep(Duration::from_millis(500)), if running && !dirty => { dirty = true; }
        }
    }
}

/// Puts `text` on the terminal's clipboard: OSC 52 (`ESC ] 52 ; c ; base64 BEL`), which xterm,
/// kitty, WezTerm, iTerm2, Windows Terminal and tmux (with `set-clipboard on`) understand, over
/// SSH too; a terminal that does not ignores it.
fn write_clipboard(text: &str) -> io::Result<()> {
    use base64::Engine;
    use std::io::Write;
    let mut out = io::stdout().lock();
    write!(
        out,
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(text)
    )?;
    out.flush()
}

/// Opens the TUI on a real terminal and restores it afterwards, also on error and on panic.
/// Runs the TUI until the user quits; returns the models chosen in the run picker then (the
/// front-end remembers them for the next session).
/// What a TUI session left behind: the models chosen, and the run it left unfinished.
pub struct Ended {
    pub chosen: Vec<String>,
    pub unfinished: Option<(String, usize, usize)>,
}

pub fn run(app: App, mut services: Services, notices: Vec<String>) -> anyhow::Result<Ended> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // ratatui::init installs a panic hook that restores the terminal; ours also turns off the
    // mouse capture it does not know about. A panic on another thread (a bug in a background
    // job, which the engine records as that job's failure) must not write over the screen or
    // take the terminal away from a TUI that is still running: its message is kept for the
    // status bar instead.
    let mut terminal = ratatui::init();
    let hook = std::panic::take_hook();
    let ui = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != ui {
            let msg = crate::engine::panic_message(info.payload());
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            if let Ok(mut p) = BACKGROUND_PANICS.lock() {
                p.push(format!("{msg}{at}"));
            }
            return;
        }
        let _ = execute!(io::stdout(), DisableMouseCapture);
        hook(info);
    }));
    let mut app = app;
    if app.mouse {
        let _ = execute!(io::stdout(), EnableMouseCapture);
    }
    app.osc52 = true;
    app.notice = (!notices.is_empty()).then(|| notices.join(" · "));
    // A signal (kill, a closed terminal or ssh session) quits like `q` does: the run in
    // progress is cancelled and marked interrupted (resumable), and the terminal is restored
    // below rather than left in raw mode.
    let result = rt.block_on(run_loop_until(
        &mut terminal,
        &mut app,
        EventStream::new(),
        &mut services,
        crate::shutdown::signal(),
    ));
    let _ = execute!(io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result?;
    Ok(Ended {
        chosen: app.chosen_names(),
        unfinished: app.unfinished_run(),
    })
}
