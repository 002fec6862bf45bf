//! `f32` arrays for the demos: read from files, or generated deterministically.
//!
//! Files: raw little-endian `f32` when the name ends in `.f32` or `.bin` (what
//! `numpy.ndarray.tofile` writes for `float32`), otherwise text — numbers separated by spaces
//! and newlines (`numpy.savetxt`'s output for a 1-D array). Text accepts what Rust's `f32`
//! parser accepts, `nan` and `inf` included.
//!
//! Generated data is a hash of the index (SplitMix64), so it is the same on every machine and
//! can be produced in parallel: a billion floats take well under a second on a many-core host.

use crate::runtime::error::{Error, Result};
use std::ops::Range;
use std::path::Path;

/// Extensions read as raw little-endian `f32`.
pub const RAW_EXTENSIONS: [&str; 2] = ["f32", "bin"];

/// Reads an array of `f32` from `path`: raw little-endian if its extension is one of
/// [`RAW_EXTENSIONS`], else whitespace-separated text.
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::TooLarge`] if reading it would take more
/// than the host's available memory; [`Error::InvalidInput`] if a raw file's length is
/// not a multiple of 4 bytes, or a text token is not a number (the message names the line and
/// the token).
pub fn read_f32_file(path: &Path) -> Result<Vec<f32>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let raw = is_raw_f32(path);
    // Raw: the file's bytes, then as many bytes of floats. Text: the file, then at most one
    // 4-byte float per 2 bytes of text ("1 "), twice that while the vector grows.
    crate::runtime::memory::check_file(path, if raw { 2 } else { 5 })?;
    if raw {
        let bytes = std::fs::read(path).map_err(io)?;
        parse_raw_f32(&bytes)
            .map_err(|why| Error::InvalidInput(format!("{}: {why}", path.display())))
    } else {
        let text = std::fs::read_to_string(path).map_err(io)?;
        parse_text_f32(&text)
            .map_err(|why| Error::InvalidInput(format!("{}: {why}", path.display())))
    }
}

/// Whether `path` names a raw little-endian `f32` file (its extension one of
/// [`RAW_EXTENSIONS`]) rather than text.
pub fn is_raw_f32(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| RAW_EXTENSIONS.iter().any(|r| e.eq_ignore_ascii_case(r)))
}

/// Reads an array of 16-bit values from `path`: raw little-endian `u16` (what
/// `numpy.ndarray.tofile` writes for `uint16`: token ids, 16-bit samples).
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::TooLarge`] if reading it would take more
/// than the host's available memory; [`Error::InvalidInput`] if its length is odd.
pub fn read_u16_file(path: &Path) -> Result<Vec<u16>> {
    crate::runtime::memory::check_file(path, 2)?;
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_raw_u16(&bytes).map_err(|why| Error::InvalidInput(format!("{}: {why}", path.display())))
}

/// Little-endian `u16`s from raw bytes.
///
/// # Errors
/// A message if the length is odd.
pub fn parse_raw_u16(bytes: &[u8]) -> std::result::Result<Vec<u16>, String> {
    parse_raw(bytes, "u16", u16::from_le_bytes)
}

/// `N`-byte little-endian values of the type `name` from raw bytes, each read by
/// `from_le_bytes`.
///
/// # Errors
/// A message if the length is not a multiple of `N`.
fn parse_raw<T, const N: usize>(
    bytes: &[u8],
    name: &str,
    from_le_bytes: fn([u8; N]) -> T,
) -> std::result::Result<Vec<T>, String> {
    let (values, []) = bytes.as_chunks::<N>() else {
        return Err(format!(
            "{} bytes is not a whole number of {N}-byte little-endian {name} values",
            bytes.len()
        ));
    };
    Ok(values.iter().map(|&v| from_le_bytes(v)).collect())
}

/// `len` uniform random 16-bit values, value `i` a hash of `seed` and `i`.
pub fn uniform_u16(len: usize, seed: u64) -> Vec<u16> {
    uniform_u16_range(0..len, seed)
}

/// Values `range` of the input [`uniform_u16`] makes with `seed`, without the others.
pub fn uniform_u16_range(range: Range<usize>, seed: u64) -> Vec<u16> {
    let mut v = vec![0u16; range.len()];
    par_chunks_mut(&mut v, |at, chunk| {
        let start = range.start + at;
        for (k, x) in chunk.iter_mut().enumerate() {
            *x = (splitmix64(seed ^ (start + k) as u64) >> 48) as u16;
        }
    });
    v
}

