//! Stop strings over a stream of text pieces.

/// Finds stop strings in a stream of text pieces without ever emitting part of one: text that
/// could still become a stop string is held back until it cannot.
pub struct StopMatcher {
    stops: Vec<String>,
    held: String,
    done: bool,
}

impl StopMatcher {
    pub fn new(stops: &[String]) -> StopMatcher {
        StopMatcher {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
            done: false,
        }
    }

    /// Adds text; returns what may be emitted now and whether a stop string was reached.
    pub fn push(&mut self, piece: &str) -> (String, bool) {
        if self.done {
            return (String::new(), true);
        }
        self.held.push_str(piece);
        if let Some(pos) = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()))
            .min()
        {
            let out = self.held[..pos].to_string();
            self.held.clear();
            self.done = true;
            return (out, true);
        }
        // Keep the longest suffix that is a prefix of some stop string.
        let keep = self
            .stops
            .iter()
            .map(|s| {
                (1..s.len().min(self.held.len() + 1))
                    .rev()
                    .find(|&k| {
                        self.held.is_char_boundary(self.held.len() - k)
                            && s.starts_with(&self.held[self.held.len() - k..])
                    })
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        let cut = self.held.len() - keep;
        let out = self.held[..cut].to_string();
        self.held.drain(..cut);
        (out, false)
    }

    /// The held-back text at the end of generation.
    pub fn flush(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_strings_are_never_emitted_even_across_pieces() {
        let mut m = StopMatcher::new(&["\n\nQ".to_string(), "END".to_string()]);
        let mut out = String::new();
        let mut stopped = false;
        for p in ["Hel", "lo\n", "\n", "Qnext"] {
            let (e, s) = m.push(p);
            out.push_str(&e);
            if s {
                stopped = true;
                break;
            }
        }
        assert!(stopped);
        assert_eq!(out, "Hello");
        let mut m = StopMatcher::new(&["END".to_string()]);
        let (a, _) = m.push("abcE");
        assert_eq!(a, "abc");
        let (b, s) = m.push("Nx");
        assert_eq!((b.as_str(), s), ("ENx", false));
        assert_eq!(m.flush(), "");
        let (c, _) = m.push("ab EN");
        assert_eq!(c, "ab ");
        assert_eq!(m.flush(), "EN", "held text comes out at the end");
    }
}
