//! One process per GPU: who this process is in a launched job (its rank, the world size, its
//! GPU), found from the launcher's environment, and the rendezvous that hands rank 0's NCCL
//! unique id to every other rank over TCP.
//!
//! **Discovery**, in this order: explicit values ([`RankOptions`]); the torchrun convention
//! (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`); Slurm (`SLURM_PROCID`,
//! `SLURM_NTASKS`, `SLURM_LOCALID`, with the rendezvous address from `MASTER_ADDR`/
//! `MASTER_PORT`); Open MPI (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`,
//! `OMPI_COMM_WORLD_LOCAL_RANK`, the same address). Missing or inconsistent values are errors
//! that name the variable.
//!
//! The rendezvous address: `--rendezvous`, else `GRIDSYNC_RENDEZVOUS`, else
//! `MASTER_ADDR:MASTER_PORT` — except under torchrun, whose agent keeps a store of its own at
//! `MASTER_PORT` (it sets `TORCHELASTIC_USE_AGENT_STORE=True`), where it is `MASTER_PORT + 1`.
//!
//! **Rendezvous** ([`rendezvous`]): rank 0 listens at the address and, once every other rank has
//! said hello (its rank, the world size and the job's name), sends each the id. Other ranks
//! connect with retries. Everything is bounded by one timeout: a rank that never arrives is an
//! error on every rank; a wrong world size, a rank twice, or another job's rank is refused, not
//! mixed in; an address already in use is an error on rank 0.

use super::combine::{Op, Partial};
use crate::runtime::error::{Error, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The default bound on the whole rendezvous.
pub const DEFAULT_RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);
/// The most ranks a job may have.
pub const MAX_WORLD: u32 = 1 << 16;
/// Bytes of the id rank 0 hands out (NCCL's `ncclUniqueId` is 128).
pub const ID_BYTES: usize = 128;

/// This process's place in a job.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rank {
    /// Its rank, `0..world`.
    pub rank: u32,
    /// Ranks in the job.
    pub world: u32,
    /// Its rank among the ranks of its node: the GPU it uses unless told otherwise.
    pub local_rank: u32,
    /// Where rank 0 listens (host and port).
    pub address: String,
    /// The job's name: ranks of different jobs on one address refuse each other.
    pub job: String,
    /// Which convention gave the values (`options`, `torchrun`, `slurm`, `openmpi`).
    pub source: &'static str,
}

/// Values given explicitly (command-line options), which win over the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankOptions {
    /// `--rank`.
    pub rank: Option<u32>,
    /// `--world-size`.
    pub world: Option<u32>,
    /// `--local-rank`.
    pub local_rank: Option<u32>,
    /// `--rendezvous HOST:PORT`.
    pub address: Option<String>,
}

