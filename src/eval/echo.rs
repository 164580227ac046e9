//! Finding where a judge's reply copies its own prompt back. Small models often answer a
//! question by repeating it ("Do the two answers contradict each other, so that they cannot both
//! be true? Differences in"), or by quoting the answers they were shown; a reader that looks for
//! verdict words then finds "contradict" and reads a verdict nobody gave. The copied spans are
//! taken out before any verdict is read, so what is left is what the model itself said.
//!
//! A span counts as an echo when it is a long run of the prompt's words (`LONG_RUN` or more, in
//! order), or when it repeats a whole sentence or line of the prompt (three words or more). Short
//! shared phrases stay: "No, they do not contradict each other" shares "contradict each other"
//! with the question and is a verdict; "The two answers contradict each other, so they cannot
//! both be true" shares seven words and then leaves the question's wording, and is a verdict too.

use std::borrow::Cow;

/// A run of this many words copied in order from the prompt is an echo wherever it stands. The
/// prompt's question is 15 words; the longest declarative answer that shares words with it
/// ("the two answers contradict each other, so ...") shares 7.
pub(crate) const LONG_RUN: usize = 8;

/// A whole prompt sentence or line repeated is an echo when it has at least this many words.
const WHOLE_UNIT: usize = 3;

/// Once a passage of the prompt has been echoed, a copy of this many of its words is an echo too.
const REPEATED_RUN: usize = 4;

/// A reply that ends this many words into a prompt sentence, with nothing after them, was cut
/// short while copying it.
const CUT_SHORT: usize = 3;

/// The search compares every reply word with every prompt word; these bound it (a hostile
/// server's megabyte reply costs at most 2 × 16 M comparisons). Echoes sit at a reply's start and a
/// verdict in its first lines; words past the bound are kept as they are.
const MAX_REPLY_WORDS: usize = 2_000;
const MAX_PROMPT_WORDS: usize = 8_000;

/// One word of a text: a hash of its lower-cased letters and digits (64 bits: two different
/// words of one prompt and reply collide with odds of about 1 in 10^13), where it lies in
/// bytes, and (for the prompt) which sentence or line it belongs to. Hashing as the characters
/// go allocates nothing per word.
struct Word {
    norm: u64,
    start: usize,
    end: usize,
    unit: usize,
}

/// FNV-1a over the lower-cased characters.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut unit = 0;
    let mut cur: Option<(usize, u64)> = None;
    let mut flush = |cur: &mut Option<(usize, u64)>, end: usize, unit: usize| {
        if let Some((start, norm)) = cur.take() {
            out.push(Word {
                norm,
                start,
                end,
                unit,
            });
        }
    };
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() || (c == '\'' && cur.is_some()) {
            let h = &mut cur.get_or_insert((i, FNV_OFFSET)).1;
            for l in c.to_lowercase() {
                *h = (*h ^ u64::from(u32::from(l))).wrapping_mul(FNV_PRIME);
            }
        } else {
            flush(&mut cur, i, unit);
            if matches!(c, '.' | '?' | '!' | '\n') {
                unit += 1;
            }
        }
    }
    flush(&mut cur, text.len(), unit);
    out
}

