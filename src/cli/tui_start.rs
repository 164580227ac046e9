//! `prism [PATH]`: the TUI's start-up. What it opens on (PRISM items, a claims file, a triples
//! file), the config's theme, keys, judge and reviewer, the store and the shared review
//! database; every problem that does not stop it becomes a notice on the first screen.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};

use super::run;
use crate::config::{Config, Dirs};
use crate::dataset;
use crate::theme;
use crate::tui::keymap::Keymap;

/// What of the command line the TUI uses.
pub(super) struct TuiArgs {
    pub path: Option<PathBuf>,
    pub theme: Option<String>,
    pub db: Option<PathBuf>,
    pub models_file: Option<PathBuf>,
    pub reviewer: Option<String>,
    pub blind: bool,
}

impl super::Cli {
    pub(super) fn into_tui(self) -> TuiArgs {
        TuiArgs {
            path: self.path,
            theme: self.theme,
            db: self.db,
            models_file: self.models_file,
            reviewer: self.reviewer,
            blind: self.blind,
        }
    }
}

/// A claims or triples file given as PATH, as loaded: its set, whether it is empty, its
/// problems and how many of them are errors.
struct Side<T> {
    set: T,
    empty: bool,
    errors: usize,
    problems: Vec<String>,
}

impl<T> Side<T> {
    /// A file with some bad lines opens with a notice naming `prism validate`; one with nothing
    /// usable stops here, its problems listed.
    fn open(
        self,
        p: &Path,
        (what, usable): (&str, &str),
        notices: &mut Vec<String>,
    ) -> anyhow::Result<(T, String)> {
        if self.empty {
            for pr in &self.problems {
                crate::warn!("{pr}");
            }
            bail!("{}: no {usable} could be loaded", p.display());
        }
        if self.errors > 0 {
            notices.push(format!(
                "{} problem(s) in the {what}; those lines are skipped (prism validate {})",
                self.errors,
                p.display()
            ));
        }
        Ok((self.set, canonical(p)))
    }
}