/// Finds this process's rank from `opts` and the environment `env` (a lookup, so that tests can
/// pass their own; [`discover`] uses the process's).
///
/// # Errors
/// [`Error::InvalidInput`] naming what is missing or inconsistent: no convention's variables,
/// a value that is not a number, a rank not below the world size, a world of 0 or past
/// [`MAX_WORLD`], no rendezvous address.
pub fn discover_from(opts: &RankOptions, env: impl Fn(&str) -> Option<String>) -> Result<Rank> {
    let num = |name: &str| -> Result<Option<u32>> {
        match env(name) {
            None => Ok(None),
            Some(v) => v.trim().parse::<u32>().map(Some).map_err(|_| {
                Error::InvalidInput(format!("{name}={v:?} is not a non-negative number"))
            }),
        }
    };
    // (source, rank variable, world variable, local-rank variable)
    let conventions: [(&'static str, &str, &str, &str); 3] = [
        ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
        ("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
        (
            "openmpi",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
        ),
    ];
    let mut found = None;
    for (source, r, w, l) in conventions {
        if env(r).is_some() || env(w).is_some() {
            let (rank, world) = (num(r)?, num(w)?);
            let (Some(rank), Some(world)) = (rank, world) else {
                return Err(Error::InvalidInput(format!(
                    "{source}: {r} and {w} must both be set (found only {})",
                    if rank.is_some() { r } else { w }
                )));
            };
            found = Some((source, rank, world, num(l)?));
            break;
        }
    }
    let source = match (&found, opts.rank.is_some() || opts.world.is_some()) {
        (_, true) => "options",
        (Some((s, ..)), false) => s,
        (None, false) => {
            return Err(Error::InvalidInput(
                "no rank found: give --rank and --world-size, or run under a launcher that sets \
                 RANK/WORLD_SIZE (torchrun, gridsync launch), SLURM_PROCID/SLURM_NTASKS (srun) \
                 or OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (mpirun)"
                    .into(),
            ));
        }
    };
    let rank = opts
        .rank
        .or(found.map(|f| f.1))
        .ok_or_else(|| Error::InvalidInput("--world-size was given without --rank".into()))?;
    let world = opts
        .world
        .or(found.map(|f| f.2))
        .ok_or_else(|| Error::InvalidInput("--rank was given without --world-size".into()))?;
    if world == 0 || world > MAX_WORLD {
        return Err(Error::InvalidInput(format!(
            "a world of {world} ranks: 1 to {MAX_WORLD}"
        )));
    }
    if rank >= world {
        return Err(Error::InvalidInput(format!(
            "rank {rank} in a world of {world}: a rank is below the world size"
        )));
    }
    let local_rank = opts
        .local_rank
        .or(found.and_then(|f| f.3))
        .unwrap_or(if world == 1 { 0 } else { rank });
    let address = match opts.address.clone().or_else(|| env("GRIDSYNC_RENDEZVOUS")) {
        Some(a) => a,
        None => match (env("MASTER_ADDR"), env("MASTER_PORT")) {
            // torchrun's agent serves its own store at MASTER_PORT (and says so): the next port.
            (Some(host), Some(port))
                if env("TORCHELASTIC_USE_AGENT_STORE").as_deref() == Some("True") =>
            {
                let p: u16 = port.trim().parse().map_err(|_| {
                    Error::InvalidInput(format!("MASTER_PORT={port:?} is not a port"))
                })?;
                let next = p.checked_add(1).ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "MASTER_PORT={p}: under torchrun gridsync listens at MASTER_PORT + 1; \
                         set GRIDSYNC_RENDEZVOUS=HOST:PORT"
                    ))
                })?;
                format!("{host}:{next}")
            }
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (None, None) if world == 1 => "127.0.0.1:0".into(),
            (None, None) => {
                return Err(Error::InvalidInput(
                    "no rendezvous address: set MASTER_ADDR and MASTER_PORT (rank 0's host and a \
                     free port) or give --rendezvous HOST:PORT"
                        .into(),
                ));
            }
            (Some(_), None) => {
                return Err(Error::InvalidInput(
                    "MASTER_ADDR without MASTER_PORT".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(Error::InvalidInput(
                    "MASTER_PORT without MASTER_ADDR".into(),
                ));
            }
        },
    };
    let job = [
        "GRIDSYNC_JOB",
        "TORCHELASTIC_RUN_ID",
        "SLURM_JOB_ID",
        "OMPI_MCA_ess_base_jobid",
    ]
    .iter()
    .find_map(|v| env(v))
    .unwrap_or_default();
    Ok(Rank {
        rank,
        world,
        local_rank,
        address,
        job,
        source,
    })
}

/// [`discover_from`] the process's environment.
///
/// # Errors
/// As [`discover_from`].
pub fn discover(opts: &RankOptions) -> Result<Rank> {
    discover_from(opts, |name| std::env::var(name).ok())
}

/// The most bytes of a job name or a refusal's reason.
const MAX_TEXT: usize = 1024;
/// The most bytes one message between ranks may carry (a combine's partials: 65 536 bins of 8
/// bytes are 512 KiB).
pub const MAX_MESSAGE: usize = 16 << 20;

/// The messages between ranks, as bytes: what a rank reads from the network is untrusted, so
/// every length is bounded before anything is allocated, and any bytes are a message or an
/// error, never a panic.
///
/// A **hello** (a rank to rank 0): `gsrv`, the rank and the world size (little-endian `u32`),
/// the job's name (a `u32` length ≤ 1024, then UTF-8). Every later **message** (either way):
/// `gsrv`, a code ([`wire::OK`], [`wire::REFUSED`], [`wire::DATA`]), a `u32` length, the body.
pub mod wire {
    use super::{MAX_MESSAGE, MAX_TEXT};
    use std::io::{self, Read};

