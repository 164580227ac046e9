//! The shared store on PostgreSQL (`--db postgres://...`): reviewers on different machines
//! decide on one database (review decisions, drafts, the quality agent's scores), and runs are
//! shared by the workers that join them (runs, jobs with their leases, answers, scores, the
//! cache: `pg_runs`), with the same tables as SQLite; the other lanes' tables too
//! (`lane_tables`: detection, self-detection, answer checks, entailments, topics).
//!
//! The client runs on a thread of its own: the synchronous `postgres` client drives a runtime
//! of its own, which cannot be entered from the TUI's async tasks, so every call is sent to
//! that thread and its answer waited for.
//!
//! Credentials come from the URL, `PGPASSWORD`, or a pgpass file (`PGPASSFILE` or
//! `~/.pgpass`); they are never stored, and every message shows the URL without its password.

use std::sync::mpsc;

use postgres::Client;

use super::Draft;
use super::error::{Result, StoreError};
pub(crate) use super::pg_url::{fuzz_db_url, is_url, redact_url};
use super::record::Record;
use super::review_records::{QualityRecord, ReviewRecord};

/// The notification channel every decision save sends on, in its own transaction (delivered
/// on commit): open review screens listen on it (`review::watch`).
pub(crate) const REVIEW_CHANNEL: &str = "prism_review";

/// A call on the connection's thread; it is handed a way to connect again.
type Job = Box<dyn FnOnce(&mut Client, &dyn Fn() -> Option<Client>) + Send>;

/// A connection to the shared store. A clone shares the connection's thread (calls from clones
/// run one after another on it).
#[derive(Clone)]
pub struct PgStore {
    jobs: mpsc::Sender<Job>,
    /// The URL without its password, for messages.
    shown: String,
    /// What it connected with (password included), for the review watcher's own connection.
    cfg: Box<postgres::Config>,
    /// The same, for the async client.
    async_cfg: Box<tokio_postgres::Config>,
}

/// How every connection to a shared store is made: TLS when the URL asks for it
/// (`sslmode=require`; `prefer`, libpq's default, tries it first), the server's certificate
/// checked against the system's roots and, if set, the PEM file in `PGSSLROOTCERT` (libpq's
/// variable: a team's own CA). Stricter than libpq's `require`, which encrypts without checking
/// who answers: a man in the middle would get the password.
pub(crate) fn tls() -> tokio_postgres_rustls::MakeRustlsConnect {
    use rustls_pki_types::pem::PemObject;
    static CONFIG: std::sync::OnceLock<rustls::ClientConfig> = std::sync::OnceLock::new();
    let cfg = CONFIG.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(c);
        }
        if let Some(path) = std::env::var_os("PGSSLROOTCERT") {
            match rustls_pki_types::CertificateDer::pem_file_iter(&path) {
                Ok(certs) => {
                    for c in certs.flatten() {
                        let _ = roots.add(c);
                    }
                }
                Err(e) => crate::warn!(
                    "PGSSLROOTCERT {}: {e}; only the system's roots are trusted",
                    std::path::Path::new(&path).display()
                ),
            }
        }
        let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the bundled TLS provider supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth()
    });
    tokio_postgres_rustls::MakeRustlsConnect::new(cfg.clone())
}

fn pg_err(shown: &str, e: impl std::fmt::Display) -> StoreError {
    // The driver's messages name the host and user at most, never the password.
    StoreError::Shared(format!("{shown}: {e}"))
}

/// A connection error with what to do, where the driver's words leave it out: the server
/// asked for a password and none was given (`password missing`), or the server's certificate
/// is signed by a CA this machine does not trust (a cluster's own CA).
fn with_hint(e: String) -> String {
    let hint = if e.contains("password missing") {
        " (set PGPASSWORD, or a pgpass file: PGPASSFILE or ~/.pgpass; never the URL)"
    } else if e.contains("UnknownIssuer") || e.contains("unknown issuer") {
        " (the server's certificate is signed by a CA this machine does not trust: set PGSSLROOTCERT to that CA's PEM file)"
    } else {
        ""
    };
    format!("{e}{hint}")
}

