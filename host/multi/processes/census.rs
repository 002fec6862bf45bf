//! After a collective outside the links failed (NCCL's all-reduce did not finish, or reported
//! an error), which rank is to blame: every rank that saw the failure asks rank 0, which looks
//! at each rank's connection for a bounded time — a rank whose connection closed left the job,
//! a rank that does not answer (or answers with something else) is alive but did not reach the
//! collective — and tells every rank that asked. A rank whose rank 0 is gone or silent blames
//! rank 0. Nothing in it waits past its bound.

use super::Links;
use super::deadline::{Until, after, timed_out};
use super::wire;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A rank's word that it, too, saw the collective fail.
const HERE: &[u8] = b"gridsync census: here";
/// The start of rank 0's verdict.
const VERDICT: &[u8] = b"gridsync census: verdict";

/// Which ranks were lost, as rank 0 saw them (or, for a rank that could not ask rank 0, rank 0
/// itself).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Ranks whose connection closed: they exited, failed or were killed.
    pub left: Vec<u32>,
    /// Ranks alive (their connection open) that did not come to the census in time: stuck, or
    /// elsewhere in the program — they never reached the collective.
    pub elsewhere: Vec<u32>,
}

impl Census {
    /// The first rank to blame, if any.
    pub fn blamed(&self) -> Option<u32> {
        self.left.first().or(self.elsewhere.first()).copied()
    }