/// The byte ranges of `reply` that copy `prompt`, merged and in order.
pub(crate) fn echoed_spans(reply: &str, prompt: &str) -> Vec<(usize, usize)> {
    let mut r = words(reply);
    let mut p = words(prompt);
    r.truncate(MAX_REPLY_WORDS);
    p.truncate(MAX_PROMPT_WORDS);
    if r.is_empty() || p.is_empty() {
        return Vec::new();
    }
    // Where each prompt unit starts and how many words it has.
    let mut unit_len = vec![0usize; p.last().map_or(0, |w| w.unit + 1)];
    for w in &p {
        unit_len[w.unit] += 1;
    }
    let unit_start = |j: usize| j == 0 || p[j - 1].unit != p[j].unit;
    // row[j] = how many words from reply position i match the prompt from position j, computed
    // from the end of the reply backwards (the longest-common-substring table, one row at a
    // time). The first pass finds the echoes and the prompt words they copy; the second, the
    // shorter copies of those same words: a model that repeats the question repeats it again,
    // cut short ("Answer: The two answers contradict each other" after the whole question),
    // and a repeated echo is an echo.
    // Words as numbers, and where each prompt word stands: a reply word is compared only with
    // the prompt positions that hold it (the table is sparse: most cells are 0).
    let pid: Vec<u64> = p.iter().map(|w| w.norm).collect();
    let rid: Vec<u64> = r.iter().map(|w| w.norm).collect();
    // The prompt's positions sorted by word: those of one word are a slice found by search.
    let mut by_word: Vec<(u64, usize)> = pid.iter().copied().zip(0..).collect();
    by_word.sort_unstable();
    let positions = |w: u64| {
        let from = by_word.partition_point(|x| x.0 < w);
        let to = by_word.partition_point(|x| x.0 <= w);
        by_word[from..to].iter().map(|x| x.1)
    };
    let mut copied = vec![false; r.len()];
    let mut echoed = vec![false; p.len()];
    for pass in 0..2 {
        // Prefix counts of the echoed prompt words: "is p[j..j+len] all echoed" in O(1).
        let mut echoed_before = vec![0usize; p.len() + 1];
        for (j, e) in echoed.iter().enumerate() {
            echoed_before[j + 1] = echoed_before[j] + usize::from(*e);
        }
        let mut next = vec![0usize; p.len() + 1];
        let mut row = vec![0usize; p.len() + 1];
        let mut next_touched: Vec<usize> = Vec::new();
        let mut row_touched: Vec<usize> = Vec::new();
        for i in (0..r.len()).rev() {
            let mut mark = 0;
            for j in positions(rid[i]) {
                let len = next[j + 1] + 1;
                row[j] = len;
                row_touched.push(j);
                let mut take = 0;
                if pass == 0 {
                    // A run is judged once, from where it starts (its sub-runs are inside it).
                    let starts = i == 0 || j == 0 || rid[i - 1] != pid[j - 1];
                    if starts && len >= LONG_RUN {
                        take = len;
                    }
                    let u = unit_len[p[j].unit];
                    if u >= WHOLE_UNIT && unit_start(j) && len >= u {
                        take = take.max(u);
                    }
                    if take > 0 && (starts || take == u) {
                        for e in &mut echoed[j..j + take] {
                            *e = true;
                        }
                    }
                } else if len >= REPEATED_RUN && echoed_before[j + len] - echoed_before[j] == len {
                    take = len;
                }
                mark = mark.max(take);
            }
            // A copy that opens with the last word of one of the reply's own sentences ("... it
            // is not a fact. The claim relies on ..." where the prompt reads "... a documented
            // fact. The claim relies on ...") leaves that word to the model: words are compared
            // without their punctuation, so the run began a word early.
            let lead =
                usize::from(mark > 1 && reply[r[i].end..r[i + 1].start].contains(['.', '!', '?']));
            for c in &mut copied[i + lead..i + mark] {
                *c = true;
            }
            for j in next_touched.drain(..) {
                next[j] = 0;
            }
            std::mem::swap(&mut next, &mut row);
            std::mem::swap(&mut next_touched, &mut row_touched);
        }
        if !echoed.contains(&true) {
            break;
        }
    }
    // A reply cut short by its token cap in the middle of copying a prompt sentence ends with
    // that sentence's first words and nothing after them ("... Do the two answers contradict"):
    // the fragment is an echo too, though too short for the rules above.
    let tail_open = reply[r[r.len() - 1].end..]
        .chars()
        .all(|c| !matches!(c, '.' | '?' | '!') && !c.is_alphanumeric());
    if tail_open {
        let longest = (1..=r.len().min(LONG_RUN))
            .rev()
            .filter(|m| *m >= CUT_SHORT)
            .find(|&m| {
                let from = r.len() - m;
                (0..p.len()).any(|j| {
                    unit_start(j) && unit_len[p[j].unit] > m && rid[from..] == pid[j..j + m]
                })
            });
        if let Some(m) = longest {
            let n = r.len();
            for c in &mut copied[n - m..] {
                *c = true;
            }
        }
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (w, _) in r.iter().zip(&copied).filter(|(_, c)| **c) {
        match spans.last_mut() {
            // Words of one copied run are joined with what lies between them (spaces, commas).
            Some(last) if reply[last.1..w.start].chars().all(|c| !c.is_alphanumeric()) => {
                last.1 = w.end
            }
            _ => spans.push((w.start, w.end)),
        }
    }
    spans
}

/// `reply` with every span that copies `prompt` replaced by a space. The reply itself when
/// nothing is copied.
pub(crate) fn without_echo<'a>(reply: &'a str, prompt: &str) -> Cow<'a, str> {
    let spans = echoed_spans(reply, prompt);
    if spans.is_empty() {
        return Cow::Borrowed(reply);
    }
    let mut out = String::with_capacity(reply.len());
    let mut at = 0;
    for (s, e) in spans {
        out.push_str(&reply[at..s]);
        out.push(' ');
        at = e;
    }
    out.push_str(&reply[at..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "Two answers were given to the same question.\n\nQuestion: Where is the Eiffel Tower?\nAnswer A: It is in Paris.\nAnswer B: The Eiffel Tower stands in Lyon, France.\n\nDo the two answers contradict each other, so that they cannot both be true? Differences in wording, detail or length are not contradictions. First write Yes or No.";

    #[test]
    fn the_question_copied_back_is_taken_out_with_its_trailing_fragment() {
        let reply = "Claim: Where is the Eiffel Tower? Do the two answers contradict each other, so that they cannot both be true? Differences in";
        let left = without_echo(reply, PROMPT);
        // The fragment continues the copied run; the short copy before it is kept.
        assert_eq!(left, "Claim: Where is the Eiffel Tower?  ");
    }

    /// What Gemma 3 270M replied to a pair check on a Climate-FEVER claim (max_tokens 64): the
    /// question made a statement, three times, the last cut short. It read as a conflict.
    #[test]
    fn an_echo_repeated_and_cut_short_is_an_echo() {
        let reply = "  The two answers contradict each other, so that they cannot both be true.\n\nAnswer:  The two answers contradict each other, so that they cannot both be true.\n\nAnswer:  The two answers contradict each other";
        let left = without_echo(reply, PROMPT);
        assert!(!left.contains("contradict"), "{left:?}");
        // Without an echo before it, the same short phrase is the model's own.
        let own = "Answer: The two answers contradict each other";
        assert_eq!(without_echo(own, PROMPT), own);
    }

    #[test]
    fn verdicts_that_share_a_few_words_with_the_question_stay() {
        for reply in [
            "No, they do not contradict each other.",
            "Yes, the two answers contradict each other, so they cannot both be true.",
            "The two answers contradict each other: Paris is not Lyon.",
        ] {
            assert_eq!(without_echo(reply, PROMPT), reply);
        }
    }

    #[test]
    fn a_whole_line_of_the_prompt_repeated_is_an_echo() {
        // The answers quoted back, line by line, are no verdict.
        let left = without_echo(
            "Answer A: It is in Paris.\nAnswer B: The Eiffel Tower stands in Lyon, France.",
            PROMPT,
        );
        assert!(
            left.trim().chars().all(|c| !c.is_alphanumeric()),
            "{left:?}"
        );
        // "First write Yes or No." repeated is the format, not a Yes.
        let left = without_echo("First write Yes or No. Then", PROMPT);
        assert!(!left.contains("Yes"), "{left:?}");
    }

    #[test]
    fn spans_are_byte_ranges_of_the_reply_even_with_wide_characters() {
        let prompt = "Ist die Aussage über Zürich wahr oder falsch? Antworte kurz.";
        let reply = "«Ist die Aussage über Zürich wahr oder falsch?» Wahr.";
        let left = without_echo(reply, prompt);
        assert!(left.contains("Wahr."), "{left:?}");
        assert!(!left.contains("falsch"), "{left:?}");
        assert!(echoed_spans("", prompt).is_empty());
        // One word over and over, on both sides (the densest table): the bounded part is
        // one echo, the words past the bound are kept.
        let many = "la ".repeat(3_000);
        let spans = echoed_spans(&many, &many);
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].0, 0);
        assert!(spans[0].1 < many.len() && many[spans[0].1..].contains("la"));
        assert!(echoed_spans(reply, "").is_empty());
    }

    /// A reply cut off by its token cap while copying a prompt sentence ends with that
    /// sentence's first words: an echo, though only four words long. The same words followed by
    /// the model's own ending are kept.
    #[test]
    fn a_copy_cut_short_at_the_end_is_an_echo() {
        let reply =
            "This is a good thing that the surface is cooling.\n\nDo the two answers contradict";
        let own = without_echo(reply, PROMPT);
        assert!(!own.contains("contradict"), "{own:?}");
        assert!(own.contains("good thing"), "{own:?}");
        let kept = "Yes. Do the two answers contradict? They do.";
        assert!(without_echo(kept, PROMPT).contains("They do"));
        assert_eq!(
            without_echo("No, they do not contradict", PROMPT),
            "No, they do not contradict"
        );
    }
}