fn canonical(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// What PATH opens besides the browser.
enum Opens {
    Items,
    Claims(dataset::claims::ClaimSet, String),
    Triples(dataset::triples::TripleSet, String),
}

fn opens(path: Option<&PathBuf>, notices: &mut Vec<String>) -> anyhow::Result<Opens> {
    let Some(p) = path else {
        return Ok(Opens::Items);
    };
    if dataset::claims::is_claims_path(p) {
        let c = dataset::claims::load_path(p)?;
        let (set, r) = Side {
            empty: c.set.claims.is_empty(),
            errors: c.problems.iter().filter(|p| p.is_error()).count(),
            problems: c.problems.iter().map(|p| p.to_string()).collect(),
            set: c.set,
        }
        .open(p, ("claims", "true or false claims"), notices)?;
        return Ok(Opens::Claims(set, r));
    }
    if dataset::triples::is_triples_path(p) {
        let t = dataset::triples::load_path(p, &Default::default())?;
        let (set, r) = Side {
            empty: t.set.triples.is_empty(),
            errors: t.problems.iter().filter(|p| p.is_error()).count(),
            problems: t.problems.iter().map(|p| p.to_string()).collect(),
            set: t.set,
        }
        .open(p, ("triples", "triples"), notices)?;
        return Ok(Opens::Triples(set, r));
    }
    Ok(Opens::Items)
}

/// Opens the TUI; `open_review`: on the review screen (`prism review [DATASET]`).
pub(super) fn start(args: TuiArgs, dirs: &Dirs, open_review: bool) -> anyhow::Result<i32> {
    let (config, config_warning) = Config::load(&dirs.config_file());
    let (keymap, mut notices) = Keymap::with_overrides(&config.keys);
    notices.extend(config_warning);
    let theme_name = args
        .theme
        .clone()
        .or(config.theme.clone())
        .unwrap_or_else(|| theme::DEFAULT_THEME.to_string());
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let (theme, theme_warnings) = theme::resolve(&theme_name, Some(&dirs.themes()), no_color);
    notices.extend(theme_warnings);
    // A claims or triples file opens its own screen, over the bundled PRISM sample.
    let opens = opens(args.path.as_ref(), &mut notices)?;
    let prism_path = match opens {
        Opens::Items => args.path.clone(),
        _ => None,
    };
    let (shown, loaded) = super::load(prism_path.as_ref())?;
    if loaded.dataset.items.is_empty() {
        for p in &loaded.problems {
            crate::warn!("{p}");
        }
        bail!("{shown}: no items could be loaded");
    }
    if !std::io::stdout().is_terminal() {
        // Named as the user gave it (a claims file opens over the sample data, but is theirs).
        let validate = match &args.path {
            Some(p) => format!(
                "prism validate {}",
                crate::text::shell_quote(&p.display().to_string())
            ),
            None => "prism validate".to_string(),
        };
        bail!("the TUI needs a terminal; for scripts use `{validate}` (see --help)");
    }
    let dataset_ref = match &prism_path {
        Some(p) => canonical(p),
        None => "<sample-data>".to_string(),
    };
    // A models file that does not read: its error whole, and the built-in models still here.
    let (models, broken) = run::load_models_or_builtins(dirs, args.models_file.as_deref());
    if let Some(e) = broken {
        notices.push(format!(
            "{e}\nthe models file does not read: only the built-in models are here until it is fixed"
        ));
    }
    let models = models.models;
    let app = crate::tui::App::new(
        Arc::new(loaded.dataset),
        Arc::new(loaded.problems),
        theme,
        keymap,
    );
    let (mut app, services) =
        services(&args, &config, dirs, app, models, dataset_ref, &mut notices);
    match opens {
        Opens::Items => {}
        Opens::Claims(set, dataset) => app.push(crate::tui::component::Open::Claims {
            set: Arc::new(set),
            dataset,
        }),
        Opens::Triples(set, dataset) => app.push(crate::tui::component::Open::Selfcheck {
            set: Arc::new(set),
            dataset,
        }),
    }
    if open_review {
        app.push(crate::tui::component::Open::Review { scope: None });
    }
    app.mouse = config.mouse.unwrap_or(true);
    let ended = crate::tui::run(app, services, notices).context("running the TUI")?;
    run::remember_choice(dirs, &ended.chosen);
    // A run left going is interrupted (its answers kept): said as the CLI says it, exit 130.
    if let Some((id, done, total)) = ended.unfinished {
        // The store as given (a URL's password is never repeated: the user gives it again).
        let db = match &args.db {
            Some(d) if d.to_string_lossy().contains("://") => "URL".to_string(),
            Some(d) => crate::text::shell_quote(&d.display().to_string()),
            None => crate::text::shell_quote(&run::default_db(dirs).display().to_string()),
        };
        crate::warn!(
            "run {id} interrupted: {done} of {total} jobs done; finish it with: prism run --resume {id} --db {db}"
        );
        return Ok(130);
    }
    Ok(0)
}

/// The store, judge, reviewer and review database of the session; what fails is a notice.
fn services(
    args: &TuiArgs,
    config: &Config,
    dirs: &Dirs,
    app: crate::tui::App,
    models: Vec<crate::provider::ModelConfig>,
    dataset_ref: String,
    notices: &mut Vec<String>,
) -> (crate::tui::App, crate::tui::Services) {
    // A postgres:// --db (or config db) is the team's shared store: review decisions go there,
    // and its runs are mirrored into this machine's store (runs started here go there as they end).
    let named = crate::store::Db::configured(args.db.as_deref(), config.db.as_deref());
    let db = match crate::store::Db::open(named.as_deref(), &run::default_db(dirs)) {
        Ok(d) => d,
        Err(e) => {
            let local = run::default_db(dirs);
            notices.push(format!(
                "{e:#}; review decisions stay in {}",
                local.display()
            ));
            crate::store::Db::file(&local)
        }
    };
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
    let (mut app, mut services) =
        match crate::tui::Services::with_db(db, run::factory(dirs), dataset_ref) {
            Ok(services) => {
                let preselect = run::preselect(dirs, &models);
                (app.with_models(models).with_chosen(&preselect), services)
            }
            Err(e) => {
                notices.push(format!("{e:#}; runs are disabled"));
                (app, crate::tui::Services::offline())
            }
        };
    services.config_file = Some(dirs.config_file());
    if let Some(cfg) = judge_cfg {
        match services.set_judge(&cfg) {
            Ok(()) => app.judge = Some(cfg.name.clone()),
            Err(e) => notices.push(format!("judge: {e:#}; judged items stay unscored")),
        }
    }
    if let Some(r) = args
        .reviewer
        .clone()
        .or(config.reviewer.clone())
        .map(|r| crate::text::one_line(&r).trim().to_string())
        .filter(|r| !r.is_empty())
    {
        services.reviewer = r;
    }
    services.blind = args.blind || config.blind.unwrap_or(false);
    // Read off the loop thread: the first frame does not wait for the history.
    app.request(
        crate::tui::component::ScreenId::Browse,
        crate::tui::jobs::answers::LoadScores,
    );
    (app, services)
}
