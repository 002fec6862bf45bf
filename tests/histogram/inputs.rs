//! The inputs: the generated text is deterministic and English-like, uniform bytes are
//! deterministic and uniform.

use super::*;

#[test]
fn the_generated_text_is_deterministic_and_english_like() {
    let n = 300_000;
    let a = english_text(n, DEFAULT_TEXT_SEED);
    assert_eq!(a.len(), n);
    assert!(
        a == english_text(n, DEFAULT_TEXT_SEED),
        "same seed, same bytes"
    );
    let chunk = gridsync::inputs::text::CHUNK_BYTES;
    let long = english_text(2 * chunk + 5, DEFAULT_TEXT_SEED);
    assert!(
        long[..chunk] == english_text(chunk, DEFAULT_TEXT_SEED)[..],
        "whole chunks agree"
    );
    assert!(
        a != english_text(n, DEFAULT_TEXT_SEED + 1),
        "another seed, other bytes"
    );
    assert!(std::str::from_utf8(&long).is_ok(), "no split UTF-8");

    let h = expected(&a, Bins::Byte);
    let letter = |c: u8| h[c as usize] + h[c.to_ascii_uppercase() as usize];
    let most = (b'a'..=b'z').max_by_key(|&c| letter(c)).unwrap();
    assert_eq!(most, b'e', "e is the most common letter");
    for c in *b"toahn" {
        assert!(letter(c) > letter(b'z') * 20, "{} is common", c as char);
    }
    let space = h[b' ' as usize] as f64 / n as f64;
    assert!((0.12..0.25).contains(&space), "spaces: {space}");
    assert!(h[b'\n' as usize] > 0 && h[b'.' as usize] > 0 && h[b',' as usize] > 0);
    let upper: u64 = (b'A'..=b'Z').map(|c| h[c as usize]).sum();
    let lower: u64 = (b'a'..=b'z').map(|c| h[c as usize]).sum();
    assert!(
        upper * 50 > lower && upper * 4 < lower,
        "capitals: {upper} of {lower}"
    );
    assert!(h[128..].iter().sum::<u64>() > 0, "some UTF-8 (’)");
    every_kernel_counts(&Target::Sim, &a, "generated text");
}

#[test]
fn uniform_bytes_are_deterministic_and_uniform() {
    let a = uniform_bytes(1_000_003, 42);
    assert!(a == uniform_bytes(1_000_003, 42));
    assert!(
        a[..777_777] == uniform_bytes(777_777, 42)[..],
        "a function of the index only"
    );
    assert!(a != uniform_bytes(1_000_003, 43));
    let h = expected(&a, Bins::Byte);
    let mean = a.len() as f64 / 256.0;
    assert!(
        h.iter()
            .all(|&n| (n as f64 - mean).abs() < 6.0 * mean.sqrt()),
        "{h:?}"
    );
}
