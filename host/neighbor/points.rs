//! [`Atoms`]: the coordinates a neighbor list is built from, in `f64`, 2-D or 3-D, with
//! conversions to and from `nalgebra` points and to the kernels' `f32`. Files are in
//! [`super::xy`].

use super::reference::{Coords, Real};
use crate::runtime::error::{Error, Result};
use nalgebra::{Point2, Point3, Scalar};

/// The coordinates of N atoms, one array per axis (the book's `x` and `y`), in Å by the book's
/// convention; `z` is `None` for 2-D atoms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Atoms {
    x: Vec<f64>,
    y: Vec<f64>,
    z: Option<Vec<f64>>,
}

impl Atoms {
    /// 2-D atoms from their `x` and `y`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the lengths differ.
    pub fn new2(x: Vec<f64>, y: Vec<f64>) -> Result<Self> {
        same_lengths(&[x.len(), y.len()])?;
        Ok(Atoms { x, y, z: None })
    }

    /// 3-D atoms from their `x`, `y` and `z`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the lengths differ.
    pub fn new3(x: Vec<f64>, y: Vec<f64>, z: Vec<f64>) -> Result<Self> {
        same_lengths(&[x.len(), y.len(), z.len()])?;
        Ok(Atoms { x, y, z: Some(z) })
    }

    /// How many atoms.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// 2 or 3.
    pub fn dims(&self) -> usize {
        if self.z.is_some() { 3 } else { 2 }
    }

    /// Every atom's x.
    pub fn x(&self) -> &[f64] {
        &self.x
    }

    /// Every atom's y.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// Every atom's z, or `None` for 2-D atoms.
    pub fn z(&self) -> Option<&[f64]> {
        self.z.as_deref()
    }

    /// Atom `i` as `[x, y, z]` (z = 0 in 2-D).
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn point(&self, i: usize) -> [f64; 3] {
        [self.x[i], self.y[i], self.z.as_ref().map_or(0.0, |z| z[i])]
    }

    /// The coordinates as the CPU references read them, in `f64`.
    pub fn coords(&self) -> Coords<'_, f64> {
        Coords {
            x: &self.x,
            y: &self.y,
            z: self.z.as_deref(),
        }
    }

    /// Checks that every coordinate is finite.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first atom with a NaN or infinite coordinate, the
    /// axis and the value.
    pub fn check_finite(&self) -> Result<()> {
        let axes = [Some(&self.x), Some(&self.y), self.z.as_ref()];
        // The first atom over all axes, not the first axis holding a bad value.
        let bad = axes
            .iter()
            .enumerate()
            .filter_map(|(d, v)| Some((v.as_ref()?.iter().position(|c| !c.is_finite())?, d)))
            .min();
        match bad {
            None => Ok(()),
            Some((i, d)) => Err(Error::InvalidInput(format!(
                "atom {i}: {} = {} is not a finite number",
                ["x", "y", "z"][d],
                self.point(i)[d]
            ))),
        }
    }

    /// 2-D atoms from `nalgebra` points (`f32` or `f64`).
    pub fn from_points2<T: Real + Scalar>(points: &[Point2<T>]) -> Self {
        Atoms {
            x: points.iter().map(|p| p.x.to_f64()).collect(),
            y: points.iter().map(|p| p.y.to_f64()).collect(),
            z: None,
        }
    }

    /// 3-D atoms from `nalgebra` points (`f32` or `f64`).
    pub fn from_points3<T: Real + Scalar>(points: &[Point3<T>]) -> Self {
        Atoms {
            x: points.iter().map(|p| p.x.to_f64()).collect(),
            y: points.iter().map(|p| p.y.to_f64()).collect(),
            z: Some(points.iter().map(|p| p.z.to_f64()).collect()),
        }
    }

    /// The atoms as `nalgebra` 2-D points, rounded to `T`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for 3-D atoms (dropping z would change the neighbors).
    pub fn to_points2<T: Real + Scalar>(&self) -> Result<Vec<Point2<T>>> {
        if self.z.is_some() {
            return Err(Error::InvalidInput(
                "3-D atoms cannot become 2-D points".into(),
            ));
        }
        Ok(self
            .x
            .iter()
            .zip(&self.y)
            .map(|(&x, &y)| Point2::new(T::from_f64(x), T::from_f64(y)))
            .collect())
    }

    /// The atoms as `nalgebra` 3-D points, rounded to `T`; 2-D atoms get z = 0.
    pub fn to_points3<T: Real + Scalar>(&self) -> Vec<Point3<T>> {
        (0..self.len())
            .map(|i| {
                let [x, y, z] = self.point(i);
                Point3::new(T::from_f64(x), T::from_f64(y), T::from_f64(z))
            })
            .collect()
    }

    /// The coordinates rounded to `T` for the kernels of that precision: `(x, y, z)`, `z`
    /// `None` in 2-D. Rounding can merge atoms closer than an ulp of `T` and move pairs across
    /// the cutoff, so compare a kernel with a reference run on these values.
    pub fn rounded<T: Real>(&self) -> (Vec<T>, Vec<T>, Option<Vec<T>>) {
        let round = |v: &[f64]| v.iter().map(|&c| T::from_f64(c)).collect::<Vec<T>>();
        (round(&self.x), round(&self.y), self.z.as_deref().map(round))
    }

    /// [`Atoms::rounded`] to `f32`, for the single-precision kernels.
    pub fn to_f32(&self) -> (Vec<f32>, Vec<f32>, Option<Vec<f32>>) {
        self.rounded()
    }
}

