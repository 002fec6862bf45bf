//! One kernel per value type that applies any atomic operation, at any scope and ordering, to
//! a few contended addresses and records what each thread saw — the raw material for checking
//! every operation against a sequential model (the tests) and for `gridsync atomics`.
//!
//! Thread `i` of `n` applies operation `op` to `targets[i % n_targets]` with `operands[i]` and
//! writes the value it saw before into `olds[i]`. `op`, `scope` and `order` arrive as numbers
//! ([`AtomicOp`], [`Scope`], [`Order`]); a kernel that receives one it does not support writes
//! nothing, which the host notices because it poisons `olds` first.

use crate::atomic::{self, Atomic, AtomicAdd, AtomicInt, LoadOrder, Order, Scope, StoreOrder};
use crate::index::grid_stride;
use crate::mem::Ptr;

/// The operations the check kernels apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum AtomicOp {
    /// `fetch_add`.
    Add = 0,
    /// `fetch_sub`.
    Sub = 1,
    /// `exch`.
    Exch = 2,
    /// `compare_and_swap(target, 0, operand)`: exactly one thread per target wins.
    Cas = 3,
    /// `store(operand, release)` then `load(acquire)`.
    StoreLoad = 4,
    /// `red_add` (no return: `olds[i]` gets the operand back).
    RedAdd = 5,
    /// Addition built from a compare-and-swap loop (`fetch_update`), the CUDA book's way.
    CasLoopAdd = 6,
    /// `fetch_min` (integers).
    Min = 7,
    /// `fetch_max` (integers).
    Max = 8,
    /// `fetch_and` (integers).
    And = 9,
    /// `fetch_or` (integers).
    Or = 10,
    /// `fetch_xor` (integers).
    Xor = 11,
    /// `fetch_inc` with `limit` (u32).
    Inc = 12,
    /// `fetch_dec` with `limit` (u32).
    Dec = 13,
}

impl AtomicOp {
    /// Every operation.
    pub const ALL: [AtomicOp; 14] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Exch,
        AtomicOp::Cas,
        AtomicOp::StoreLoad,
        AtomicOp::RedAdd,
        AtomicOp::CasLoopAdd,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Inc,
        AtomicOp::Dec,
    ];

    /// The value with this discriminant, if any.
    pub fn from_u32(v: u32) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|op| *op as u32 == v)
    }
}

fn store_order(order: Order) -> StoreOrder {
    match order {
        Order::Release | Order::AcqRel => StoreOrder::Release,
        Order::Relaxed | Order::Acquire => StoreOrder::Relaxed,
    }
}

/// The operations every type has. `None`: not one of them.
#[inline(always)]
unsafe fn apply_common<T: AtomicAdd + AddValues>(
    op: AtomicOp,
    p: *mut T,
    v: T,
    zero: T,
    s: Scope,
    o: Order,
) -> Option<T> {
    // SAFETY: the kernel's caller passes valid, aligned, atomically-accessed targets.
    unsafe {
        Some(match op {
            AtomicOp::Add => atomic::fetch_add(p, v, s, o),
            AtomicOp::Sub => atomic::fetch_sub(p, v, s, o),
            AtomicOp::Exch => atomic::exch(p, v, s, o),
            AtomicOp::Cas => atomic::compare_and_swap(p, zero, v, s, o),
            AtomicOp::StoreLoad => {
                atomic::store(p, v, s, store_order(o));
                atomic::load(p, s, LoadOrder::Acquire)
            }
            AtomicOp::RedAdd => {
                atomic::red_add(p, v, s, store_order(o));
                v
            }
            AtomicOp::CasLoopAdd => atomic::fetch_update(p, s, o, |old| add_values(old, v)),
            _ => return None,
        })
    }
}

/// `a + b` as the native atomic add computes it (wrapping for integers).
trait AddValues: Atomic {
    fn add_values(self, b: Self) -> Self;
}

fn add_values<T: AddValues>(a: T, b: T) -> T {
    a.add_values(b)
}

macro_rules! add_values {
    ($($t:ty: |$a:ident, $b:ident| $e:expr;)*) => {$(
        impl AddValues for $t {
            #[inline(always)]
            fn add_values(self, $b: Self) -> Self {
                let $a = self;
                $e
            }
        }
    )*};
}

