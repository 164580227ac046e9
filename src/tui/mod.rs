//! The terminal front-end. `run` owns the terminal; [`run_loop`] is the app loop, generic over the
//! backend and the input stream so tests drive the real loop on `TestBackend` with scripted keys.

pub mod app;
mod compare;
pub mod heatmap;
pub mod keymap;
pub mod layout;
pub mod runs;
pub mod tree;
pub mod view;
mod view_compare;
mod view_heatmap;

use std::io;
use std::time::{Duration, Instant};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture, Event, EventStream};
use crossterm::execute;
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use app::App;

use crate::engine::BackendFactory;
use crate::store::{Store, StoreHandle};

/// What the loop needs to start runs and read stored answers. `offline()` has neither.
pub struct Services {
    pub store: Option<StoreHandle>,
    /// A second connection for reads (WAL lets it read while the writer writes).
    pub reader: Option<Store>,
    pub factory: BackendFactory,
    /// How the dataset is named in runs (a path, or `<sample-data>`).
    pub dataset_ref: String,
    /// Most requests in flight for runs started here.
    pub concurrency: usize,
    /// The judge for judged evaluators (`judge` in config.toml), if any.
    pub judge: Option<std::sync::Arc<crate::engine::Caller>>,
}

impl Services {
    pub fn offline() -> Services {
        Services {
            store: None,
            reader: None,
            factory: crate::engine::http_backends(),
            dataset_ref: "<sample-data>".into(),
            concurrency: 16,
            judge: None,
        }
    }

    /// Opens the store at `db` for runs and reads.
    pub fn with_store(
        db: &std::path::Path,
        factory: BackendFactory,
        dataset_ref: String,
    ) -> anyhow::Result<Services> {
        let writer = Store::open(db)?;
        let reader = Store::open(db)?;
        Ok(Services {
            store: Some(StoreHandle::spawn(writer, Some(db.to_path_buf()))),
            reader: Some(reader),
            factory,
            dataset_ref,
            concurrency: 16,
            judge: None,
        })
    }

    /// Uses `cfg` as the judge, sharing the store's cache.
    pub fn set_judge(&mut self, cfg: &crate::provider::ModelConfig) -> anyhow::Result<()> {
        let caller = crate::engine::Caller::new(
            cfg,
            &self.factory,
            self.store.clone(),
            true,
            CancellationToken::new(),
        )?;
        self.judge = Some(std::sync::Arc::new(caller));
        Ok(())
    }

    /// Every stored score, into the app (the tree's rates and the verdicts of shown answers).
    pub fn load_scores(&self, app: &mut App) {
        if let Some(reader) = &self.reader {
            match reader.scores(None) {
                Ok(all) => {
                    for r in all {
                        app.on_score(r);
                    }
                }
                Err(e) => app.notice = Some(format!("reading scores: {e}")),
            }
        }
    }
}

/// Messages from background work to the loop.
enum Background {
    Engine(crate::engine::Event),
    /// A run could not start (bad config, missing key, store error).
    RunError(String),
    /// An answer was scored (and saved).
    Scored(crate::store::ScoreRecord),
}

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

/// The app loop: input and engine events in, `update`, then a coalesced draw.
///
/// Input is taken in ready batches and engine events are drained before each draw, so a burst
/// (a held key, a pasted string, a fast token stream) costs one frame, and frames are capped at
/// about 60 a second. (`ready_chunks` polls the input with the loop's own waker; polling
/// crossterm's `EventStream` with a throw-away waker, as `now_or_never` does, loses wake-ups.)
/// When the input ends (scripted tests), the loop still waits for a run in progress to finish.
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
    let size = terminal.size().map_err(io::Error::other)?;
    app.area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
    app.keep_visible();
    let (tx, mut rx) = mpsc::unbounded_channel::<Background>();
    let mut batches = events.ready_chunks(256);
    let mut input_done = false;
    let mut run: Option<(CancellationToken, tokio::task::JoinHandle<()>)> = None;
    // Scoring in flight (judge calls can take seconds); the loop waits for it like for a run.
    let mut scoring: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    loop {
        for cmd in std::mem::take(&mut app.commands) {
            perform(cmd, app, services, &tx, &mut run, &mut scoring);
        }
        scoring.retain(|h| !h.is_finished());
        let running = run.as_ref().is_some_and(|(_, h)| !h.is_finished()) || !scoring.is_empty();
        if app.quit {
            if let Some((cancel, handle)) = run.take() {
                // Finished answers are already stored; the rest stay pending for --resume.
                cancel.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(3), handle).await;
            }
            return Ok(());
        }
        let since = last_draw.map(|t| t.elapsed()).unwrap_or(FRAME);
        if dirty && since >= FRAME {
            app.before_draw();
            terminal
                .draw(|f| view::render(app, f))
                .map_err(io::Error::other)?;
            dirty = false;
            last_draw = Some(Instant::now());
        }
        if input_done && !running && rx.is_empty() {
            return Ok(());
        }
        let wait = if dirty {
            FRAME.saturating_sub(since)
        } else {
            Duration::from_secs(3600)
        };
        tokio::select! {
            biased;
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
            msg = rx.recv() => {
                let mut next = msg;
                while let Some(m) = next {
                    match m {
                        Background::Engine(ev) => app.on_engine(ev),
                        Background::RunError(e) => app.notice = Some(e),
                        Background::Scored(r) => app.on_score(r),
                    }
                    next = rx.try_recv().ok();
                }
                dirty = true;
            }
            _ = tokio::time::sleep(wait), if dirty => {}
            // While a run is in progress and nothing else happens, still tick (rate and ETA).
            _ = tokio::time::sleep(Duration::from_millis(500)), if running && !dirty => { dirty = true; }
        }
    }
}