impl<T: Real + Scalar> From<&[Point2<T>]> for Atoms {
    /// As [`Atoms::from_points2`].
    fn from(points: &[Point2<T>]) -> Self {
        Atoms::from_points2(points)
    }
}

impl<T: Real + Scalar> From<&[Point3<T>]> for Atoms {
    /// As [`Atoms::from_points3`].
    fn from(points: &[Point3<T>]) -> Self {
        Atoms::from_points3(points)
    }
}

/// Refuses coordinate arrays of different lengths.
fn same_lengths(lens: &[usize]) -> Result<()> {
    if lens.windows(2).all(|w| w[0] == w[1]) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "coordinate arrays differ in length: {lens:?}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn lengths_must_match() {
        assert!(Atoms::new2(vec![1.0], vec![]).is_err());
        assert!(Atoms::new3(vec![1.0], vec![2.0], vec![]).is_err());
        let a = Atoms::new3(vec![1.0], vec![2.0], vec![3.0]).unwrap();
        assert_eq!((a.len(), a.dims(), a.point(0)), (1, 3, [1.0, 2.0, 3.0]));
        assert!(Atoms::default().is_empty());
    }

    #[test]
    fn non_finite_coordinates_name_the_first_atom() {
        let a = Atoms::new2(vec![0.0, 1.0, f64::INFINITY], vec![0.0, f64::NAN, 2.0]).unwrap();
        let e = a.check_finite().unwrap_err().to_string();
        assert!(e.contains("atom 1: y = NaN"), "{e}");
        let b = Atoms::new3(vec![0.0], vec![0.0], vec![f64::NEG_INFINITY]).unwrap();
        assert!(
            b.check_finite()
                .unwrap_err()
                .to_string()
                .contains("atom 0: z = -inf")
        );
        Atoms::new2(vec![1.0], vec![2.0])
            .unwrap()
            .check_finite()
            .unwrap();
    }

    #[test]
    fn nalgebra_points_convert_both_ways() {
        let p2 = [Point2::new(1.5f32, -2.0), Point2::new(0.1, 3.0)];
        let a = Atoms::from(&p2[..]);
        assert_eq!(a.dims(), 2);
        assert_relative_eq!(a.x()[1], 0.1, epsilon = 1e-7);
        assert_eq!(a.to_points2::<f32>().unwrap(), p2);
        let p3 = [Point3::new(1.0f64, 2.0, 3.0)];
        let b = Atoms::from(&p3[..]);
        assert_eq!(b.to_points3::<f64>(), p3);
        assert!(b.to_points2::<f64>().is_err());
        assert_eq!(a.to_points3::<f64>()[0].z, 0.0);
        let (x, y, z) = b.to_f32();
        assert_eq!((x, y, z), (vec![1.0], vec![2.0], Some(vec![3.0])));
    }
}