/// A driver error with its causes ("error connecting to server: Connection refused").
pub(super) fn chain(e: &postgres::Error) -> String {
    let mut s = e.to_string();
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// The password for `cfg` from a pgpass file (`host:port:database:user:password`, `*` matching
/// anything), when the URL and the environment give none.
fn pgpass(cfg: &postgres::Config, passfile: Option<std::path::PathBuf>) -> Option<String> {
    let path = passfile
        .or_else(|| std::env::var_os("PGPASSFILE").map(std::path::PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".pgpass")))?;
    let host = cfg
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(s) => s.clone(),
            #[cfg(unix)]
            postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = cfg.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = cfg.get_user().unwrap_or("");
    let db = cfg.get_dbname().unwrap_or(user);
    super::pg_conninfo::pgpass_lookup(&path, [&host, &port, db, user], |w| crate::warn!("{w}"))
}

impl PgStore {
    /// Connects and brings the schema up to date.
    pub fn connect(url: &str) -> Result<PgStore> {
        let shown = redact_url(url);
        // libpq's service files, SSL modes and passfile, which the driver does not read.
        let prepared = super::pg_conninfo::prepare(url)
            .map_err(|e| pg_err(&shown, format!("not a valid PostgreSQL URL: {e}")))?;
        let mut cfg: postgres::Config = prepared
            .text
            .parse()
            .map_err(|e| pg_err(&shown, format!("not a valid PostgreSQL URL ({e})")))?;
        if cfg.get_password().is_none() {
            if let Ok(p) = std::env::var("PGPASSWORD") {
                cfg.password(p);
            } else if let Some(p) = pgpass(&cfg, prepared.passfile) {
                cfg.password(p);
            }
        }
        cfg.connect_timeout(std::time::Duration::from_secs(10));
        // The same settings for the async client (cache lookups on the engine's runtime).
        let mut async_cfg: tokio_postgres::Config = prepared
            .text
            .parse()
            .map_err(|e| pg_err(&shown, format!("not a valid PostgreSQL URL ({e})")))?;
        if let Some(p) = cfg.get_password() {
            async_cfg.password(p);
        }
        async_cfg.connect_timeout(std::time::Duration::from_secs(10));
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let shown2 = shown.clone();
        let kept = cfg.clone();
        std::thread::Builder::new()
            .name("prism-pg".into())
            .spawn(move || {
                let mut client = match cfg.connect(tls()) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(pg_err(&shown2, with_hint(chain(&e)))));
                        return;
                    }
                };
                let _ = ready_tx.send(
                    super::pg_schema::migrate(&mut client).map_err(|e| pg_err(&shown2, chain(&e))),
                );
                for job in rx {
                    // A dropped connection (server restart, network) is made again before the
                    // next call; if that fails too, the call reports the closed connection.
                    if client.is_closed()
                        && let Ok(c) = cfg.connect(tls())
                    {
                        client = c;
                    }
                    job(&mut client, &|| cfg.connect(tls()).ok());
                }
            })
            .map_err(|e| pg_err(&shown, e))?;
        ready_rx
            .recv()
            .map_err(|_| pg_err(&shown, "the connection thread ended"))??;
        Ok(PgStore {
            jobs,
            shown,
            cfg: Box::new(kept),
            async_cfg: Box::new(async_cfg),
        })
    }

    /// Runs `f` on the connection's thread and waits for its result.
    pub(super) fn call<T: Send + 'static>(
        &self,
        f: impl Fn(&mut Client) -> std::result::Result<T, postgres::Error> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move |c, reconnect| {
            let mut r = f(c);
            // The server went away under the connection (a restart): the call is made once
            // more on a new one, so the first call after a restart does not fail. Every call
            // here can be repeated: saves skip what is there and upserts write the same row.
            if r.is_err()
                && c.is_closed()
                && let Some(new) = reconnect()
            {
                *c = new;
                r = f(c);
            }
            let _ = tx.send(r);
        });
        self.jobs
            .send(job)
            .map_err(|_| pg_err(&self.shown, "the connection thread ended"))?;
        rx.recv()
            .map_err(|_| pg_err(&self.shown, "the connection thread ended"))?
            .map_err(|e| pg_err(&self.shown, chain(&e)))
    }

    /// How this store connects, for an async client (holds the password: never shown).
    pub(crate) fn async_config(&self) -> Box<tokio_postgres::Config> {
        self.async_cfg.clone()
    }

    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// How this store connects (for a watcher's connection of its own; holds the password, so
    /// it is never shown).
    pub fn connect_config(&self) -> Box<postgres::Config> {
        self.cfg.clone()
    }

    /// Saves decisions in one transaction; ones already there (same uid) are skipped. Returns
    /// how many were new. The reviewers' drafts of the decided items go in the same transaction.
    pub fn save_decisions(&self, rs: &[ReviewRecord]) -> Result<usize> {
        let rs = rs.to_vec();
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let t = &super::tables::REVIEW_DECISIONS;
            let ins = tx.prepare(&format!(
                "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT (uid) DO NOTHING",
                t.name,
                t.col_list(),
                t.marks("$")
            ))?;
            // As in SQLite: only a new decision replaces a draft, and never a newer draft.
            let del = tx.prepare(
                "DELETE FROM review_drafts WHERE item_id = $1 AND reviewer = $2 AND updated_at <= $3",
            )?;
            let mut added = 0;
            for r in &rs {
                let p = super::lane_tables::pg::params(t, &r.to_row());
                let new = tx.execute(&ins, &super::pg_runs::refs(&p))? as usize;
                if new > 0 {
                    tx.execute(&del, &[&r.item_id, &r.reviewer, &r.created_at])?;
                }
                added += new;
            }
            // Open review screens hear of it when this commits (review::watch).
            if added > 0 {
                tx.batch_execute(&format!("NOTIFY {REVIEW_CHANNEL}"))?;
            }
            tx.commit()?;
            Ok(added)
        })
    }

    /// Every decision, oldest first.
    pub fn decisions(&self) -> Result<Vec<ReviewRecord>> {
        let (mut v, _) = self.decisions_after(0)?;
        super::review::oldest_first(&mut v);
        Ok(v)
    }

    /// Decisions stored after `seq` (in storing order), and the last seq seen. Sequence values
    /// are taken at insert time, so a slow transaction can commit a lower one after a higher one
    /// is visible: callers ask again from a little before what they saw and drop the uids they
    /// have.
    pub fn decisions_after(&self, seq: i64) -> Result<(Vec<ReviewRecord>, i64)> {
        self.call(move |c| {
            let t = &super::tables::REVIEW_DECISIONS;
            let width = t.cols.len();
            let rows = c.query(
                &format!(
                    "SELECT {}, seq FROM review_decisions WHERE seq > $1 ORDER BY seq",
                    t.col_list()
                ),
                &[&seq],
            )?;
            let last = rows.last().map_or(seq, |r| r.get::<_, i64>("seq"));
            let out = rows
                .iter()
                .filter_map(|r| {
                    let row = super::lane_tables::pg::row_of(t, r, width).ok()?;
                    super::record::converted(ReviewRecord::from_row(&row))
                })
                .collect();
            Ok((out, last.max(seq)))
        })
    }

    /// Saves (replaces) a reviewer's draft of an item.
    pub fn save_draft(&self, d: &Draft) -> Result<()> {
        let row = d.to_row();
        self.call(move |c| {
            let t = Draft::table();
            let p = super::lane_tables::pg::params(t, &row);
            c.execute(&t.upsert("$", true, ""), &super::pg_runs::refs(&p))?;
            Ok(())
        })
    }

    /// Every draft of a reviewer.
    pub fn drafts(&self, reviewer: &str) -> Result<Vec<Draft>> {
        let reviewer = reviewer.to_string();
        self.call(move |c| {
            let t = Draft::table();
            let rows = c.query(
                &format!(
                    "SELECT {} FROM review_drafts WHERE reviewer = $1 ORDER BY item_id",
                    t.col_list()
                ),
                &[&reviewer],
            )?;
            Ok(rows
                .iter()
                .filter_map(|r| {
                    let row = super::lane_tables::pg::row_of(t, r, t.cols.len()).ok()?;
                    super::record::converted(Draft::from_row(&row))
                })
                .collect())
        })
    }

    pub fn save_quality(&self, q: &QualityRecord) -> Result<()> {
        use super::record::Record;
        let row = q.to_row();
        self.call(move |c| {
            super::lane_tables::pg::put(c, &[(QualityRecord::table(), vec![row.clone()])], true)
                .map(|_| ())
        })
    }

    pub fn quality(&self, model: Option<&str>) -> Result<Vec<QualityRecord>> {
        use super::record::Record;
        let rows = self.lane_rows(QualityRecord::table(), None)?;
        let mut out = Vec::new();
        for r in &rows {
            let q = QualityRecord::from_row(r)?;
            if model.is_none_or(|m| m == q.model) {
                out.push(q);
            }
        }
        Ok(out)
    }
}

