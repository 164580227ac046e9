//! The user's own judge prompts (`--judge-template [JUDGE=]FILE`): a wording of one of PRISM's
//! judges (semantic equivalence by default) that the user's judge is asked with instead of the
//! dataset's. A judge asked with one is another judge: its verdicts are kept under
//! `<model>~<label>` (the label is the file's stem), so the trial shows it beside the same model
//! asked with the dataset's wording, a calibration binds to its text, and its scores never pass
//! for PRISM's. The text is kept in the store (table `judge_templates`), so the trial and the
//! gate know what a judge was asked with after the file is gone, and an edited file makes its
//! calibration stale.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::eval::judge::JudgeKind;
use crate::store::lane_tables::{JUDGE_TEMPLATES, Table, Val};
use crate::store::record::{Fields, Record, int, text};

/// What separates a judge model's name from its template's label in a judge's name.
pub const SEPARATOR: char = '~';

/// A judge prompt of the user's, for one of PRISM's judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeTemplate {
    /// The file's stem (letters, digits, `.`, `-`, `_`): what the judge's name carries.
    pub label: String,
    /// The PRISM judge it words (`semantic_equivalence`, `math_equivalence`, `code_rubric`,
    /// `claim_audit`): its reply is read as that judge's is.
    pub judge: &'static str,
    pub text: String,
    pub sha256: String,
    /// Where it was read from (for messages; not kept in the store: another machine's path
    /// means nothing, the label and the text are what the judge was asked with).
    pub path: String,
    pub saved_at: i64,
}

/// The judges a template may word, with the short names `--judge-template` also takes.
const KINDS: [(&str, JudgeKind); 8] = [
    ("semantic_equivalence", JudgeKind::EQUIVALENCE),
    ("equivalence", JudgeKind::EQUIVALENCE),
    ("math_equivalence", JudgeKind::MATH),
    ("math", JudgeKind::MATH),
    ("code_rubric", JudgeKind::CODE),
    ("code", JudgeKind::CODE),
    ("claim_audit", JudgeKind::CLAIMS),
    ("claims", JudgeKind::CLAIMS),
];

/// The judge a name (or short name) words.
fn kind_named(name: &str) -> Option<JudgeKind> {
    KINDS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// The placeholder each judge's template must hold for the judge to see what it judges.
fn required(judge: &str) -> &'static [&'static str] {
    match judge {
        "semantic_equivalence" | "math_equivalence" => &["{model_answer}", "{reference}"],
        _ => &["{model_answer}"],
    }
}

impl JudgeTemplate {
    /// Reads `[JUDGE=]FILE` (JUDGE defaults to semantic equivalence). The file must be UTF-8
    /// text holding the placeholders the judge needs (`{model_answer}`, and `{reference}` for
    /// the equivalence judges): a template without them would be asked without the answer.
    pub fn load(arg: &str) -> Result<JudgeTemplate, String> {
        let (judge, file) = match arg.split_once('=') {
            Some((k, f)) if kind_named(k).is_some() => (k, f),
            Some((k, _)) if !Path::new(arg).exists() => {
                return Err(format!(
                    "{arg}: no judge {k:?} (one of semantic_equivalence, math_equivalence, code_rubric, claim_audit)"
                ));
            }
            _ => ("semantic_equivalence", arg),
        };
        let kind = kind_named(judge).unwrap_or(JudgeKind::EQUIVALENCE);
        let path = Path::new(file);
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let label = label_of(path)?;
        for p in required(kind.name()) {
            if !text.contains(p) {
                return Err(format!(
                    "{}: the template has no {p}: the {} judge would be asked without it (placeholders: {{question}}, {{model_answer}}, {{reference}}, {{test_input}}, {{test_output}})",
                    path.display(),
                    kind.name()
                ));
            }
        }
        Ok(JudgeTemplate {
            label,
            judge: kind.name(),
            sha256: sha256(&text),
            text,
            path: path.display().to_string(),
            saved_at: crate::store::now_millis(),
        })
    }
}

/// A file's stem as a label: letters, digits, `.`, `-` and `_` only (it becomes part of a
/// judge's name, which panels join with `+` and reports print).
fn label_of(path: &Path) -> Result<String, String> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let label: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if label.trim_matches('_').is_empty() {
        return Err(format!(
            "{}: name the file after its wording (its stem labels the judge)",
            path.display()
        ));
    }
    Ok(label)
}