/// Carries out one command of the app.
fn perform(
    cmd: app::Command,
    app: &mut App,
    services: &mut Services,
    tx: &mpsc::UnboundedSender<Background>,
    run: &mut Option<(CancellationToken, tokio::task::JoinHandle<()>)>,
    scoring: &mut Vec<tokio::task::JoinHandle<()>>,
) {
    match cmd {
        app::Command::StartRun { items, models } => {
            let Some(store) = services.store.clone() else {
                app.notice = Some("runs need a store".into());
                return;
            };
            if run.as_ref().is_some_and(|(_, h)| !h.is_finished()) {
                app.notice = Some("a run is already in progress".into());
                return;
            }
            let mut spec = crate::engine::RunSpec::new(
                app.ds.clone(),
                services.dataset_ref.clone(),
                items,
                models,
            );
            spec.concurrency = services.concurrency;
            let cancel = CancellationToken::new();
            let (etx, mut erx) = mpsc::unbounded_channel();
            let fwd = tx.clone();
            tokio::spawn(async move {
                while let Some(ev) = erx.recv().await {
                    if fwd.send(Background::Engine(ev)).is_err() {
                        break;
                    }
                }
            });
            let factory = services.factory.clone();
            let c2 = cancel.clone();
            let err_tx = tx.clone();
            let handle = tokio::spawn(async move {
                if let Err(e) = crate::engine::run(spec, store, factory, etx, c2).await {
                    let _ = err_tx.send(Background::RunError(format!("run not started: {e}")));
                }
            });
            *run = Some((cancel, handle));
        }
        app::Command::CancelRun => {
            if let Some((cancel, _)) = run.as_ref() {
                cancel.cancel();
            }
        }
        app::Command::LoadStored(item) => {
            if let Some(reader) = &services.reader {
                let id = app.ds.items[item].id.to_string();
                match reader.responses_for_item(&id) {
                    Ok(records) => {
                        app.runs.load_stored(item, &records);
                        let scored = reader.scores_for_item(&id).unwrap_or_default();
                        // Answers never scored are scored by rule now (no judge: browsing
                        // must not spend judge calls; `S` asks the judge).
                        let unscored: Vec<_> = records
                            .iter()
                            .filter(|r| {
                                !scored
                                    .iter()
                                    .any(|s| s.run_id == r.run_id && s.job_idx == r.job_idx)
                            })
                            .map(|r| app::to_score(item, r))
                            .collect();
                        for s in scored {
                            app.on_score(s);
                        }
                        if !unscored.is_empty() {
                            app.commands.push(app::Command::Score {
                                inputs: unscored,
                                judge: false,
                            });
                        }
                    }
                    Err(e) => app.notice = Some(format!("reading stored answers: {e}")),
                }
            }
        }
        app::Command::Rescore(item) => app.rescore(item, true),
        app::Command::Score { inputs, judge } => {
            let judge = if judge { services.judge.clone() } else { None };
            let (stx, mut srx) = mpsc::unbounded_channel();
            let (ds, store, fwd) = (app.ds.clone(), services.store.clone(), tx.clone());
            // One task scores and forwards, so when it ends every score has reached the loop.
            scoring.push(tokio::spawn(async move {
                let work = crate::engine::score::score_all(ds, inputs, judge, 4, store, stx);
                let forward = async {
                    while let Some(r) = srx.recv().await {
                        let _ = fwd.send(Background::Scored(r));
                    }
                };
                let (result, ()) = tokio::join!(work, forward);
                if let Err(e) = result {
                    let _ = fwd.send(Background::RunError(format!("scoring: {e}")));
                }
            }));
        }
    }
}

/// Opens the TUI on a real terminal and restores it afterwards, also on error and on panic.
pub fn run(app: App, mut services: Services, notices: Vec<String>) -> anyhow::Result<()> {
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
    let mut app = app;
    app.notice = (!notices.is_empty()).then(|| notices.join(" · "));
    let result = rt.block_on(async {
        // A signal (kill, a closed terminal) ends the loop like `q` does, so the terminal is
        // restored below rather than left in raw mode.
        tokio::select! {
            r = run_loop_with(&mut terminal, &mut app, EventStream::new(), &mut services) => r,
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