    /// The first four bytes of every message.
    pub const MAGIC: [u8; 4] = *b"gsrv";
    /// Rank 0 took the hello; an empty body.
    pub const OK: u8 = 0;
    /// Rank 0 refused the hello; the reason follows (at most 1024 bytes).
    pub const REFUSED: u8 = 1;
    /// Data: a broadcast, or a rank's partials, or a combined result.
    pub const DATA: u8 = 2;

    /// A rank's first words to rank 0.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Hello {
        /// Its rank.
        pub rank: u32,
        /// The world size it was told.
        pub world: u32,
        /// Its job's name.
        pub job: String,
    }

    /// One message after the hello.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Message {
        /// [`OK`], [`REFUSED`] or [`DATA`].
        pub code: u8,
        /// Its body.
        pub body: Vec<u8>,
    }

    /// A job's name as a hello carries it: cut to at most 1024 bytes, on a character boundary.
    pub fn job_key(job: &str) -> &str {
        let mut end = job.len().min(MAX_TEXT);
        while !job.is_char_boundary(end) {
            end -= 1;
        }
        &job[..end]
    }

    /// A hello's bytes (the job's name cut by [`job_key`]).
    pub fn hello(h: &Hello) -> Vec<u8> {
        let job = job_key(&h.job).as_bytes();
        let mut m = MAGIC.to_vec();
        m.extend(h.rank.to_le_bytes());
        m.extend(h.world.to_le_bytes());
        m.extend((job.len() as u32).to_le_bytes());
        m.extend(job);
        m
    }

    /// A message's bytes.
    pub fn message(code: u8, body: &[u8]) -> Vec<u8> {
        let mut m = MAGIC.to_vec();
        m.push(code);
        m.extend((body.len() as u32).to_le_bytes());
        m.extend(body);
        m
    }

    fn bad(what: &str) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, what.to_string())
    }

    fn read_u32(r: &mut impl Read) -> io::Result<u32> {
        let mut b = [0; 4];
        r.read_exact(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn read_magic(r: &mut impl Read) -> io::Result<()> {
        let mut m = [0; 4];
        r.read_exact(&mut m)?;
        if m != MAGIC {
            return Err(bad("not a gridsync rank (no gsrv)"));
        }
        Ok(())
    }

    /// `n` bytes, refused past `max` before anything is allocated.
    fn read_body(r: &mut impl Read, n: u32, max: usize) -> io::Result<Vec<u8>> {
        let n = n as usize;
        if n > max {
            return Err(bad(&format!("a body of {n} bytes (at most {max})")));
        }
        let mut b = vec![0; n];
        r.read_exact(&mut b)?;
        Ok(b)
    }

    /// Reads a hello.
    ///
    /// # Errors
    /// The reader's error, or [`io::ErrorKind::InvalidData`] for a wrong magic, a name longer
    /// than 1024 bytes or not UTF-8.
    pub fn read_hello(r: &mut impl Read) -> io::Result<Hello> {
        read_magic(r)?;
        let rank = read_u32(r)?;
        let world = read_u32(r)?;
        let n = read_u32(r)?;
        let job = String::from_utf8(read_body(r, n, MAX_TEXT)?)
            .map_err(|_| bad("a job name that is not UTF-8"))?;
        Ok(Hello { rank, world, job })
    }

    /// Reads a message whose body is at most `max` bytes (a refusal's at most 1024).
    ///
    /// # Errors
    /// The reader's error, or [`io::ErrorKind::InvalidData`] for a wrong magic, an unknown code
    /// or a body too long.
    pub fn read_message(r: &mut impl Read, max: usize) -> io::Result<Message> {
        read_magic(r)?;
        let mut code = [0; 1];
        r.read_exact(&mut code)?;
        let max = match code[0] {
            OK => 0,
            REFUSED => MAX_TEXT,
            DATA => max.min(MAX_MESSAGE),
            _ => return Err(bad("an unknown message code")),
        };
        let n = read_u32(r)?;
        let body = read_body(r, n, max)?;
        Ok(Message {
            code: code[0],
            body,
        })
    }
}

/// Hands `id` (rank 0's) to every rank of `me`'s job, or gets it (the others), within
/// `timeout`: [`Links::open`], then [`Links::broadcast`]. Rank 0 passes `Some(id)`, the others
/// `None`.
///
/// # Errors
/// [`Error::InvalidInput`] for a bad address or an id of the wrong length; an error naming what
/// went wrong — the address in use, a rank that never arrived (after `timeout`, on every rank),
/// a refused hello (another job, a wrong world size, a rank twice) — on the ranks it concerns.
pub fn rendezvous(me: &Rank, id: Option<&[u8]>, timeout: Duration) -> Result<Vec<u8>> {
    check_id(me, id)?;
    Links::open(me, timeout)?.broadcast_id(id)
}

/// Rank 0 must bring an id of [`ID_BYTES`]; the other ranks bring none.
fn check_id(me: &Rank, id: Option<&[u8]>) -> Result<()> {
    match (me.rank, id) {
        (0, Some(id)) if id.len() == ID_BYTES => Ok(()),
        (0, _) => Err(Error::InvalidInput(format!(
            "rank 0 must bring an id of {ID_BYTES} bytes"
        ))),
        _ => Ok(()),
    }
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::Unsupported(format!("rendezvous: {what}: {e}"))
}

/// Every address `address` resolves to (at least one).
fn resolve(address: &str) -> Result<Vec<SocketAddr>> {
    let all: Vec<SocketAddr> = address
        .to_socket_addrs()
        .map_err(|e| Error::InvalidInput(format!("rendezvous address {address:?}: {e}")))?
        .collect();
    if all.is_empty() {
        return Err(Error::InvalidInput(format!(
            "rendezvous address {address:?}: no address"
        )));
    }
    Ok(all)
}

/// `now + timeout`, or a day from now for a timeout too large to add.
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(86_400)))
        .unwrap_or(now)
}

