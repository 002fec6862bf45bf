//! The six value types as the model sees them ([`Value`]), each with its typed launch of its
//! check kernel, `gpu::checks::atomics::atomics_check_<type>`.

use super::cases::{Case, ValueType};
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::{KernelParam, Target};
use gpu::LaunchConfig;
use std::cmp::Ordering;
use std::fmt;

mod sealed {
    use super::*;

    /// The typed launch, kept out of the public trait.
    pub trait Launch: Sized {
        fn launch_check(
            target: &Target,
            case: &Case,
            cfg: LaunchConfig,
            buffers: (&Buffer<Self>, &Buffer<Self>, &Buffer<Self>),
            n: u32,
            limit: u32,
        ) -> Result<()>
        where
            Self: Plain;
    }
}

/// The six value types, as the model sees them. Sealed.
pub trait Value: Plain + KernelParam + fmt::Debug + sealed::Launch {
    /// Which [`ValueType`] this is.
    const TYPE: ValueType;
    /// What `olds` is poisoned with: odd for integers, a NaN for floats. No drawn input lets a
    /// thread see it, so a slot still holding it was not written.
    const SENTINEL: Self;
    /// The largest integer this type's additions stay exact and in range up to.
    const EXACT_MAX: i64;
    /// Whether it has negative values.
    const SIGNED: bool;
    /// Whether it is a float (random values are then integers up to [`Value::EXACT_MAX`]).
    const FLOAT: bool;
    /// The integer `v`, which must be exact in this type.
    fn from_i64(v: i64) -> Self;
    /// The value whose bit pattern is the low bits of `b`.
    fn from_bits(b: u64) -> Self;
    /// The bit pattern, zero-extended.
    fn bits(self) -> u64;
    /// `self + o` as the atomic add computes it (wrapping for integers).
    fn plus(self, o: Self) -> Self;
    /// `self - o`, likewise.
    fn minus(self, o: Self) -> Self;
    /// A total order (IEEE `totalOrder` for floats).
    fn order(&self, o: &Self) -> Ordering;
}

macro_rules! values {
    ($($t:ident: $variant:ident, $kernel:ident, bits $unsigned:ty, exact $exact:expr,
       sentinel $sentinel:expr, signed $signed:literal, order $cmp:ident,
       |$x:ident| $to_bits:expr, |$b:ident| $from_bits:expr, |$p:ident, $q:ident| $plus:expr, $minus:expr;)*) => {$(
        impl sealed::Launch for $t {
            fn launch_check(
                target: &Target,
                case: &Case,
                cfg: LaunchConfig,
                (targets, operands, olds): (&Buffer<$t>, &Buffer<$t>, &Buffer<$t>),
                n: u32,
                limit: u32,
            ) -> Result<()> {
                if targets.is_empty() || operands.len() < n as usize || olds.len() < n as usize {
                    return Err(Error::InvalidInput(format!("{case}: buffers too small for n = {n}")));
                }
                // SAFETY: the kernel touches `targets[..targets.len()]`, `operands[..n]` and
                // `olds[..n]`, all allocated (checked above): the targets only atomically, the
                // rest only from the thread that owns the index. The buffers outlive the launch
                // (the caller downloads, which synchronizes, before dropping them).
                unsafe {
                    crate::launch!(target, gpu::checks::atomics::$kernel, cfg, (
                        case.op as u32, case.scope as u32, case.order as u32,
                        targets.ptr(), targets.len() as u32, operands.ptr().cast_const(),
                        olds.ptr(), n, limit,
                    ))
                }
            }
        }

        impl Value for $t {
            const TYPE: ValueType = ValueType::$variant;
            const SENTINEL: $t = $sentinel;
            const EXACT_MAX: i64 = $exact;
            const SIGNED: bool = $signed;
            const FLOAT: bool = matches!(ValueType::$variant, ValueType::F32 | ValueType::F64);
            fn from_i64(v: i64) -> $t {
                v as $t
            }
            fn from_bits(b: u64) -> $t {
                let $b = b as $unsigned;
                $from_bits
            }
            fn bits(self) -> u64 {
                let $x = self;
                $to_bits as u64
            }
            fn plus(self, $q: $t) -> $t {
                let $p = self;
                $plus
            }
            fn minus(self, $q: $t) -> $t {
                let $p = self;
                $minus
            }
            fn order(&self, o: &$t) -> Ordering {
                <$t>::$cmp(self, o)
            }
        }
    )*};
}

values! {
    u32: U32, atomics_check_u32, bits u32, exact u32::MAX as i64, sentinel 0xDEAD_BEEF,
        signed false, order cmp, |x| x, |b| b, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    i32: I32, atomics_check_i32, bits u32, exact i32::MAX as i64, sentinel 0xDEAD_BEEF_u32 as i32,
        signed true, order cmp, |x| x as u32, |b| b as i32, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    u64: U64, atomics_check_u64, bits u64, exact i64::MAX, sentinel 0xDEAD_BEEF_DEAD_BEEF,
        signed false, order cmp, |x| x, |b| b, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    i64: I64, atomics_check_i64, bits u64, exact i64::MAX, sentinel 0xDEAD_BEEF_DEAD_BEEF_u64 as i64,
        signed true, order cmp, |x| x as u64, |b| b as i64, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    // Floats: integers up to 2^24 (2^53) are exact, so sums of them are too.
    f32: F32, atomics_check_f32, bits u32, exact 1 << 24, sentinel f32::from_bits(0x7FC0_BEEF),
        signed true, order total_cmp, |x| x.to_bits(), |b| f32::from_bits(b), |p, q| p + q, p - q;
    f64: F64, atomics_check_f64, bits u64, exact 1 << 53, sentinel f64::from_bits(0x7FF8_DEAD_BEEF_0000),
        signed true, order total_cmp, |x| x.to_bits(), |b| f64::from_bits(b), |p, q| p + q, p - q;
}
