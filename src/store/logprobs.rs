//! Token log-probabilities, stored compactly beside their answer (`responses.logprobs`): a
//! version byte, then per token its text (u16 length, UTF-8), its log-probability (f32) and its
//! alternatives (a u8 count, each a text and an f32), all little-endian. About 60 bytes a token
//! with five alternatives, where JSON takes three times that. Version 2 puts a note before the
//! tokens (u16 length, UTF-8): what was left out of them as they came (unreadable values,
//! tokens past the answer's length), so a reader can say so.

use rusqlite::params;

use super::Store;
use super::error::Result;
use crate::provider::TokenLogprob;

const VERSION: u8 = 1;
const NOTED: u8 = 2;

/// A text as a u16 length and its bytes, cut at 65,535 bytes (no tokenizer has a longer token).
fn put_text(out: &mut Vec<u8>, s: &str) {
    let mut n = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&s.as_bytes()[..n]);
}

/// Encodes tokens; a token or alternative longer than 65,535 bytes is cut (no tokenizer has one).
pub fn encode(tokens: &[TokenLogprob]) -> Vec<u8> {
    encode_noted(tokens, None)
}

/// Encodes tokens with what was left out of them (version 2 when there is a note).
pub fn encode_noted(tokens: &[TokenLogprob], note: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + tokens.len() * 16);
    match note {
        None => out.push(VERSION),
        Some(n) => {
            out.push(NOTED);
            put_text(&mut out, n);
        }
    }
    let text = put_text;
    for t in tokens {
        text(&mut out, &t.token);
        out.extend_from_slice(&t.logprob.to_le_bytes());
        let top = &t.top[..t.top.len().min(u8::MAX as usize)];
        out.push(top.len() as u8);
        for (alt, lp) in top {
            text(&mut out, alt);
            out.extend_from_slice(&lp.to_le_bytes());
        }
    }
    out
}

/// Decodes what [`encode`] wrote; `None` for bytes it did not write (another version, cut).
pub fn decode(bytes: &[u8]) -> Option<Vec<TokenLogprob>> {
    let (&version, mut rest) = bytes.split_first()?;
    match version {
        VERSION => {}
        NOTED => {
            let n = u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as usize;
            rest = rest.get(2 + n..)?;
        }
        _ => return None,
    }
    let take = |rest: &mut &[u8], n: usize| -> Option<Vec<u8>> {
        if rest.len() < n {
            return None;
        }
        let (a, b) = rest.split_at(n);
        *rest = b;
        Some(a.to_vec())
    };
    let text = |rest: &mut &[u8]| -> Option<String> {
        let n = u16::from_le_bytes(take(rest, 2)?.try_into().ok()?) as usize;
        String::from_utf8(take(rest, n)?).ok()
    };
    let float = |rest: &mut &[u8]| -> Option<f32> {
        Some(f32::from_le_bytes(take(rest, 4)?.try_into().ok()?))
    };
    let mut out = Vec::new();
    while !rest.is_empty() {
        let token = text(&mut rest)?;
        let logprob = float(&mut rest)?;
        let n = take(&mut rest, 1)?[0];
        let mut top = Vec::with_capacity(n as usize);
        for _ in 0..n {
            top.push((text(&mut rest)?, float(&mut rest)?));
        }
        out.push(TokenLogprob {
            token,
            logprob,
            top,
        });
    }
    Some(out)
}

/// What was left out of the tokens as they came, when anything was (version 2).
pub fn note(bytes: &[u8]) -> Option<String> {
    let (&NOTED, rest) = bytes.split_first()? else {
        return None;
    };
    let n = u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as usize;
    String::from_utf8(rest.get(2..2 + n)?.to_vec()).ok()
}

impl Store {
    /// The token log-probabilities of a run's answers that have them: (job, tokens). Bytes that
    /// cannot be read are left out.
    pub fn logprobs(&self, run_id: &str) -> Result<Vec<(u32, Vec<TokenLogprob>)>> {
        let mut st = self.conn.prepare(
            "SELECT job_idx, logprobs FROM responses WHERE run_id = ?1 AND logprobs IS NOT NULL
             ORDER BY job_idx",
        )?;
        let rows = st
            .query_map(params![run_id], |r| {
                Ok((
                    r.get::<_, u32>("job_idx")?,
                    r.get::<_, Vec<u8>>("logprobs")?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(job, b)| Some((job, decode(&b)?)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_compactly() {
        let tokens = vec![
            TokenLogprob {
                token: " Paris".into(),
                logprob: -0.116,
                top: vec![(" Paris".into(), -0.116), (" indeed".into(), -3.689)],
            },
            TokenLogprob {
                token: "é€".into(),
                logprob: -2.5,
                top: vec![],
            },
            TokenLogprob {
                token: String::new(),
                logprob: f32::NEG_INFINITY,
                top: vec![(String::new(), -1.0)],
            },
        ];
        let b = encode(&tokens);
        assert_eq!(decode(&b).unwrap(), tokens);
        // 1 + (2+6+4+1 + 2+6+4 + 2+7+4) + (2+5+4+1) + (2+0+4+1 + 2+0+4) = 1 + 38 + 12 + 13.
        assert_eq!(b.len(), 64);
        assert_eq!(decode(&b[..b.len() - 1]), None);
        assert_eq!(decode(&[3, 0, 0]), None);
        assert_eq!(decode(&[VERSION]).unwrap(), vec![]);
        assert_eq!(note(&b), None);
        // With a note: the same tokens, and the note.
        let n = encode_noted(&tokens, Some("3 token log-probabilities could not be read"));
        assert_eq!(decode(&n).unwrap(), tokens);
        assert_eq!(
            note(&n).as_deref(),
            Some("3 token log-probabilities could not be read")
        );
        assert_eq!(decode(&n[..3]), None);
    }
}
