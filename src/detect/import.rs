//! AutoHall's released outputs as a stored AutoHall run: one target per record (the claim, the
//! model's reference, its classification reply), so #N, #H and H% come from the same tables as
//! prism's own runs and can be set beside them.
//!
//! The claim's truth comes from the claims file when one is given (matched by the claim's
//! text); else from the released `label` (hallucinated or not) and the paper's reading of the
//! reply: a hallucinated record's claim is the opposite of what the reply says. The reply is
//! read the paper's way by default (the word "true" anywhere, else "false") so the run holds
//! the paper's #H; `Reading::Prism` reads it as prism's own runs do. Both readings are counted
//! either way, and the records they read differently named.

use std::collections::HashMap;

use super::parse::read_truth;
use super::released::{Released, Shape, paper_reading};
use crate::dataset::claims::{ClaimSet, Truth};
use crate::store::{
    Class, DetectConfig, DetectKind, DetectRun, ModelSnapshot, RunStatus, Target, new_run_id,
};

/// How a classification reply is read into a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reading {
    /// The authors' notebooks: "true"/"True" anywhere, else "false"/"False".
    Paper,
    /// prism's reader (an `Answer:` line first; "not true" is false).
    Prism,
}

impl Reading {
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::Paper => "paper",
            Reading::Prism => "prism",
        }
    }

    fn read(self, shape: Shape, reply: &str) -> Option<Truth> {
        match self {
            Reading::Paper => paper_reading(shape, reply),
            Reading::Prism => read_truth(reply),
        }
    }
}

/// One released file, read, with the model and temperature its records fall back on.
#[derive(Debug, Clone)]
pub struct File {
    pub path: String,
    pub released: Released,
    pub model: Option<String>,
    pub temperature: Option<f64>,
}

/// What an import found, for the user.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    pub records: usize,
    pub unreadable_lines: usize,
    /// Truth from the claims file; from the released label; none (not counted in #N).
    pub truth_from_claims: usize,
    pub truth_from_label: usize,
    pub no_truth: usize,
    /// Records whose claim the claims file does not hold (when one was given).
    pub not_in_claims: usize,
    /// Where the claims file and the released label disagree about the claim's truth.
    pub label_disagrees: usize,
    /// Those records (file, line).
    pub disagreeing: Vec<(String, usize)>,
    /// Replies the two readings read differently: file, line, the paper's, prism's.
    pub readings_differ: Vec<(String, usize, Option<Truth>, Option<Truth>)>,
    /// Replies that say the claim's truth cannot be determined (file, line, the paper's
    /// reading): prism reads them as neither true nor false (an abstention, left out of #N);
    /// the paper's reading takes each as whichever word it finds first ("whether the claim is
    /// true or false" is true, "its truth or falsehood" false), or as nothing.
    pub undetermined: Vec<(String, usize, Option<Truth>)>,
    /// Records that repeat an earlier one of the same file exactly (claim, reference, reply and
    /// label): (file, line, the line it repeats). The authors' substring match put a claim with
    /// a near-twin in the claims file into both halves; each is counted, as the authors counted
    /// it, and named.
    pub duplicates: Vec<(String, usize, usize)>,
    /// Claims of one file that differ only in case, spacing or final punctuation, with opposite
    /// labels (`... cycle` and `... cycle.`): (file, line, line).
    pub twins: Vec<(String, usize, usize)>,
    /// Files with no label on any line, whose labels were recovered by position: the authors
    /// wrote the hallucinated half first in every labelled file (22 of 22).
    pub labels_by_position: Vec<String>,
    /// Files that are the paper's balanced sets (every hallucinated record first, as many
    /// factual after): their H% is 50% by construction, not the rate the paper reports.
    pub balanced_files: Vec<String>,
}

/// Each record's `hallucinated` label: the released one, or, in a file with no label on any
/// line and an even number of records, its position (hallucinated half first). Whether the
/// position was used.
fn labels_of(released: &Released) -> (Vec<Option<bool>>, bool) {
    let records = &released.records;
    let unlabelled = records.iter().all(|r| r.hallucinated.is_none());
    if unlabelled && !records.is_empty() && records.len().is_multiple_of(2) {
        let half = records.len() / 2;
        ((0..records.len()).map(|i| Some(i < half)).collect(), true)
    } else {
        (records.iter().map(|r| r.hallucinated).collect(), false)
    }
}

/// Whether labels make a balanced set: every record labelled, the first half hallucinated and
/// the second not.
fn is_balanced(labels: &[Option<bool>]) -> bool {
    let half = labels.len() / 2;
    !labels.is_empty()
        && labels.len().is_multiple_of(2)
        && labels.iter().enumerate().all(|(i, l)| *l == Some(i < half))
}

