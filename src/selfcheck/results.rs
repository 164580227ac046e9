//! What a self-detection run comes to, computed from what is stored: per generator and
//! detector, recall, precision, F1 and accuracy with the false sentence as positive, directly
//! and with chain-of-thought; recall per relation; and, where popularity is given, Spearman's
//! rho (with its p-value) between recall and popularity over equal-size bins.
//!
//! An unparsed reply counts as "detected" (METHODS.md §4: any answer other than a clean yes/no);
//! how many there were is shown beside every number, with the scores over parsed replies only.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::eval::binary::{Confusion, Scores};
use crate::store::{Answer, Mode, SelfcheckItem, SelfcheckRun, Sentence, VerdictRecord};

/// What is stored of a run.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub items: Vec<SelfcheckItem>,
    pub verdicts: Vec<VerdictRecord>,
}

impl Stored {
    pub fn load(db: &crate::store::Db, run_id: &str) -> crate::store::Result<Stored> {
        let store = db.read()?;
        Ok(Stored {
            items: store.selfcheck_items(run_id)?,
            verdicts: store.selfcheck_verdicts(run_id)?,
        })
    }

    /// The verdicts of one item, by (sentence, detector, mode).
    pub fn verdict(
        &self,
        item: u32,
        sentence: Sentence,
        detector: &str,
        mode: Mode,
    ) -> Option<&VerdictRecord> {
        self.verdicts.iter().find(|v| {
            v.item == item && v.sentence == sentence && v.detector == detector && v.mode == mode
        })
    }
}

/// The detectors of an item: the run's, else its generator.
pub fn detectors_of<'a>(run: &'a SelfcheckRun, item: &'a SelfcheckItem) -> Vec<&'a str> {
    if run.config.detectors.is_empty() {
        vec![item.generator.as_str()]
    } else {
        run.config
            .detectors
            .iter()
            .map(|d| d.name.as_str())
            .collect()
    }
}

/// METHODS.md's rule: "yes" and anything unclean count as detected.
pub fn detected(a: Answer) -> bool {
    matches!(a, Answer::Yes | Answer::Unparsed)
}

/// One way of asking, scored.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModeScores {
    pub confusion: Confusion,
    pub scores: Scores,
    /// Unclean replies (counted as detected above), on true and on false sentences.
    pub unparsed: usize,
    /// The scores over clean replies only.
    pub parsed_only: Scores,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RelationRecall {
    pub relation: String,
    /// False sentences of the relation.
    pub n: usize,
    pub direct: Option<f64>,
    pub cot: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Popularity {
    pub bins: usize,
    pub rho_direct: Option<f64>,
    pub p_direct: Option<f64>,
    pub rho_cot: Option<f64>,
    pub p_cot: Option<f64>,
}

/// One generator x detector pair.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    pub generator: String,
    pub detector: String,
    /// Triples with both sentences judged (in both modes), and triples set aside.
    pub items: usize,
    pub set_aside: usize,
    pub direct: ModeScores,
    pub cot: ModeScores,
    pub relations: Vec<RelationRecall>,
    pub popularity: Option<Popularity>,
}

fn pct(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| 100.0 * a as f64 / b as f64)
}

/// Spearman's rho and its two-sided p-value (t distribution with n - 2 degrees of freedom).
pub fn spearman_p(a: &[f64], b: &[f64]) -> (Option<f64>, Option<f64>) {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let Some(rho) = crate::eval::metrics::spearman(a, b) else {
        return (None, None);
    };
    let n = a.len() as f64;
    if n < 3.0 {
        return (Some(rho), None);
    }
    if (1.0 - rho.abs()) < 1e-12 {
        return (Some(rho), Some(0.0));
    }
    let t = rho * ((n - 2.0) / (1.0 - rho * rho)).sqrt();
    let p = StudentsT::new(0.0, 1.0, n - 2.0)
        .ok()
        .map(|d| 2.0 * (1.0 - d.cdf(t.abs())));
    (Some(rho), p)
}

/// Recall per equal-size popularity bin, against the bins' mean popularity. `points`:
/// (popularity, detected) of each false sentence. Bins are as equal as integer division allows.
fn popularity_correlation(points: &mut [(f64, bool)], bins: usize) -> (Option<f64>, Option<f64>) {
    let n = points.len();
    let bins = bins.min(n);
    if bins < 3 {
        return (None, None);
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut pop, mut rec) = (Vec::new(), Vec::new());
    for b in 0..bins {
        let (s, e) = (b * n / bins, (b + 1) * n / bins);
        let chunk = &points[s..e];
        pop.push(chunk.iter().map(|p| p.0).sum::<f64>() / chunk.len() as f64);
        rec.push(chunk.iter().filter(|p| p.1).count() as f64 / chunk.len() as f64);
    }
    spearman_p(&rec, &pop)
}

