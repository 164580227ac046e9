//! White-box scores of one answer from its token log-probabilities (lm-polygraph's and UQLM's
//! simplest scorers): the mean and the minimum token log-probability, the perplexity, and the
//! mean entropy of the next-token distribution.
//!
//! The entropy is over what the provider returned: the top alternatives at each position, and
//! the probability they leave over as one more outcome. It is a lower bound of the true entropy
//! (the rest of the vocabulary is lumped), exact when the alternatives hold all the mass.

use serde::Serialize;

use crate::provider::TokenLogprob;

/// How unlikely a token is, in the four bands every view shades it by (the compare screen,
/// the item page): likely (p ≥ 0.8), fairly likely (≥ 0.5), unlikely (≥ 0.2: underlined),
/// very unlikely (below: underlined and bold), so the shading reads without colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Band {
    Likely,
    Fair,
    Unlikely,
    VeryUnlikely,
}

/// Below this probability a token is unlikely (underlined; the token cursor stops there).
pub const LOW_P: f64 = 0.5;

/// The band of a token's probability.
pub fn band(p: f64) -> Band {
    if p >= 0.8 {
        Band::Likely
    } else if p >= LOW_P {
        Band::Fair
    } else if p >= 0.2 {
        Band::Unlikely
    } else {
        Band::VeryUnlikely
    }
}

/// The alternatives the model weighed instead of `tok`, most likely first, at most `n`, each
/// with its probability.
pub fn alternatives(tok: &TokenLogprob, n: usize) -> Vec<(&str, f64)> {
    let mut alts: Vec<(&str, f64)> = tok
        .top
        .iter()
        .filter(|(s, _)| *s != tok.token)
        .map(|(s, lp)| (s.as_str(), f64::from(*lp).exp()))
        .collect();
    alts.sort_by(|a, b| b.1.total_cmp(&a.1));
    alts.truncate(n);
    alts
}

/// What every view says in place of an answer's tokens when they do not spell it.
pub const TOKENS_MISMATCH: &str = "tokens do not match the answer";

/// An answer's tokens, when they spell its stored `text`: exactly; or all of it, with tokens
/// past its end (a stop sequence the text was cut at) dropped; or its beginning (tokens left
/// out as they came). `None` when they say something else: a view then draws the answer, not
/// what the server claimed its tokens were.
pub fn spelling(mut tokens: Vec<TokenLogprob>, text: &str) -> Option<Vec<TokenLogprob>> {
    let mut at = 0;
    for (i, t) in tokens.iter().enumerate() {
        let rest = &text[at..];
        if rest.is_empty() {
            tokens.truncate(i);
            return Some(tokens);
        }
        if rest.starts_with(&t.token) {
            at += t.token.len();
        } else if t.token.starts_with(rest) {
            // The last token runs past the text's end (a stop sequence cut in its middle).
            tokens.truncate(i + 1);
            return Some(tokens);
        } else {
            return None;
        }
    }
    (at > 0 || text.is_empty()).then_some(tokens)
}