/// Shared runs, read (`pg_runs` has the statements; the workers write through
/// `StoreHandle::spawn_pg`).
impl PgStore {
    pub fn run(&self, id: &str) -> Result<Option<super::RunRecord>> {
        let id = id.to_string();
        self.call(move |c| super::pg_runs::run(c, &id))?
            .map(super::runs::RunRow::parsed)
            .transpose()
    }

    /// Whether anything is stored under run `id` of `kind` (for answers runs: the run, or
    /// answers or scores written for that id without one; the lanes' rows need their run): a
    /// run of that id was made, or planted, elsewhere.
    pub fn holds_run(&self, kind: super::links::RunKind, id: &str) -> Result<bool> {
        use super::links::RunKind;
        let sql = match kind {
            RunKind::Answers => {
                "SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)
                     OR EXISTS (SELECT 1 FROM responses WHERE run_id = $1)
                     OR EXISTS (SELECT 1 FROM scores WHERE run_id = $1) AS found"
            }
            RunKind::Detect => "SELECT EXISTS (SELECT 1 FROM detect_runs WHERE id = $1) AS found",
            RunKind::Selfcheck => {
                "SELECT EXISTS (SELECT 1 FROM selfcheck_runs WHERE id = $1) AS found"
            }
        };
        let id = id.to_string();
        self.call(move |c| Ok(c.query_one(sql, &[&id])?.get("found")))
    }

