//! The messages between ranks, as bytes: what a rank reads from the network is untrusted, so
//! every length is bounded before anything is allocated, and any bytes are a message or an
//! error, never a panic.
//!
//! The rendezvous, in order:
//! 1. rank 0, on each connection it accepts: a [`CHALLENGE`] message holding a fresh nonce;
//! 2. the rank: a **hello** — `gsrv`, its rank and the world size (little-endian `u32`), its own
//!    nonce and its proof ([`super::secret`]), 76 bytes in all; the job's name and the secret
//!    are not sent, only proven;
//! 3. rank 0, once every rank has arrived: [`OK`] holding rank 0's proof; or [`REFUSED`]. A hello
//!    whose proof fails gets a refusal with an empty body — a stranger learns neither the job's
//!    name nor its world size; a proven rank is told why (a wrong world size, a rank twice).
//!
//! Every later **message** (either way): `gsrv`, a code ([`OK`], [`REFUSED`], [`DATA`],
//! [`CHALLENGE`]), a `u32` length, the body.

/// A job's name as the proofs cover it (defined beside the proofs).
pub use super::secret::job_key;
use super::secret::{NONCE_BYTES, Nonce, PROOF_BYTES, Proof};
use super::{MAX_MESSAGE, MAX_TEXT};
use std::io::{self, Read};

/// The first four bytes of every message.
pub const MAGIC: [u8; 4] = *b"gsrv";
/// Rank 0 took the hello; the body is rank 0's proof (or empty, where none is due).
pub const OK: u8 = 0;
/// Rank 0 refused the hello or an exchange; the reason follows (at most 1024 bytes), or
/// nothing for a hello that did not prove the job's secret.
pub const REFUSED: u8 = 1;
/// Data: a broadcast, or a rank's partials, or a combined result.
pub const DATA: u8 = 2;
/// Rank 0's challenge to a new connection: a nonce of [`NONCE_BYTES`].
pub const CHALLENGE: u8 = 3;
/// Bytes of a hello.
pub const HELLO_BYTES: usize = 4 + 4 + 4 + NONCE_BYTES + PROOF_BYTES;

/// A rank's first words to rank 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// Its rank.
    pub rank: u32,
    /// The world size it was told.
    pub world: u32,
    /// Its nonce.
    pub nonce: Nonce,
    /// Its proof over rank 0's challenge, its nonce, rank, world size and the job's name.
    pub proof: Proof,
}

/// One message after the hello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// [`OK`], [`REFUSED`], [`DATA`] or [`CHALLENGE`].
    pub code: u8,
    /// Its body.
    pub body: Vec<u8>,
}

/// A hello's bytes.
pub fn hello(h: &Hello) -> Vec<u8> {
    let mut m = MAGIC.to_vec();
    m.extend(h.rank.to_le_bytes());
    m.extend(h.world.to_le_bytes());
    m.extend(h.nonce);
    m.extend(h.proof);
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
/// The reader's error, or [`io::ErrorKind::InvalidData`] for a wrong magic.
pub fn read_hello(r: &mut impl Read) -> io::Result<Hello> {
    read_magic(r)?;
    let rank = read_u32(r)?;
    let world = read_u32(r)?;
    let mut nonce = [0; NONCE_BYTES];
    r.read_exact(&mut nonce)?;
    let mut proof = [0; PROOF_BYTES];
    r.read_exact(&mut proof)?;
    Ok(Hello {
        rank,
        world,
        nonce,
        proof,
    })
}

/// Reads a message whose body is at most `max` bytes if it is data (a refusal's at most 1024,
/// an acceptance's at most [`PROOF_BYTES`], a challenge's at most [`NONCE_BYTES`]).
///
/// # Errors
/// The reader's error, or [`io::ErrorKind::InvalidData`] for a wrong magic, an unknown code
/// or a body too long.
pub fn read_message(r: &mut impl Read, max: usize) -> io::Result<Message> {
    read_magic(r)?;
    let mut code = [0; 1];
    r.read_exact(&mut code)?;
    let max = match code[0] {
        OK => PROOF_BYTES,
        REFUSED => MAX_TEXT,
        DATA => max.min(MAX_MESSAGE),
        CHALLENGE => NONCE_BYTES,
        _ => return Err(bad("an unknown message code")),
    };
    let n = read_u32(r)?;
    let body = read_body(r, n, max)?;
    Ok(Message {
        code: code[0],
        body,
    })
}
