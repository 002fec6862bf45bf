//! The book's `xy.txt`: one atom per line, `x y` (or `x y z` for 3-D atoms) separated by white
//! space. Blank lines and `#` comments are skipped; an optional first line holding only an
//! integer gives the atom count, checked against the lines that follow. Every line has the
//! column count of the first atom's line.
//!
//! ```text
//! 3
//! 0 0        # a bond 1.42 Å long, then a third atom
//! 1.42 0
//! 2.13 1.2297
//! ```

use super::points::Atoms;
use crate::runtime::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Host bytes per byte of an `xy.txt` while reading it: the text, and at most 8 bytes of
/// `f64` per 2 bytes of text (`"1 2\n"` holds two), doubled while the vectors grow.
const READ_BYTES_PER_BYTE: u64 = 1 + 2 * 4;

/// The longest part of a malformed line quoted in an error.
const QUOTED: usize = 60;

/// Reads atoms from an `xy.txt` file (format in the [module docs](self)).
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::TooLarge`] if reading it needs more host
/// memory than is available; [`Error::InvalidInput`] as [`parse_xy`], naming the file.
pub fn read_xy(path: &Path) -> Result<Atoms> {
    crate::runtime::memory::check_file(path, READ_BYTES_PER_BYTE)?;
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    parse(&text, &name)
}

/// Parses atoms from the text of an `xy.txt` (format in the [module docs](self)).
///
/// # Errors
/// [`Error::InvalidInput`] naming the line and its content: a line that does not hold the
/// expected 2 (or 3) numbers (`"xy.txt line 7: expected 2 numbers, found 'abc 1.0'"`), a
/// coordinate that is NaN or infinite, or a count line that disagrees with the atoms that
/// follow (naming both numbers).
pub fn parse_xy(text: &str) -> Result<Atoms> {
    parse(text, "xy.txt")
}

/// [`parse_xy`] with `name` (the file's name) in the messages.
fn parse(text: &str, name: &str) -> Result<Atoms> {
    let mut axes: [Vec<f64>; 3] = Default::default();
    let mut columns = 0;
    let mut count: Option<(u64, usize)> = None;
    let mut first = true;
    for (k, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: String| Error::InvalidInput(format!("{name} line {}: {why}", k + 1));
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if std::mem::take(&mut first)
            && let [only] = tokens[..]
            && let Ok(n) = only.parse::<u64>()
        {
            count = Some((n, k + 1));
            continue;
        }
        if columns == 0 {
            columns = tokens.len();
            if !(2..=3).contains(&columns) {
                return Err(bad(format!(
                    "expected 2 or 3 numbers, found '{}'",
                    quote(line)
                )));
            }
        }
        let values: Option<Vec<f64>> = tokens.iter().map(|t| t.parse::<f64>().ok()).collect();
        let values = match values {
            Some(v) if v.len() == columns => v,
            _ => {
                return Err(bad(format!(
                    "expected {columns} numbers, found '{}'",
                    quote(line)
                )));
            }
        };
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(bad(format!("coordinate {v} is not a finite number")));
        }
        for (axis, v) in axes.iter_mut().zip(values) {
            axis.push(v);
        }
    }
    let atoms = axes[0].len();
    if let Some((n, line)) = count.filter(|&(n, _)| n != atoms as u64) {
        return Err(Error::InvalidInput(format!(
            "{name} line {line}: the count line says {n} atoms, but {atoms} lines of coordinates follow"
        )));
    }
    let [x, y, z] = axes;
    if columns == 3 {
        Atoms::new3(x, y, z)
    } else {
        Atoms::new2(x, y)
    }
}

/// At most [`QUOTED`] characters of `line`, marked when cut.
fn quote(line: &str) -> String {
    match line.char_indices().nth(QUOTED) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// Writes `atoms` to the file `path` as [`format_xy`] does.
///
/// # Errors
/// [`Error::Io`] naming the file if it cannot be written.
pub fn write_xy(path: &Path, atoms: &Atoms) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    write_to(&mut w, atoms).map_err(io)?;
    w.flush().map_err(io)
}

/// The text of an `xy.txt` holding `atoms`: the count line, then one `x y` (or `x y z`) line
/// per atom. Each number is written with Rust's shortest round-trip form, so
/// [`parse_xy`] gives back the same `f64`s. No atoms leave no line to say the dimension: the
/// file of an empty 3-D set reads back as an empty 2-D one.
pub fn format_xy(atoms: &Atoms) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail, and it holds only the ASCII written here.
    let _ = write_to(&mut out, atoms);
    String::from_utf8(out).unwrap_or_default()
}

fn write_to(w: &mut impl Write, atoms: &Atoms) -> std::io::Result<()> {
    writeln!(w, "{}", atoms.len())?;
    for i in 0..atoms.len() {
        let [x, y, z] = atoms.point(i);
        match atoms.dims() {
            3 => writeln!(w, "{x} {y} {z}")?,
            _ => writeln!(w, "{x} {y}")?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_books_format_with_comments_blanks_and_a_count() {
        let a = parse_xy("# sheet\n3\n\n0 0\n  \n1.42\t0 # bond\n2.13 1.2297\n").unwrap();
        assert_eq!((a.len(), a.dims()), (3, 2));
        assert_eq!(a.point(2), [2.13, 1.2297, 0.0]);
        let b = parse_xy("1 2 3\n4 5 6\n").unwrap();
        assert_eq!((b.len(), b.dims(), b.point(1)), (2, 3, [4.0, 5.0, 6.0]));
        assert!(parse_xy("").unwrap().is_empty());
        assert!(parse_xy("0\n").unwrap().is_empty());
    }

    #[test]
    fn malformed_lines_are_named_with_their_content() {
        for (text, want) in [
            (
                "0 0\n1 1\n\n1 2\n3 4\n5 6\nabc 1.0\n",
                "xy.txt line 7: expected 2 numbers, found 'abc 1.0'",
            ),
            ("0 0\n1 2 3\n", "line 2: expected 2 numbers, found '1 2 3'"),
            ("1 2 3\n1 2\n", "line 2: expected 3 numbers"),
            ("1.5\n", "line 1: expected 2 or 3 numbers, found '1.5'"),
            ("0 0\n7\n", "line 2: expected 2 numbers, found '7'"),
            ("0 nan\n", "line 1: coordinate NaN is not a finite number"),
            ("0 inf\n", "line 1: coordinate inf is not a finite number"),
        ] {
            let e = parse_xy(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_count_line_is_checked() {
        let e = parse_xy("3\n0 0\n1 1\n").unwrap_err().to_string();
        assert!(e.contains("says 3 atoms, but 2 lines"), "{e}");
    }

    #[test]
    fn files_round_trip_exactly() {
        let a = Atoms::new2(
            vec![0.1, -1e-300, 12345.678901234567],
            vec![1.0 / 3.0, 2.0, 1e22],
        )
        .unwrap();
        assert_eq!(parse_xy(&format_xy(&a)).unwrap(), a);
        let b = Atoms::new3(vec![0.5], vec![-0.25], vec![std::f64::consts::PI]).unwrap();
        let path = std::env::temp_dir().join(format!("neighbor-xy-{}.txt", std::process::id()));
        write_xy(&path, &b).unwrap();
        let back = read_xy(&path);
        let _ = std::fs::remove_file(&path);
        assert_eq!(back.unwrap(), b);
        let missing = read_xy(Path::new("/nonexistent/xy.txt")).unwrap_err();
        assert!(matches!(missing, Error::Io { .. }), "{missing}");
    }
}
