//! A rank's output, passed on line by line after its rank's prefix, in pieces of at most
//! [`MAX_LINE_BYTES`].
//!
//! One write per line, so lines of different ranks never mix. A line longer than
//! [`MAX_LINE_BYTES`] (a rank printing megabytes without a newline) is not held until its end:
//! it is passed on in pieces of at most that many bytes, each a line of its own with the
//! prefix, so nothing is lost and the launcher holds at most that much of a line. A piece ends
//! on a UTF-8 character boundary where the text is UTF-8 (up to 3 bytes move to the next
//! piece), so that each piece stays readable text.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

/// The longest piece of a line passed on at once (64 KiB), prefix and newline not counted.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The output threads of a launch.
pub struct Pumps {
    started: usize,
    done_tx: Sender<()>,
    done_rx: Receiver<()>,
}

impl Pumps {
    pub fn new() -> Pumps {
        let (done_tx, done_rx) = channel();
        Pumps {
            started: 0,
            done_tx,
            done_rx,
        }
    }

    /// Starts a thread copying `from` to `to()` ([`pump`]) that says when `from` closed.
    pub fn spawn<W: Write + 'static>(
        &mut self,
        from: impl Read + Send + 'static,
        tag: String,
        to: fn() -> W,
    ) {
        let done = self.done_tx.clone();
        std::thread::spawn(move || {
            pump(from, &tag, &mut to());
            let _ = done.send(());
        });
        self.started += 1;
    }

    /// Waits until every thread's input closed, or `limit` passed (then the rest are left).
    pub fn drain(&self, limit: Duration) {
        let until = Instant::now() + limit;
        for _ in 0..self.started {
            let left = until.saturating_duration_since(Instant::now());
            if self.done_rx.recv_timeout(left).is_err() {
                return;
            }
        }
    }
}

/// Copies `from` to `to` line by line, each line (or piece of one) whole, after `tag`, ending
/// with a newline.
pub fn pump(from: impl Read, tag: &str, to: &mut impl Write) {
    let mut from = BufReader::with_capacity(MAX_LINE_BYTES, from);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let buf = match from.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let room = MAX_LINE_BYTES - line.len();
        // A newline right after a full piece ends that piece's line, rather than an empty one.
        let window = &buf[..buf.len().min(room + 1)];
        if let Some(i) = window.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&buf[..i]);
            from.consume(i + 1);
            if !write_line(to, tag, &line) {
                return;
            }
            line.clear();
        } else if room == 0 {
            let cut = MAX_LINE_BYTES - unfinished_char(&line);
            if !write_line(to, tag, &line[..cut]) {
                return;
            }
            line.drain(..cut);
        } else {
            let n = buf.len().min(room);
            line.extend_from_slice(&buf[..n]);
            from.consume(n);
        }
    }
    if !line.is_empty() {
        write_line(to, tag, &line);
    }
}

/// Writes `tag`, `text` and a newline in one write; `false` once `to` is gone.
fn write_line(to: &mut impl Write, tag: &str, text: &[u8]) -> bool {
    let mut whole = Vec::with_capacity(tag.len() + text.len() + 1);
    whole.extend_from_slice(tag.as_bytes());
    whole.extend_from_slice(text);
    whole.push(b'\n');
    to.write_all(&whole).and_then(|()| to.flush()).is_ok()
}

/// How many bytes at the end of `text` begin a UTF-8 character that does not end there (0 to
/// 3).
fn unfinished_char(text: &[u8]) -> usize {
    for back in 1..=3.min(text.len()) {
        let b = text[text.len() - back];
        if b & 0xC0 != 0x80 {
            // The character's first byte: how long the character is.
            let len = match b {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if len > back { back } else { 0 };
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pumped(input: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        pump(input, "[7] ", &mut out);
        assert_eq!(out.last(), Some(&b'\n'));
        out[..out.len() - 1]
            .split(|&b| b == b'\n')
            .map(|l| {
                assert!(l.starts_with(b"[7] "), "{:?}", String::from_utf8_lossy(l));
                l[4..].to_vec()
            })
            .collect()
    }

    #[test]
    fn lines_pass_whole_and_long_ones_in_pieces() {
        assert_eq!(pumped(b"a\n\nbc"), [&b"a"[..], b"", b"bc"]);
        // Exactly one piece, then its newline: no empty line after it.
        let full = vec![b'x'; MAX_LINE_BYTES];
        let mut input = full.clone();
        input.extend_from_slice(b"\nend\n");
        assert_eq!(pumped(&input), [full.clone(), b"end".to_vec()]);
        // 2.5 pieces without a newline: three lines, nothing lost.
        let long = vec![b'y'; MAX_LINE_BYTES * 5 / 2];
        let lines = pumped(&long);
        assert_eq!(
            lines.iter().map(Vec::len).collect::<Vec<_>>(),
            [MAX_LINE_BYTES, MAX_LINE_BYTES, MAX_LINE_BYTES / 2]
        );
    }

    #[test]
    fn a_piece_ends_on_a_character_boundary() {
        // "é" is 2 bytes; with one ASCII byte first, a piece boundary falls inside one.
        let mut text = String::from("a");
        while text.len() < MAX_LINE_BYTES * 2 {
            text.push('é');
        }
        let lines = pumped(text.as_bytes());
        assert_eq!(lines[0].len(), MAX_LINE_BYTES - 1);
        let joined: Vec<u8> = lines.concat();
        assert_eq!(joined, text.as_bytes());
        for l in &lines {
            assert!(std::str::from_utf8(l).is_ok());
        }
        assert_eq!(unfinished_char(b"ab"), 0);
        assert_eq!(unfinished_char("aé".as_bytes()), 0);
        assert_eq!(unfinished_char(&"a€".as_bytes()[..3]), 2);
        assert_eq!(unfinished_char(&[0xFF, 0x80, 0x80, 0x80]), 0);
    }
}
