//! The banded rubrics: what a 1-10 score means for each criterion a reviewer scores (Clarity,
//! Domain Relevance, Coherence) and each the quality agent scores (Factuality,
//! Discriminability, Clarity). METHODS names the criteria but gives no bands; these are ours,
//! four bands each, worded so that two reviewers reading them land in the same band.

/// A criterion with its four bands: 1-3, 4-6, 7-8, 9-10.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Criterion {
    pub name: &'static str,
    pub question: &'static str,
    pub bands: [&'static str; 4],
}

impl Criterion {
    /// The band description for a score.
    pub(crate) fn band(&self, score: u8) -> &'static str {
        self.bands[band_index(score)]
    }
}

/// 1-3 → 0, 4-6 → 1, 7-8 → 2, 9-10 → 3.
pub(crate) fn band_index(score: u8) -> usize {
    match score {
        0..=3 => 0,
        4..=6 => 1,
        7..=8 => 2,
        _ => 3,
    }
}

/// The band labels, for the key hints.
pub(crate) const BAND_RANGES: [&str; 4] = ["1-3", "4-6", "7-8", "9-10"];

/// The human reviewers' criteria (METHODS §2), in the order they are scored.
pub(crate) const HUMAN: [Criterion; 3] = [
    Criterion {
        name: "Clarity",
        question: "Is the question unambiguous, with one defensible reading?",
        bands: [
            "ambiguous or garbled; several readings or none",
            "understandable with effort; a wording issue could mislead",
            "clear; minor polish possible",
            "crisp and unambiguous; nothing to change",
        ],
    },
    Criterion {
        name: "Domain Relevance",
        question: "Does it test what its dimension and sub-task claim?",
        bands: [
            "tests something else entirely",
            "partly on topic; mixes in another skill",
            "on topic for its sub-task",
            "a clean, representative probe of its sub-task",
        ],
    },
    Criterion {
        name: "Coherence",
        question: "Do question, constraints and reference fit together?",
        bands: [
            "reference wrong or contradicts the question",
            "reference defensible but incomplete or loosely matched",
            "consistent; small gaps",
            "question, constraints and reference fully consistent",
        ],
    },
];

/// The quality agent's criteria (METHODS §2): A Factuality, B Discriminability, C Clarity.
pub(crate) const AGENT: [Criterion; 3] = [
    Criterion {
        name: "Factuality",
        question: "Is the reference answer correct and verifiable?",
        bands: [
            "the reference is wrong or unverifiable",
            "probably right, but unsupported or partly wrong",
            "correct; a detail could be sharper",
            "correct, verifiable and complete",
        ],
    },
    Criterion {
        name: "Discriminability",
        question: "Does the item test exactly one dimension of hallucination?",
        bands: [
            "tests no clear dimension, or every model trivially passes",
            "tests several dimensions at once",
            "mostly one dimension",
            "exactly one dimension, and separates strong from weak models",
        ],
    },
    Criterion {
        name: "Clarity",
        question: "Is the question unambiguous, with one defensible reading?",
        bands: [
            "ambiguous or garbled",
            "understandable with effort",
            "clear; minor polish possible",
            "crisp and unambiguous",
        ],
    },
];

/// PRISM's weighted quality S(x) = 0.5 A + 0.3 B + 0.2 C.
pub(crate) fn weighted_quality(factuality: f64, discriminability: f64, clarity: f64) -> f64 {
    0.5 * factuality + 0.3 * discriminability + 0.2 * clarity
}

/// PRISM keeps an item only if every one of A, B, C exceeds the threshold (strictly).
pub(crate) fn passes(scores: [f64; 3], threshold: f64) -> bool {
    scores.iter().all(|&s| s > threshold)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_weights_and_the_strict_threshold() {
        assert_eq!(HUMAN[0].band(1), HUMAN[0].bands[0]);
        assert_eq!(HUMAN[0].band(6), HUMAN[0].bands[1]);
        assert_eq!(HUMAN[0].band(7), HUMAN[0].bands[2]);
        assert_eq!(HUMAN[0].band(10), HUMAN[0].bands[3]);
        assert!((weighted_quality(8.0, 6.0, 10.0) - 7.8).abs() < 1e-12);
        // "Exceeds 7.0": a 7 is not enough even when the weighted score is high.
        assert!(!passes([9.0, 9.0, 7.0], 7.0));
        assert!(passes([7.5, 8.0, 9.0], 7.0));
    }
}
