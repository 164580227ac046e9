//! Server-sent events, read incrementally with a bound on a line's length.
//!
//! A hostile or broken server can send a line that never ends. A decoder that rescans its whole
//! buffer for a newline on every chunk burns a core (quadratic in the line), and one without a
//! bound holds the line in memory until it runs out. This one remembers where it stopped
//! looking, finds newlines with `memchr`, and fails with an error naming the limit as soon as a
//! line grows past it. Fields follow the SSE spec: `event:`, `data:` (several joined with `\n`),
//! comments (`:`) and unknown fields ignored, `\n`, `\r\n` or `\r` line ends, an event dispatched
//! on a blank line.

/// One event: its type (empty for the default `message`) and its data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

/// The longest line read by default (a chunk of any real answer is a few kilobytes).
pub(crate) const MAX_LINE: usize = 4 << 20;

#[derive(Debug)]
pub(crate) struct Decoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already searched for a line end.
    scanned: usize,
    /// A `\r` ended the last line: a `\n` right after it belongs to that line end.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
    max_line: usize,
    /// Bytes handed to the newline search so far (tests check the decoder stays linear).
    #[cfg(test)]
    searched: usize,
}

/// A line longer than the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineTooLong {
    pub limit: usize,
}

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server sent an SSE line longer than {} bytes without a line end",
            self.limit
        )
    }
}

impl Decoder {
    pub(crate) fn new(max_line: usize) -> Decoder {
        Decoder {
            buf: Vec::new(),
            scanned: 0,
            after_cr: false,
            event: String::new(),
            data: String::new(),
            has_data: false,
            max_line,
            #[cfg(test)]
            searched: 0,
        }
    }

    /// Feeds bytes; pushes every event they complete onto `out`.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<SseEvent>,
    ) -> Result<(), LineTooLong> {
        self.feed_with(chunk, |event, data| {
            out.push(SseEvent {
                event: event.to_string(),
                data: data.to_string(),
            })
        })
    }

    /// Feeds bytes; hands every event they complete to `each` as `(event, data)`, borrowed: the
    /// decoder's buffers are reused, so reading a stream allocates nothing per event.
    pub(crate) fn feed_with(
        &mut self,
        mut chunk: &[u8],
        mut each: impl FnMut(&str, &str),
    ) -> Result<(), LineTooLong> {
        if self.after_cr && chunk.first() == Some(&b'\n') {
            chunk = &chunk[1..];
        }
        self.after_cr = false;
        // The buffer is taken out while its lines are read, so they are handed over as slices.
        let mut buf = std::mem::take(&mut self.buf);
        buf.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(end) = self.find_eol(&buf) {
            let mut next = end + 1;
            if buf[end] == b'\r' {
                match buf.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    // The `\n` of a `\r\n` may come with the next chunk.
                    None => self.after_cr = true,
                }
            }
            self.line(&buf[start..end], &mut each);
            start = next;
            self.scanned = next;
        }
        if start > 0 {
            buf.drain(..start);
        }
        self.scanned = buf.len();
        self.buf = buf;
        if self.buf.len() > self.max_line {
            return Err(LineTooLong {
                limit: self.max_line,
            });
        }
        Ok(())
    }

    /// The next line end in `buf` at or after what was already searched.
    fn find_eol(&mut self, buf: &[u8]) -> Option<usize> {
        #[cfg(test)]
        {
            self.searched += buf.len() - self.scanned;
        }
        memchr::memchr2(b'\n', b'\r', &buf[self.scanned..]).map(|rel| self.scanned + rel)
    }

    /// The end of the stream: an event without its blank line still counts.
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) {
        self.finish_with(|event, data| {
            out.push(SseEvent {
                event: event.to_string(),
                data: data.to_string(),
            })
        })
    }

    /// [`Decoder::finish`], handing the last event to `each`.
    pub(crate) fn finish_with(&mut self, mut each: impl FnMut(&str, &str)) {
        if !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.line(&line, &mut each);
        }
        self.dispatch(&mut each);
    }

    fn line(&mut self, line: &[u8], each: &mut impl FnMut(&str, &str)) {
        if line.is_empty() {
            self.dispatch(each);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        // Valid UTF-8 (the norm) is checked by the fast validator; only a bad line pays for the
        // lossy conversion.
        let value = match std::str::from_utf8(value) {
            Ok(v) => std::borrow::Cow::Borrowed(v),
            Err(_) => String::from_utf8_lossy(value),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&value);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, each: &mut impl FnMut(&str, &str)) {
        if self.has_data {
            each(&self.event, &self.data);
        }
        self.event.clear();
        self.data.clear();
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = Decoder::new(1024);
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out).unwrap();
        }
        d.finish(&mut out);
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_across_chunks_and_line_ends() {
        let want = vec![ev("", "a"), ev("x", "b\nc"), ev("", "d")];
        assert_eq!(
            all(&[b"data: a\n\nevent: x\ndata: b\ndata:c\n\ndata: d\n\n"]),
            want
        );
        assert_eq!(
            all(&[
                b"da",
                b"ta: a\r",
                b"\n\r\nevent: x\rdata: b\r\ndata:c\r\n\r",
                b"\ndata: d"
            ]),
            want
        );
        // One byte at a time.
        let text = b"data: a\r\n\r\nevent: x\ndata: b\ndata:c\n\ndata: d\n\n";
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(all(&bytes), want);
    }

    #[test]
    fn comments_unknown_fields_and_empty_events() {
        assert_eq!(
            all(&[b": ping\n\nid: 7\nretry: 10\n\ndata\n\n"]),
            vec![ev("", "")]
        );
    }

    #[test]
    fn a_line_that_never_ends_is_an_error_naming_the_limit() {
        let mut d = Decoder::new(1024);
        let mut out = Vec::new();
        let chunk = [b'x'; 100];
        let mut err = None;
        for _ in 0..20 {
            if let Err(e) = d.feed(&chunk, &mut out) {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("the limit is enforced");
        assert!(e.to_string().contains("1024 bytes"), "{e}");
        assert!(d.buf.len() <= 1024 + 100);
    }

    #[test]
    fn long_lines_are_searched_once() {
        // 16 MiB in 4 KiB chunks: each byte is searched for a line end once (a decoder that
        // rescans its buffer per chunk reads 32 billion bytes here).
        let mut d = Decoder::new(64 << 20);
        let mut out = Vec::new();
        let chunk = vec![b'x'; 4096];
        d.feed(b"data: ", &mut out).unwrap();
        for _ in 0..(16 << 20) / 4096 {
            d.feed(&chunk, &mut out).unwrap();
        }
        d.feed(b"\n\n", &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 16 << 20);
        assert!(
            d.searched <= (16 << 20) + 64,
            "{} bytes searched",
            d.searched
        );
    }
}
