//! The connections of a job's ranks after the rendezvous, and the exchanges over them:
//! broadcast, the host-side all-reduce, the barrier. Every message has an absolute deadline.

use super::deadline::{Until, after, timed_out};
use super::rendezvous::{HELLO_TIMEOUT, Refusals, check_id, join, serve};
use super::{ID_BYTES, MAX_MESSAGE, Rank, wire};
use crate::multi::collective::{Blame, Op, Partial, Transport, host_all_reduce};
use crate::runtime::error::{Error, Result};
use std::io::Write;
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

/// The connections of a job's ranks after the rendezvous: rank 0 holds one to every other
/// rank, the others one to rank 0. They carry the broadcasts, the host-side combine (which
/// stands in for NCCL where there is none: on the simulator, or without the library) and the
/// barriers that line the ranks up; every message is bounded by [`Links::timeout`] from its
/// start (an absolute deadline, which a peer sending a byte at a time cannot stretch), so a
/// rank that dies or stops answering is an error on the others, not a hang.
#[derive(Debug)]
pub struct Links {
    me: Rank,
    /// Rank 0: the stream of rank `r` at `r` (none at 0); the others: rank 0's at 0.
    streams: Mutex<Vec<Option<TcpStream>>>,
    timeout: Duration,
    refusals: Refusals,
}

impl Links {
    /// The rendezvous ([`super::rendezvous`]): rank 0 listens at `me.address` (or `me.bind`)
    /// and, once every other rank has proven itself and said hello, answers them all; the
    /// others connect (retrying until the deadline), prove themselves and check rank 0's proof.
    /// Everything is bounded by `timeout`, which then bounds each later message; each hello
    /// by [`HELLO_TIMEOUT`].
    ///
    /// # Errors
    /// As [`super::rendezvous()`].
    pub fn open(me: &Rank, timeout: Duration) -> Result<Links> {
        Links::open_with(me, timeout, HELLO_TIMEOUT)
    }

    /// [`Links::open`] with another bound on each connection's hello at rank 0 (and on a
    /// rank's wait for rank 0's challenge) than [`HELLO_TIMEOUT`].
    ///
    /// # Errors
    /// As [`super::rendezvous()`].
    pub fn open_with(me: &Rank, timeout: Duration, hello_timeout: Duration) -> Result<Links> {
        // A `Rank` made by hand skips discovery's checks.
        if me.world == 0 || me.world > super::MAX_WORLD || me.rank >= me.world {
            return Err(Error::InvalidInput(format!(
                "rank {} of a world of {}: a world of 1 to {} ranks, each below it",
                me.rank,
                me.world,
                super::MAX_WORLD
            )));
        }
        let deadline = after(timeout);
        let (streams, refusals) = match (me.world, me.rank) {
            (1, _) => (vec![None], Refusals::default()),
            (_, 0) => serve(me, deadline, hello_timeout)?,
            _ => (
                vec![Some(join(me, deadline, hello_timeout)?)],
                Refusals::default(),
            ),
        };
        Ok(Links {
            me: me.clone(),
            streams: Mutex::new(streams),
            timeout: timeout.max(Duration::from_millis(1)),
            refusals,
        })
    }

    /// This rank.
    pub fn rank(&self) -> &Rank {
        &self.me
    }