/// A stream read under a deadline: each read waits at most until it, and none starts after it
/// (a peer sending a byte at a time cannot stretch a bounded wait).
struct Until<'a> {
    stream: &'a mut TcpStream,
    until: Instant,
}

impl Read for Until<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf)
    }
}

/// The connections of a job's ranks after the rendezvous: rank 0 holds one to every other
/// rank, the others one to rank 0. They carry the broadcasts, the host-side combine (which
/// stands in for NCCL where there is none: on the simulator, or without the library) and the
/// barriers that line the ranks up; every read and write is bounded by [`Links::timeout`], so
/// a rank that dies or stops answering is an error on the others, not a hang.
#[derive(Debug)]
pub struct Links {
    me: Rank,
    /// Rank 0: the stream of rank `r` at `r` (none at 0); the others: rank 0's at 0.
    streams: Mutex<Vec<Option<TcpStream>>>,
    timeout: Duration,
}

impl Links {
    /// The rendezvous: rank 0 listens at `me.address` and, once every other rank has said
    /// hello, answers them all; the others connect (retrying until the deadline) and wait for
    /// the answer. Everything is bounded by `timeout`, which then bounds each later exchange.
    ///
    /// # Errors
    /// As [`rendezvous`].
    pub fn open(me: &Rank, timeout: Duration) -> Result<Links> {
        let deadline = deadline_after(timeout);
        let streams = match (me.world, me.rank) {
            (1, _) => vec![None],
            (_, 0) => serve(me, deadline)?,
            _ => vec![Some(join(me, deadline)?)],
        };
        let links = Links {
            me: me.clone(),
            streams: Mutex::new(streams),
            timeout,
        };
        links.set_timeout(timeout)?;
        Ok(links)
    }

    /// This rank.
    pub fn rank(&self) -> &Rank {
        &self.me
    }

