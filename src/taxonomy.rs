//! The PRISM taxonomy: four dimensions and fifteen categories, each with a code and a full name.
//!
//! Sub-tasks are deliberately *not* listed here: they come from the data (a release's `tasks.json`
//! or the items themselves), so a new release with other sub-tasks needs no code change.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A hallucination dimension, tied to a stage of generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dimension {
    /// Knowledge Error: wrong or outdated facts.
    KE,
    /// Knowledge Missing: lacks the fact and should say so.
    KM,
    /// Reasoning Error: has the premises, combines them wrongly.
    RE,
    /// Instruction Following Error: violates an explicit constraint.
    IFE,
}

impl Dimension {
    /// The display order used everywhere (tables, trees, reports): the paper's column order.
    pub const ALL: [Dimension; 4] = [Dimension::KE, Dimension::KM, Dimension::RE, Dimension::IFE];

    pub fn code(self) -> &'static str {
        match self {
            Dimension::KE => "KE",
            Dimension::KM => "KM",
            Dimension::RE => "RE",
            Dimension::IFE => "IFE",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dimension::KE => "Knowledge Error",
            Dimension::KM => "Knowledge Missing",
            Dimension::RE => "Reasoning Error",
            Dimension::IFE => "Instruction Following Error",
        }
    }

    /// Position in [`Dimension::ALL`], handy for fixed-size per-dimension arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn categories(self) -> impl Iterator<Item = &'static Category> {
        CATEGORIES.iter().filter(move |c| c.dimension == self)
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for Dimension {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Without allocating: task ids are parsed for their dimension in every rate computed
        // (the heatmap of 100 runs × 8 models parses hundreds of thousands).
        let t = s.trim();
        Dimension::ALL
            .into_iter()
            .find(|d| d.code().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                format!(
                    "unknown dimension {:?} (expected KE, KM, RE or IFE)",
                    t.to_ascii_uppercase()
                )
            })
    }
}

/// One of the fifteen categories ("subcategory" in the release files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub code: &'static str,
    pub name: &'static str,
    pub dimension: Dimension,
}

/// The fifteen categories in display order (grouped by dimension in [`Dimension::ALL`] order).
pub static CATEGORIES: [Category; 15] = [
    cat("FD", "Factual Distortion", Dimension::KE),
    cat("IMC", "Intra-Memory Conflict", Dimension::KE),
    cat("EIC", "Entity-Identity Confusion", Dimension::KE),
    cat("DSK", "Domain-Specific Knowledge", Dimension::KM),
    cat("FK", "Fictional Knowledge", Dimension::KM),
    cat("TK", "Timely Knowledge", Dimension::KM),
    cat("NPK", "Non-Public Knowledge", Dimension::KM),
    cat("LF", "Logical Fallacy", Dimension::RE),
    cat("PF", "Procedural Failure", Dimension::RE),
    cat("IIF", "Information Integration Failure", Dimension::RE),
    cat("MRF", "Mathematical Reasoning Failure", Dimension::RE),
    cat("EF", "Explicit Format", Dimension::IFE),
    cat("LC", "Length Constraints", Dimension::IFE),
    cat("LgC", "Language Constraints", Dimension::IFE),
    cat("CCL", "Complex & Cognitive Load", Dimension::IFE),
];

const fn cat(code: &'static str, name: &'static str, dimension: Dimension) -> Category {
    Category {
        code,
        name,
        dimension,
    }
}

/// Looks a category up by code within a dimension. Codes are matched exactly first, then without
/// regard to case (a hand-written JSONL file may say `lgc`).
pub fn category(dimension: Dimension, code: &str) -> Option<&'static Category> {
    let code = code.trim();
    CATEGORIES
        .iter()
        .find(|c| c.dimension == dimension && c.code == code)
        .or_else(|| {
            CATEGORIES
                .iter()
                .find(|c| c.dimension == dimension && c.code.eq_ignore_ascii_case(code))
        })
}

/// Looks a category up, or says why not: `unknown category "X" for KE (expected one of ...)`.
pub fn category_or_reason(dimension: Dimension, code: &str) -> Result<&'static Category, String> {
    category(dimension, code).ok_or_else(|| {
        let known: Vec<_> = dimension.categories().map(|c| c.code).collect();
        format!(
            "unknown category {code:?} for {dimension} (expected one of {})",
            known.join(", ")
        )
    })
}

/// Index of a category in [`CATEGORIES`] (its display order).
pub fn category_index(cat: &Category) -> usize {
    CATEGORIES
        .iter()
        .position(|c| c.code == cat.code && c.dimension == cat.dimension)
        .unwrap_or(usize::MAX)
}

/// How an item's answer is scored (the `evaluator` of a task in `tasks.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evaluator {
    Exact,
    Fuzzy,
    Choice,
    Abstain,
    TruthLabel,
    FactJudge,
    JudgeEquiv,
    AnswerMatch,
    JudgeMath,
    JudgeCode,
    JudgeClaims,
    DataFormat,
    WordRange,
    Language,
    Ifeval,
}

