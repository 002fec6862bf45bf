//! What a reduction is made of: the element it reads, the accumulator it carries, how two
//! accumulators combine, and what it writes — one small trait, [`Reduction`], and one type per
//! reduction the kernels expose.
//!
//! | reduction | element | accumulator | result | combine |
//! |---|---|---|---|---|
//! | [`SumF32`] | `f32` | `f32` | `f32` | `a + b` |
//! | [`SumF32InF64`] | `f32` | `f64` | `f64` | `a + b` in `f64` (every `f32` is exact in `f64`) |
//! | [`SumF32Kahan`] | `f32` | [`Neumaier`] | `f32` | Neumaier's compensated sum |
//! | [`SumF64`] | `f64` | `f64` | `f64` | `a + b` |
//! | [`SumI32`] | `i32` | `i32` | `i32` | wrapping `a + b` (exact modulo 2³²) |
//! | [`SumU64`] | `u64` | `u64` | `u64` | wrapping `a + b` (exact modulo 2⁶⁴) |
//! | [`MinF32`], [`MaxF32`] | `f32` | `f32` | `f32` | `min.f32` / `max.f32`: a NaN loses to any number (±0 compare equal: either may come out) |
//! | [`MinI32`], [`MaxI32`] | `i32` | `i32` | `i32` | `min.s32` / `max.s32` |
//!
//! Integer sums and min/max are exact in any order. Float sums are not: the order of additions
//! sets the rounding, and the kernels fix that order by the launch shape alone (never by timing),
//! which is what makes the single-pass kernels deterministic.

use crate::vector::Vector16;
use crate::warp::{Shuffle, WarpValue};
use core::ops::Add;

/// A value the vector kernels read 16 bytes at a time.
pub trait Element: Copy {
    /// 16 bytes of `Self`, 16-byte aligned: CUDA's `float4`, `int4`, `double2`, `ulonglong2`.
    type Vec16: Vector16<Elem = Self>;
    /// `lift` each lane and `combine` them as a tree: `(l0 ∘ l1) ∘ (l2 ∘ l3)`.
    fn tree<A>(v: Self::Vec16, lift: impl Fn(Self) -> A, combine: impl Fn(A, A) -> A) -> A;
}

/// `N` values of `T` at a 16-byte-aligned address. Reading one through a pointer is a single
/// `ld.global.v4.*` (`N = 4`) or `ld.global.v2.*` (`N = 2`): the alignment promises 16, and
/// LLVM's load-store vectorizer merges the lanes.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vec16<T, const N: usize>(pub [T; N]);

impl<T: Copy, const N: usize> Vector16 for Vec16<T, N> {
    type Elem = T;
}

macro_rules! element {
    ($($t:ty, 4;)*) => {$(
        impl Element for $t {
            type Vec16 = Vec16<$t, 4>;
            #[inline(always)]
            fn tree<A>(v: Vec16<$t, 4>, lift: impl Fn($t) -> A, combine: impl Fn(A, A) -> A) -> A {
                let [a, b, c, d] = v.0;
                combine(combine(lift(a), lift(b)), combine(lift(c), lift(d)))
            }
        }
        const _: () = assert!(size_of::<Vec16<$t, 4>>() == 16);
    )*};
    ($($t:ty, 2;)*) => {$(
        impl Element for $t {
            type Vec16 = Vec16<$t, 2>;
            #[inline(always)]
            fn tree<A>(v: Vec16<$t, 2>, lift: impl Fn($t) -> A, combine: impl Fn(A, A) -> A) -> A {
                let [a, b] = v.0;
                combine(lift(a), lift(b))
            }
        }
        const _: () = assert!(size_of::<Vec16<$t, 2>>() == 16);
    )*};
}
element! { f32, 4; i32, 4; }
element! { f64, 2; u64, 2; }

/// A reduction: how elements become accumulators, how accumulators combine, what is written.
///
/// `combine` must be associative up to rounding and have [`Reduction::identity`] as its
/// identity; the kernels apply it in an order fixed by the launch shape, so one shape gives one
/// result. Every method is pure: it runs the same on the GPU and in the simulator.
pub trait Reduction {
    /// What the input array holds.
    type Item: Element;
    /// What threads carry and blocks exchange (shuffles, shared memory, the partials array).
    type Acc: WarpValue;
    /// What the kernel writes to `result`.
    type Out: Copy;
    /// The accumulator of no elements: 0, +∞ for a minimum, …
    fn identity() -> Self::Acc;
    /// One element as an accumulator.
    fn lift(x: Self::Item) -> Self::Acc;
    /// Two accumulators as one; `a` holds elements before `b`'s in the kernel's order.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The accumulator of the whole input as the result.
    fn finish(acc: Self::Acc) -> Self::Out;
    /// The lanes of one 16-byte load as an accumulator, combined as a tree.
    #[inline(always)]
    fn lift_vec(v: <Self::Item as Element>::Vec16) -> Self::Acc {
        Self::Item::tree(v, Self::lift, Self::combine)
    }
}

