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
//! **Rendezvous** ([`rendezvous`]): rank 0 listens at the address and, once every other rank has
//! said hello (its rank, the world size and the job's name), sends each the id. Other ranks
//! connect with retries. Everything is bounded by one timeout: a rank that never arrives is an
//! error on every rank; a wrong world size, a rank twice, or another job's rank is refused, not
//! mixed in; an address already in use is an error on rank 0.

use crate::runtime::error::{Error, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
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
    let address = match &opts.address {
        Some(a) => a.clone(),
        None => match (env("MASTER_ADDR"), env("MASTER_PORT")) {
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

/// The first four bytes of every message: "gsrv".
const MAGIC: [u8; 4] = *b"gsrv";
/// A hello's answer: the id follows.
const OK: u8 = 0;
/// A hello's answer: refused; a reason follows.
const REFUSED: u8 = 1;
/// The most bytes of a job name or a reason.
const MAX_TEXT: usize = 1024;

/// Hands `id` (rank 0's) to every rank of `me`'s job, or gets it (the others), within
/// `timeout`. Rank 0 passes `Some(id)`, the others `None`.
///
/// # Errors
/// [`Error::InvalidInput`] for a bad address or an id of the wrong length; an error naming what
/// went wrong — the address in use, a rank that never arrived (after `timeout`, on every rank),
/// a refused hello (another job, a wrong world size, a rank twice) — on the ranks it concerns.
pub fn rendezvous(me: &Rank, id: Option<&[u8]>, timeout: Duration) -> Result<Vec<u8>> {
    let deadline = Instant::now() + timeout;
    if me.world == 1 {
        return id
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::InvalidInput("rank 0 of a world of 1 must bring the id".into()));
    }
    match (me.rank, id) {
        (0, Some(id)) if id.len() == ID_BYTES => serve(me, id, deadline),
        (0, _) => Err(Error::InvalidInput(format!(
            "rank 0 must bring an id of {ID_BYTES} bytes"
        ))),
        (_, _) => join(me, deadline),
    }
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::Unsupported(format!("rendezvous: {what}: {e}"))
}

fn resolve(address: &str) -> Result<SocketAddr> {
    address
        .to_socket_addrs()
        .map_err(|e| Error::InvalidInput(format!("rendezvous address {address:?}: {e}")))?
        .next()
        .ok_or_else(|| Error::InvalidInput(format!("rendezvous address {address:?}: no address")))
}

/// A hello: magic, rank, world, the job's name.
fn hello(me: &Rank) -> Vec<u8> {
    let job = &me.job.as_bytes()[..me.job.len().min(MAX_TEXT)];
    let mut m = MAGIC.to_vec();
    m.extend(me.rank.to_le_bytes());
    m.extend(me.world.to_le_bytes());
    m.extend((job.len() as u32).to_le_bytes());
    m.extend(job);
    m
}

fn read_u32(s: &mut TcpStream) -> std::io::Result<u32> {
    let mut b = [0; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_text(s: &mut TcpStream) -> std::io::Result<String> {
    let n = read_u32(s)? as usize;
    if n > MAX_TEXT {
        return Err(std::io::Error::other("text too long"));
    }
    let mut b = vec![0; n];
    s.read_exact(&mut b)?;
    Ok(String::from_utf8_lossy(&b).into_owned())
}

fn answer(s: &mut TcpStream, code: u8, body: &[u8]) -> std::io::Result<()> {
    let mut m = MAGIC.to_vec();
    m.push(code);
    m.extend((body.len() as u32).to_le_bytes());
    m.extend(body);
    s.write_all(&m)
}

/// Rank 0: listen, take every other rank's hello, then answer them all.
fn serve(me: &Rank, id: &[u8], deadline: Instant) -> Result<Vec<u8>> {
    let at = resolve(&me.address)?;
    let listener = TcpListener::bind(at).map_err(|e| {
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
                let _ = answer(s, REFUSED, why.as_bytes());
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
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        // A peer that sends nothing sensible is dropped, not trusted.
        let mut magic = [0; 4];
        if stream.read_exact(&mut magic).is_err() || magic != MAGIC {
            continue;
        }
        let (Ok(rank), Ok(world), Ok(job)) = (
            read_u32(&mut stream),
            read_u32(&mut stream),
            read_text(&mut stream),
        ) else {
            continue;
        };
        let refusal = if job != me.job {
            Some(format!(
                "job {job:?} is not rank 0's job {:?}: two jobs on one rendezvous address",
                me.job
            ))
        } else if world != me.world {
            Some(format!(
                "world size {world} is not rank 0's {}: the ranks disagree",
                me.world
            ))
        } else if rank == 0 || rank >= me.world {
            Some(format!("rank {rank} is not one of 1..{}", me.world))
        } else if joined[rank as usize].is_some() {
            Some(format!("rank {rank} arrived twice"))
        } else {
            None
        };
        match refusal {
            Some(why) => {
                let _ = answer(&mut stream, REFUSED, why.as_bytes());
            }
            None => {
                joined[rank as usize] = Some(stream);
                waiting -= 1;
            }
        }
    }
    for s in joined.iter_mut().flatten() {
        answer(s, OK, id).map_err(io("sending the id".into()))?;
    }
    Ok(id.to_vec())
}

/// Any other rank: connect (retrying until the deadline), say hello, wait for the id.
fn join(me: &Rank, deadline: Instant) -> Result<Vec<u8>> {
    let at = resolve(&me.address)?;
    let mut stream = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::Unsupported(format!(
                "rendezvous timed out: rank {} could not reach rank 0 at {}",
                me.rank, me.address
            )));
        }
        match TcpStream::connect_timeout(&at, left.min(Duration::from_secs(1))) {
            Ok(s) => break s,
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    stream
        .write_all(&hello(me))
        .map_err(io("sending the hello".into()))?;
    let left = deadline.saturating_duration_since(Instant::now());
    // Rank 0 answers at the latest at its own deadline; allow for the skew of starting later.
    let _ = stream.set_read_timeout(Some(left + Duration::from_secs(5)));
    let mut magic = [0; 5];
    stream.read_exact(&mut magic).map_err(|e| {
        Error::Unsupported(format!(
            "rendezvous: rank {} got no answer from rank 0 at {} ({e})",
            me.rank, me.address
        ))
    })?;
    if magic[..4] != MAGIC {
        return Err(Error::Unsupported(format!(
            "rendezvous: {} is not a gridsync rank 0",
            me.address
        )));
    }
    let n = read_u32(&mut stream).map_err(io("reading the answer".into()))? as usize;
    if n > MAX_TEXT.max(ID_BYTES) {
        return Err(Error::Unsupported("rendezvous: an answer too long".into()));
    }
    let mut body = vec![0; n];
    stream
        .read_exact(&mut body)
        .map_err(io("reading the answer".into()))?;
    match magic[4] {
        OK if n == ID_BYTES => Ok(body),
        REFUSED => Err(Error::Unsupported(format!(
            "rendezvous: rank 0 refused rank {}: {}",
            me.rank,
            String::from_utf8_lossy(&body)
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