pub fn rows(run: &SelfcheckRun, stored: &Stored) -> Vec<Row> {
    let bins = match run.config.bins {
        0 => 20,
        b => b as usize,
    };
    // (generator, detector) → per triple: the four verdicts it needs.
    let mut index: HashMap<(u32, Sentence, &str, Mode), Answer> = HashMap::new();
    for v in &stored.verdicts {
        index.insert((v.item, v.sentence, v.detector.as_str(), v.mode), v.answer);
    }
    let mut out: BTreeMap<(String, String), Row> = BTreeMap::new();
    // Per pair and mode: (relation, detected) of each false sentence, (popularity, detected).
    type Points = HashMap<Mode, (Vec<(String, bool)>, Vec<(f64, bool)>)>;
    let mut points: BTreeMap<(String, String), Points> = BTreeMap::new();
    // Per pair and mode: (truth, detected) of every sentence, the same over clean replies, and
    // how many replies were unclean.
    type Cell = (Vec<(bool, bool)>, Vec<(bool, bool)>, usize);
    let mut cells: BTreeMap<(String, String, Mode), Cell> = BTreeMap::new();
    for it in &stored.items {
        for d in detectors_of(run, it) {
            let key = (it.generator.clone(), d.to_string());
            let row = out.entry(key.clone()).or_insert_with(|| Row {
                generator: it.generator.clone(),
                detector: d.to_string(),
                ..Row::default()
            });
            if it.set_aside.is_some() {
                row.set_aside += 1;
                continue;
            }
            let get = |s, m| {
                index
                    .get(&(it.idx, s, d, m))
                    .copied()
                    .filter(|a| *a != Answer::Failed)
            };
            let all: Option<Vec<Answer>> = Mode::BOTH
                .iter()
                .flat_map(|&m| [get(Sentence::True, m), get(Sentence::False, m)])
                .collect();
            if all.is_none() {
                continue;
            }
            row.items += 1;
            for m in Mode::BOTH {
                let (t, f) = (
                    get(Sentence::True, m).unwrap_or(Answer::Unparsed),
                    get(Sentence::False, m).unwrap_or(Answer::Unparsed),
                );
                let cell = cells.entry((key.0.clone(), key.1.clone(), m)).or_default();
                cell.0.push((true, detected(f)));
                cell.0.push((false, detected(t)));
                for (truth, a) in [(true, f), (false, t)] {
                    if a == Answer::Unparsed {
                        cell.2 += 1;
                    } else {
                        cell.1.push((truth, a == Answer::Yes));
                    }
                }
                let p = points.entry(key.clone()).or_default().entry(m).or_default();
                p.0.push((it.relation.clone(), detected(f)));
                if let Some(pop) = it.popularity {
                    p.1.push((pop, detected(f)));
                }
            }
        }
    }
    for ((g, d, m), (all, parsed, unparsed)) in cells {
        let row = out.get_mut(&(g, d)).expect("a row for every cell");
        let c = Confusion::of(all);
        let ms = ModeScores {
            confusion: c,
            scores: c.scores(),
            unparsed,
            parsed_only: Confusion::of(parsed).scores(),
        };
        match m {
            Mode::Direct => row.direct = ms,
            Mode::Cot => row.cot = ms,
        }
    }
    for (key, per_mode) in points.iter_mut() {
        let row = out.get_mut(key).expect("a row");
        let mut rel: BTreeMap<String, RelationRecall> = BTreeMap::new();
        for (&m, (by_rel, _)) in per_mode.iter() {
            let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
            for (r, hit) in by_rel {
                let e = counts.entry(r.as_str()).or_default();
                e.0 += usize::from(*hit);
                e.1 += 1;
            }
            for (r, (hit, n)) in counts {
                let e = rel.entry(r.to_string()).or_insert_with(|| RelationRecall {
                    relation: r.to_string(),
                    n,
                    ..RelationRecall::default()
                });
                match m {
                    Mode::Direct => e.direct = pct(hit, n),
                    Mode::Cot => e.cot = pct(hit, n),
                }
            }
        }
        row.relations = rel.into_values().collect();
        let mut pop = Popularity {
            bins: 0,
            ..Popularity::default()
        };
        let mut any = false;
        for (&m, (_, pts)) in per_mode.iter_mut() {
            if pts.len() < 3 {
                continue;
            }
            any = true;
            pop.bins = bins.min(pts.len());
            let (rho, p) = popularity_correlation(pts, bins);
            match m {
                Mode::Direct => (pop.rho_direct, pop.p_direct) = (rho, p),
                Mode::Cot => (pop.rho_cot, pop.p_cot) = (rho, p),
            }
        }
        row.popularity = any.then_some(pop);
    }
    out.into_values().collect()
}