    /// Every run, newest first.
    pub fn runs(&self) -> Result<Vec<super::RunRecord>> {
        self.call(super::pg_runs::runs)?
            .into_iter()
            .map(super::runs::RunRow::parsed)
            .collect()
    }

    /// A run's jobs in order, with their state and the worker that holds or answered each.
    pub fn jobs(
        &self,
        run: &str,
    ) -> Result<Vec<(super::JobRecord, super::JobState, Option<String>)>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::jobs(c, &run))?
            .into_iter()
            .map(|(j, w)| Ok((j.job, super::JobState::parse(&j.state)?, w)))
            .collect()
    }

    /// A run's answers in job order.
    pub fn responses(&self, run: &str) -> Result<Vec<super::ResponseRecord>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::responses(c, &run))
    }

    /// Makes a run's summaries again from its scores (see `Store::repair_summaries`).
    pub fn repair_summaries(&self, run: &str) -> Result<usize> {
        let run = run.to_string();
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let n = super::summaries::pg::repair(&mut tx, &run)?;
            tx.commit()?;
            Ok(n)
        })
    }

    /// A run's answers without a score.
    pub fn unscored_responses(&self, run: &str) -> Result<Vec<super::ResponseRecord>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::unscored_responses(c, &run))
    }

    /// A page of runs, newest first, parsed, with their labels.
    pub fn runs_page(&self, f: &super::RunFilter) -> Result<Vec<super::LabelledRun>> {
        let (since, tags) = (f.since.unwrap_or(i64::MIN), f.tags.clone());
        let limit = (f.model.is_none() && f.limit > 0).then_some(f.limit as i64);
        let rows = self.call(move |c| super::pg_runs::runs_page(c, since, &tags, limit))?;
        super::runs::fill_page(rows, f)
    }

    /// Everything stored of a run (`store::bundle`).
    pub fn run_bundle(&self, id: &str) -> Result<Option<super::RunBundle>> {
        self.run_bundle_part(id, 0..u32::MAX)
    }

    /// The part of a run's bundle whose jobs are numbered in `jobs`.
    pub fn run_bundle_part(
        &self,
        id: &str,
        jobs: std::ops::Range<u32>,
    ) -> Result<Option<super::RunBundle>> {
        let id = id.to_string();
        let Some(raw) = self.call(move |c| super::pg_runs::bundle(c, &id, jobs.clone()))? else {
            return Ok(None);
        };
        Ok(Some(super::RunBundle {
            name: raw.run.name.clone(),
            tags: raw.run.tags.clone(),
            run: raw.run.parsed()?,
            jobs: raw
                .jobs
                .into_iter()
                .map(|j| Ok((j.job, super::JobState::parse(&j.state)?)))
                .collect::<Result<_>>()?,
            responses: raw.responses,
            scores: raw.scores,
        }))
    }

    /// Adds what this store lacks of a run.
    pub fn put_run_bundle(&self, b: &super::RunBundle) -> Result<super::Added> {
        let run = b.run_row()?;
        let b = b.clone();
        self.call(move |c| super::pg_runs::put_bundle(c, &b, &run))
    }

    pub fn cache_entries(&self) -> Result<Vec<(String, super::Cached)>> {
        self.call(super::pg_runs::cache_entries)
    }

    pub fn put_cache_entries(&self, es: &[(String, super::Cached)]) -> Result<usize> {
        let es = es.to_vec();
        self.call(move |c| super::pg_runs::put_cache_entries(c, &es))
    }

    /// Saves scores, each replacing the one stored for its answer (`prism score` again).
    pub fn save_scores(&self, rs: &[super::ScoreRecord]) -> Result<()> {
        let rs = rs.to_vec();
        self.call(move |c| super::pg_runs::save_scores(c, &rs, &|_| None))
    }

    /// Every run's name and tags.
    pub fn labels(&self) -> Result<Vec<(String, Option<String>, String)>> {
        self.call(super::pg_runs::labels)
    }

    /// Names a run (`None` takes the name off); false: no such run.
    pub fn set_run_name(&self, id: &str, name: Option<&str>) -> Result<bool> {
        let (id, name) = (id.to_string(), name.map(str::to_string));
        self.call(move |c| super::pg_runs::set_name(c, &id, name.as_deref()))
    }

    /// Sets a run's tags (space-separated); false: no such run.
    pub fn set_run_tags(&self, id: &str, tags: &[String]) -> Result<bool> {
        let (id, tags) = (id.to_string(), tags.join(" "));
        self.call(move |c| super::pg_runs::set_tags(c, &id, &tags))
    }

    /// Workers heard from within `secs` on the run, if it is not finished.
    pub fn active_workers(&self, id: &str, secs: i64) -> Result<i64> {
        let id = id.to_string();
        self.call(move |c| super::pg_runs::active_workers(c, &id, secs as f64))
    }

    /// Removes a run and everything stored of it; the answers removed (`None`: no such run).
    pub fn remove_run(&self, id: &str) -> Result<Option<u64>> {
        let id = id.to_string();
        self.call(move |c| super::pg_runs::remove_run(c, &id))
    }

    /// The latest change number given to any row (0: none yet).
    pub fn last_change(&self) -> Result<i64> {
        self.call(|c| {
            let r = c.query_one(
                "SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS last FROM prism_changes",
                &[],
            )?;
            Ok(r.get("last"))
        })
    }

    /// The latest change numbers of answers and of scores (0: none).
    pub fn max_changes(&self) -> Result<(i64, i64)> {
        self.call(|c| {
            let r = c.query_one(
                "SELECT COALESCE((SELECT max(seq) FROM responses), 0) AS answers,
                        COALESCE((SELECT max(seq) FROM scores), 0) AS scores",
                &[],
            )?;
            Ok((r.get("answers"), r.get("scores")))
        })
    }

    /// Every run's id and status.
    pub fn statuses(&self) -> Result<Vec<(String, String)>> {
        self.call(super::pg_runs::statuses)
    }

    /// Answers changed after change number `after` (see `store::mirror`).
    pub fn answers_since(
        &self,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, super::ResponseRecord)>> {
        self.call(move |c| super::pg_runs::responses_since(c, after, limit))
    }

    pub fn scores_since(&self, after: i64, limit: i64) -> Result<Vec<(i64, super::ScoreRecord)>> {
        self.call(move |c| super::pg_runs::scores_since(c, after, limit))
    }

    /// The workers that answered the given jobs of a run.
    pub fn job_workers(&self, run: &str, idxs: &[u32]) -> Result<Vec<(u32, String)>> {
        let run = run.to_string();
        let idxs: Vec<i64> = idxs.iter().map(|&i| i64::from(i)).collect();
        self.call(move |c| super::pg_runs::job_workers(c, &run, &idxs))
    }

    /// Who worked on a run and what each stored.
    pub fn workers(&self, run: &str) -> Result<Vec<super::pg_runs::WorkerRow>> {
        let run = run.to_string();
        self.call(move |c| super::pg_runs::workers(c, &run))
    }
}

