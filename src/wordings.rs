//! The prompts of a detection, editable (METHODS.md: the prompts are our own wording, and a
//! user may word them otherwise; AutoHall's prompt-sensitivity study rewords the pair check).
//! A TOML file given with `--prompts` replaces any of them:
//!
//! ```toml
//! pair_check = "Question: {question}\nA: {a}\nB: {b}\nDo A and B contradict each other? Yes or No."
//! classification = "Claim: {claim}\nReference: {reference}\nIs the claim true or false?"
//! references = ["Give a reference for: {claim}", "Cite a source on: {claim}"]
//! pair_variants = ["Answer 1: {a}\nAnswer 2: {b}\nQuestion: {question}\nCan both be true? Yes or No."]
//! ```
//!
//! `references[0]` asks for the reference under test, the others (cycled) for the samples; one
//! alone is used for both. `pair_variants` are more wordings of the pair check, asked beside the
//! first (AutoHall's prompt-sensitivity study, P0-P5): every pair is checked once per wording and
//! detection is reported per wording; the first wording (`pair_check`, or prism's) is the one the
//! flags and the browser use. Each template must hold its placeholders; a run records the
//! templates it used, so a resumed run asks as it began.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Replacement wordings; `None` or empty: prism's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Templates {
    /// `{question}`, `{a}`, `{b}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_check: Option<String>,
    /// `{claim}`, `{reference}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    /// `{claim}`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    /// More wordings of the pair check (`{question}`, `{a}`, `{b}`), wordings 1.. beside the
    /// first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pair_variants: Vec<String>,
}

impl Templates {
    pub fn is_default(&self) -> bool {
        *self == Templates::default()
    }

    /// Reads and checks a templates file; the error names the file and the template.
    pub fn load(path: &Path) -> anyhow::Result<Templates> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let t: Templates =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        t.check()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(t)
    }

    fn check(&self) -> Result<(), String> {
        let need = |name: &str, t: &str, keys: &[&str]| -> Result<(), String> {
            match keys.iter().find(|k| !t.contains(&format!("{{{k}}}"))) {
                Some(k) => Err(format!("{name} lacks the placeholder {{{k}}}")),
                None => Ok(()),
            }
        };
        if let Some(t) = &self.pair_check {
            need("pair_check", t, &["question", "a", "b"])?;
        }
        if let Some(t) = &self.classification {
            need("classification", t, &["claim", "reference"])?;
        }
        for (i, t) in self.references.iter().enumerate() {
            need(&format!("references[{i}]"), t, &["claim"])?;
        }
        for (i, t) in self.pair_variants.iter().enumerate() {
            need(&format!("pair_variants[{i}]"), t, &["question", "a", "b"])?;
        }
        Ok(())
    }

    /// How many wordings each pair is checked in (1 and the variants).
    pub fn pair_wordings(&self) -> u32 {
        1 + self.pair_variants.len() as u32
    }

    /// The reference wording of sample `k` (0: the reference under test) and its index, when
    /// the user gave references.
    pub fn reference(&self, k: u32, for_sample: bool) -> Option<(u32, &str)> {
        let n = self.references.len() as u32;
        let i = match (n, for_sample) {
            (0, _) => return None,
            (1, _) | (_, false) => 0,
            (n, true) => 1 + k % (n - 1),
        };
        Some((i, self.references[i as usize].as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_without_its_placeholders_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prompts.toml");
        std::fs::write(&p, "pair_check = \"Do {a} and {b} clash?\"\n").unwrap();
        let e = Templates::load(&p).unwrap_err().to_string();
        assert!(
            e.contains("prompts.toml") && e.contains("pair_check lacks the placeholder {question}"),
            "{e}"
        );
        std::fs::write(&p, "pair_chek = \"x\"\n").unwrap();
        assert!(
            Templates::load(&p)
                .unwrap_err()
                .to_string()
                .contains("pair_chek")
        );
        std::fs::write(
            &p,
            "references = [\"R0 {claim}\", \"R1 {claim}\", \"R2 {claim}\"]\n",
        )
        .unwrap();
        let t = Templates::load(&p).unwrap();
        assert_eq!(t.reference(0, false), Some((0, "R0 {claim}")));
        let samples: Vec<u32> = (0..4).map(|k| t.reference(k, true).unwrap().0).collect();
        assert_eq!(samples, vec![1, 2, 1, 2]);
        assert_eq!(Templates::default().reference(0, true), None);
        std::fs::write(
            &p,
            "pair_variants = [\"Q {question} A {a} B {b}\", \"A {a} B {b}\"]\n",
        )
        .unwrap();
        let e = Templates::load(&p).unwrap_err().to_string();
        assert!(
            e.contains("pair_variants[1] lacks the placeholder {question}"),
            "{e}"
        );
        // The wordings shipped to start from load.
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/pair-wordings.toml");
        let t = Templates::load(&shipped).unwrap();
        assert_eq!(t.pair_wordings(), 6);
    }
}