    /// The bound on each message.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The connections rank 0 refused at the rendezvous (strangers, other jobs, twins), with
    /// the first reasons; none on the other ranks.
    pub fn refusals(&self) -> &Refusals {
        &self.refusals
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<TcpStream>>> {
        // A panic while holding the lock left the streams as they were: still usable, and any
        // half-sent message shows as a framing error on the other side.
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Rank 0's `bytes` (rank 0 passes `Some`, the others `None`), on every rank.
    ///
    /// # Errors
    /// A rank gone or silent past the timeout; rank 0 without bytes.
    pub fn broadcast(&self, bytes: Option<&[u8]>) -> Result<Vec<u8>> {
        let mut streams = self.lock();
        if self.me.rank == 0 {
            let bytes = bytes.ok_or_else(|| {
                Error::InvalidInput("rank 0 must bring the bytes of a broadcast".into())
            })?;
            for (r, s) in streams.iter_mut().enumerate() {
                if let Some(s) = s {
                    self.send(s, r, bytes)?;
                }
            }
            Ok(bytes.to_vec())
        } else {
            self.receive(stream_to_0(&mut streams)?, 0)
        }
    }

    /// Rank 0's id of [`ID_BYTES`] (rank 0 passes `Some`, the others `None`), on every rank.
    ///
    /// # Errors
    /// As [`Links::broadcast`]; an id of another length, from rank 0 or given to it.
    pub fn broadcast_id(&self, id: Option<&[u8]>) -> Result<Vec<u8>> {
        check_id(&self.me, id)?;
        let got = self.broadcast(id)?;
        if got.len() != ID_BYTES {
            return Err(Error::Rank {
                rank: Some(0),
                why: format!(
                    "rendezvous: an id of {} bytes from rank 0 (expected {ID_BYTES})",
                    got.len()
                ),
            });
        }
        Ok(got)
    }

    /// Every rank's `mine` (all of one length), folded by rank 0 in rank order —
    /// `fold(acc, next)` from rank 0's bytes on — and the result handed back to every rank.
    ///
    /// # Errors
    /// A rank gone or silent past the timeout; bytes of another length from some rank (an
    /// error on every rank).
    pub fn all_reduce_bytes(
        &self,
        mine: &[u8],
        fold: &dyn Fn(&mut [u8], &[u8]),
    ) -> Result<Vec<u8>> {
        let mut streams = self.lock();
        if self.me.rank != 0 {
            let s = stream_to_0(&mut streams)?;
            self.send(s, 0, mine)?;
            return self.receive(s, 0);
        }
        let mut acc = mine.to_vec();
        let mut mismatch = None;
        for (r, s) in streams.iter_mut().enumerate() {
            let Some(s) = s else { continue };
            let theirs = self.receive(s, r)?;
            if theirs.len() != acc.len() {
                mismatch = Some(format!(
                    "rank {r} brought {} bytes to a combine of {} (the ranks disagree on the \
                     operation or the input)",
                    theirs.len(),
                    acc.len()
                ));
            } else if mismatch.is_none() {
                fold(&mut acc, &theirs);
            }
        }
        if let Some(why) = mismatch {
            // Every other rank learns why from rank 0's refusal.
            for s in streams.iter().flatten() {
                let _ = self
                    .until(s)
                    .write_all(&wire::message(wire::REFUSED, why.as_bytes()));
            }
            return Err(Error::InvalidInput(why));
        }
        for (r, s) in streams.iter_mut().enumerate() {
            if let Some(s) = s {
                self.send(s, r, &acc)?;
            }
        }
        Ok(acc)
    }

    /// Every rank's `mine` (all of one length) combined element by element with `op`, in rank
    /// order, on every rank: the host-side stand-in for NCCL's all-reduce (min and max skip a
    /// NaN, as the kernels do; [`host_all_reduce`] over these links).
    ///
    /// # Errors
    /// As [`Links::all_reduce_bytes`].
    pub fn all_reduce<T: Partial>(&self, mine: &[T], op: Op) -> Result<Vec<T>> {
        host_all_reduce(self, mine, op)
    }

    /// Waits until every rank has come here (a combine of nothing).
    ///
    /// # Errors
    /// As [`Links::all_reduce_bytes`].
    pub fn barrier(&self) -> Result<()> {
        self.all_reduce_bytes(&[], &|_, _| {}).map(drop)
    }

    /// `s` under a deadline of [`Links::timeout`] from now.
    pub(super) fn until<'a>(&self, s: &'a TcpStream) -> Until<'a> {
        Until {
            stream: s,
            until: after(self.timeout),
        }
    }

    fn send(&self, s: &mut TcpStream, to: usize, body: &[u8]) -> Result<()> {
        if body.len() > MAX_MESSAGE {
            return Err(Error::InvalidInput(format!(
                "a message of {} bytes between ranks (at most {MAX_MESSAGE})",
                body.len()
            )));
        }
        self.until(s)
            .write_all(&wire::message(wire::DATA, body))
            .map_err(|e| self.lost(to, "sending to", &e))
    }

    fn receive(&self, s: &mut TcpStream, from: usize) -> Result<Vec<u8>> {
        let m = wire::read_message(&mut self.until(s), MAX_MESSAGE)
            .map_err(|e| self.lost(from, "reading from", &e))?;
        if m.code == wire::REFUSED {
            // The ranks disagree (rank 0 says on what): a matter of the input, not a lost rank.
            return Err(Error::InvalidInput(format!(
                "rank {from} refused the exchange: {}",
                String::from_utf8_lossy(&m.body)
            )));
        }
        if m.code != wire::DATA {
            return Err(Error::Rank {
                rank: Some(from as u32),
                why: format!(
                    "rank {}: rank {from} sent a message out of turn",
                    self.me.rank
                ),
            });
        }
        Ok(m.body)
    }

    fn lost(&self, other: usize, doing: &str, e: &std::io::Error) -> Error {
        let why = if timed_out(e) {
            format!(
                "no whole message within {:.1} s (it is stuck, or far slower)",
                self.timeout.as_secs_f64()
            )
        } else {
            match e.kind() {
                std::io::ErrorKind::UnexpectedEof
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe => {
                    "it left the job (failed or was stopped)".into()
                }
                _ => e.to_string(),
            }
        };
        Error::Rank {
            rank: Some(other as u32),
            why: format!("rank {} {doing} rank {other}: {why}", self.me.rank),
        }
    }
}

/// The links as the collective uses them: the NCCL id's broadcast, the host combine, and the
/// census that names a lost rank after a failed collective.
impl Transport for Links {
    fn rank_and_world(&self) -> (u32, u32) {
        (self.me.rank, self.me.world)
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn broadcast_id(&self, id: Option<&[u8]>) -> Result<Vec<u8>> {
        Links::broadcast_id(self, id)
    }

    fn all_reduce_bytes(&self, mine: &[u8], fold: &dyn Fn(&mut [u8], &[u8])) -> Result<Vec<u8>> {
        Links::all_reduce_bytes(self, mine, fold)
    }

    fn blame(&self, bound: Duration) -> Option<Blame> {
        let census = self.census(bound);
        census.describe().map(|why| Blame {
            rank: census.blamed(),
            why,
        })
    }
}

fn stream_to_0(streams: &mut [Option<TcpStream>]) -> Result<&mut TcpStream> {
    streams
        .first_mut()
        .and_then(Option::as_mut)
        .ok_or_else(|| Error::InvalidInput("a world of one rank has no one to talk to".into()))
}
