//! How partials combine: the one [`Op`] of the multi-GPU and multi-process calls, the
//! [`Partial`] values NCCL and the host combine the same way, and the one error bound of a float
//! sum over several devices or ranks ([`sum_bound`]). (Their names in NCCL's terms are
//! `nccl.rs`'s, the one module that speaks to NCCL.)

use crate::runtime::buffer::Plain;

/// How partials combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Added.
    Sum,
    /// The smallest.
    Min,
    /// The largest.
    Max,
}

/// The element types of [`Partial`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// `f64`.
    F64,
    /// `f32`.
    F32,
    /// `u64`.
    U64,
}

/// A partial result NCCL can reduce, and the host can combine the same way.
pub trait Partial: Plain {
    /// The element type, as the combiners name it.
    const ELEMENT: Element;
    /// `a` and `b` combined by `op` (min/max skip a NaN, as the kernels do).
    fn combine(a: Self, b: Self, op: Op) -> Self;
    /// What a device with no elements contributes: 0 for a sum; for min and max of floats a
    /// NaN — "no number", as the kernels' own min/max say it, so that an input with no number
    /// gives NaN on any number of devices as on one — and of integers the largest or the
    /// smallest value. A NaN is skipped by the host's combine (`f32::min`) and by NCCL's
    /// float min/max (`fminf`/`fmaxf`; a test on the GPUs checks it).
    fn identity(op: Op) -> Self;
}

macro_rules! partial {
    ($t:ty, $element:ident, $min:expr, $max:expr, $top:expr, $bottom:expr) => {
        impl Partial for $t {
            const ELEMENT: Element = Element::$element;
            fn combine(a: $t, b: $t, op: Op) -> $t {
                match op {
                    Op::Sum => a + b,
                    Op::Min => $min(a, b),
                    Op::Max => $max(a, b),
                }
            }
            fn identity(op: Op) -> $t {
                match op {
                    Op::Sum => 0 as $t,
                    Op::Min => $top,
                    Op::Max => $bottom,
                }
            }
        }
    };
}
partial!(f64, F64, f64::min, f64::max, f64::NAN, f64::NAN);
partial!(f32, F32, f32::min, f32::max, f32::NAN, f32::NAN);
partial!(u64, U64, Ord::min, Ord::max, u64::MAX, 0);

/// How far a Σ of `f32` data accumulated in `f64` over `parts` devices or ranks may be from the
/// CPU's compensated Σ (`reduce::sum_cpu`), for data whose Σ|x| is `sum_abs`: each device's
/// `f64` accumulation over a tree of depth below 64, then the partials added in `f64`, one
/// rounding of at most 2⁻⁵³·Σ|x| per part on each side. The one bound of every multi-GPU sum.
pub fn sum_bound(sum_abs: f64, parts: usize) -> f64 {
    (64.0 + 2.0 * parts as f64) * f64::EPSILON * sum_abs
}
