//! How a judge's stored replies read: the equivalence replies that say two things or none
//! (`eval::judge::ReplyWords`), and a verdict's score under PRISM's reading or the strict one
//! (`prism judges --reading strict`: each reply read again, no judge asked).

use serde::Serialize;

use crate::eval::judge::{self, ReplyWords};
use crate::store::JudgeVerdict;

/// A judge's equivalence replies that do not say one clear thing (`eval::judge::ReplyWords`),
/// and the verdicts the strict reading changes (or leaves undecided).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Replies {
    pub judge: String,
    /// Its verdicts with an equivalence judge's reply kept.
    pub read: usize,
    pub both: usize,
    pub neither: usize,
    pub yes_inside_word: usize,
    /// Verdicts whose strict reading differs from PRISM's (another verdict, or none).
    pub strict_differs: usize,
}

/// How each judge's replies read, per judge in `judges` order.
pub(super) fn replies(judges: &[String], verdicts: &[JudgeVerdict]) -> Vec<Replies> {
    let mut out: Vec<Replies> = judges
        .iter()
        .map(|j| Replies {
            judge: j.clone(),
            ..Default::default()
        })
        .collect();
    for v in verdicts {
        let (Some(reply), Some(r)) = (
            v.reply.as_deref(),
            out.iter_mut().find(|r| r.judge == v.judge),
        ) else {
            continue;
        };
        if !judge::uses_equivalence(&v.evaluator) || v.fallback {
            continue;
        }
        r.read += 1;
        let words = ReplyWords::of(reply);
        match words {
            ReplyWords::Both => r.both += 1,
            ReplyWords::Neither => r.neither += 1,
            ReplyWords::YesInsideWord => r.yes_inside_word += 1,
            ReplyWords::Yes | ReplyWords::No => {}
        }
        let prism = v.score.map(|s| s >= 0.5);
        r.strict_differs += usize::from(words.strict() != prism);
    }
    out
}

/// A verdict's score under `reading`: the stored one, or its reply read again strictly
/// (`None` where the reply decides nothing).
pub(super) fn score_as(v: &JudgeVerdict, reading: judge::Reading) -> Option<f64> {
    match (reading, v.reply.as_deref()) {
        (judge::Reading::Strict, Some(reply)) if judge::uses_equivalence(&v.evaluator) => {
            ReplyWords::of(reply)
                .strict()
                .map(|same| f64::from(u8::from(same)))
        }
        _ => v.score,
    }
}