fn sha256(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// The label a set of templates gives its judges (`a`, or `a&b` for two files): `None`
/// without templates. Two files for the same judge, or with the same stem, are refused.
pub fn label(templates: &[JudgeTemplate]) -> Result<Option<String>, String> {
    for (i, t) in templates.iter().enumerate() {
        if let Some(u) = templates[..i].iter().find(|u| u.judge == t.judge) {
            return Err(format!(
                "--judge-template: {} and {} both word the {} judge (one wording per judge; try two wordings with prism judges --try-template)",
                u.path, t.path, t.judge
            ));
        }
        if templates[..i].iter().any(|u| u.label == t.label) {
            return Err(format!(
                "--judge-template: two files named {:?} (the stem labels the judge)",
                t.label
            ));
        }
    }
    Ok((!templates.is_empty()).then(|| {
        templates
            .iter()
            .map(|t| t.label.as_str())
            .collect::<Vec<_>>()
            .join("&")
    }))
}

/// A judge's name asked with templates labelled `label`: `smol~strict`.
pub fn judge_name(model: &str, label: Option<&str>) -> String {
    match label {
        Some(l) => format!("{model}{SEPARATOR}{l}"),
        None => model.to_string(),
    }
}

/// The configured model behind a judge's name (`smol~strict` → `smol`).
pub fn model_of(judge: &str) -> &str {
    judge.split_once(SEPARATOR).map_or(judge, |(m, _)| m)
}

/// The template label of a judge's name (`smol~strict` → `strict`), if any.
pub fn label_in(judge: &str) -> Option<&str> {
    judge.split_once(SEPARATOR).map(|(_, l)| l)
}

/// `ds` with the templates put before its own judge prompts (for every task).
pub fn apply(ds: &crate::dataset::Dataset, templates: &[JudgeTemplate]) -> crate::dataset::Dataset {
    let mut out = ds.clone();
    for t in templates {
        out.prompts
            .judge_overrides
            .insert(t.judge.to_string(), t.text.clone());
    }
    out
}

/// The templates a judge named `judge` was asked with, from those stored (the newest text of
/// each file of its label; none for a judge asked with the dataset's prompts).
pub fn of_judge<'a>(stored: &'a [JudgeTemplate], judge: &str) -> Vec<&'a JudgeTemplate> {
    let Some(label) = label_in(judge) else {
        return Vec::new();
    };
    let mut out: Vec<&JudgeTemplate> = Vec::new();
    for t in stored {
        let of_label = t.label == label || label.split('&').any(|l| l == t.label);
        if !of_label {
            continue;
        }
        match out.iter_mut().find(|u| u.judge == t.judge) {
            Some(u) if u.saved_at < t.saved_at => *u = t,
            Some(_) => {}
            None => out.push(t),
        }
    }
    out
}

impl Record for JudgeTemplate {
    fn table() -> &'static Table {
        &JUDGE_TEMPLATES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("label", text(Some(&self.label))),
            ("judge", text(Some(self.judge))),
            ("sha256", text(Some(&self.sha256))),
            ("text", text(Some(&self.text))),
            ("created_at", int(self.saved_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> crate::store::Result<Self> {
        let judge = f.text("judge")?;
        Ok(JudgeTemplate {
            label: f.text("label")?,
            judge: kind_named(&judge).map_or("semantic_equivalence", JudgeKind::name),
            sha256: f.text("sha256")?,
            text: f.text("text")?,
            path: String::new(),
            saved_at: f.int("created_at")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, body: &str) -> String {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    }

    #[test]
    fn a_template_is_read_with_its_judge_and_label() {
        let d = tempfile::tempdir().unwrap();
        let f = write(
            d.path(),
            "strict wording.md",
            "Q {question}\nA {model_answer}\nR {reference}\nYES or NO?",
        );
        let t = JudgeTemplate::load(&f).unwrap();
        assert_eq!(t.judge, "semantic_equivalence");
        assert_eq!(t.label, "strict_wording");
        let m = JudgeTemplate::load(&format!("math={f}")).unwrap();
        assert_eq!(m.judge, "math_equivalence");
        assert_eq!(m.sha256, t.sha256);
        assert_eq!(judge_name("smol", Some(&t.label)), "smol~strict_wording");
        assert_eq!(model_of("smol~strict_wording"), "smol");
        assert_eq!(model_of("smol"), "smol");
    }

    #[test]
    fn a_template_without_the_answer_or_an_unknown_judge_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = write(d.path(), "a.md", "Is {reference} right?");
        let e = JudgeTemplate::load(&f).unwrap_err();
        assert!(e.contains("{model_answer}"), "{e}");
        let g = write(d.path(), "b.md", "{model_answer}");
        let e = JudgeTemplate::load(&format!("code={g}")).map(|t| t.judge);
        assert_eq!(e, Ok("code_rubric"));
        let e = JudgeTemplate::load(&format!("poetry={g}")).unwrap_err();
        assert!(e.contains("no judge \"poetry\""), "{e}");
        let e = JudgeTemplate::load("/nonexistent/x.md").unwrap_err();
        assert!(e.contains("/nonexistent/x.md"), "{e}");
    }

    #[test]
    fn two_wordings_of_one_judge_in_one_scoring_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let body = "{model_answer} {reference}";
        let a = JudgeTemplate::load(&write(d.path(), "a.md", body)).unwrap();
        let b = JudgeTemplate::load(&write(d.path(), "b.md", body)).unwrap();
        assert!(label(&[a.clone(), b.clone()]).is_err());
        let m = JudgeTemplate::load(&format!("math={}", write(d.path(), "m.md", body))).unwrap();
        assert_eq!(label(&[a.clone(), m.clone()]), Ok(Some("a&m".into())));
        assert_eq!(label(&[]), Ok(None));
        let stored = [a.clone(), m.clone(), b];
        let of: Vec<&str> = of_judge(&stored, "smol~a&m")
            .iter()
            .map(|t| t.judge)
            .collect();
        assert_eq!(of, ["semantic_equivalence", "math_equivalence"]);
        assert!(of_judge(&stored, "smol").is_empty());
    }
}
