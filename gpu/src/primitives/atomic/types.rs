//! The six value types, each mapped onto the backend's bit-level operations.
//!
//! A value travels to the backend as its bit pattern (`u32` or `u64`); the PTX type suffix
//! (`.s32`, `.f64`, …) chosen for it is what gives the bits their meaning.

use super::imp;
use super::{Atomic, AtomicAdd, AtomicInt, LoadOrder, Order, Scope, StoreOrder, sealed};

macro_rules! impl_atomic {
    ($t:ty, $bits:ty, |$x:ident| $to:expr, |$b:ident| $from:expr,
     $exch:ident, $cas:ident, $ld:ident, $st:ident) => {
        impl sealed::Sealed for $t {}

        impl Atomic for $t {
            type Bits = $bits;
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn to_bits(self) -> $bits {
                let $x = self;
                $to
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn exch(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self {
                // SAFETY: forwarded contract; `$t` and `$bits` have the same size and alignment.
                let $b = unsafe { imp::$exch(addr.cast(), val.to_bits(), scope, order) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn cas(
                addr: *mut Self,
                compare: Self,
                val: Self,
                scope: Scope,
                order: Order,
            ) -> Self {
                // SAFETY: as in `exch`.
                let $b = unsafe {
                    imp::$cas(addr.cast(), compare.to_bits(), val.to_bits(), scope, order)
                };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn load(addr: *const Self, scope: Scope, order: LoadOrder) -> Self {
                // SAFETY: as in `exch`.
                let $b = unsafe { imp::$ld(addr.cast(), scope, order) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn store(addr: *mut Self, val: Self, scope: Scope, order: StoreOrder) {
                // SAFETY: as in `exch`.
                unsafe { imp::$st(addr.cast(), val.to_bits(), scope, order) }
            }
        }
    };
}

macro_rules! impl_add {
    ($t:ty, |$v:ident| $neg:expr, |$b:ident| $from:expr, $add:ident, $red:ident) => {
        impl AtomicAdd for $t {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn negate(self) -> Self {
                let $v = self;
                $neg
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn add(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self {
                // SAFETY: forwarded contract; same size and alignment.
                let $b = unsafe { imp::$add(addr.cast(), val.to_bits(), scope, order) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn red_add(addr: *mut Self, val: Self, scope: Scope, order: StoreOrder) {
                // SAFETY: forwarded contract; same size and alignment.
                unsafe { imp::$red(addr.cast(), val.to_bits(), scope, order) }
            }
        }
    };
}

macro_rules! impl_int {
    ($t:ty, |$b:ident| $from:expr, $min:ident, $max:ident, $and:ident, $or:ident, $xor:ident) => {
        impl AtomicInt for $t {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn min(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self {
                // SAFETY: forwarded contract; same size and alignment.
                let $b = unsafe { imp::$min(addr.cast(), val.to_bits(), scope, order) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn max(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self {
                // SAFETY: as in `min`.
                let $b = unsafe { imp::$max(addr.cast(), val.to_bits(), scope, order) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn and(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self {
                // SAFETY: as in `min`.
                let $b = unsafe { imp::$and(addr.cast(), val.to_bits(), scope, order) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn or(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self {
                // SAFETY: as in `min`.
                let $b = unsafe { imp::$or(addr.cast(), val.to_bits(), scope, order) };
                $from
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn xor(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self {
                // SAFETY: as in `min`.
                let $b = unsafe { imp::$xor(addr.cast(), val.to_bits(), scope, order) };
                $from
            }
        }
    };
}

impl_atomic!(u32, u32, |x| x, |b| b, exch_b32, cas_b32, ld_b32, st_b32);
impl_atomic!(
    i32,
    u32,
    |x| x as u32,
    |b| b as i32,
    exch_b32,
    cas_b32,
    ld_b32,
    st_b32
);
impl_atomic!(u64, u64, |x| x, |b| b, exch_b64, cas_b64, ld_b64, st_b64);
impl_atomic!(
    i64,
    u64,
    |x| x as u64,
    |b| b as i64,
    exch_b64,
    cas_b64,
    ld_b64,
    st_b64
);
impl_atomic!(
    f32,
    u32,
    |x| x.to_bits(),
    |b| f32::from_bits(b),
    exch_b32,
    cas_b32,
    ld_b32,
    st_b32
);
impl_atomic!(
    f64,
    u64,
    |x| x.to_bits(),
    |b| f64::from_bits(b),
    exch_b64,
    cas_b64,
    ld_b64,
    st_b64
);

impl_add!(u32, |v| v.wrapping_neg(), |b| b, add_u32, red_add_u32);
impl_add!(
    i32,
    |v| v.wrapping_neg(),
    |b| b as i32,
    add_s32,
    red_add_s32
);
impl_add!(u64, |v| v.wrapping_neg(), |b| b, add_u64, red_add_u64);
// PTX has no `atom.add.s64`: two's-complement addition is the same bits as `.u64`.
impl_add!(
    i64,
    |v| v.wrapping_neg(),
    |b| b as i64,
    add_u64,
    red_add_u64
);
impl_add!(f32, |v| -v, |b| f32::from_bits(b), add_f32, red_add_f32);
impl_add!(f64, |v| -v, |b| f64::from_bits(b), add_f64, red_add_f64);

impl_int!(u32, |b| b, min_u32, max_u32, and_b32, or_b32, xor_b32);
impl_int!(
    i32,
    |b| b as i32,
    min_s32,
    max_s32,
    and_b32,
    or_b32,
    xor_b32
);
impl_int!(u64, |b| b, min_u64, max_u64, and_b64, or_b64, xor_b64);
impl_int!(
    i64,
    |b| b as i64,
    min_s64,
    max_s64,
    and_b64,
    or_b64,
    xor_b64
);
