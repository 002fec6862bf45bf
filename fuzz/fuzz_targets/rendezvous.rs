//! The messages between ranks (`gridsync::multi::ranks::wire`): what rank 0 reads from any
//! process that connects to its rendezvous port, and what every rank reads from rank 0. Any
//! bytes are a message or an error, never a panic or an allocation past the bound; a message
//! read back from its own bytes is the same message, and takes exactly those bytes.
#![no_main]

use gridsync::multi::ranks::wire::{DATA, Hello, MAGIC, hello, message, read_hello, read_message};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    if let Ok(h) = read_hello(&mut r) {
        let used = data.len() - r.len();
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
    }
    // What is written is read back.
    if let Ok(job) = std::str::from_utf8(rest)
        && job.len() <= 1024
    {
        let h = Hello {
            rank: max as u32,
            world: rest.len() as u32,
            job: job.to_string(),
        };
        let bytes = hello(&h);
        assert_eq!(&bytes[..4], &MAGIC);
        assert_eq!(read_hello(&mut bytes.as_slice()).unwrap(), h);
    }
});