/// The other lanes' tables (`lane_tables`), read and written row by row.
impl PgStore {
    /// A table's rows (of one run when `run` is given and the table is kept by run).
    pub fn lane_rows(
        &self,
        t: &'static super::lane_tables::Table,
        run: Option<&str>,
    ) -> Result<Vec<super::lane_tables::Row>> {
        let run = run.map(str::to_string);
        self.call(move |c| super::lane_tables::pg::rows(c, t, run.as_deref()))
    }

    /// Writes rows of several tables in one transaction (`lane_tables`); how many were added
    /// or moved forward.
    pub fn put_lane_rows(
        &self,
        rows: Vec<(
            &'static super::lane_tables::Table,
            Vec<super::lane_tables::Row>,
        )>,
        force: bool,
    ) -> Result<usize> {
        self.call(move |c| super::lane_tables::pg::put(c, &rows, force))
    }

    /// A lane table's rows changed after change number `after` (see `store::mirror`).
    pub fn lane_rows_since(
        &self,
        t: &'static super::lane_tables::Table,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, super::lane_tables::Row)>> {
        self.call(move |c| super::lane_tables::pg::rows_since(c, t, after, limit))
    }

    /// Takes a lane's run for `who` (see `store::lane_push`), unless another process holds it.
    pub fn take_lane(
        &self,
        run: &str,
        who: &super::Holder,
    ) -> Result<std::result::Result<(), super::lane_locks::LaneHeld>> {
        let (run, who) = (run.to_string(), who.clone());
        self.call(move |c| super::lane_locks::pg::take(c, &run, &who, super::pid_alive))
    }

