//! The job's secret and the proofs exchanged at the rendezvous.
//!
//! Every rank of a job knows its secret, the token in [`TOKEN_VAR`] (`gridsync launch` makes a
//! random one for each job; under torchrun, Slurm or mpirun, set the same value on every rank).
//! At the rendezvous each side proves that it knows it without sending it: rank 0 sends a fresh
//! nonce, a rank answers with its own nonce and an HMAC-SHA256 over both nonces, its rank, the
//! world size and the job's name; rank 0's acceptance carries an HMAC of its own over the same
//! terms with another label. A stranger who can reach the port learns nothing it could replay
//! (the nonces are new each time), and a rank takes rank 0's NCCL id only after rank 0's proof.
//!
//! **Without a token** the key is a fixed public string, so the proofs cover only the job's
//! name (`GRIDSYNC_JOB`, torchrun's run id, Slurm's job id, Open MPI's job id): ranks of other
//! jobs are still told apart, but anyone who can reach the port and knows or guesses the name
//! can join. That is the documented weaker fallback for launchers that pass no secret.

use crate::runtime::error::{Error, Result};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The environment variable holding the job's secret.
pub const TOKEN_VAR: &str = "GRIDSYNC_TOKEN";
/// The shortest secret taken: a guessable one would be no secret.
pub const MIN_TOKEN: usize = 16;
/// The longest secret taken.
pub const MAX_TOKEN: usize = 1024;
/// Bytes of a nonce.
pub const NONCE_BYTES: usize = 32;
/// Bytes of a proof (an HMAC-SHA256).
pub const PROOF_BYTES: usize = 32;

/// A fresh random value, used once.
pub type Nonce = [u8; NONCE_BYTES];
/// An HMAC-SHA256 of a handshake's terms.
pub type Proof = [u8; PROOF_BYTES];

/// The key used without a token: public, so the proofs then show only the job's name.
const NO_TOKEN_KEY: &[u8] = b"gridsync rendezvous without GRIDSYNC_TOKEN";

/// A job's secret. Its `Debug` does not show it, and nothing in gridsync prints or sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// The secret `value` (from [`TOKEN_VAR`], or given).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for fewer than [`MIN_TOKEN`] or more than [`MAX_TOKEN`] bytes.
    pub fn new(value: &str) -> Result<Token> {
        if !(MIN_TOKEN..=MAX_TOKEN).contains(&value.len()) {
            return Err(Error::InvalidInput(format!(
                "{TOKEN_VAR} holds {} bytes: a job's secret has {MIN_TOKEN} to {MAX_TOKEN} \
                 (e.g. `openssl rand -hex 32`)",
                value.len()
            )));
        }
        Ok(Token(value.to_string()))
    }

    /// A new random secret: 32 bytes from the operating system, as 64 hex digits.
    ///
    /// # Errors
    /// [`Error::Unsupported`] if the operating system gives no random bytes.
    pub fn random() -> Result<Token> {
        let bytes: Nonce = random()?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The secret's text, to hand to the ranks' environment ([`TOKEN_VAR`]).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// [`NONCE_BYTES`] random bytes from the operating system.
///
/// # Errors
/// [`Error::Unsupported`] if it has none to give.
pub fn random() -> Result<Nonce> {
    let mut n = [0; NONCE_BYTES];
    getrandom::fill(&mut n)
        .map_err(|e| Error::Unsupported(format!("no random bytes from the system: {e}")))?;
    Ok(n)
}

/// Who proves: a rank saying hello, or rank 0 accepting it. The two proofs of one handshake
/// differ, so neither can be replayed as the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// A rank's hello.
    Rank,
    /// Rank 0's acceptance.
    Rank0,
}

/// A job's name as the proofs cover it: cut to at most 1024 bytes, on a character boundary.
pub fn job_key(job: &str) -> &str {
    let mut end = job.len().min(super::MAX_TEXT);
    while !job.is_char_boundary(end) {
        end -= 1;
    }
    &job[..end]
}

/// What one handshake's proofs cover.
#[derive(Clone, Copy, Debug)]
pub struct Terms<'a> {
    /// Rank 0's nonce (its challenge).
    pub challenge: &'a Nonce,
    /// The rank's nonce.
    pub nonce: &'a Nonce,
    /// The rank that says hello.
    pub rank: u32,
    /// The world size it was told.
    pub world: u32,
    /// The job's name ([`job_key`]).
    pub job: &'a str,
}

fn mac(token: Option<&Token>, side: Side, t: &Terms) -> Hmac<Sha256> {
    let key = token.map_or(NO_TOKEN_KEY, |k| k.0.as_bytes());
    // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    m.update(match side {
        Side::Rank => b"gridsync hello v1\0",
        Side::Rank0 => b"gridsync rank0 v1\0",
    });
    m.update(t.challenge);
    m.update(t.nonce);
    m.update(&t.rank.to_le_bytes());
    m.update(&t.world.to_le_bytes());
    let job = job_key(t.job).as_bytes();
    m.update(&(job.len() as u32).to_le_bytes());
    m.update(job);
    m
}

/// The proof of `side` over `terms` with `token` (`None`: the public key of the fallback).
pub fn prove(token: Option<&Token>, side: Side, terms: &Terms) -> Proof {
    mac(token, side, terms).finalize().into_bytes().into()
}

/// Whether `proof` is `side`'s proof over `terms` with `token`, compared in constant time.
pub fn verify(token: Option<&Token>, side: Side, terms: &Terms, proof: &[u8]) -> bool {
    mac(token, side, terms).verify_slice(proof).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_bind_every_term_and_the_side() {
        let token = Token::new("0123456789abcdef0123").unwrap();
        let (c, n) = ([1; NONCE_BYTES], [2; NONCE_BYTES]);
        let t = Terms {
            challenge: &c,
            nonce: &n,
            rank: 1,
            world: 2,
            job: "job",
        };
        let p = prove(Some(&token), Side::Rank, &t);
        assert!(verify(Some(&token), Side::Rank, &t, &p));
        assert!(!verify(Some(&token), Side::Rank0, &t, &p));
        assert!(!verify(None, Side::Rank, &t, &p));
        let other = Token::new("0123456789abcdef0124").unwrap();
        assert!(!verify(Some(&other), Side::Rank, &t, &p));
        for changed in [
            Terms { rank: 0, ..t },
            Terms { world: 3, ..t },
            Terms { job: "jo", ..t },
            Terms { challenge: &n, ..t },
            Terms { nonce: &c, ..t },
        ] {
            assert!(!verify(Some(&token), Side::Rank, &changed, &p));
        }
        assert!(!verify(Some(&token), Side::Rank, &t, &p[..31]));
    }

    #[test]
    fn tokens_are_checked_random_and_never_shown() {
        assert!(Token::new("short").is_err());
        assert!(Token::new(&"x".repeat(MAX_TOKEN + 1)).is_err());
        let (a, b) = (Token::random().unwrap(), Token::random().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 64);
        assert!(!format!("{a:?}").contains(a.expose()));
    }
}
