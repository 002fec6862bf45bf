//! CPU references: the sum in `f64` with compensation (the yardstick every float result's error
//! is measured against), exact wrapping integer sums, and min/max — computed on every core,
//! independently of the device code.

use crate::inputs::par_map_ranges;

/// A compensated `f64` sum (Neumaier): `sum` and the rounding error `c` it has lost. The sum of
/// 10⁹ `f32` this way is off by about one `f64` rounding: far below any `f32` result's error.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Compensated {
    /// The rounded running sum.
    pub sum: f64,
    /// The rounding errors lost from `sum`.
    pub c: f64,
}

impl Compensated {
    /// Adds `x`, keeping its rounding error.
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.c += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    /// Adds another compensated sum.
    pub fn merge(&mut self, other: Compensated) {
        self.add(other.sum);
        self.c += other.c;
    }

    /// `sum + c` (or `sum` when it is not finite).
    pub fn value(self) -> f64 {
        if self.sum.is_finite() {
            self.sum + self.c
        } else {
            self.sum
        }
    }
}

/// Σ `data` in `f64` with compensation, on every core.
pub fn sum_cpu<T: Copy + Into<f64> + Sync>(data: &[T]) -> f64 {
    compensated_sum(data, |x| x.into())
}

/// Σ|`data`| in `f64` with compensation: the scale of a float sum's error bound.
pub fn sum_abs_cpu(data: &[f32]) -> f64 {
    compensated_sum(data, |x| x.abs() as f64)
}

/// Σ `f(x)` over `data`, compensated, one chunk per core, the chunks merged in order.
fn compensated_sum<T: Copy + Sync>(data: &[T], f: impl Fn(T) -> f64 + Sync) -> f64 {
    let parts = par_map_ranges(data.len(), |r| {
        let mut s = Compensated::default();
        for &x in &data[r] {
            s.add(f(x));
        }
        s
    });
    let mut total = Compensated::default();
    for p in parts {
        total.merge(p);
    }
    total.value()
}

/// Σ `data` modulo 2³²: the exact sum, wrapped as the device's `i32` addition wraps.
pub fn sum_i32_wrapping(data: &[i32]) -> i32 {
    par_map_ranges(data.len(), |r| {
        data[r].iter().fold(0i32, |s, &x| s.wrapping_add(x))
    })
    .into_iter()
    .fold(0, i32::wrapping_add)
}

/// Σ `data` modulo 2⁶⁴.
pub fn sum_u64_wrapping(data: &[u64]) -> u64 {
    par_map_ranges(data.len(), |r| {
        data[r].iter().fold(0u64, |s, &x| s.wrapping_add(x))
    })
    .into_iter()
    .fold(0, u64::wrapping_add)
}

/// The smallest element that is not NaN (`x == x`), or `None` if there is none.
pub fn min_cpu<T: Copy + PartialOrd + Sync + Send>(data: &[T]) -> Option<T> {
    extreme(data, |a, b| b < a)
}

/// The largest element that is not NaN, or `None` if there is none.
pub fn max_cpu<T: Copy + PartialOrd + Sync + Send>(data: &[T]) -> Option<T> {
    extreme(data, |a, b| b > a)
}

/// The element `better` prefers over every other, NaNs skipped.
fn extreme<T: Copy + PartialOrd + Sync + Send>(
    data: &[T],
    better: impl Fn(T, T) -> bool + Sync,
) -> Option<T> {
    let pick = |m: Option<T>, x: T| match m {
        _ if x.partial_cmp(&x).is_none() => m,
        Some(m) if !better(m, x) => Some(m),
        _ => Some(x),
    };
    par_map_ranges(data.len(), |r| data[r].iter().copied().fold(None, pick))
        .into_iter()
        .flatten()
        .fold(None, pick)
}

/// `|got − want| / |want|`; the absolute error when `want` is 0; 0 when both are the same
/// infinity or both NaN, ∞ when only one is.
pub fn relative_error(got: f64, want: f64) -> f64 {
    if got == want || (got.is_nan() && want.is_nan()) {
        0.0
    } else if !got.is_finite() || !want.is_finite() {
        f64::INFINITY
    } else if want == 0.0 {
        got.abs()
    } else {
        (got - want).abs() / want.abs()
    }
}
