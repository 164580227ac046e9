//! `prism db copy FROM TO`: runs (jobs, answers, scores), detection and self-detection runs
//! (`store::lane_tables`), answer checks, entailments, topics, quality scores, the response
//! cache and review decisions moved between stores: SQLite to PostgreSQL (a team's shared store
//! from one machine's runs), back (every SQLite tool on a shared run's answers), or between two
//! of either. Only what the target lacks is added, one transaction per page of a run's jobs
//! (with their answers and scores), so a copy that stops is finished by running it again,
//! nothing is ever duplicated, and memory is bounded by the page, not the run.

use std::path::Path;

use anyhow::bail;

use super::lane_tables::{self, LaneKind};
use super::links::RunKind;
use super::{Added, AnyStore, CopyLinks, Location, RunBundle};

/// Jobs moved per transaction by a copy.
const PAGE: u32 = 5_000;

/// Copies the store `from` into `to` (each a file or a shared store's URL; `only`: these runs),
/// saying what moved. Run again, it finishes a copy that stopped and adds nothing twice.
pub fn copy(from: &Path, to: &Path, only: &[String]) -> anyhow::Result<()> {
    let (from, to) = (Location::of(from), Location::of(to));
    if from.file().is_some_and(|f| !f.is_file()) {
        bail!("no store at {}", from.shown());
    }
    let same_file = match (from.file(), to.file()) {
        (Some(a), Some(b)) => b.exists() && std::fs::canonicalize(a)? == std::fs::canonicalize(b)?,
        _ => false,
    };
    if from == to || same_file {
        bail!("FROM and TO are the same store");
    }
    let mut source = AnyStore::connect(&from)?;
    let mut target = AnyStore::connect(&to)?;
    let mut links = CopyLinks::open(&source, &target)?;
    let mut left_alone = Vec::new();
    let (shown_from, shown_to) = (from.shown(), to.shown());
    let (mut runs, lane_runs) = chosen(&source, only, &shown_from)?;
    // Oldest first, so a copy that stops has moved whole runs in the order they were made.
    runs.reverse();
    let mut total = Added::default();
    for r in &runs {
        if !links.admit(RunKind::Answers, &r.id, &mut source, &mut target)? {
            left_alone.push(r.id.clone());
            continue;
        }
        let added = copy_pages(&mut source, &mut target, &r.id)?;
        crate::say!(
            "{}: {} answers, {} scores{}",
            crate::text::one_line(&r.id),
            added.responses,
            added.scores,
            if added.runs == 0 {
                " (the run was there: added what it lacked)"
            } else {
                ""
            }
        );
        total += added;
    }
    // Detection and self-detection runs, each whole in one transaction, oldest first.
    let mut lane_rows = 0;
    for (kind, id) in &lane_runs {
        if !links.admit(RunKind::of_lane(*kind), id, &mut source, &mut target)? {
            left_alone.push(id.clone());
            continue;
        }
        let rows = source.lane_run(*kind, id)?;
        let read: usize = rows.iter().map(|(_, r)| r.len()).sum();
        let n = target.put_lane_rows(rows)?;
        crate::say!(
            "{}: {} run, {n} of its {read} rows added or brought up to date",
            crate::text::one_line(id),
            kind.noun()
        );
        lane_rows += n;
    }
    let loose = copy_loose(&source, &mut target, &mut links, only)?;
    let cache = if only.is_empty() {
        target.put_cache_entries(&source.cache_entries()?)?
    } else {
        0
    };
    let decisions = if only.is_empty() {
        review(&from, &to)?
    } else {
        0
    };
    for id in left_alone.iter().take(10) {
        crate::warn!(
            "left alone: run {} is in both stores but was made apart (never copied, pulled or pushed between them): its rows are not mixed",
            crate::text::one_line(id)
        );
    }
    if left_alone.len() > 10 {
        crate::warn!("... and {} more run(s) left alone", left_alone.len() - 10);
    }
    // The loose tables named from their descriptions: a new one is said without an edit here.
    let loose_names = lane_tables::LOOSE
        .iter()
        .map(|t| t.name.replace('_', " "))
        .collect::<Vec<_>>()
        .join(", ");
    crate::warn!(
        "{shown_from} -> {shown_to}: {} run(s) read, {} new; added {} answers, {} scores, {} cache entries, {} review decisions; {} detection/self-detection run(s) read, {} of their rows, and {} rows of {loose_names} added or brought up to date",
        runs.len(),
        total.runs,
        total.responses,
        total.scores,
        cache,
        decisions,
        lane_runs.len(),
        lane_rows,
        loose
    );
    Ok(())
}

