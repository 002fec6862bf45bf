//! The rendezvous: rank 0 listens where the ranks were told, proves and checks every rank's
//! hello, and answers them all once every rank has arrived; every other rank connects (retrying
//! until the deadline), proves itself, and trusts rank 0 only once rank 0 has proven itself.
//!
//! What a stranger on the network can and cannot do:
//! - rank 0 listens only on the rendezvous address (`127.0.0.1` under `gridsync launch`), or
//!   where `--rendezvous-bind` says;
//! - a connection that does not prove the job's secret gets one empty refusal: it learns neither
//!   the job's name nor its world size (the reason goes to rank 0's record of refusals, which
//!   its error or report shows);
//! - hellos are served concurrently, each under a short deadline of its own
//!   ([`HELLO_TIMEOUT`]), so idle connections or a port scan cannot use up the job's bound,
//!   and a peer sending a byte at a time is cut at that deadline;
//! - a rank takes rank 0's answer — and the NCCL id after it — only with rank 0's proof.

use super::deadline::{Until, after, timed_out};
use super::secret::{Nonce, PROOF_BYTES, Side, Terms, random, verify};
use super::wire::{self, Hello};
use super::{Links, Rank};
use crate::runtime::error::{Error, Result};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The bound on one connection's hello at rank 0, and on a rank's wait for rank 0's challenge.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// The most hellos rank 0 serves at once, each on a small thread of its own; a connection past
/// them is closed at once (a real rank whose connection is closed before the challenge tries
/// again, so a flood delays the rendezvous but cannot refuse a real rank).
pub const MAX_PENDING: usize = 1024;
/// The most connections rank 0 takes from the queue before it looks at the hellos served.
const ACCEPTS_PER_TURN: usize = 64;
/// The stack of a thread serving one hello (it only writes a challenge and reads 76 bytes).
const HELLO_STACK: usize = 64 << 10;
/// The refusals whose reasons rank 0 keeps (all are counted).
const KEPT_REFUSALS: usize = 8;

/// Hands `id` (rank 0's) to every rank of `me`'s job, or gets it (the others), within
/// `timeout`: [`Links::open`], then [`Links::broadcast_id`]. Rank 0 passes `Some(id)`, the
/// others `None`.
///
/// # Errors
/// [`Error::InvalidInput`] for a bad address or an id of the wrong length; [`Error::Rank`]
/// naming what went wrong — the address in use, a rank that never arrived (after `timeout`, on
/// every rank), a refused hello (a stranger, another job or secret, a wrong world size, a rank
/// twice), a rank 0 that did not prove the secret — on the ranks it concerns.
pub fn rendezvous(me: &Rank, id: Option<&[u8]>, timeout: Duration) -> Result<Vec<u8>> {
    check_id(me, id)?;
    Links::open(me, timeout)?.broadcast_id(id)
}

/// Rank 0 must bring an id of [`super::ID_BYTES`]; the other ranks bring none.
pub(super) fn check_id(me: &Rank, id: Option<&[u8]>) -> Result<()> {
    match (me.rank, id) {
        (0, Some(id)) if id.len() == super::ID_BYTES => Ok(()),
        (0, _) => Err(Error::InvalidInput(format!(
            "rank 0 must bring an id of {} bytes",
            super::ID_BYTES
        ))),
        _ => Ok(()),
    }
}

/// The refusals rank 0 made: how many, and the first reasons; and what rank 0 should warn of.
#[derive(Clone, Debug, Default)]
pub struct Refusals {
    /// Connections refused or dropped.
    pub count: usize,
    /// The first reasons, each naming the peer's address.
    pub reasons: Vec<String>,
    /// Rank 0 listened beyond its own host without a secret: anyone who can reach the port and
    /// knows or guesses the job's name could have joined (the weaker fallback, made worse).
    pub unguarded: Option<String>,
}

impl Refusals {
    fn push(&mut self, why: String) {
        self.count += 1;
        if self.reasons.len() < KEPT_REFUSALS {
            self.reasons.push(why);
        }
    }

