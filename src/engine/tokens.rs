//! An answer's token log-probabilities as a server sent them are untrusted: a log-probability
//! may be unreadable (NaN, null, `-Infinity` as Python writes it) or impossible (above 0, as
//! `+1e308`), and a server may send two million entries for the answer "ok". [`TokenSink`]
//! keeps what reads, bounded by the answer, and says what it left out; the answer's text never
//! depends on its tokens.

use crate::provider::TokenLogprob;

/// Tokens beyond the answer's length by more than this are left out (a few tokens may come
/// ahead of their text, and special tokens spell nothing).
const SLACK: usize = 64;

/// Log-probabilities a hair above 0 are rounding (read as 0); beyond this they are impossible.
const ABOVE_ZERO: f32 = 1e-3;

/// The tokens of one answer as they arrive.
#[derive(Debug, Default)]
pub(crate) struct TokenSink {
    tokens: Vec<TokenLogprob>,
    /// The bytes of token text kept.
    bytes: usize,
    unreadable: usize,
    past_answer: usize,
}

impl TokenSink {
    /// Takes a batch; `answer_len` is the answer's length so far (bytes). Returns the tokens
    /// kept of it (for a front-end that shades them live).
    pub(crate) fn push(&mut self, batch: Vec<TokenLogprob>, answer_len: usize) -> &[TokenLogprob] {
        let from = self.tokens.len();
        for t in batch {
            let Some(t) = readable(t) else {
                self.unreadable += 1;
                continue;
            };
            if self.tokens.len() >= answer_len + SLACK
                || self.bytes + t.token.len() > answer_len + SLACK * 16
            {
                self.past_answer += 1;
                continue;
            }
            self.bytes += t.token.len();
            self.tokens.push(t);
        }
        &self.tokens[from..]
    }

    /// The tokens kept, and what was left out, in words (`None`: nothing was).
    pub(crate) fn finish(self) -> (Vec<TokenLogprob>, Option<String>) {
        let mut said = Vec::new();
        if self.unreadable > 0 {
            said.push(format!(
                "{} token log-probabilit{} could not be read (null, NaN, infinite or above 0)",
                self.unreadable,
                if self.unreadable == 1 { "y" } else { "ies" }
            ));
        }
        if self.past_answer > 0 {
            said.push(format!(
                "{} token(s) past the answer's length were sent",
                self.past_answer
            ));
        }
        let note = (!said.is_empty()).then(|| format!("{}: left out", said.join("; ")));
        (self.tokens, note)
    }
}

/// The token with its impossible alternatives dropped; `None` when its own log-probability is
/// unreadable or impossible.
fn readable(mut t: TokenLogprob) -> Option<TokenLogprob> {
    let ok = |lp: f32| lp.is_finite() && lp <= ABOVE_ZERO;
    if !ok(t.logprob) {
        return None;
    }
    t.logprob = t.logprob.min(0.0);
    t.top.retain(|(_, lp)| ok(*lp));
    for (_, lp) in &mut t.top {
        *lp = lp.min(0.0);
    }
    t.top.truncate(20);
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(s: &str, lp: f32) -> TokenLogprob {
        TokenLogprob {
            token: s.into(),
            logprob: lp,
            top: vec![("x".into(), lp), ("y".into(), f32::NAN), ("z".into(), 3.0)],
        }
    }

    #[test]
    fn unreadable_and_impossible_values_are_left_out_and_said() {
        let mut s = TokenSink::default();
        let kept = s
            .push(
                vec![
                    tok("A", -0.5),
                    tok("B", f32::NAN),
                    tok("C", 1e30),
                    tok("D", 1e-5),
                ],
                4,
            )
            .len();
        assert_eq!(kept, 2);
        let (tokens, note) = s.finish();
        assert_eq!(
            tokens.iter().map(|t| t.token.as_str()).collect::<Vec<_>>(),
            ["A", "D"]
        );
        assert_eq!(tokens[1].logprob, 0.0);
        assert_eq!(
            tokens[0].top.len(),
            1,
            "the NaN and positive alternatives go"
        );
        assert!(
            note.unwrap()
                .contains("2 token log-probabilities could not be read")
        );
    }

    #[test]
    fn two_million_tokens_for_ok_keep_a_handful() {
        let mut s = TokenSink::default();
        let flood: Vec<_> = (0..2_000_000).map(|_| tok("o", -0.1)).collect();
        s.push(flood, 2);
        let (tokens, note) = s.finish();
        assert_eq!(tokens.len(), 2 + SLACK);
        assert!(note.unwrap().contains("past the answer's length"));
    }
}
