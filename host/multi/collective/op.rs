//! How partials combine: the one [`Op`] of the multi-GPU and multi-process calls, the
//! [`Partial`] values NCCL and the host combine the same way, and the one error bound of a float
//! sum over several devices or ranks ([`sum_bound`]).

use crate::runtime::buffer::Plain;
use cudarc::nccl::sys as nccl_sys;

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

impl Op {
    pub(super) fn nccl(self) -> nccl_sys::ncclRedOp_t {
        match self {
            Op::Sum => nccl_sys::ncclRedOp_t::ncclSum,
            Op::Min => nccl_sys::ncclRedOp_t::ncclMin,
            Op::Max => nccl_sys::ncclRedOp_t::ncclMax,
        }
    }
}

/// A partial result NCCL can reduce, and the host can combine the same way.
pub trait Partial: Plain {
    /// NCCL's name for the type.
    const NCCL: nccl_sys::ncclDataType_t;
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
    ($t:ty, $nccl:ident, $min:expr, $max:expr, $top:expr, $bottom:expr) => {
        impl Partial for $t {
            const NCCL: nccl_sys::ncclDataType_t = nccl_sys::ncclDataType_t::$nccl;
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
partial!(f64, ncclFloat64, f64::min, f64::max, f64::NAN, f64::NAN);
partial!(f32, ncclFloat32, f32::min, f32::max, f32::NAN, f32::NAN);
partial!(u64, ncclUint64, Ord::min, Ord::max, u64::MAX, 0);

/// How far a Σ of `f32` data accumulated in `f64` over `parts` devices or ranks may be from the
/// CPU's compensated Σ (`reduce::sum_cpu`), for data whose Σ|x| is `sum_abs`: each device's
/// `f64` accumulation over a tree of depth below 64, then the partials added in `f64`, one
/// rounding of at most 2⁻⁵³·Σ|x| per part on each side. The one bound of every multi-GPU sum.
pub fn sum_bound(sum_abs: f64, parts: usize) -> f64 {
    (64.0 + 2.0 * parts as f64) * f64::EPSILON * sum_abs
}