add_values! {
    u32: |a, b| a.wrapping_add(b);
    i32: |a, b| a.wrapping_add(b);
    u64: |a, b| a.wrapping_add(b);
    i64: |a, b| a.wrapping_add(b);
    f32: |a, b| a + b;
    f64: |a, b| a + b;
}

#[inline(always)]
unsafe fn apply_int<T: AtomicInt + AddValues>(
    op: AtomicOp,
    p: *mut T,
    v: T,
    zero: T,
    s: Scope,
    o: Order,
) -> Option<T> {
    // SAFETY: as in `apply_common`.
    unsafe {
        Some(match op {
            AtomicOp::Min => atomic::fetch_min(p, v, s, o),
            AtomicOp::Max => atomic::fetch_max(p, v, s, o),
            AtomicOp::And => atomic::fetch_and(p, v, s, o),
            AtomicOp::Or => atomic::fetch_or(p, v, s, o),
            AtomicOp::Xor => atomic::fetch_xor(p, v, s, o),
            _ => return apply_common(op, p, v, zero, s, o),
        })
    }
}

#[inline(always)]
unsafe fn apply_u32(
    op: AtomicOp,
    p: *mut u32,
    v: u32,
    limit: u32,
    s: Scope,
    o: Order,
) -> Option<u32> {
    // SAFETY: as in `apply_common`.
    unsafe {
        Some(match op {
            AtomicOp::Inc => atomic::fetch_inc(p, limit, s, o),
            AtomicOp::Dec => atomic::fetch_dec(p, limit, s, o),
            _ => return apply_int(op, p, v, 0, s, o),
        })
    }
}

macro_rules! check_kernel {
    ($($(#[$doc:meta])* $name:ident: $t:ty, |$op:ident, $p:ident, $v:ident, $limit:ident, $s:ident, $o:ident| $apply:expr;)*) => {$(
        kernel! {
            $(#[$doc])*
            pub unsafe fn $name(
                op: u32, scope: u32, order: u32, targets: *mut $t, n_targets: u32,
                operands: *const $t, olds: *mut $t, n: u32, limit: u32,
            ) {
                let (Some($op), Some($s), Some($o)) =
                    (AtomicOp::from_u32(op), Scope::from_u32(scope), Order::from_u32(order))
                else {
                    return;
                };
                if n_targets == 0 {
                    return;
                }
                let $limit = limit;
                let (operands, olds) = (Ptr::new(operands.cast_mut()), Ptr::new(olds));
                for i in grid_stride(n as usize) {
                    // SAFETY: the host allocates `n` operands and olds and `n_targets` targets.
                    unsafe {
                        let $p = targets.add(i % n_targets as usize);
                        let $v = operands.add(i).load();
                        if let Some(old) = $apply {
                            olds.add(i).store(old);
                        }
                    }
                }
            }
        }
    )*};
}

check_kernel! {
    /// The atomics check for `u32`: every operation, inc and dec included.
    atomics_check_u32: u32, |op, p, v, limit, s, o| apply_u32(op, p, v, limit, s, o);
    /// The atomics check for `i32`.
    atomics_check_i32: i32, |op, p, v, limit, s, o| { let _ = limit; apply_int(op, p, v, 0, s, o) };
    /// The atomics check for `u64`.
    atomics_check_u64: u64, |op, p, v, limit, s, o| { let _ = limit; apply_int(op, p, v, 0, s, o) };
    /// The atomics check for `i64`.
    atomics_check_i64: i64, |op, p, v, limit, s, o| { let _ = limit; apply_int(op, p, v, 0, s, o) };
    /// The atomics check for `f32`: add, sub, exch, CAS, load/store, red and the CAS-loop add.
    atomics_check_f32: f32, |op, p, v, limit, s, o| { let _ = limit; apply_common(op, p, v, 0.0, s, o) };
    /// The atomics check for `f64`: as for `f32`; compare the native add with the CAS loop.
    atomics_check_f64: f64, |op, p, v, limit, s, o| { let _ = limit; apply_common(op, p, v, 0.0, s, o) };
}
