//! A synthetic PRISM release for benchmarks: 65 tasks over the 15 categories, item shapes like
//! PRISM's (options, word ranges, IFEval kwargs, languages, answers).
#![allow(dead_code)]

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

const WORDS: &[&str] = &[
    "the",
    "model",
    "answer",
    "river",
    "capital",
    "founded",
    "century",
    "according",
    "passage",
    "which",
    "following",
    "population",
    "census",
    "reasoning",
    "option",
    "because",
    "therefore",
    "scientist",
    "discovered",
    "element",
    "treaty",
    "signed",
    "mountain",
    "highest",
    "language",
    "official",
    "currency",
    "festival",
    "dynasty",
    "emperor",
    "algorithm",
    "protein",
    "orbit",
];

/// A small deterministic generator (no rand dependency needed for a benchmark corpus).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn words(&mut self, n: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[self.next() as usize % WORDS.len()]);
        }
        s
    }
}

/// Writes a release of `n` items over 65 tasks spread across all 15 categories, with item shapes
/// like PRISM's (options, word ranges, kwargs, ...). Returns the bytes of data written.
pub fn synth_release(root: &Path, n: usize) -> u64 {
    let cats: Vec<_> = prism::taxonomy::CATEGORIES.iter().collect();
    let mut tasks = Vec::new();
    let mut rng = Lcg(42);
    let mut bytes = 0u64;
    for t in 0..65 {
        let cat = cats[t % cats.len()];
        let dim = cat.dimension.code();
        let name = format!("Synth{t:02}");
        let task_id = format!("{dim}-{}-{name}", cat.code);
        let (evaluator, shape) = match t % 6 {
            0 => ("choice", 0),
            1 => ("word_range", 1),
            2 => ("ifeval", 2),
            3 => ("abstain", 3),
            4 => ("language", 4),
            _ => ("exact", 5),
        };
        let file = format!("{dim}/{}/{name}.jsonl", cat.code);
        let count = n / 65 + usize::from(t < n % 65);
        let mut out = String::with_capacity(count * 500);
        for i in 0..count {
            let len = 40 + (rng.next() % 80) as usize;
            let q = rng.words(len);
            let extra = match shape {
                0 => format!(
                    r#", "options": ["{}", "{}", "{}", "{}"], "answer": "B""#,
                    rng.words(6),
                    rng.words(6),
                    rng.words(6),
                    rng.words(6)
                ),
                1 => r#", "word_range": [50, 120]"#.to_string(),
                2 => r#", "instruction_id": "keywords:forbidden_words", "kwargs": [{"forbidden_words": ["river", "orbit"]}, {}]"#.to_string(),
                3 => r#", "answer": "[NO_INFO]""#.to_string(),
                4 => r#", "language": "fr""#.to_string(),
                _ => format!(r#", "answer": "{}""#, rng.words(3)),
            };
            let _ = writeln!(
                out,
                r#"{{"id": "{task_id}-{:04}", "task": "{task_id}", "source_id": "{}", "question": "{q}"{extra}}}"#,
                i + 1,
                i + 1
            );
        }
        let path = root.join("data").join(&file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        bytes += out.len() as u64;
        fs::write(path, out).unwrap();
        tasks.push(serde_json::json!({
            "index": t + 1, "task_id": task_id, "dimension": dim, "subcategory": cat.code,
            "name": name, "items": count, "evaluator": evaluator, "prompt": "P", "file": file
        }));
    }
    let reg = serde_json::to_string_pretty(&tasks).unwrap();
    bytes += reg.len() as u64;
    fs::write(root.join("data/tasks.json"), reg).unwrap();
    fs::create_dir_all(root.join("prompts/tasks")).unwrap();
    fs::write(root.join("prompts/tasks/P.md"), "Answer the question.").unwrap();
    bytes
}