    /// `rank 1 left the job …; rank 3 …`, or `None` where every rank was there.
    pub fn describe(&self) -> Option<String> {
        let list = |v: &[u32]| {
            let named: Vec<String> = v.iter().take(8).map(u32::to_string).collect();
            let more = if v.len() > 8 { ", …" } else { "" };
            format!("{}{more}", named.join(", "))
        };
        let mut parts = Vec::new();
        if !self.left.is_empty() {
            parts.push(format!(
                "rank(s) {} left the job (exited, failed or were killed)",
                list(&self.left)
            ));
        }
        if !self.elsewhere.is_empty() {
            parts.push(format!(
                "rank(s) {} did not reach the collective (alive, but stuck or elsewhere)",
                list(&self.elsewhere)
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The verdict's bytes, as rank 0 sends them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = VERDICT.to_vec();
        for v in [&self.left, &self.elsewhere] {
            b.extend((v.len() as u32).to_le_bytes());
            for r in v {
                b.extend(r.to_le_bytes());
            }
        }
        b
    }

    /// A verdict from its bytes, or `None` for anything else (what comes over the network is
    /// untrusted: every count is bounded by what the bytes hold).
    pub fn from_bytes(b: &[u8]) -> Option<Census> {
        let mut rest = b.strip_prefix(VERDICT)?;
        let mut take = || -> Option<u32> {
            let (head, tail) = rest.split_first_chunk::<4>()?;
            rest = tail;
            Some(u32::from_le_bytes(*head))
        };
        let mut lists = [Vec::new(), Vec::new()];
        for l in &mut lists {
            let n = take()?;
            for _ in 0..n.min(super::MAX_WORLD) {
                l.push(take()?);
            }
        }
        let [left, elsewhere] = lists;
        Some(Census { left, elsewhere })
    }
}

impl Links {
    /// Asks which rank was lost after a collective outside the links failed on this rank;
    /// every rank that saw it fail should ask. Rank 0 waits at most `bound` for the others'
    /// word; the others at most `bound` and 2 s more for rank 0's verdict.
    ///
    /// It never fails: what cannot be learned in time is itself the answer (a rank 0 that does
    /// not answer is blamed). Afterwards the links are in no state for further exchanges.
    pub fn census(&self, bound: Duration) -> Census {
        let mut streams = self.lock();
        if self.rank().rank != 0 {
            let Some(s) = streams.first_mut().and_then(Option::as_mut) else {
                return Census::default();
            };
            let mut io = Until {
                stream: s,
                until: after(bound),
            };
            let zero = || Census {
                elsewhere: vec![0],
                ..Census::default()
            };
            let gone = || Census {
                left: vec![0],
                ..Census::default()
            };
            match io.write_all(&wire::message(wire::DATA, HERE)) {
                Ok(()) => {}
                // Rank 0 alive but not reading (its buffers full): stuck elsewhere, not gone.
                Err(e) if timed_out(&e) => return zero(),
                Err(_) => return gone(),
            }
            io.until = after(bound.saturating_add(Duration::from_secs(2)));
            // Messages rank 0 sent before it saw the failure (a broadcast) are passed over.
            loop {
                match wire::read_message(&mut io, super::MAX_MESSAGE) {
                    Ok(m) => match Census::from_bytes(&m.body) {
                        Some(c) => return c,
                        None => continue,
                    },
                    Err(e) if timed_out(&e) => return zero(),
                    Err(_) => return gone(),
                }
            }
        }
        // Every rank at once, not one after another: a silent rank must not use up the bound
        // of those after it.
        let heard = listen_all(&mut streams, after(bound));
        let mut census = Census::default();
        let mut asked = Vec::new();
        for (r, h) in heard.into_iter().enumerate() {
            match h {
                Heard::Here => asked.push(r),
                Heard::Gone => census.left.push(r as u32),
                Heard::Silent => census.elsewhere.push(r as u32),
                Heard::Nobody => {}
            }
        }
        let verdict = wire::message(wire::DATA, &census.to_bytes());
        for r in asked {
            if let Some(s) = &streams[r] {
                let _ = Until {
                    stream: s,
                    until: after(Duration::from_secs(1)),
                }
                .write_all(&verdict);
            }
        }
        census
    }
}

/// What rank 0 heard from one rank in a census.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Heard {
    /// No stream (rank 0 itself).
    Nobody,
    /// Its word that it saw the collective fail.
    Here,
    /// Its connection closed.
    Gone,
    /// Nothing (or only other messages, of another step) before the deadline.
    Silent,
}

/// Reads every stream at once until `until`: each rank's messages are taken as they come,
/// other messages (of a step it was at before) passed over, until its census word, its
/// connection's end, or the deadline.
fn listen_all(streams: &mut [Option<TcpStream>], until: Instant) -> Vec<Heard> {
    let mut heard: Vec<Heard> = streams
        .iter()
        .map(|s| {
            if s.is_some() {
                Heard::Silent
            } else {
                Heard::Nobody
            }
        })
        .collect();
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); streams.len()];
    for s in streams.iter().flatten() {
        let _ = s.set_nonblocking(true);
    }
    let mut chunk = [0u8; 4096];
    loop {
        let mut waiting = false;
        for (r, s) in streams.iter_mut().enumerate() {
            let Some(s) = s else { continue };
            if heard[r] != Heard::Silent {
                continue;
            }
            match s.read(&mut chunk) {
                Ok(0) => heard[r] = Heard::Gone,
                Ok(n) => {
                    bufs[r].extend_from_slice(&chunk[..n]);
                    heard[r] = take_messages(&mut bufs[r]);
                }
                Err(e) if timed_out(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => heard[r] = Heard::Gone,
            }
            waiting |= heard[r] == Heard::Silent;
        }
        if !waiting || Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for s in streams.iter().flatten() {
        let _ = s.set_nonblocking(false);
    }
    heard
}

/// The whole messages at the front of `buf`, taken off it: [`Heard::Here`] at the census word,
/// [`Heard::Silent`] while none has come (or only others, or bytes that are no message: a rank
/// out of step, alive).
fn take_messages(buf: &mut Vec<u8>) -> Heard {
    loop {
        let mut r = buf.as_slice();
        match wire::read_message(&mut r, super::MAX_MESSAGE) {
            Ok(m) => {
                let used = buf.len() - r.len();
                buf.drain(..used);
                if m.code == wire::DATA && m.body == HERE {
                    return Heard::Here;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Heard::Silent,
            Err(_) => {
                buf.clear();
                return Heard::Silent;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_reads_back_and_anything_else_is_refused() {
        let c = Census {
            left: vec![1, 7],
            elsewhere: vec![3],
        };
        assert_eq!(Census::from_bytes(&c.to_bytes()), Some(c.clone()));
        assert_eq!(c.blamed(), Some(1));
        let d = c.describe().unwrap();
        assert!(
            d.contains("rank(s) 1, 7 left") && d.contains("rank(s) 3 did not"),
            "{d}"
        );
        assert_eq!(Census::default().describe(), None);
        let e = c.to_bytes();
        for cut in 0..e.len() {
            let _ = Census::from_bytes(&e[..cut]);
        }
        assert_eq!(Census::from_bytes(b"gridsync census: here"), None);
        let mut huge = VERDICT.to_vec();
        huge.extend(u32::MAX.to_le_bytes());
        assert_eq!(Census::from_bytes(&huge), None);
    }
}
