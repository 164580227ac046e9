//! A line reader with a hard cap on line length.
//!
//! `BufRead::read_line` would happily buffer a 50 MB line (or a 5 GB file with no newline). This
//! reader keeps at most `max` bytes of a line; the rest of an over-long line is consumed and
//! discarded, so memory stays bounded whatever the input.

use std::io::{self, BufRead};

/// What one call to [`LineReader::next_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line (without its `\n` or `\r\n`).
    Text(&'a [u8]),
    /// A line longer than the cap; its length in bytes.
    TooLong(u64),
}

pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    max: usize,
    /// 1-based number of the line last returned.
    pub line_no: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            max,
            line_no: 0,
        }
    }

    /// The next line with its 1-based number, or `None` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<(usize, Line<'_>)>> {
        self.buf.clear();
        let mut total: u64 = 0;
        let mut saw_any = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                if !saw_any {
                    return Ok(None);
                }
                break;
            }
            saw_any = true;
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            total += take as u64;
            if total as usize <= self.max {
                self.buf.extend_from_slice(&chunk[..take]);
            }
            let consumed = if done { take + 1 } else { take };
            self.inner.consume(consumed);
            if done {
                break;
            }
        }
        self.line_no += 1;
        if total as usize > self.max {
            // Release the memory of a near-max line too: it will not be reused soon.
            self.buf = Vec::new();
            return Ok(Some((self.line_no, Line::TooLong(total))));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some((self.line_no, Line::Text(&self.buf))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8], max: usize) -> Vec<String> {
        let mut r = LineReader::new(io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        while let Some((_, l)) = r.next_line().unwrap() {
            out.push(match l {
                Line::Text(t) => String::from_utf8_lossy(t).into_owned(),
                Line::TooLong(n) => format!("<{n}>"),
            });
        }
        out
    }

    #[test]
    fn splits_lines_and_strips_crlf() {
        assert_eq!(collect(b"a\r\nbc\n\nd", 100), vec!["a", "bc", "", "d"]);
        assert_eq!(collect(b"", 100), Vec::<String>::new());
        assert_eq!(collect(b"x\n", 100), vec!["x"]);
    }

    #[test]
    fn over_long_lines_are_reported_not_buffered() {
        let mut input = vec![b'z'; 50];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(collect(&input, 10), vec!["<50>", "ok"]);
    }
}