    /// Keeps a lane's run held; false when another process took it over.
    pub fn beat_lane(&self, run: &str, owner: &str) -> Result<bool> {
        let (run, owner) = (run.to_string(), owner.to_string());
        self.call(move |c| super::lane_locks::pg::beat(c, &run, &owner))
    }

    pub fn release_lane(&self, run: &str, owner: &str) -> Result<()> {
        let (run, owner) = (run.to_string(), owner.to_string());
        self.call(move |c| super::lane_locks::pg::release(c, &run, &owner))
    }

    /// Every run of a lane: its id and status.
    /// Makes a described table the shared store lacks (see `lane_tables::Table::create_sql`).
    pub fn ensure_table(&self, t: &'static super::lane_tables::Table) -> Result<()> {
        self.call(move |c| c.batch_execute(&t.create_sql(true)))
    }

    pub fn lane_statuses(
        &self,
        kind: super::lane_tables::LaneKind,
    ) -> Result<Vec<(String, String)>> {
        self.call(move |c| super::lane_tables::pg::statuses(c, kind.runs_table()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            redact_url("postgres://ann:s3cret@db.lab:5432/review"),
            "postgres://ann:***@db.lab:5432/review"
        );
        assert_eq!(
            redact_url("postgresql://ann@db.lab/review"),
            "postgresql://ann@db.lab/review"
        );
        let e = PgStore::connect("postgres://ann:s3cret@127.0.0.1:1/none")
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(!msg.contains("s3cret"), "{msg}");
        assert!(msg.contains("postgres://ann:***@127.0.0.1:1/none"), "{msg}");
    }
}
