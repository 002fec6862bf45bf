//! The values of the command line's options that are more than one number — a launch shape
//! (`132x256`), a periodic box (`X,Y[,Z]`), a plot window (`X0,Y0,X1,Y1`) — parsed here, in the
//! library, so that every parser of user input can be tested and fuzzed in one place. Each
//! returns the message clap shows.

use gridsync::locks::Shape;

/// `BLOCKSxTHREADS` (also `B×T`, `BXT`), e.g. `132x256`.
///
/// # Errors
/// A message naming the value when it is not two whole numbers around an `x`.
pub fn parse_shape(s: &str) -> Result<Shape, String> {
    let (b, t) = s
        .split_once(['x', '×', 'X'])
        .ok_or_else(|| format!("`{s}`: expected BLOCKSxTHREADS, e.g. 132x256"))?;
    let num = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|e| format!("`{s}`: `{v}`: {e}"))
    };
    Ok(Shape {
        blocks: num(b)?,
        threads: num(t)?,
    })
}

/// Finite numbers separated by commas, as many as one of `counts`, for the option `what`.
///
/// # Errors
/// A message naming the option and the value.
pub fn parse_numbers(s: &str, what: &str, counts: &[usize]) -> Result<Vec<f64>, String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<f64>()
                .map_err(|_| format!("{what}: '{t}' is not a number"))
        })
        .collect::<Result<_, _>>()?;
    if !counts.contains(&v.len()) || v.iter().any(|x| !x.is_finite()) {
        return Err(format!(
            "{what}: expected {counts:?} finite numbers separated by commas, got '{s}'"
        ));
    }
    Ok(v)
}

/// `--periodic X,Y[,Z]`: the box's sides (z 0 in 2-D).
///
/// # Errors
/// As [`parse_numbers`].
pub fn parse_sides(s: &str) -> Result<[f64; 3], String> {
    let v = parse_numbers(s, "--periodic", &[2, 3])?;
    Ok([v[0], v[1], v.get(2).copied().unwrap_or(0.0)])
}

/// `--plot-window X0,Y0,X1,Y1`, with `X1 > X0` and `Y1 > Y0`.
///
/// # Errors
/// As [`parse_numbers`]; a window with no width or height.
pub fn parse_window(s: &str) -> Result<[f64; 4], String> {
    let v = parse_numbers(s, "--plot-window", &[4])?;
    if v[2] <= v[0] || v[3] <= v[1] {
        return Err(format!(
            "--plot-window {s}: X1 must exceed X0 and Y1 exceed Y0"
        ));
    }
    Ok([v[0], v[1], v[2], v[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_sides_and_windows_parse_or_say_why() {
        let s = parse_shape("132x256").unwrap();
        assert_eq!((s.blocks, s.threads), (132, 256));
        assert!(parse_shape("132×256").is_ok() && parse_shape(" 4 X 8 ").is_ok());
        for bad in ["132", "x", "-1x2", "1x99999999999", ""] {
            assert!(parse_shape(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_sides("10,20").unwrap(), [10.0, 20.0, 0.0]);
        assert_eq!(parse_sides(" 1, 2 ,3").unwrap(), [1.0, 2.0, 3.0]);
        for bad in ["10", "1,2,3,4", "1,nan", "1,inf", "a,b", ""] {
            assert!(parse_sides(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_window("0,0,1,2").unwrap(), [0.0, 0.0, 1.0, 2.0]);
        let e = parse_window("0,0,0,1").unwrap_err();
        assert!(e.contains("X1 must exceed X0"), "{e}");
    }
}