    /// The bound on each exchange.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sets the bound on each later read and write.
    ///
    /// # Errors
    /// A socket error.
    pub fn set_timeout(&self, timeout: Duration) -> Result<()> {
        let t = Some(timeout.max(Duration::from_millis(1)));
        for s in self.lock().iter().flatten() {
            s.set_read_timeout(t)
                .map_err(io("set_read_timeout".into()))?;
            s.set_write_timeout(t)
                .map_err(io("set_write_timeout".into()))?;
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<TcpStream>>> {
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
            return Err(Error::Unsupported(format!(
                "rendezvous: an id of {} bytes from rank 0 (expected {ID_BYTES})",
                got.len()
            )));
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
            for s in streams.iter_mut().flatten() {
                let _ = s.write_all(&wire::message(wire::REFUSED, why.as_bytes()));
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
    /// NaN, as the kernels do).
    ///
    /// # Errors
    /// As [`Links::all_reduce_bytes`].
    pub fn all_reduce<T: Partial>(&self, mine: &[T], op: Op) -> Result<Vec<T>> {
        let size = size_of::<T>();
        let bytes: Vec<u8> = mine
            .iter()
            .flat_map(|v| {
                // SAFETY: `T: Plain` has no padding: all of its bytes are initialized.
                unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size) }
                    .iter()
                    .copied()
            })
            .collect();
        let value = |b: &[u8]| {
            // SAFETY: `b` holds `size` bytes, and every bit pattern is a valid `T` (`Plain`).
            unsafe { b.as_ptr().cast::<T>().read_unaligned() }
        };
        let fold = |acc: &mut [u8], next: &[u8]| {
            for (a, n) in acc.chunks_exact_mut(size).zip(next.chunks_exact(size)) {
                let v = T::combine(value(a), value(n), op);
                // SAFETY: as above: `Plain` values are their bytes.
                let b = unsafe { std::slice::from_raw_parts((&v as *const T).cast::<u8>(), size) };
                a.copy_from_slice(b);
            }
        };
        let out = self.all_reduce_bytes(&bytes, &fold)?;
        if out.len() != bytes.len() {
            return Err(Error::InvalidInput(format!(
                "a combine of {} bytes answered with {}",
                bytes.len(),
                out.len()
            )));
        }
        Ok(out.chunks_exact(size).map(value).collect())
    }

    /// Waits until every rank has come here (a combine of nothing).
    ///
    /// # Errors
    /// As [`Links::all_reduce_bytes`].
    pub fn barrier(&self) -> Result<()> {
        self.all_reduce_bytes(&[], &|_, _| {}).map(drop)
    }

    fn send(&self, s: &mut TcpStream, to: usize, body: &[u8]) -> Result<()> {
        if body.len() > MAX_MESSAGE {
            return Err(Error::InvalidInput(format!(
                "a message of {} bytes between ranks (at most {MAX_MESSAGE})",
                body.len()
            )));
        }
        s.write_all(&wire::message(wire::DATA, body))
            .map_err(|e| self.lost(to, "sending to", &e))
    }

    fn receive(&self, s: &mut TcpStream, from: usize) -> Result<Vec<u8>> {
        let m =
            wire::read_message(s, MAX_MESSAGE).map_err(|e| self.lost(from, "reading from", &e))?;
        if m.code == wire::REFUSED {
            return Err(Error::InvalidInput(format!(
                "rank {from} refused the exchange: {}",
                String::from_utf8_lossy(&m.body)
            )));
        }
        if m.code != wire::DATA {
            return Err(Error::Unsupported(format!(
                "rank {}: rank {from} sent a message out of turn",
                self.me.rank
            )));
        }
        Ok(m.body)
    }

    fn lost(&self, other: usize, doing: &str, e: &std::io::Error) -> Error {
        let why = match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => format!(
                "no answer within {:.1} s (it is stuck, or far slower)",
                self.timeout.as_secs_f64()
            ),
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::BrokenPipe => "it left the job (failed or was stopped)".into(),
            _ => e.to_string(),
        };
        Error::Unsupported(format!("rank {} {doing} rank {other}: {why}", self.me.rank))
    }
}

fn stream_to_0(streams: &mut [Option<TcpStream>]) -> Result<&mut TcpStream> {
    streams
        .first_mut()
        .and_then(Option::as_mut)
        .ok_or_else(|| Error::InvalidInput("a world of one rank has no one to talk to".into()))
}

/// Rank 0: listen, take every other rank's hello, then answer them all; the streams by rank.
fn serve(me: &Rank, deadline: Instant) -> Result<Vec<Option<TcpStream>>> {
    let at = resolve(&me.address)?[0];
    // Every interface, on the address's port: a host name may resolve here to a loopback
    // address (Debian's 127.0.1.1) that other nodes cannot reach.
    let any: SocketAddr = match at {
        SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, at.port()).into(),
        SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, at.port()).into(),
    };
    let listener = TcpListener::bind(any).map_err(|e| {
        Error::Unsupported(format!(
            "rendezvous: rank 0 cannot listen at {} ({e}): the port is in use (another job?) or \
             the address is not this host's",
            me.address
        ))
    })?;
    listener
        .set_nonblocking(true)
        .map_err(io("set_nonblocking".into()))?;
    let mut joined: Vec<Option<TcpStream>> = (0..me.world).map(|_| None).collect();
    let mut waiting = me.world - 1;
    while waiting > 0 {
        if Instant::now() >= deadline {
            let missing: Vec<String> = (1..me.world)
                .filter(|&r| joined[r as usize].is_none())
                .take(8)
                .map(|r| r.to_string())
                .collect();
            let why = format!(
                "rendezvous timed out: rank(s) {} of {} never arrived at {}",
                missing.join(", "),
                me.world,
                me.address
            );
            for s in joined.iter_mut().flatten() {
                let _ = s.write_all(&wire::message(wire::REFUSED, why.as_bytes()));
            }
            return Err(Error::Unsupported(why));
        }
        let mut stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            Err(e) => return Err(io("accept".into())(e)),
        };
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_nodelay(true);
        // A hello has 5 s, and never past the deadline.
        let until = deadline.min(Instant::now() + Duration::from_secs(5));
        let h = match wire::read_hello(&mut Until {
            stream: &mut stream,
            until,
        }) {
            Ok(h) => h,
            Err(e) => {
                // Told why if it listens; never trusted.
                let why = format!("not a gridsync hello ({e})");
                let _ = stream.write_all(&wire::message(wire::REFUSED, why.as_bytes()));
                continue;
            }
        };
        let refusal = if h.job != wire::job_key(&me.job) {
            Some(format!(
                "job {:?} is not rank 0's job {:?}: two jobs on one rendezvous address",
                h.job, me.job
            ))
        } else if h.world != me.world {
            Some(format!(
                "world size {} is not rank 0's {}: the ranks disagree",
                h.world, me.world
            ))
        } else if h.rank == 0 || h.rank >= me.world {
            Some(format!("rank {} is not one of 1..{}", h.rank, me.world))
        } else if joined[h.rank as usize].is_some() {
            Some(format!("rank {} arrived twice", h.rank))
        } else {
            None
        };
        match refusal {
            Some(why) => {
                let _ = stream.write_all(&wire::message(wire::REFUSED, why.as_bytes()));
            }
            None => {
                joined[h.rank as usize] = Some(stream);
                waiting -= 1;
            }
        }
    }
    for s in joined.iter_mut().flatten() {
        s.write_all(&wire::message(wire::OK, &[]))
            .map_err(io("answering a hello".into()))?;
    }
    Ok(joined)
}