/// `len` token-like 16-bit values: ids below `vocab` drawn with Zipf's law (exponent 1), the
/// way word and token frequencies fall off — id `k` is drawn with probability proportional to
/// `1 / (k + 1)`, so id 0 is the most common, twice as common as id 1. Value `i` is a hash of
/// `seed` and `i`, inverted through the law's cumulative distribution (a table of `vocab`
/// entries, searched).
pub fn zipf_u16(len: usize, seed: u64, vocab: u32) -> Vec<u16> {
    let vocab = vocab.clamp(1, 1 << 16) as usize;
    let mut cdf = Vec::with_capacity(vocab);
    let mut total = 0.0f64;
    for k in 0..vocab {
        total += 1.0 / (k + 1) as f64;
        cdf.push(total);
    }
    let mut v = vec![0u16; len];
    par_chunks_mut(&mut v, |start, chunk| {
        for (k, x) in chunk.iter_mut().enumerate() {
            let u = (splitmix64(seed ^ (start + k) as u64) >> 11) as f64 / (1u64 << 53) as f64;
            let id = cdf.partition_point(|&c| c <= u * total);
            *x = id.min(vocab - 1) as u16;
        }
    });
    v
}

/// Little-endian `f32`s from raw bytes.
///
/// # Errors
/// A message if the length is not a multiple of 4.
pub fn parse_raw_f32(bytes: &[u8]) -> std::result::Result<Vec<f32>, String> {
    parse_raw(bytes, "f32", f32::from_le_bytes)
}

/// `f32`s from text: numbers separated by any whitespace.
///
/// # Errors
/// A message naming the line and the first token that is not a number.
pub fn parse_text_f32(text: &str) -> std::result::Result<Vec<f32>, String> {
    let mut out = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        for token in line.split_whitespace() {
            let v = token
                .parse::<f32>()
                .map_err(|_| format!("line {}: `{token}` is not a number", line_no + 1))?;
            out.push(v);
        }
    }
    Ok(out)
}

/// SplitMix64's finalizer: a well-mixed 64-bit hash of `x`.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` floats uniform in `[lo, hi)`, a deterministic function of `seed` and the index,
/// generated on every core of the host.
pub fn uniform_f32(len: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    uniform_f32_range(0..len, seed, lo, hi)
}

/// Elements `range` of the input [`uniform_f32`] makes with `seed`, without the others: one
/// rank's slice of an input that no process holds whole.
pub fn uniform_f32_range(range: Range<usize>, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut out = vec![0.0f32; range.len()];
    let key = splitmix64(seed);
    par_chunks_mut(&mut out, |at, chunk| {
        let start = range.start + at;
        for (k, v) in chunk.iter_mut().enumerate() {
            // The top 24 bits: every value a multiple of 2^-24, exact in f32.
            let unit = (splitmix64(key ^ (start + k) as u64) >> 40) as f32 / (1u32 << 24) as f32;
            *v = lo + (hi - lo) * unit;
        }
    });
    out
}

/// Runs `f(start, chunk)` over `data` split into one chunk per available core.
pub fn par_chunks_mut<T: Send>(data: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let chunk = chunk_len(data.len());
    std::thread::scope(|s| {
        for (k, c) in data.chunks_mut(chunk).enumerate() {
            let f = &f;
            s.spawn(move || f(k * chunk, c));
        }
    });
}

/// Maps `0..len`, split into one range per available core, with `f`, and returns the results
/// in order: the parallel half of a CPU reduction.
pub fn par_map_ranges<R: Send>(len: usize, f: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
    let chunk = chunk_len(len);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..len)
            .step_by(chunk)
            .map(|start| {
                let f = &f;
                s.spawn(move || f(start..(start + chunk).min(len)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Elements per chunk: the data split over the host's cores, but not into slivers.
fn chunk_len(len: usize) -> usize {
    const MIN_CHUNK: usize = 1 << 16;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    len.div_ceil(cores).max(MIN_CHUNK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_are_little_endian_and_a_partial_value_is_refused() {
        assert_eq!(parse_raw_u16(&[1, 0, 0, 1]), Ok(vec![1, 256]));
        assert_eq!(parse_raw_f32(&1.5f32.to_le_bytes()), Ok(vec![1.5]));
        assert_eq!(
            parse_raw_u16(&[1, 2, 3]).unwrap_err(),
            "3 bytes is not a whole number of 2-byte little-endian u16 values"
        );
        assert_eq!(
            parse_raw_f32(&[0; 6]).unwrap_err(),
            "6 bytes is not a whole number of 4-byte little-endian f32 values"
        );
    }

    #[test]
    fn ranges_of_the_generated_inputs_are_the_whole_cut() {
        for len in [0, 1, 7, 8, 9, 1003, 100_003] {
            let whole = uniform_f32(len, 5, -1.0, 1.0);
            let bytes = crate::histogram::uniform_bytes(len, 5);
            let words = uniform_u16(len, 5);
            for parts in [1, 2, 3, 8] {
                let mut f = Vec::new();
                let mut b = Vec::new();
                let mut w = Vec::new();
                for r in crate::multi::split(len, parts) {
                    w.extend(uniform_u16_range(r.clone(), 5));
                    f.extend(uniform_f32_range(r.clone(), 5, -1.0, 1.0));
                    b.extend(crate::histogram::uniform_bytes_range(r, 5));
                }
                assert_eq!(f, whole, "{len} in {parts}");
                assert_eq!(b, bytes, "{len} in {parts}");
                assert_eq!(w, words, "{len} in {parts}");
            }
        }
    }
}