/// Detection and self-detection runs, by kind and id.
type LaneRuns = Vec<(LaneKind, String)>;

/// The runs a copy reads from `source` (`only`: these, each of which must be there), and its
/// detection and self-detection runs.
fn chosen(
    source: &AnyStore,
    only: &[String],
    shown_from: &str,
) -> anyhow::Result<(Vec<super::RunRecord>, LaneRuns)> {
    let mut runs = source.runs()?;
    let mut lane_runs = Vec::new();
    for kind in LaneKind::ALL {
        for (id, _) in source.lane_statuses(kind)? {
            lane_runs.push((kind, id));
        }
    }
    if !only.is_empty() {
        for id in only {
            if !runs.iter().any(|r| &r.id == id) && !lane_runs.iter().any(|(_, l)| l == id) {
                bail!("no run {id} in {shown_from}");
            }
        }
        runs.retain(|r| only.contains(&r.id));
        lane_runs.retain(|(_, id)| only.contains(id));
    }
    Ok((runs, lane_runs))
}

/// The loose tables (`lane_tables::LOOSE`): answer checks go with the runs whose answers they
/// check; entailments and topics are kept across runs, so they move with the whole store.
fn copy_loose(
    source: &AnyStore,
    target: &mut AnyStore,
    links: &mut CopyLinks,
    only: &[String],
) -> anyhow::Result<usize> {
    let mut loose = 0;
    for t in lane_tables::LOOSE {
        let rows = match (t.run_col, only.is_empty()) {
            (_, true) => source.lane_rows(t, None)?,
            (Some(_), false) => {
                let mut rows = Vec::new();
                for id in only {
                    rows.extend(source.lane_rows(t, Some(id))?);
                }
                rows
            }
            (None, false) => continue,
        };
        let rows = links.lane_rows(t, rows);
        loose += target.put_lane_rows(vec![(t, rows)])?;
    }
    Ok(loose)
}

/// A run a page at a time (its jobs numbered in one page, with their answers and scores),
/// each page in its own transaction: memory is bounded by the page whatever the run's size,
/// and a copy that stops is finished by running it again. The next page is read while the
/// one before is written (a thread, one page ahead), so reading the source and writing the
/// target overlap instead of taking turns: the target's server is the slower side, and it no
/// longer waits for the reads.
fn copy_pages(source: &mut AnyStore, target: &mut AnyStore, run: &str) -> anyhow::Result<Added> {
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<RunBundle>(0);
        let reader = s.spawn(move || -> anyhow::Result<()> {
            let mut lo = 0u32;
            while let Some(b) = source.run_bundle_part(run, lo..lo.saturating_add(PAGE))? {
                let last = b.jobs.is_empty() && b.responses.is_empty();
                if last && lo > 0 {
                    break;
                }
                if tx.send(b).is_err() {
                    // The writer stopped (its error is the one said).
                    break;
                }
                if last {
                    break;
                }
                lo = lo.saturating_add(PAGE);
            }
            Ok(())
        });
        let mut added = Added::default();
        let mut written = Ok(());
        for b in rx {
            match target.put_run_bundle(&b) {
                Ok(a) => added += a,
                Err(e) => {
                    written = Err(e);
                    break;
                }
            }
        }
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("reading run {run} panicked")));
        written?;
        read?;
        Ok(added)
    })
}

/// Review decisions (kept by their uid, so never twice). The quality agent's scores are a
/// described table: they move with the answer checks, entailments and topics.
fn review(from: &Location, to: &Location) -> anyhow::Result<usize> {
    let source = super::Panel::open(from)?;
    let mut target = super::Panel::open(to)?;
    Ok(target.save_decisions(&source.decisions()?)?)
}
