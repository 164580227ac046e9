//! A panel of judges: how the verdicts of several judges, each perhaps asked several times,
//! become one score.
//!
//! - A judge asked N times says what most of its readable verdicts say (hallucinated: a score
//!   below 0.5, PRISM's line); an even split leaves that judge undecided. Its score is the mean
//!   of the scores on the side that won, so a graded judge (the code rubric, the claim audit)
//!   stays graded.
//! - The panel then follows its rule over the judges that decided: `majority` (the default; an
//!   even split is left unscored, and said), `unanimous` (every judge asked must decide, and
//!   alike), or `first` (the first judge named decides; the others are only recorded, to be
//!   compared). The panel's score is the mean of the winning judges' scores.

use serde::Serialize;

/// How a panel's verdicts become one score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PanelRule {
    #[default]
    Majority,
    Unanimous,
    First,
}

impl PanelRule {
    pub fn as_str(self) -> &'static str {
        match self {
            PanelRule::Majority => "majority",
            PanelRule::Unanimous => "unanimous",
            PanelRule::First => "first",
        }
    }
}

/// What one judge's askings come to: its score (on the side most of its verdicts took), or
/// `None` when it gave no verdict or split evenly.
pub fn judge_score(repeats: &[Option<f64>]) -> Option<f64> {
    side_mean(repeats.iter().flatten().copied())
}

/// The mean of the scores on the side (hallucinated or not) that most of `scores` take;
/// `None` for none or an even split.
fn side_mean(scores: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut bad, mut good) = (Vec::new(), Vec::new());
    for s in scores {
        if s < 0.5 { &mut bad } else { &mut good }.push(s);
    }
    let won = match bad.len().cmp(&good.len()) {
        std::cmp::Ordering::Greater => bad,
        std::cmp::Ordering::Less => good,
        std::cmp::Ordering::Equal => return None,
    };
    Some(won.iter().sum::<f64>() / won.len() as f64)
}

/// The panel's score from each judge's (in the order named) score, or why there is none.
pub fn panel_score(rule: PanelRule, judges: &[Option<f64>]) -> Result<f64, &'static str> {
    match rule {
        PanelRule::First => judges
            .first()
            .copied()
            .flatten()
            .ok_or("the first judge gave no verdict"),
        PanelRule::Majority => side_mean(judges.iter().flatten().copied()).ok_or(
            if judges.iter().all(Option::is_none) {
                "no judge gave a verdict"
            } else {
                "the judges split evenly"
            },
        ),
        PanelRule::Unanimous => {
            let got: Vec<f64> = judges.iter().flatten().copied().collect();
            if got.len() < judges.len() || got.is_empty() {
                return Err("a judge gave no verdict");
            }
            let bad = got.iter().filter(|s| **s < 0.5).count();
            if bad != 0 && bad != got.len() {
                return Err("the judges disagree");
            }
            Ok(got.iter().sum::<f64>() / got.len() as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_asked_again_says_what_most_of_its_verdicts_say() {
        assert_eq!(judge_score(&[Some(1.0), Some(0.0), Some(1.0)]), Some(1.0));
        assert_eq!(judge_score(&[Some(0.0), None, Some(0.25)]), Some(0.125));
        assert_eq!(judge_score(&[Some(1.0), Some(0.0)]), None);
        assert_eq!(judge_score(&[None, None]), None);
        assert_eq!(judge_score(&[]), None);
        // 0.5 is not hallucinated (PRISM's line is a score below 0.5).
        assert_eq!(judge_score(&[Some(0.5), Some(0.0), Some(0.7)]), Some(0.6));
    }

    #[test]
    fn the_panel_follows_its_rule() {
        use PanelRule::*;
        let (h, c) = (Some(0.0), Some(1.0));
        assert_eq!(panel_score(Majority, &[h, c, c]), Ok(1.0));
        assert_eq!(panel_score(Majority, &[h, h, c]), Ok(0.0));
        assert_eq!(
            panel_score(Majority, &[h, c]),
            Err("the judges split evenly")
        );
        assert_eq!(panel_score(Majority, &[h, None, None]), Ok(0.0));
        assert_eq!(
            panel_score(Majority, &[None, None]),
            Err("no judge gave a verdict")
        );
        assert_eq!(panel_score(Unanimous, &[c, c, c]), Ok(1.0));
        assert_eq!(
            panel_score(Unanimous, &[c, c, h]),
            Err("the judges disagree")
        );
        assert_eq!(
            panel_score(Unanimous, &[c, None]),
            Err("a judge gave no verdict")
        );
        assert_eq!(panel_score(First, &[h, c, c]), Ok(0.0));
        assert_eq!(
            panel_score(First, &[None, c]),
            Err("the first judge gave no verdict")
        );
    }
}