    /// `; refused N connection(s): …`, or nothing where none was refused.
    pub fn summary(&self) -> String {
        if self.count == 0 {
            return String::new();
        }
        let more = if self.count > self.reasons.len() {
            format!("; and {} more", self.count - self.reasons.len())
        } else {
            String::new()
        };
        format!(
            "; refused {} connection(s): {}{more}",
            self.count,
            self.reasons.join("; ")
        )
    }
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

/// Rank 0's listener: on the rendezvous address itself, or on `me.bind` at its port.
fn listen(me: &Rank) -> Result<TcpListener> {
    let at = resolve(&me.address)?;
    let candidates = match &me.bind {
        None => at,
        Some(host) => {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            (host, at[0].port())
                .to_socket_addrs()
                .map_err(|e| Error::InvalidInput(format!("--rendezvous-bind {host:?}: {e}")))?
                .collect()
        }
    };
    let mut why = String::from("no address");
    for a in &candidates {
        match TcpListener::bind(a) {
            Ok(l) => return Ok(l),
            Err(e) => why = format!("{a}: {e}"),
        }
    }
    Err(Error::Rank {
        rank: None,
        why: format!(
            "rendezvous: rank 0 cannot listen at {} ({why}): the port is in use (another job?) \
             or the address is not this host's",
            me.address
        ),
    })
}

/// A connection whose hello was read (or not) by its own thread.
struct Arrival {
    from: SocketAddr,
    stream: TcpStream,
    challenge: Nonce,
    hello: std::io::Result<Hello>,
}

/// A rank that proved itself, waiting for the answer.
struct Joined {
    stream: TcpStream,
    challenge: Nonce,
    nonce: Nonce,
}

/// Sends `why` (empty for a stranger) and closes, within a second.
fn refuse(stream: &TcpStream, why: &str) {
    let mut w = Until {
        stream,
        until: after(Duration::from_secs(1)),
    };
    let _ = w.write_all(&wire::message(wire::REFUSED, why.as_bytes()));
}

/// Rank 0: listen, serve every hello on a thread of its own, check them, then answer the
/// ranks; the streams by rank, and the refusals.
pub(super) fn serve(
    me: &Rank,
    deadline: Instant,
    hello_timeout: Duration,
) -> Result<(Vec<Option<TcpStream>>, Refusals)> {
    let listener = listen(me)?;
    let mut refusals = Refusals::default();
    if me.token.is_none()
        && let Ok(at) = listener.local_addr()
        && !at.ip().is_loopback()
    {
        refusals.unguarded = Some(format!(
            "rank 0 listens at {at} without GRIDSYNC_TOKEN: the ranks prove only the job's name \
             {:?}, which anyone who reaches the port may know; set GRIDSYNC_TOKEN on every rank",
            me.job
        ));
    }
    listener.set_nonblocking(true).map_err(|e| Error::Rank {
        rank: None,
        why: format!("rendezvous: set_nonblocking: {e}"),
    })?;
    let mut joined: Vec<Option<Joined>> = (0..me.world).map(|_| None).collect();
    let (tx, rx) = mpsc::channel::<Arrival>();
    let mut pending = 0usize;
    let mut waiting = me.world - 1;
    while waiting > 0 {
        if Instant::now() >= deadline {
            return Err(timed_out_at_0(me, &joined, &refusals));
        }
        // Take what is queued (a flood is drained, not served one per turn), then the hellos.
        for _ in 0..ACCEPTS_PER_TURN {
            match listener.accept() {
                Ok((stream, from)) => {
                    if pending >= MAX_PENDING {
                        refusals.push(format!("{from}: closed, {MAX_PENDING} hellos pending"));
                        continue;
                    }
                    let challenge = random()?;
                    let until = deadline.min(after(hello_timeout));
                    let tx = tx.clone();
                    let spawned = std::thread::Builder::new()
                        .name("gridsync-hello".into())
                        .stack_size(HELLO_STACK)
                        .spawn(move || {
                            let hello = greet(&stream, &challenge, until);
                            let _ = tx.send(Arrival {
                                from,
                                stream,
                                challenge,
                                hello,
                            });
                        });
                    match spawned {
                        Ok(_) => pending += 1,
                        Err(e) => refusals.push(format!("{from}: no thread to serve it ({e})")),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                // Out of descriptors, a connection reset before it was taken, …: noted, survived.
                Err(e) => {
                    refusals.push(format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                    break;
                }
            }
        }
        let mut next = rx.recv_timeout(Duration::from_millis(5)).ok();
        while let Some(a) = next {
            pending -= 1;
            if let Some(r) = check(me, a, &joined, &mut refusals, hello_timeout) {
                waiting -= 1;
                joined[r.0] = Some(r.1);
            }
            next = rx.try_recv().ok();
        }
    }
    let mut streams = Vec::with_capacity(joined.len());
    for (r, j) in joined.into_iter().enumerate() {
        let Some(j) = j else {
            streams.push(None);
            continue;
        };
        let proof = super::secret::prove(
            me.token.as_ref(),
            Side::Rank0,
            &Terms {
                challenge: &j.challenge,
                nonce: &j.nonce,
                rank: r as u32,
                world: me.world,
                job: &me.job,
            },
        );
        let mut w = Until {
            stream: &j.stream,
            until: after(hello_timeout),
        };
        w.write_all(&wire::message(wire::OK, &proof))
            .map_err(|e| Error::Rank {
                rank: Some(r as u32),
                why: format!("rendezvous: rank 0 could not answer rank {r}'s hello: {e}"),
            })?;
        streams.push(Some(j.stream));
    }
    Ok((streams, refusals))
}

/// Rank 0's side of one connection: the challenge out, the hello in, both before `until`.
fn greet(stream: &TcpStream, challenge: &Nonce, until: Instant) -> std::io::Result<Hello> {
    stream.set_nonblocking(false)?;
    let _ = stream.set_nodelay(true);
    let mut io = Until { stream, until };
    io.write_all(&wire::message(wire::CHALLENGE, challenge))?;
    wire::read_hello(&mut io)
}

/// A served hello: the rank and its place if it proved the secret and fits; otherwise refused
/// (a stranger with an empty refusal, a proven rank with the reason) and noted.
fn check(
    me: &Rank,
    a: Arrival,
    joined: &[Option<Joined>],
    refusals: &mut Refusals,
    hello_timeout: Duration,
) -> Option<(usize, Joined)> {
    let from = a.from;
    let h = match a.hello {
        Ok(h) => h,
        Err(e) => {
            refusals.push(if timed_out(&e) {
                format!(
                    "{from}: no hello within {:.1} s",
                    hello_timeout.as_secs_f64()
                )
            } else {
                format!("{from}: not a gridsync hello ({e})")
            });
            refuse(&a.stream, "");
            return None;
        }
    };
    let terms = Terms {
        challenge: &a.challenge,
        nonce: &h.nonce,
        rank: h.rank,
        world: h.world,
        job: &me.job,
    };
    if !verify(me.token.as_ref(), Side::Rank, &terms, &h.proof) {
        refusals.push(format!(
            "{from}: a hello (as rank {} of {}) that does not prove this job's {}",
            h.rank,
            h.world,
            match me.token {
                Some(_) => "secret (another GRIDSYNC_TOKEN, another job, or a stranger)",
                None => "name (another job, a rank given GRIDSYNC_TOKEN, or a stranger)",
            }
        ));
        refuse(&a.stream, "");
        return None;
    }
    let why = if h.world != me.world {
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
    if let Some(why) = why {
        refusals.push(format!("{from}: {why}"));
        refuse(&a.stream, &why);
        return None;
    }
    Some((
        h.rank as usize,
        Joined {
            stream: a.stream,
            challenge: a.challenge,
            nonce: h.nonce,
        },
    ))
}

/// Rank 0's deadline passed: the ranks that came are told why, and the error names the missing.
fn timed_out_at_0(me: &Rank, joined: &[Option<Joined>], refusals: &Refusals) -> Error {
    let missing: Vec<u32> = (1..me.world)
        .filter(|&r| joined[r as usize].is_none())
        .collect();
    let named: Vec<String> = missing.iter().take(8).map(u32::to_string).collect();
    let why = format!(
        "rendezvous timed out: rank(s) {} of {} never arrived at {}",
        named.join(", "),
        me.world,
        me.address
    );
    for j in joined.iter().flatten() {
        refuse(&j.stream, &why);
    }
    Error::Rank {
        rank: missing.first().copied(),
        why: format!("{why}{}", refusals.summary()),
    }
}

/// Why one try at rank 0 did not get through.
enum Attempt {
    /// Try again (rank 0 closed the connection before its challenge: busy, or not yet ready).
    Again(String),
    /// Give up.
    Fail(Error),
}

/// Any other rank: connect (retrying until the deadline), prove itself, check rank 0's proof.
pub(super) fn join(me: &Rank, deadline: Instant, hello_timeout: Duration) -> Result<TcpStream> {
    let addresses = resolve(&me.address)?;
    let mut last = String::from("nothing answered");
    loop {
        let stream = connect(me, &addresses, deadline, &last)?;
        match handshake(me, &stream, deadline, hello_timeout) {
            Ok(()) => return Ok(stream),
            Err(Attempt::Again(why)) => last = why,
            Err(Attempt::Fail(e)) => return Err(e),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A connection to one of `addresses`, retried until the deadline.
fn connect(
    me: &Rank,
    addresses: &[SocketAddr],
    deadline: Instant,
    last: &str,
) -> Result<TcpStream> {
    loop {
        for at in addresses {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Rank {
                    rank: Some(0),
                    why: format!(
                        "rendezvous timed out: rank {} could not reach rank 0 at {} ({last}); \
                         if rank 0's host name resolves to a loopback address there, give rank \
                         0 --rendezvous-bind 0.0.0.0 or use its IP address",
                        me.rank, me.address
                    ),
                });
            }
            if let Ok(s) = TcpStream::connect_timeout(at, left.min(Duration::from_secs(1))) {
                // Before rank 0 listens, a connect to a local port can meet itself (TCP's
                // simultaneous open): that is not rank 0.
                let to_itself = matches!((s.local_addr(), s.peer_addr()), (Ok(a), Ok(b)) if a == b);
                if !to_itself {
                    return Ok(s);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One try: rank 0's challenge, this rank's hello, rank 0's answer and proof.
fn handshake(
    me: &Rank,
    stream: &TcpStream,
    deadline: Instant,
    hello_timeout: Duration,
) -> std::result::Result<(), Attempt> {
    let fail = |why: String| {
        Attempt::Fail(Error::Rank {
            rank: Some(0),
            why: format!("rendezvous: rank {}: {why}", me.rank),
        })
    };
    let _ = stream.set_nodelay(true);
    let mut io = Until {
        stream,
        until: deadline.min(after(hello_timeout)),
    };
    let challenge = match wire::read_message(&mut io, 0) {
        Ok(m) if m.code == wire::CHALLENGE && m.body.len() == super::secret::NONCE_BYTES => {
            let mut c = [0; super::secret::NONCE_BYTES];
            c.copy_from_slice(&m.body);
            c
        }
        Ok(_) => {
            return Err(fail(format!(
                "{} is not a gridsync rank 0 (no challenge)",
                me.address
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            return Err(fail(format!(
                "{} is not a gridsync rank 0 ({e})",
                me.address
            )));
        }
        Err(e) => return Err(Attempt::Again(format!("no challenge from rank 0 ({e})"))),
    };
    let nonce = random().map_err(Attempt::Fail)?;
    let terms = Terms {
        challenge: &challenge,
        nonce: &nonce,
        rank: me.rank,
        world: me.world,
        job: &me.job,
    };
    let hello = Hello {
        rank: me.rank,
        world: me.world,
        nonce,
        proof: super::secret::prove(me.token.as_ref(), Side::Rank, &terms),
    };
    io.write_all(&wire::hello(&hello))
        .map_err(|e| fail(format!("sending the hello: {e}")))?;
    // Rank 0 answers once every rank has arrived, at the latest at its own deadline; allow for
    // the skew of starting later.
    io.until = deadline
        .checked_add(Duration::from_secs(5))
        .unwrap_or(deadline);
    let answer = wire::read_message(&mut io, 0).map_err(|e| {
        fail(match e.kind() {
            std::io::ErrorKind::InvalidData => {
                format!("{} is not a gridsync rank 0 ({e})", me.address)
            }
            _ => format!("no answer from rank 0 at {} ({e})", me.address),
        })
    })?;
    match answer.code {
        wire::OK
            if answer.body.len() == PROOF_BYTES
                && verify(me.token.as_ref(), Side::Rank0, &terms, &answer.body) =>
        {
            Ok(())
        }
        wire::OK => Err(fail(format!(
            "the process at {} did not prove this job's secret: not this job's rank 0, or \
             another GRIDSYNC_TOKEN; nothing it sends is trusted",
            me.address
        ))),
        wire::REFUSED if answer.body.is_empty() => Err(fail(format!(
            "rank 0 at {} refused this rank's hello: its proof did not match — the ranks have \
             different secrets (GRIDSYNC_TOKEN) or job names (GRIDSYNC_JOB, torchrun's run id, \
             …), or that is another job's rank 0 — or the hello reached rank 0 after its {:.0} s \
             bound on one hello",
            me.address,
            hello_timeout.as_secs_f64()
        ))),
        wire::REFUSED => Err(fail(format!(
            "rank 0 refused it: {}",
            String::from_utf8_lossy(&answer.body)
        ))),
        _ => Err(fail("a malformed answer from rank 0".into())),
    }
}