/// The sentences of one generator x detector pair, the wrong verdicts first (a false sentence
/// not detected, or a true one flagged, in either mode).
pub fn sentences_for<'a>(
    stored: &'a Stored,
    generator: &str,
    detector: &str,
) -> Vec<(&'a SelfcheckItem, usize)> {
    // One pass over the verdicts (a lookup per item would be quadratic on a large run).
    let index: HashMap<(u32, Sentence, Mode), Answer> = stored
        .verdicts
        .iter()
        .filter(|v| v.detector == detector)
        .map(|v| ((v.item, v.sentence, v.mode), v.answer))
        .collect();
    let mut v: Vec<(&SelfcheckItem, usize)> = stored
        .items
        .iter()
        .filter(|it| it.generator == generator && it.set_aside.is_none())
        .map(|it| {
            let wrong = Mode::BOTH
                .iter()
                .map(|&m| {
                    let f = index.get(&(it.idx, Sentence::False, m)).copied();
                    let t = index.get(&(it.idx, Sentence::True, m)).copied();
                    usize::from(f.is_some_and(|a| !detected(a)))
                        + usize::from(t.is_some_and(detected))
                })
                .sum();
            (it, wrong)
        })
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.idx.cmp(&b.0.idx)));
    v
}

/// Relations grouped into areas (the paper's Appendix C: each relation of its facts belongs to
/// one area), read from a JSON object `{"relation": "area", ...}`.
pub type Areas = BTreeMap<String, String>;

/// Reads an areas file; the error names the file.
pub fn load_areas(path: &std::path::Path) -> anyhow::Result<Areas> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: expected one JSON object mapping each relation to its area ({e})",
            path.display(),
            e.line()
        )
    })
}

/// The area a relation falls in when the map does not name it.
pub const OTHER_AREA: &str = "(not in the map)";

