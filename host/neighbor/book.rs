//! The book's `neighbor.txt`: one line per atom holding its neighbor count `NN[n]`, then `MN`
//! slots — the neighbor indices, then `NaN` in the unused slots — separated by spaces:
//!
//! ```text
//! 3 1 7 12 NaN NaN
//! 2 0 5 NaN NaN NaN
//! ```
//!
//! The book's program prints `NaN` without a separating space and exits when a count exceeds
//! `MN`; here every slot is separated and the overflow is an error naming the atom, returned
//! before anything is written.

use super::list::NeighborList;
use crate::runtime::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// What an unused slot holds.
const PADDING: &str = "NaN";

impl NeighborList {
    /// Writes the list in the book's `neighbor.txt` format with `max_neighbors` (`MN`) slots
    /// per line.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first atom with more than `max_neighbors` neighbors
    /// (nothing is written then); [`Error::Io`] (with the path `"neighbor list output"`) if
    /// writing fails — [`NeighborList::write_book_file`] names the file instead.
    pub fn write_book_format(&self, w: &mut impl Write, max_neighbors: usize) -> Result<()> {
        self.check_fits(max_neighbors)?;
        self.write_rows(w, max_neighbors)
            .map_err(|source| Error::Io {
                path: "neighbor list output".into(),
                source,
            })
    }

    /// Writes the list to the file `path` in the book's format (see
    /// [`NeighborList::write_book_format`]).
    ///
    /// # Errors
    /// As [`NeighborList::write_book_format`], with [`Error::Io`] naming `path`.
    pub fn write_book_file(&self, path: &Path, max_neighbors: usize) -> Result<()> {
        self.check_fits(max_neighbors)?;
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
        self.write_rows(&mut w, max_neighbors).map_err(io)?;
        w.flush().map_err(io)
    }

    /// Reads a list written in the book's format. Blank lines are skipped; every line must
    /// have as many slots as the first.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the line: a count that is not a number or exceeds the
    /// slots, an index that is not a number where the count says there is one, a slot after
    /// them that is not `NaN`, a line with a different number of slots, or an index that is out
    /// of range or the atom's own.
    pub fn read_book_format(text: &str) -> Result<Self> {
        let mut offsets = vec![0u32];
        let mut indices = Vec::new();
        let mut slots = None;
        for (k, line) in text.lines().enumerate() {
            let bad = |why: &str| {
                Err(Error::InvalidInput(format!(
                    "neighbor.txt line {}: {why}",
                    k + 1
                )))
            };
            let mut tokens = line.split_whitespace();
            let Some(first) = tokens.next() else { continue };
            let Ok(count) = first.parse::<usize>() else {
                return bad(&format!("count '{first}' is not a number"));
            };
            let rest: Vec<&str> = tokens.collect();
            let expected = *slots.get_or_insert(rest.len());
            if expected != rest.len() {
                return bad(&format!(
                    "{} slots, the first line has {expected}",
                    rest.len()
                ));
            }
            if count > rest.len() {
                return bad(&format!("count {count} exceeds the {} slots", rest.len()));
            }
            for (s, token) in rest.iter().enumerate() {
                if s >= count {
                    if *token != PADDING {
                        return bad(&format!("slot {s} should be {PADDING}, found '{token}'"));
                    }
                } else if let Ok(j) = token.parse::<u32>() {
                    indices.push(j);
                } else {
                    return bad(&format!("neighbor '{token}' is not an index"));
                }
            }
            offsets.push(u32::try_from(indices.len()).map_err(|_| {
                Error::InvalidInput("neighbor.txt: more entries than a u32 offset holds".into())
            })?);
        }
        NeighborList::from_parts(offsets, indices)
    }

    /// Refuses before writing when some atom has more neighbors than slots.
    fn check_fits(&self, max_neighbors: usize) -> Result<()> {
        match self.counts().position(|c| c > max_neighbors) {
            None => Ok(()),
            Some(n) => Err(Error::InvalidInput(format!(
                "atom {n} has {} neighbors, more than --max-neighbors {max_neighbors} \
                 (--max-neighbors {} would hold every atom)",
                self.count(n),
                self.max_count()
            ))),
        }
    }

    /// One line per atom, built in a buffer: formatting each number through `write!` on the
    /// writer is several times slower for millions of lines.
    fn write_rows(&self, w: &mut impl Write, max_neighbors: usize) -> std::io::Result<()> {
        let mut line = Vec::with_capacity(16 * (max_neighbors + 1));
        for n in 0..self.atoms() {
            line.clear();
            let row = self.neighbors(n);
            push_decimal(&mut line, row.len() as u64);
            for &j in row {
                line.push(b' ');
                push_decimal(&mut line, u64::from(j));
            }
            for _ in row.len()..max_neighbors {
                line.push(b' ');
                line.extend_from_slice(PADDING.as_bytes());
            }
            line.push(b'\n');
            w.write_all(&line)?;
        }
        Ok(())
    }
}

/// Appends `v` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[k..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triangle_and_loner() -> NeighborList {
        NeighborList::from_parts(vec![0, 2, 4, 6, 6], vec![1, 2, 0, 2, 0, 1]).unwrap()
    }

    #[test]
    fn writes_the_books_layout_and_reads_it_back() {
        let list = triangle_and_loner();
        let mut out = Vec::new();
        list.write_book_format(&mut out, 3).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "2 1 2 NaN\n2 0 2 NaN\n2 0 1 NaN\n0 NaN NaN NaN\n");
        assert_eq!(NeighborList::read_book_format(&text).unwrap(), list);
        assert_eq!(
            NeighborList::read_book_format("").unwrap(),
            NeighborList::default()
        );
    }

    #[test]
    fn a_file_round_trips() {
        let path = std::env::temp_dir().join(format!("neighbor-book-{}.txt", std::process::id()));
        let list = triangle_and_loner();
        list.write_book_file(&path, 2).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(NeighborList::read_book_format(&text).unwrap(), list);
    }

    #[test]
    fn too_few_slots_is_an_error_before_writing() {
        let mut out = Vec::new();
        let e = triangle_and_loner()
            .write_book_format(&mut out, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("atom 0 has 2 neighbors") && e.contains("--max-neighbors 2"),
            "{e}"
        );
        assert!(out.is_empty());
    }

    #[test]
    fn malformed_lines_are_named() {
        for (text, want) in [
            ("1 1 NaN\nx NaN NaN\n", "line 2: count 'x'"),
            ("1 1 NaN\n1 0\n", "line 2: 1 slots"),
            ("3 1 NaN\n", "line 1: count 3 exceeds"),
            ("1 1 0\n", "line 1: slot 1 should be NaN"),
            ("1 q NaN\n", "line 1: neighbor 'q'"),
            ("1 5 NaN\n", "atom 0 lists neighbor 5"),
        ] {
            let e = NeighborList::read_book_format(text)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
