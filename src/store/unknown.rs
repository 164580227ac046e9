//! Values a store holds that this prism does not know: a status or state written by a newer
//! prism, or by hand on a shared store. One such value must not stop every reader of the store
//! (`prism runs`, reports, the TUI's mirror, `prism work`), so it is read as "unknown" and
//! named once per process; front-ends say the notes where they can ([`take`]).

use std::collections::HashSet;
use std::sync::Mutex;

struct Notes {
    seen: HashSet<(&'static str, String)>,
    waiting: Vec<String>,
}

static NOTES: Mutex<Option<Notes>> = Mutex::new(None);

/// Notes a value of `what` this prism does not know (the first time only). Values are cut and
/// made one line: a shared store's rows are untrusted text.
pub(crate) fn note(what: &'static str, value: &str) {
    let value: String = crate::text::one_line(value).chars().take(64).collect();
    let mut g = NOTES.lock().unwrap_or_else(|e| e.into_inner());
    let notes = g.get_or_insert_with(|| Notes {
        seen: HashSet::new(),
        waiting: Vec::new(),
    });
    // Bounded: a store with a million odd values names the first hundred.
    if notes.seen.len() < 100 && notes.seen.insert((what, value.clone())) {
        notes.waiting.push(format!(
            "unknown {what} {value:?} in the store (written by a newer prism, or by hand): read as \"unknown\", left out of rates"
        ));
    }
}

/// Notes a row left out because a value in it cannot be what it claims (a job number past
/// 2^32-1 or below 0, a score outside 0..1): `what` names the value, `value` what it was.
pub(crate) fn note_refused(what: &'static str, value: &str) {
    note_odd(what, value, "that row is left out");
}

/// Notes an out-of-range value once, with what was done about it.
fn note_odd(what: &'static str, value: &str, done: &str) {
    let value: String = crate::text::one_line(value).chars().take(64).collect();
    let mut g = NOTES.lock().unwrap_or_else(|e| e.into_inner());
    let notes = g.get_or_insert_with(|| Notes {
        seen: HashSet::new(),
        waiting: Vec::new(),
    });
    if notes.seen.len() < 100 && notes.seen.insert((what, value.clone())) {
        notes
            .waiting
            .push(format!("out-of-range {what} {value} in the store: {done}"));
    }
}

/// A job number, sample or count stored as a 64-bit integer, as this prism holds it (`None`,
/// noted once, when it does not fit: it would wrap to another job).
pub(crate) fn index(v: i64, what: &'static str) -> Option<u32> {
    match u32::try_from(v) {
        Ok(n) => Some(n),
        Err(_) => {
            note_refused(what, &v.to_string());
            None
        }
    }
}

/// A score as stored: 0 (hallucinated) to 1 (correct), or none. Anything else (NaN, 5.0) is
/// noted once and read as no score, so no rate or screen shows it.
pub(crate) fn score(v: Option<f64>) -> Option<f64> {
    match v {
        Some(s) if !(0.0..=1.0).contains(&s) => {
            note_odd("score", &s.to_string(), "read as no score");
            None
        }
        v => v,
    }
}

/// The notes not yet said.
pub fn take() -> Vec<String> {
    let mut g = NOTES.lock().unwrap_or_else(|e| e.into_inner());
    g.as_mut()
        .map(|n| std::mem::take(&mut n.waiting))
        .unwrap_or_default()
}
