//! [`Real`]: the floating-point types the references run in.

use std::fmt::Debug;
use std::ops::{Add, Mul, Neg, Sub};

/// The floating-point types the references run in: `f32` and `f64`.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + Send
    + Sync
    + Debug
    + 'static
{
    /// `v` rounded to this type.
    fn from_f64(v: f64) -> Self;
    /// This value as `f64` (exact).
    fn to_f64(self) -> f64;
    /// Zero.
    const ZERO: Self;
    /// The type's machine epsilon, as `f64`: bounds the rounding of one operation.
    const EPSILON: f64;
}

impl Real for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    const ZERO: Self = 0.0;
    const EPSILON: f64 = f32::EPSILON as f64;
}

impl Real for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    const ZERO: Self = 0.0;
    const EPSILON: f64 = f64::EPSILON;
}
