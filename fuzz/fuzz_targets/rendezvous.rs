//! The messages between ranks (`gridsync::multi::processes::wire`) and the proofs of the rendezvous
//! (`gridsync::multi::processes::secret`): what rank 0 reads from any process that connects to its
//! rendezvous port (a hello), and what every rank reads from rank 0 (a challenge, an answer
//! with rank 0's proof, a refusal, data). Any bytes are a message or an error, never a panic or
//! an allocation past the bound; a message read back from its own bytes is the same message,
//! and takes exactly those bytes; any bytes checked as a proof are refused unless they are
//! the proof, and a proof made is accepted; any bytes are a census verdict or nothing, and a
//! verdict read back from its own bytes is the same.
#![no_main]

use gridsync::multi::processes::Census;
use gridsync::multi::processes::secret::{NONCE_BYTES, Side, Terms, Token, prove, verify};
use gridsync::multi::processes::wire::{
    CHALLENGE, DATA, HELLO_BYTES, Hello, MAGIC, OK, hello, message, read_hello, read_message,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    if let Ok(h) = read_hello(&mut r) {
        let used = data.len() - r.len();
        assert_eq!(used, HELLO_BYTES);
        assert_eq!(hello(&h), &data[..used], "a hello's bytes");
    }
    // The first byte picks the bound on a data body, so that small bounds are tried too.
    let (max, rest) = match data.split_first() {
        Some((&b, rest)) => ((b as usize) << 8, rest),
        None => (0, data),
    };
    let mut r = rest;
    if let Ok(m) = read_message(&mut r, max) {
        let used = rest.len() - r.len();
        assert_eq!(message(m.code, &m.body), &rest[..used], "a message's bytes");
        assert!(m.code != DATA || m.body.len() <= max);
        assert!(m.code != OK || m.body.len() <= 32);
        assert!(m.code != CHALLENGE || m.body.len() <= NONCE_BYTES);
    }
    // A census verdict (what a rank reads from rank 0 after a failed collective).
    if let Some(c) = Census::from_bytes(data) {
        assert_eq!(Census::from_bytes(&c.to_bytes()), Some(c));
    }
    // The proofs: terms taken from the input; the rest checked as a proof.
    let mut challenge = [0; NONCE_BYTES];
    let mut nonce = [0; NONCE_BYTES];
    for (i, &b) in rest.iter().take(2 * NONCE_BYTES).enumerate() {
        if i < NONCE_BYTES {
            challenge[i] = b;
        } else {
            nonce[i - NONCE_BYTES] = b;
        }
    }
    let tail = rest.get(2 * NONCE_BYTES..).unwrap_or_default();
    let job = String::from_utf8_lossy(tail);
    let terms = Terms {
        challenge: &challenge,
        nonce: &nonce,
        rank: max as u32,
        world: rest.len() as u32,
        job: &job,
    };
    let token = Token::new("the fuzz target's secret").unwrap();
    for key in [None, Some(&token)] {
        for side in [Side::Rank, Side::Rank0] {
            let made = prove(key, side, &terms);
            assert!(verify(key, side, &terms, &made));
            if tail != made {
                assert!(!verify(key, side, &terms, tail));
            }
        }
    }
    // What is written is read back.
    let h = Hello {
        rank: max as u32,
        world: rest.len() as u32,
        nonce,
        proof: prove(Some(&token), Side::Rank, &terms),
    };
    let bytes = hello(&h);
    assert_eq!(&bytes[..4], &MAGIC);
    assert_eq!(read_hello(&mut bytes.as_slice()).unwrap(), h);
});