/// A claim's text for matching: quotes around it dropped (Climate-FEVER keeps a stray opening
/// quote on some claims, which the Llama-2-13B request's own quotes swallow), whitespace and case
/// aside.
fn norm(s: &str) -> String {
    s.trim_matches(|c: char| c == '"' || c.is_whitespace())
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The file's exact duplicates and its near-twin claims with opposite labels, into `summary`.
fn repeats(f: &File, labels: &[Option<bool>], summary: &mut Summary) {
    let mut exact: HashMap<(&str, &str, &str, Option<bool>), usize> = HashMap::new();
    let mut by_claim: HashMap<String, Vec<(usize, Option<bool>)>> = HashMap::new();
    for (r, &h) in f.released.records.iter().zip(labels) {
        let key = (r.claim.as_str(), r.reference.as_str(), r.reply.as_str(), h);
        match exact.get(&key) {
            Some(&first) => {
                summary.duplicates.push((f.path.clone(), r.line, first));
                continue;
            }
            None => {
                exact.insert(key, r.line);
            }
        }
        let twin = norm(&r.claim)
            .trim_end_matches(['.', '!', '?', ' '])
            .to_string();
        let seen = by_claim.entry(twin).or_default();
        if let Some(&(other, _)) = seen
            .iter()
            .find(|(_, l)| l.is_some() && h.is_some() && *l != h)
        {
            summary.twins.push((f.path.clone(), other, r.line));
        }
        seen.push((r.line, h));
    }
}

/// The run and its targets from released files. `model` names the model when given, else each
/// record's own (the response's model, else the path's: `llama2_7b_data/` is `llama2_7b`).
pub fn build(
    files: &[File],
    claims: Option<&ClaimSet>,
    model: Option<&str>,
    reading: Reading,
    dataset: String,
) -> (DetectRun, Vec<Target>, Summary) {
    let run_id = new_run_id();
    let by_text: HashMap<String, usize> = claims
        .map(|set| {
            set.claims
                .iter()
                .enumerate()
                .map(|(i, c)| (norm(&c.claim), i))
                .collect()
        })
        .unwrap_or_default();
    let mut summary = Summary::default();
    let mut targets = Vec::new();
    let mut models: Vec<String> = Vec::new();
    let mut temperatures: Vec<f64> = Vec::new();
    for f in files {
        summary.unreadable_lines += f.released.problems.len();
        let (labels, by_position) = labels_of(&f.released);
        if by_position {
            summary.labels_by_position.push(f.path.clone());
        }
        if is_balanced(&labels) {
            summary.balanced_files.push(f.path.clone());
        }
        repeats(f, &labels, &mut summary);
        for (r, hallucinated) in f.released.records.iter().zip(labels) {
            summary.records += 1;
            let name = model
                .map(str::to_string)
                .or_else(|| r.model.clone())
                .or_else(|| f.model.clone())
                .unwrap_or_else(|| "released".into());
            if !models.contains(&name) {
                models.push(name.clone());
            }
            let temperature = r.temperature.or(f.temperature);
            if let Some(t) = temperature
                && !temperatures.contains(&t)
            {
                temperatures.push(t);
            }
            let paper = paper_reading(r.shape, &r.reply);
            let prism = read_truth(&r.reply);
            if paper != prism {
                summary
                    .readings_differ
                    .push((f.path.clone(), r.line, paper, prism));
            }
            if prism.is_none() && super::parse::says_undetermined(&r.reply) {
                summary.undetermined.push((f.path.clone(), r.line, paper));
            }
            let from_label = match (hallucinated, paper) {
                (Some(h), Some(said)) => Some(if h { flip(said) } else { said }),
                _ => None,
            };
            let matched =
                claims.and_then(|set| by_text.get(&norm(&r.claim)).map(|&i| &set.claims[i]));
            if claims.is_some() && matched.is_none() {
                summary.not_in_claims += 1;
            }
            let label = truth_of(matched, from_label, &mut summary, (&f.path, r.line));
            let class = match reading.read(r.shape, &r.reply) {
                Some(Truth::True) => Class::True,
                Some(Truth::False) => Class::False,
                None => Class::Unparsed,
            };
            targets.push(Target {
                run_id: run_id.clone(),
                idx: targets.len() as u32,
                item_id: matched
                    .map(|c| c.id.clone())
                    .unwrap_or_else(|| format!("line-{}", r.line)),
                task_id: matched
                    .map(|c| c.topic.clone())
                    .unwrap_or_else(|| "released".into()),
                model: name,
                temperature,
                source_run: None,
                source_job: None,
                prompt: String::new(),
                question: r.claim.clone(),
                params: "{}".into(),
                answer: Some(r.reference.clone()),
                answer_error: None,
                // The authors counted every record they released; none is set aside.
                refused: false,
                label,
                class: Some(class),
                class_reply: Some(r.reply.clone()),
                class_error: None,
                rounds: 0,
            });
        }
    }
    let run = DetectRun {
        id: run_id,
        created_at: crate::store::now_secs(),
        kind: DetectKind::Claims,
        dataset,
        config: DetectConfig {
            k: 0,
            models: models.iter().map(|m| ModelSnapshot::imported(m)).collect(),
            temperatures,
            imported: files.iter().map(|f| f.path.clone()).collect(),
            reading: Some(reading.as_str().into()),
            balanced_set: !files.is_empty() && summary.balanced_files.len() == files.len(),
            ..DetectConfig::default()
        },
        status: RunStatus::Imported,
    };
    (run, targets, summary)
}

/// A record's truth: its claim's label when the claim is in the claim set (counting a released
/// label that disagrees), else what the released label says, else none; each case counted.
fn truth_of(
    matched: Option<&crate::dataset::claims::Claim>,
    from_label: Option<Truth>,
    summary: &mut Summary,
    (path, line): (&str, usize),
) -> Option<Truth> {
    match (matched, from_label) {
        (Some(c), l) => {
            summary.truth_from_claims += 1;
            if l.is_some_and(|l| l != c.label) {
                summary.label_disagrees += 1;
                summary.disagreeing.push((path.to_string(), line));
            }
            Some(c.label)
        }
        (None, Some(l)) => {
            summary.truth_from_label += 1;
            Some(l)
        }
        (None, None) => {
            summary.no_truth += 1;
            None
        }
    }
}

fn flip(t: Truth) -> Truth {
    match t {
        Truth::True => Truth::False,
        Truth::False => Truth::True,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::released::Record;

    fn record(line: usize, claim: &str, reply: &str, h: Option<bool>) -> Record {
        Record {
            shape: Shape::Gpt35,
            line,
            claim: claim.into(),
            reference: format!("ref {line}"),
            reply: reply.into(),
            temperature: Some(0.5),
            model: Some("gpt-3.5-turbo-0613".into()),
            hallucinated: h,
        }
    }

    fn file(records: Vec<Record>) -> File {
        File {
            path: "dataset_0.5.jsonl".into(),
            released: Released {
                records,
                problems: vec![],
            },
            model: None,
            temperature: None,
        }
    }

    #[test]
    fn the_truth_comes_from_the_claims_file_else_from_the_released_label() {
        let f = file(vec![
            // Hallucinated, reply true: the claim is false.
            record(1, "A", "The claim is true.", Some(true)),
            // Not hallucinated, reply false: the claim is false.
            record(2, "B", "False.", Some(false)),
            // Not hallucinated, "not true": the paper reads true, prism false.
            record(3, "C", "It is not true.", Some(false)),
            // No label, no claims file: no truth.
            record(4, "D", "True", None),
        ]);
        let (run, targets, s) = build(&[f], None, None, Reading::Paper, "x".into());
        assert_eq!(run.status, RunStatus::Imported);
        assert_eq!(run.config.models[0].name, "gpt-3.5-turbo-0613");
        assert!(run.config.models[0].is_imported());
        let labels: Vec<Option<Truth>> = targets.iter().map(|t| t.label).collect();
        assert_eq!(
            labels,
            vec![
                Some(Truth::False),
                Some(Truth::False),
                Some(Truth::True),
                None
            ]
        );
        assert_eq!((s.truth_from_label, s.no_truth), (3, 1));
        assert_eq!(
            s.readings_differ,
            vec![(
                "dataset_0.5.jsonl".to_string(),
                3,
                Some(Truth::True),
                Some(Truth::False)
            )]
        );
        // The paper's #H: record 1 only.
        let h: Vec<bool> = targets
            .iter()
            .filter_map(crate::detect::results::hallucinated)
            .collect();
        assert_eq!(h, vec![true, false, false]);

        // With the claims file the truth is the file's, and a disagreeing label is counted.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claims.jsonl");
        std::fs::write(
            &path,
            "{\"id\": \"c1\", \"claim\": \"a\", \"label\": \"true\", \"topic\": \"t\"}\n",
        )
        .unwrap();
        let set = crate::dataset::claims::load_path(&path).unwrap().set;
        let f = file(vec![record(1, "  A ", "The claim is true.", Some(true))]);
        let (_, targets, s) = build(&[f], Some(&set), Some("gpt"), Reading::Prism, "x".into());
        assert_eq!(targets[0].label, Some(Truth::True));
        assert_eq!(
            (targets[0].item_id.as_str(), targets[0].task_id.as_str()),
            ("c1", "t")
        );
        assert_eq!(targets[0].model, "gpt");
        assert_eq!((s.truth_from_claims, s.label_disagrees), (1, 1));
    }

    #[test]
    fn a_file_without_labels_is_labelled_by_position_and_a_balanced_set_is_said() {
        // GPT-3.5 WICE at T = 0.1: the splice ate every label, and there is no claims file.
        let f = file(vec![
            record(1, "A", "True.", None),
            record(2, "B", "The claim is false.", None),
            record(3, "C", "True.", None),
            record(4, "D", "False.", None),
        ]);
        let (run, targets, s) = build(&[f], None, None, Reading::Paper, "x".into());
        assert_eq!(s.labels_by_position, vec!["dataset_0.5.jsonl".to_string()]);
        assert_eq!((s.truth_from_label, s.no_truth), (4, 0));
        // The first half hallucinated: the claim is the opposite of what the reply says.
        let labels: Vec<Option<Truth>> = targets.iter().map(|t| t.label).collect();
        assert_eq!(
            labels,
            vec![
                Some(Truth::False),
                Some(Truth::True),
                Some(Truth::True),
                Some(Truth::False)
            ]
        );
        assert!(run.config.balanced_set);
        assert_eq!(s.balanced_files.len(), 1);

        // An odd count cannot be split by position; labels that are not hallucinated-first are
        // no balanced set.
        let odd = file(vec![record(1, "A", "True.", None)]);
        let (run, _, s) = build(&[odd], None, None, Reading::Paper, "x".into());
        assert!(s.labels_by_position.is_empty() && !run.config.balanced_set);
        assert_eq!(s.no_truth, 1);
        let mixed = file(vec![
            record(1, "A", "True.", Some(false)),
            record(2, "B", "True.", Some(true)),
        ]);
        let (run, _, s) = build(&[mixed], None, None, Reading::Paper, "x".into());
        assert!(s.balanced_files.is_empty() && !run.config.balanced_set);
    }

    #[test]
    fn exact_duplicates_and_near_twins_with_the_other_label_are_named() {
        let f = file(vec![
            record(1, "Arctic icemelt is a natural cycle", "True.", Some(true)),
            record(2, "Something else", "False.", Some(true)),
            // Line 1 again, byte for byte (its reference too).
            Record {
                line: 3,
                ..record(1, "Arctic icemelt is a natural cycle", "True.", Some(true))
            },
            record(
                4,
                "arctic icemelt is a natural cycle.",
                "True.",
                Some(false),
            ),
        ]);
        let (_, targets, s) = build(&[f], None, None, Reading::Paper, "x".into());
        assert_eq!(
            targets.len(),
            4,
            "every line is counted, as the authors counted it"
        );
        let p = "dataset_0.5.jsonl".to_string();
        assert_eq!(s.duplicates, vec![(p.clone(), 3, 1)]);
        assert_eq!(s.twins, vec![(p, 1, 4)]);
    }

    #[test]
    fn a_reply_that_cannot_determine_is_an_abstention_of_its_own() {
        let f = file(vec![
            record(
                1,
                "A",
                "Based on the reference, it is not possible to determine whether the claim is true or false.",
                Some(true),
            ),
            record(2, "B", "The claim is true or false.", Some(false)),
            // Released replies (GPT-3.5 WICE T=0.1 line 36, 13B PubHEALTH T=0.9 line 15).
            record(
                3,
                "C",
                "It is unclear whether the claim is true or not.",
                Some(true),
            ),
            record(4, "D", "One would need accurate information.", Some(true)),
        ]);
        let (_, targets, s) = build(&[f], None, None, Reading::Prism, "x".into());
        let lines: Vec<usize> = s.undetermined.iter().map(|u| u.1).collect();
        assert_eq!(lines, [1, 3, 4]);
        assert!(s.undetermined.iter().all(|u| u.0 == "dataset_0.5.jsonl"));
        assert_eq!(targets[2].class, Some(Class::Unparsed));
        assert_eq!(targets[3].class, Some(Class::Unparsed));
        assert_eq!(targets[0].class, Some(Class::Unparsed));
    }
}