/// A compensated `f32` sum: the rounded `sum` and `c`, the rounding error it has lost so far.
///
/// Neumaier's variant of Kahan summation: each addition computes its own rounding error exactly
/// (Fast2Sum, with the operands ordered by magnitude) and adds it to `c`; the result is
/// `sum + c`. The error of a sum of `n` floats is then about one rounding of the result plus a
/// term of order `n·2⁻⁴⁸·Σ|xᵢ|`, instead of order `n·2⁻²⁴·Σ|xᵢ|` for plain `f32` additions.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Neumaier {
    /// The rounded running sum.
    pub sum: f32,
    /// The rounding errors lost from `sum`.
    pub c: f32,
}

impl Add for Neumaier {
    type Output = Neumaier;

    /// `self + other`, the new rounding error kept in `c`.
    #[inline(always)]
    fn add(self, other: Neumaier) -> Neumaier {
        let (a, b) = (self.sum, other.sum);
        let sum = a + b;
        // The part of the smaller operand that `sum` lost (exact, by Sterbenz's lemma).
        let lost = if a.abs() >= b.abs() {
            (a - sum) + b
        } else {
            (b - sum) + a
        };
        Neumaier {
            sum,
            c: (self.c + other.c) + lost,
        }
    }
}

impl Neumaier {
    /// `sum + c`; an infinite (or NaN) `sum` is the result as it is (its `c` is NaN).
    #[inline(always)]
    pub fn value(self) -> f32 {
        if self.sum.is_finite() {
            self.sum + self.c
        } else {
            self.sum
        }
    }
}

impl WarpValue for Neumaier {
    #[inline(always)]
    fn shuffle(self, mode: Shuffle, mask: u32, b: u32) -> Self {
        Neumaier {
            sum: self.sum.shuffle(mode, mask, b),
            c: self.c.shuffle(mode, mask, b),
        }
    }
}

macro_rules! reduction {
    ($($(#[$doc:meta])* $name:ident: $item:ty => $acc:ty => $out:ty,
       identity $id:expr, lift |$x:ident| $lift:expr, combine |$a:ident, $b:ident| $combine:expr,
       finish |$f:ident| $finish:expr;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name;

        impl Reduction for $name {
            type Item = $item;
            type Acc = $acc;
            type Out = $out;
            #[inline(always)]
            fn identity() -> $acc {
                $id
            }
            #[inline(always)]
            fn lift($x: $item) -> $acc {
                $lift
            }
            #[inline(always)]
            fn combine($a: $acc, $b: $acc) -> $acc {
                $combine
            }
            #[inline(always)]
            fn finish($f: $acc) -> $out {
                $finish
            }
        }
    )*};
}

reduction! {
    /// Σ of `f32` in `f32`: the sources' sum.
    SumF32: f32 => f32 => f32,
        identity 0.0, lift |x| x, combine |a, b| a + b, finish |s| s;
    /// Σ of `f32` accumulated in `f64`: each element converted exactly, every addition in `f64`.
    SumF32InF64: f32 => f64 => f64,
        identity 0.0, lift |x| x as f64, combine |a, b| a + b, finish |s| s;
    /// Σ of `f32` with Neumaier compensation, all in `f32` registers.
    SumF32Kahan: f32 => Neumaier => f32,
        identity Neumaier::default(), lift |x| Neumaier { sum: x, c: 0.0 },
        combine |a, b| a + b, finish |s| s.value();
    /// Σ of `f64` in `f64`.
    SumF64: f64 => f64 => f64,
        identity 0.0, lift |x| x, combine |a, b| a + b, finish |s| s;
    /// Σ of `i32`, wrapping: the exact sum modulo 2³², as C's unsigned arithmetic gives.
    SumI32: i32 => i32 => i32,
        identity 0, lift |x| x, combine |a, b| a.wrapping_add(b), finish |s| s;
    /// Σ of `u64`, wrapping: the exact sum modulo 2⁶⁴.
    SumU64: u64 => u64 => u64,
        identity 0, lift |x| x, combine |a, b| a.wrapping_add(b), finish |s| s;
    /// The smallest `f32`; NaNs are skipped (IEEE `minNum`, PTX `min.f32`: a NaN operand gives
    /// the other one — so NaN is the identity), NaN if there is no number.
    MinF32: f32 => f32 => f32,
        identity f32::NAN, lift |x| x, combine |a, b| a.min(b), finish |m| m;
    /// The largest `f32`; NaNs are skipped (IEEE `maxNum`, PTX `max.f32`), NaN if there is no
    /// number.
    MaxF32: f32 => f32 => f32,
        identity f32::NAN, lift |x| x, combine |a, b| a.max(b), finish |m| m;
    /// The smallest `i32` (`i32::MAX` for no elements).
    MinI32: i32 => i32 => i32,
        identity i32::MAX, lift |x| x, combine |a, b| a.min(b), finish |m| m;
    /// The largest `i32` (`i32::MIN` for no elements).
    MaxI32: i32 => i32 => i32,
        identity i32::MIN, lift |x| x, combine |a, b| a.max(b), finish |m| m;
}