/// An answer's stored tokens as every view shows them: the tokens when they spell `text` (see
/// [`spelling`]), and what to say of them (what was left out as they came, `note`, or that they
/// do not match the answer).
pub fn shown_tokens(
    tokens: Option<Vec<TokenLogprob>>,
    note: Option<String>,
    text: &str,
) -> (Option<Vec<TokenLogprob>>, Option<String>) {
    match tokens {
        None => (None, note),
        Some(t) if t.is_empty() => (None, note),
        Some(t) => match spelling(t, text) {
            Some(t) => (Some(t), note),
            None => (None, Some(TOKENS_MISMATCH.to_string())),
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WhiteBox {
    pub tokens: usize,
    pub mean_logprob: f64,
    pub min_logprob: f64,
    /// exp(-mean log-probability).
    pub perplexity: f64,
    /// Nats; `None` when no position came with alternatives.
    pub mean_entropy: Option<f64>,
}

/// The scores of an answer's tokens; `None` without tokens.
pub fn scores(tokens: &[TokenLogprob]) -> Option<WhiteBox> {
    if tokens.is_empty() {
        return None;
    }
    let lps: Vec<f64> = tokens.iter().map(|t| f64::from(t.logprob)).collect();
    let mean = lps.iter().sum::<f64>() / lps.len() as f64;
    let min = lps.iter().copied().fold(f64::INFINITY, f64::min);
    let entropies: Vec<f64> = tokens
        .iter()
        .filter(|t| !t.top.is_empty())
        .map(|t| entropy(&t.top))
        .collect();
    Some(WhiteBox {
        tokens: tokens.len(),
        mean_logprob: mean,
        min_logprob: min,
        perplexity: (-mean).exp(),
        mean_entropy: (!entropies.is_empty())
            .then(|| entropies.iter().sum::<f64>() / entropies.len() as f64),
    })
}

/// Entropy (nats) of the alternatives, with the mass they leave over as one more outcome.
fn entropy(top: &[(String, f32)]) -> f64 {
    let ps: Vec<f64> = top
        .iter()
        .map(|(_, lp)| f64::from(*lp).exp())
        .filter(|p| *p > 0.0)
        .collect();
    let rest = (1.0 - ps.iter().sum::<f64>()).max(0.0);
    ps.iter()
        .chain((rest > 1e-12).then_some(&rest))
        .map(|p| -p * p.ln())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(lp: f32, top: &[f32]) -> TokenLogprob {
        TokenLogprob {
            token: "x".into(),
            logprob: lp,
            top: top.iter().map(|l| ("a".to_string(), *l)).collect(),
        }
    }

    #[test]
    fn scores_by_hand() {
        let half = 0.5f32.ln();
        // Two equal alternatives holding all the mass: ln 2 nats. One sure token: 0.
        let w = scores(&[t(half, &[half, half]), t(0.0, &[0.0])]).unwrap();
        assert_eq!(w.tokens, 2);
        assert!((w.mean_logprob - f64::from(half) / 2.0).abs() < 1e-9);
        assert!((w.min_logprob - f64::from(half)).abs() < 1e-9);
        assert!((w.perplexity - 2f64.sqrt()).abs() < 1e-6);
        assert!((w.mean_entropy.unwrap() - 2f64.ln() / 2.0).abs() < 1e-6);
        // One alternative of probability 1/4: it and the 3/4 left over.
        let q = 0.25f32.ln();
        let e = scores(&[t(q, &[q])]).unwrap().mean_entropy.unwrap();
        let want = -(0.25f64 * 0.25f64.ln() + 0.75 * 0.75f64.ln());
        assert!((e - want).abs() < 1e-6);
        // No alternatives: no entropy; no tokens: nothing.
        assert_eq!(scores(&[t(-1.0, &[])]).unwrap().mean_entropy, None);
        assert_eq!(scores(&[]), None);
    }

    #[test]
    fn tokens_count_only_when_they_spell_the_answer() {
        let toks = |ss: &[&str]| -> Vec<TokenLogprob> {
            ss.iter()
                .map(|s| TokenLogprob {
                    token: s.to_string(),
                    logprob: -0.1,
                    top: vec![],
                })
                .collect()
        };
        let n = |t: Option<Vec<TokenLogprob>>| t.map(|t| t.len());
        assert_eq!(
            n(spelling(toks(&["Hello", " world"]), "Hello world")),
            Some(2)
        );
        // Past the end (a stop sequence): dropped. Only a beginning: kept.
        assert_eq!(n(spelling(toks(&["Hi", "\n\n", "Q:"]), "Hi")), Some(1));
        assert_eq!(n(spelling(toks(&["Hi", "\n\nQ"]), "Hi\n")), Some(2));
        assert_eq!(n(spelling(toks(&["Hello"]), "Hello world")), Some(1));
        // What the server claimed, not what was scored.
        assert_eq!(spelling(toks(&["foo", "bar"]), "Hello world"), None);
        assert_eq!(spelling(toks(&[]), "Hello"), None);
    }
}