impl Evaluator {
    pub const ALL: [Evaluator; 15] = [
        Evaluator::Exact,
        Evaluator::Fuzzy,
        Evaluator::Choice,
        Evaluator::Abstain,
        Evaluator::TruthLabel,
        Evaluator::FactJudge,
        Evaluator::JudgeEquiv,
        Evaluator::AnswerMatch,
        Evaluator::JudgeMath,
        Evaluator::JudgeCode,
        Evaluator::JudgeClaims,
        Evaluator::DataFormat,
        Evaluator::WordRange,
        Evaluator::Language,
        Evaluator::Ifeval,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Evaluator::Exact => "exact",
            Evaluator::Fuzzy => "fuzzy",
            Evaluator::Choice => "choice",
            Evaluator::Abstain => "abstain",
            Evaluator::TruthLabel => "truth_label",
            Evaluator::FactJudge => "fact_judge",
            Evaluator::JudgeEquiv => "judge_equiv",
            Evaluator::AnswerMatch => "answer_match",
            Evaluator::JudgeMath => "judge_math",
            Evaluator::JudgeCode => "judge_code",
            Evaluator::JudgeClaims => "judge_claims",
            Evaluator::DataFormat => "data_format",
            Evaluator::WordRange => "word_range",
            Evaluator::Language => "language",
            Evaluator::Ifeval => "ifeval",
        }
    }

    /// A short human description for the detail pane.
    pub fn describe(self) -> &'static str {
        match self {
            Evaluator::Exact => "normalised response equals the answer",
            Evaluator::Fuzzy => "loose match: equal, containment, or same digit runs",
            Evaluator::Choice => "extracted option letter equals the answer",
            Evaluator::Abstain => "correct if the model abstains with [NO_INFO]",
            Evaluator::TruthLabel => "single [TRUE]/[FALSE]/[NO_INFO] label equals the answer",
            Evaluator::FactJudge => "yes/no agreement, else semantic-equivalence judge",
            Evaluator::JudgeEquiv => "semantic-equivalence judge",
            Evaluator::AnswerMatch => "answer contained in response, else judge",
            Evaluator::JudgeMath => "math-equivalence judge",
            Evaluator::JudgeCode => "code rubric judge (four 0-10 scores)",
            Evaluator::JudgeClaims => "claim-audit judge",
            Evaluator::DataFormat => "response parses in the requested format",
            Evaluator::WordRange => "word count within the inclusive range",
            Evaluator::Language => "response is in the required language",
            Evaluator::Ifeval => "every IFEval instruction passes (strict)",
        }
    }

    /// Whether scoring may call an LLM judge.
    pub fn may_need_judge(self) -> bool {
        matches!(
            self,
            Evaluator::FactJudge
                | Evaluator::JudgeEquiv
                | Evaluator::AnswerMatch
                | Evaluator::JudgeMath
                | Evaluator::JudgeCode
                | Evaluator::JudgeClaims
        )
    }

    /// The item fields this evaluator cannot work without (validation reports them when missing).
    pub fn required_fields(self) -> &'static [&'static str] {
        match self {
            Evaluator::Exact
            | Evaluator::Fuzzy
            | Evaluator::Abstain
            | Evaluator::TruthLabel
            | Evaluator::FactJudge
            | Evaluator::JudgeEquiv
            | Evaluator::AnswerMatch
            | Evaluator::JudgeMath => &["answer"],
            Evaluator::Choice => &["answer", "options"],
            Evaluator::JudgeCode | Evaluator::JudgeClaims => &[],
            Evaluator::DataFormat => &["format"],
            Evaluator::WordRange => &["word_range"],
            Evaluator::Language => &["language"],
            Evaluator::Ifeval => &["instruction_id"],
        }
    }
}

impl fmt::Display for Evaluator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Evaluator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Evaluator::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| format!("unknown evaluator {s:?}"))
    }
}

/// `A`, `B`, ... `Z`, then `AA` for the (unlikely) 27th option.
pub fn option_letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("{}{}", option_letter(i / 26 - 1), option_letter(i % 26))
    }
}

/// How many option letters a choice item allows: A-D, or up to its option count when it has
/// more, never beyond H (PRISM's extraction considers eight letters at most).
pub fn choice_letters(n_options: usize) -> usize {
    n_options.clamp(4, 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_categories_split_as_in_the_paper() {
        let counts: Vec<usize> = Dimension::ALL
            .iter()
            .map(|d| d.categories().count())
            .collect();
        assert_eq!(counts, vec![3, 4, 4, 4]);
        assert_eq!(CATEGORIES.len(), 15);
    }

    #[test]
    fn category_lookup_is_scoped_to_dimension_and_tolerates_case() {
        assert_eq!(
            category(Dimension::IFE, "LgC").unwrap().name,
            "Language Constraints"
        );
        assert_eq!(category(Dimension::IFE, "lgc").unwrap().code, "LgC");
        assert!(category(Dimension::KE, "LgC").is_none());
    }

    #[test]
    fn evaluator_names_round_trip() {
        for e in Evaluator::ALL {
            assert_eq!(e.as_str().parse::<Evaluator>().unwrap(), e);
        }
        assert!("judge".parse::<Evaluator>().is_err());
        assert_eq!("KE".parse::<Dimension>().unwrap(), Dimension::KE);
        assert!("XX".parse::<Dimension>().is_err());
    }
}