/// Recall per area: the false sentences of the area's relations, pooled (not an average of the
/// relations' recalls). Each area's `relation` field holds its name.
pub fn recall_by_area(row: &Row, areas: &Areas) -> Vec<RelationRecall> {
    // (hits, judged) per mode, per area: a relation's hits come back from its recall, which was
    // computed from whole counts.
    let mut pooled: BTreeMap<&str, [(usize, usize); 2]> = BTreeMap::new();
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &row.relations {
        let area = areas.get(&r.relation).map_or(OTHER_AREA, String::as_str);
        *n.entry(area).or_default() += r.n;
        let e = pooled.entry(area).or_default();
        for (slot, recall) in e.iter_mut().zip([r.direct, r.cot]) {
            if let Some(pc) = recall {
                slot.0 += (pc * r.n as f64 / 100.0).round() as usize;
                slot.1 += r.n;
            }
        }
    }
    pooled
        .into_iter()
        .map(|(area, [d, c])| RelationRecall {
            relation: area.to_string(),
            n: n[area],
            direct: pct(d.0, d.1),
            cot: pct(c.0, c.1),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ModelSnapshot, RunStatus, SelfcheckConfig};

    fn item(idx: u32, relation: &str, pop: f64) -> SelfcheckItem {
        SelfcheckItem {
            run_id: "s".into(),
            idx,
            triple_id: format!("t{idx}"),
            subject: "S".into(),
            relation: relation.into(),
            object: "O".into(),
            source: None,
            popularity: Some(pop),
            generator: "g".into(),
            params: "{}".into(),
            shots: "[]".into(),
            true_sentence: Some("S r O".into()),
            true_attempts: 1,
            false_sentence: Some("S r X".into()),
            false_attempts: 1,
            set_aside: None,
            error: None,
            decoy: None,
        }
    }

    fn v(item: u32, s: Sentence, m: Mode, a: Answer) -> VerdictRecord {
        VerdictRecord {
            run_id: "s".into(),
            item,
            sentence: s,
            detector: "g".into(),
            mode: m,
            answer: a,
            reply: None,
            error: None,
            attempts: 1,
            created_at: 0,
        }
    }

    fn run() -> SelfcheckRun {
        SelfcheckRun {
            id: "s".into(),
            created_at: 0,
            dataset: "d".into(),
            config: SelfcheckConfig {
                generators: vec![ModelSnapshot::imported("g")],
                bins: 4,
                ..SelfcheckConfig::default()
            },
            status: RunStatus::Finished,
        }
    }

    /// By hand, direct mode, four triples: false sentences detected 3 of 4 (one of them
    /// unparsed, which counts), true sentences flagged 1 of 4: TP 3, FN 1, FP 1, TN 3 → recall 75,
    /// precision 75, F1 75, accuracy 75; over clean replies only: TP 2, FN 1, FP 1, TN 3.
    #[test]
    fn scores_by_hand_with_unparsed_counted_as_detected() {
        use Answer::*;
        use Mode::*;
        use Sentence::*;
        let items: Vec<SelfcheckItem> = (0..4)
            .map(|i| item(i, if i < 2 { "a" } else { "b" }, i as f64))
            .collect();
        let mut verdicts = Vec::new();
        let f = [Yes, Yes, Unparsed, No];
        let t = [No, No, No, Yes];
        for i in 0..4u32 {
            verdicts.push(v(i, False, Direct, f[i as usize]));
            verdicts.push(v(i, True, Direct, t[i as usize]));
            verdicts.push(v(i, False, Cot, Yes));
            verdicts.push(v(i, True, Cot, No));
        }
        let mut aside = item(9, "a", 0.0);
        aside.set_aside = Some("no object".into());
        let mut all = items;
        all.push(aside);
        let stored = Stored {
            items: all,
            verdicts,
        };
        let r = &rows(&run(), &stored)[0];
        assert_eq!((r.items, r.set_aside), (4, 1));
        let d = &r.direct;
        assert_eq!(
            (
                d.confusion.tp,
                d.confusion.fn_,
                d.confusion.fp,
                d.confusion.tn
            ),
            (3, 1, 1, 3)
        );
        assert_eq!(d.scores.recall, Some(75.0));
        assert_eq!(d.scores.precision, Some(75.0));
        assert_eq!(d.scores.accuracy, Some(75.0));
        assert_eq!(d.unparsed, 1);
        assert_eq!(d.parsed_only.n, 7);
        assert_eq!(r.cot.scores.recall, Some(100.0));
        assert_eq!(r.cot.scores.accuracy, Some(100.0));
        let a = r.relations.iter().find(|x| x.relation == "a").unwrap();
        assert_eq!((a.n, a.direct, a.cot), (2, Some(100.0), Some(100.0)));
        let b = r.relations.iter().find(|x| x.relation == "b").unwrap();
        assert_eq!(b.direct, Some(50.0));
        // The wrong ones first: item 3 (false not detected and true flagged).
        assert_eq!(sentences_for(&stored, "g", "g")[0].0.idx, 3);
    }

    #[test]
    fn spearman_p_value_matches_a_known_case() {
        // Perfectly monotone: rho 1, p 0.
        let (r, p) = spearman_p(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]);
        assert_eq!((r, p), (Some(1.0), Some(0.0)));
        // By hand: rank differences give d² = 60, rho = 1 - 6*60/990 = 0.6364; t = rho *
        // sqrt(8 / (1 - rho²)) = 2.3333; two-sided p with 8 degrees of freedom = 0.0479
        // (integrating the t density numerically, outside this code).
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        let b = [2.0, 1.0, 4.0, 3.0, 10.0, 9.0, 5.0, 8.0, 6.0, 7.0];
        let (r, p) = spearman_p(&a, &b);
        assert!((r.unwrap() - 0.636_363_6).abs() < 1e-6, "{r:?}");
        assert!((p.unwrap() - 0.047_91).abs() < 1e-4, "{p:?}");
    }

    #[test]
    fn the_papers_vectors() {
        // METHODS.md §4, Table 1: recall and precision on a balanced set give F1 and accuracy.
        let (f1, acc) = crate::eval::binary::balanced_f1_accuracy(21.9, 85.1);
        assert!(
            (f1 - 34.9).abs() < 0.1 && (acc - 59.0).abs() < 0.1,
            "{f1} {acc}"
        );
        let (f1, acc) = crate::eval::binary::balanced_f1_accuracy(58.2, 83.8);
        assert!(
            (f1 - 68.7).abs() < 0.1 && (acc - 73.5).abs() < 0.1,
            "{f1} {acc}"
        );
    }

    /// Two relations of one area pool their false sentences: 1 of 2 and 3 of 4 detected give
    /// 4 of 6, not the mean of 50% and 75%; a relation the map does not name is set apart.
    #[test]
    fn recall_by_area_pools_the_relations() {
        let rel = |name: &str, n: usize, direct: f64| RelationRecall {
            relation: name.into(),
            n,
            direct: Some(direct),
            cot: None,
        };
        let row = Row {
            relations: vec![
                rel("born in", 2, 50.0),
                rel("died in", 4, 75.0),
                rel("x", 1, 0.0),
            ],
            ..Row::default()
        };
        let areas: Areas = [("born in", "place"), ("died in", "place")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let got = recall_by_area(&row, &areas);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].relation, "place");
        assert_eq!(got[1].n, 6);
        assert_eq!(got[1].direct.map(|v| (v * 100.0).round()), Some(6667.0));
        assert_eq!(got[1].cot, None);
        assert_eq!(
            (got[0].relation.as_str(), got[0].direct),
            (OTHER_AREA, Some(0.0))
        );
    }
}
