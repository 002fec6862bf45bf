//! A histogram's counts written to a file (`--output FILE`): NumPy's `.npy` (a one-dimensional
//! array of little-endian `u64`, `numpy.load` reads it) where the name ends in `.npy`, else CSV
//! (`bin,count`, a header line, then one line per bin, every bin, zeros included).
//!
//! The `.npy` format is written here rather than through a crate: it is a fixed 10-byte preamble
//! and one line of header, then the raw values — a dependency (and its array types) for that
//! would weigh more than the format.

use crate::runtime::error::{Error, Result};
use std::path::Path;

/// Whether `path` names a `.npy` file (else the counts go out as CSV).
pub fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// Checks, before anything runs, that the counts can be written at `path`: not a directory,
/// and its directory exists.
///
/// # Errors
/// [`Error::InvalidInput`] naming `--output` and what is wrong.
pub fn check_output(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(Error::InvalidInput(format!(
            "--output {}: a directory, not a file",
            path.display()
        )));
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir
        && !dir.is_dir()
    {
        return Err(Error::InvalidInput(format!(
            "--output {}: no directory {}",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// The `.npy` bytes of `counts`: format 1.0, dtype `<u8`, shape `(len,)`.
pub fn npy_bytes(counts: &[u64]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<u8', 'fortran_order': False, 'shape': ({},), }}",
        counts.len()
    );
    // The preamble (magic, version, header length) and the header end on a multiple of 64
    // bytes, the header with a newline last.
    let unpadded = 10 + dict.len() + 1;
    let header_len = unpadded.div_ceil(64) * 64 - 10;
    let mut out = Vec::with_capacity(10 + header_len + counts.len() * 8);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header_len as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(10 + header_len - 1, b' ');
    out.push(b'\n');
    for c in counts {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out
}

/// The CSV text of `counts`: `bin,count`, then `i,counts[i]` for every bin.
pub fn csv_text(counts: &[u64]) -> String {
    let mut out = String::with_capacity(16 + counts.len() * 12);
    out.push_str("bin,count\n");
    for (bin, c) in counts.iter().enumerate() {
        out.push_str(&format!("{bin},{c}\n"));
    }
    out
}

/// Writes `counts` to `path`: `.npy` or CSV by the name ([`is_npy`]).
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_counts(path: &Path, counts: &[u64]) -> Result<()> {
    let bytes = if is_npy(path) {
        npy_bytes(counts)
    } else {
        csv_text(counts).into_bytes()
    };
    std::fs::write(path, bytes).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_headers_are_aligned_and_hold_the_shape() {
        for n in [0usize, 1, 128, 256, 65_536] {
            let counts: Vec<u64> = (0..n as u64).map(|i| i * 3 + 1).collect();
            let b = npy_bytes(&counts);
            assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
            let header_len = u16::from_le_bytes([b[8], b[9]]) as usize;
            assert_eq!((10 + header_len) % 64, 0);
            let header = std::str::from_utf8(&b[10..10 + header_len]).unwrap();
            assert!(header.contains(&format!("'shape': ({n},)")), "{header}");
            assert!(header.contains("'descr': '<u8'") && header.ends_with('\n'));
            let data: Vec<u64> = b[10 + header_len..]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            assert_eq!(data, counts);
        }
    }

    #[test]
    fn csv_has_every_bin_and_names_are_told_apart() {
        assert_eq!(csv_text(&[5, 0, 7]), "bin,count\n0,5\n1,0\n2,7\n");
        assert!(is_npy(Path::new("a/counts.NPY")));
        assert!(!is_npy(Path::new("counts.csv")) && !is_npy(Path::new("npy")));
        assert!(check_output(Path::new("/nonexistent-dir/x.csv")).is_err());
        assert!(check_output(Path::new("/")).is_err());
        assert!(check_output(Path::new("counts.csv")).is_ok());
    }
}