/// Any other rank: connect (retrying until the deadline), say hello, wait for the answer.
fn join(me: &Rank, deadline: Instant) -> Result<TcpStream> {
    let addresses = resolve(&me.address)?;
    let mut stream = 'connected: loop {
        for at in &addresses {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Unsupported(format!(
                    "rendezvous timed out: rank {} could not reach rank 0 at {}",
                    me.rank, me.address
                )));
            }
            if let Ok(s) = TcpStream::connect_timeout(at, left.min(Duration::from_secs(1))) {
                // Before rank 0 listens, a connect to a local port can meet itself (TCP's
                // simultaneous open): that is not rank 0.
                let to_itself = matches!((s.local_addr(), s.peer_addr()), (Ok(a), Ok(b)) if a == b);
                if !to_itself {
                    break 'connected s;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = stream.set_nodelay(true);
    let hello = wire::Hello {
        rank: me.rank,
        world: me.world,
        job: me.job.clone(),
    };
    stream
        .write_all(&wire::hello(&hello))
        .map_err(io("sending the hello".into()))?;
    let left = deadline.saturating_duration_since(Instant::now());
    // Rank 0 answers at the latest at its own deadline; allow for the skew of starting later.
    let _ = stream.set_read_timeout(Some(left.saturating_add(Duration::from_secs(5))));
    let answer = wire::read_message(&mut stream, 0).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => Error::Unsupported(format!(
            "rendezvous: {} is not a gridsync rank 0 ({e})",
            me.address
        )),
        _ => Error::Unsupported(format!(
            "rendezvous: rank {} got no answer from rank 0 at {} ({e})",
            me.rank, me.address
        )),
    })?;
    match answer.code {
        wire::OK => Ok(stream),
        wire::REFUSED => Err(Error::Unsupported(format!(
            "rendezvous: rank 0 refused rank {}: {}",
            me.rank,
            String::from_utf8_lossy(&answer.body)
        ))),
        _ => Err(Error::Unsupported("rendezvous: a malformed answer".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn conventions_are_read_in_order_and_checked() {
        let none = RankOptions::default();
        let r = discover_from(
            &none,
            env(&[
                ("RANK", "1"),
                ("WORLD_SIZE", "2"),
                ("LOCAL_RANK", "1"),
                ("MASTER_ADDR", "127.0.0.1"),
                ("MASTER_PORT", "29500"),
                ("SLURM_PROCID", "5"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (r.rank, r.world, r.local_rank, r.source),
            (1, 2, 1, "torchrun")
        );
        assert_eq!(r.address, "127.0.0.1:29500");
        // Under torchrun's agent (which holds MASTER_PORT), the next port; an explicit address
        // (GRIDSYNC_RENDEZVOUS, then --rendezvous) wins.
        let torchrun = [
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "localhost"),
            ("MASTER_PORT", "46167"),
            ("TORCHELASTIC_USE_AGENT_STORE", "True"),
        ];
        assert_eq!(
            discover_from(&none, env(&torchrun)).unwrap().address,
            "localhost:46168"
        );
        let mut given = torchrun.to_vec();
        given.push(("GRIDSYNC_RENDEZVOUS", "node0:1234"));
        assert_eq!(
            discover_from(&none, env(&given)).unwrap().address,
            "node0:1234"
        );
        let opts = RankOptions {
            address: Some("node1:99".into()),
            ..RankOptions::default()
        };
        assert_eq!(
            discover_from(&opts, env(&given)).unwrap().address,
            "node1:99"
        );
        let mut last = torchrun.to_vec();
        last[3] = ("MASTER_PORT", "65535");
        assert!(discover_from(&none, env(&last)).is_err());
        let r = discover_from(
            &none,
            env(&[
                ("SLURM_PROCID", "3"),
                ("SLURM_NTASKS", "8"),
                ("SLURM_LOCALID", "1"),
                ("SLURM_JOB_ID", "77"),
                ("MASTER_ADDR", "n1"),
                ("MASTER_PORT", "1"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (r.rank, r.world, r.local_rank, r.source),
            (3, 8, 1, "slurm")
        );
        assert_eq!(r.job, "77");
        let r = discover_from(
            &none,
            env(&[
                ("OMPI_COMM_WORLD_RANK", "0"),
                ("OMPI_COMM_WORLD_SIZE", "4"),
                ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
                ("MASTER_ADDR", "h"),
                ("MASTER_PORT", "2"),
            ]),
        )
        .unwrap();
        assert_eq!((r.rank, r.world, r.source), (0, 4, "openmpi"));
        // Options win.
        let opts = RankOptions {
            rank: Some(2),
            world: Some(3),
            local_rank: Some(0),
            address: Some("127.0.0.1:9".into()),
        };
        let r = discover_from(&opts, env(&[("RANK", "1"), ("WORLD_SIZE", "2")])).unwrap();
        assert_eq!(
            (r.rank, r.world, r.local_rank, r.source),
            (2, 3, 0, "options")
        );
    }

    #[test]
    fn missing_and_inconsistent_values_are_errors() {
        let none = RankOptions::default();
        for pairs in [
            vec![],
            vec![("RANK", "1")],
            vec![("RANK", "x"), ("WORLD_SIZE", "2")],
            vec![
                ("RANK", "2"),
                ("WORLD_SIZE", "2"),
                ("MASTER_ADDR", "h"),
                ("MASTER_PORT", "1"),
            ],
            vec![("RANK", "0"), ("WORLD_SIZE", "0")],
            vec![("RANK", "0"), ("WORLD_SIZE", "2")],
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h")],
        ] {
            assert!(discover_from(&none, env(&pairs)).is_err(), "{pairs:?}");
        }
        let half = RankOptions {
            rank: Some(0),
            ..RankOptions::default()
        };
        assert!(discover_from(&half, env(&[])).is_err());
    }
}
