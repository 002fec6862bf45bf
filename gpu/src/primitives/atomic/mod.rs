//! Atomic operations with their scope and memory ordering explicit.
//!
//! # Why not `core::sync::atomic`?
//!
//! It works on the device, but every operation it emits is **system**-scoped
//! (`atom.acquire.sys.global.cas.b32`): coherent with the host and other GPUs, and the slowest
//! kind there is. A lock word or a counter that only the threads of one GPU touch needs device
//! scope; one that only the threads of one block touch needs block scope. CUDA says the same
//! with `atomicAdd` (device), `atomicAdd_block` and `atomicAdd_system`, and libcu++ with
//! `atomic_ref<T, thread_scope_device>`. Here the scope is a [`Scope`] argument or part of the
//! function's name, so it is visible at every call site.
//!
//! # Scope
//!
//! The set of threads the operation is atomic with respect to: [`Scope::Block`] (PTX `.cta`),
//! [`Scope::Device`] (`.gpu`) or [`Scope::System`] (`.sys`). Two threads that touch one address
//! with atomics whose scopes do not include each other race. Device scope is the default to
//! reach for; block scope only when one block alone touches the address (shared memory, or a
//! per-block slot); system scope only when the host or a peer GPU does.
//!
//! # Ordering
//!
//! [`Order`] for read-modify-write operations, [`LoadOrder`] and [`StoreOrder`] for plain atomic
//! loads and stores, with the meanings of C++ and PTX: `Relaxed` is atomic and nothing more (what
//! CUDA's `atomicAdd` is); `Acquire` makes the accesses after it happen after it; `Release` makes
//! the accesses before it visible before it; `AcqRel` both. A lock is taken with an acquire and
//! released with a release; a counter needs only relaxed.
//!
//! # The operations
//!
//! CUDA's whole list — add, sub, exch, min, max, inc, dec, CAS, and, or, xor — for the types CUDA
//! supports them on, plus atomic [`load`] / [`store`], the no-return [`red_add`] and a generic CAS
//! loop [`fetch_update`] (with which the CUDA book builds `double` addition from `atomicCAS`).
//!
//! | op | types | PTX |
//! |---|---|---|
//! | [`fetch_add`], [`red_add`] | u32 i32 u64 i64 f32 f64 | `atom.add`, `red.add` |
//! | [`fetch_sub`] | u32 i32 u64 i64 f32 f64 | `atom.add` of the negation (PTX has no `atom.sub`) |
//! | [`exch`] | all six | `atom.exch.b32/.b64` |
//! | [`compare_and_swap`] | all six (floats compared bitwise) | `atom.cas.b32/.b64` |
//! | [`fetch_min`], [`fetch_max`] | u32 i32 u64 i64 | `atom.min/.max` |
//! | [`fetch_and`], [`fetch_or`], [`fetch_xor`] | u32 i32 u64 i64 | `atom.and/.or/.xor.b32/.b64` |
//! | [`fetch_inc`], [`fetch_dec`] | u32 | `atom.inc/.dec.u32` |
//! | [`load`], [`store`] | all six | `ld.relaxed/.acquire`, `st.relaxed/.release` |
//!
//! Every instruction is emitted as `atom.<sem>.<scope>.<op>.<type>` with generic addressing, so
//! the same function works on global and shared memory. In the simulator each operation is the
//! `core::sync::atomic` operation with the same ordering; CPU caches are coherent, so a bug of
//! too narrow a *scope* computes the right answer there — but the checker
//! ([`sim::check::checked`](crate::sim::check::checked)) reports it, with the kernel's line:
//! every function here is `#[track_caller]` on the host.
//!
//! # Safety
//!
//! Every function here is `unsafe` with the same contract:
//! - `addr` is non-null, aligned to `size_of::<T>()`, and points to global or shared memory
//!   that the calling thread may access, for the duration of the call;
//! - every other access to that location while kernels may run concurrently is atomic too, with
//!   a scope that includes this thread (a plain load or store racing with it is undefined).

mod shorthand;
mod types;

pub use shorthand::*;

/// The set of threads an atomic operation or fence is coherent with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Scope {
    /// The threads of one block. PTX `.cta`. CUDA `_block` suffix, `thread_scope_block`.
    Block = 0,
    /// Every thread of the GPU. PTX `.gpu`. CUDA's default, `thread_scope_device`.
    Device = 1,
    /// The GPU, other GPUs and the host. PTX `.sys`. CUDA `_system`, `thread_scope_system`.
    System = 2,
}

/// Memory ordering of a read-modify-write operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Order {
    /// Atomic, and no ordering of other accesses. PTX `.relaxed`.
    Relaxed = 0,
    /// Later accesses of this thread happen after it. PTX `.acquire`.
    Acquire = 1,
    /// Earlier accesses of this thread are visible before it. PTX `.release`.
    Release = 2,
    /// Both. PTX `.acq_rel`.
    AcqRel = 3,
}

/// Memory ordering of an atomic load (PTX has no release load).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum LoadOrder {
    /// PTX `ld.relaxed`.
    Relaxed = 0,
    /// PTX `ld.acquire`.
    Acquire = 1,
}

/// Memory ordering of an atomic store (PTX has no acquire store).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum StoreOrder {
    /// PTX `st.relaxed`.
    Relaxed = 0,
    /// PTX `st.release`.
    Release = 1,
}

impl Scope {
    /// Every scope, narrowest first.
    pub const ALL: [Scope; 3] = [Scope::Block, Scope::Device, Scope::System];
    /// The PTX qualifier: `cta`, `gpu` or `sys`.
    pub const fn ptx(self) -> &'static str {
        match self {
            Scope::Block => "cta",
            Scope::Device => "gpu",
            Scope::System => "sys",
        }
    }
    /// The value with this discriminant, if any (kernel parameters arrive as `u32`).
    pub const fn from_u32(v: u32) -> Option<Scope> {
        match v {
            0 => Some(Scope::Block),
            1 => Some(Scope::Device),
            2 => Some(Scope::System),
            _ => None,
        }
    }
}

impl Order {
    /// Every ordering.
    pub const ALL: [Order; 4] = [
        Order::Relaxed,
        Order::Acquire,
        Order::Release,
        Order::AcqRel,
    ];
    /// The PTX qualifier: `relaxed`, `acquire`, `release` or `acq_rel`.
    pub const fn ptx(self) -> &'static str {
        match self {
            Order::Relaxed => "relaxed",
            Order::Acquire => "acquire",
            Order::Release => "release",
            Order::AcqRel => "acq_rel",
        }
    }
    /// The value with this discriminant, if any.
    pub const fn from_u32(v: u32) -> Option<Order> {
        match v {
            0 => Some(Order::Relaxed),
            1 => Some(Order::Acquire),
            2 => Some(Order::Release),
            3 => Some(Order::AcqRel),
            _ => None,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A 32- or 64-bit value that atomics can operate on: `u32 i32 u64 i64 f32 f64`.
pub trait Atomic: Copy + sealed::Sealed {
    /// The unsigned integer of the same size, for bitwise comparison in CAS loops.
    type Bits: Copy + PartialEq;
    /// The bit pattern.
    fn to_bits(self) -> Self::Bits;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn exch(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn cas(addr: *mut Self, compare: Self, val: Self, scope: Scope, order: Order) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn load(addr: *const Self, scope: Scope, order: LoadOrder) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn store(addr: *mut Self, val: Self, scope: Scope, order: StoreOrder);
}

/// Atomic addition: integers wrap, floats round as `+` does (the order of additions, which
/// atomics do not fix, changes the rounding).
pub trait AtomicAdd: Atomic {
    /// `-val`, wrapping for integers; what [`fetch_sub`] adds.
    fn negate(self) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn add(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn red_add(addr: *mut Self, val: Self, scope: Scope, order: StoreOrder);
}

/// Integer-only atomics: min, max and the bitwise operations.
pub trait AtomicInt: AtomicAdd {
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn min(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn max(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn and(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn or(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self;
    /// # Safety
    /// See the [module docs](self#safety).
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn xor(addr: *mut Self, val: Self, scope: Scope, order: Order) -> Self;
}

macro_rules! generic_op {
    ($(#[$doc:meta])* $name:ident: $bound:ident :: $method:ident) => {
        $(#[$doc])*
        ///
        /// Returns the value before the operation.
        ///
        /// # Safety
        /// See the [module docs](self#safety).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name<T: $bound>(addr: *mut T, val: T, scope: Scope, order: Order) -> T {
            // SAFETY: the caller upholds the module's contract.
            unsafe { T::$method(addr, val, scope, order) }
        }
    };
}

generic_op!(
    /// `*addr += val`. CUDA: `atomicAdd` (device, relaxed). PTX: `atom.<order>.<scope>.add`.
    fetch_add: AtomicAdd::add
);
generic_op!(
    /// `*addr = val`. CUDA: `atomicExch`. PTX: `atom.<order>.<scope>.exch`.
    exch: Atomic::exch
);
generic_op!(
    /// `*addr = min(*addr, val)`. CUDA: `atomicMin`. PTX: `atom.<order>.<scope>.min`.
    fetch_min: AtomicInt::min
);
generic_op!(
    /// `*addr = max(*addr, val)`. CUDA: `atomicMax`. PTX: `atom.<order>.<scope>.max`.
    fetch_max: AtomicInt::max
);
generic_op!(
    /// `*addr &= val`. CUDA: `atomicAnd`. PTX: `atom.<order>.<scope>.and`.
    fetch_and: AtomicInt::and
);
generic_op!(
    /// `*addr |= val`. CUDA: `atomicOr`. PTX: `atom.<order>.<scope>.or`.
    fetch_or: AtomicInt::or
);
generic_op!(
    /// `*addr ^= val`. CUDA: `atomicXor`. PTX: `atom.<order>.<scope>.xor`.
    fetch_xor: AtomicInt::xor
);

/// `*addr -= val`, as the addition of `-val` (PTX has no `atom.sub`; CUDA's `atomicSub` does the
/// same). Returns the value before.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn fetch_sub<T: AtomicAdd>(addr: *mut T, val: T, scope: Scope, order: Order) -> T {
    // SAFETY: the caller upholds the module's contract.
    unsafe { T::add(addr, val.negate(), scope, order) }
}

/// `old = *addr; if old == compare { *addr = val }; old` in one step. Floats compare bitwise.
///
/// CUDA: `atomicCAS`. PTX: `atom.<order>.<scope>.cas.b32/.b64`. The operation succeeded exactly
/// when the returned value equals `compare` (bitwise).
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn compare_and_swap<T: Atomic>(
    addr: *mut T,
    compare: T,
    val: T,
    scope: Scope,
    order: Order,
) -> T {
    // SAFETY: the caller upholds the module's contract.
    unsafe { T::cas(addr, compare, val, scope, order) }
}

/// `((old >= limit) ? 0 : old + 1)`: a counter that wraps at `limit`. Returns the old value.
///
/// CUDA: `atomicInc`. PTX: `atom.<order>.<scope>.inc.u32`.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn fetch_inc(addr: *mut u32, limit: u32, scope: Scope, order: Order) -> u32 {
    // SAFETY: the caller upholds the module's contract.
    unsafe { imp::inc(addr, limit, scope, order) }
}

/// `((old == 0) || (old > limit)) ? limit : old - 1`. Returns the old value.
///
/// CUDA: `atomicDec`. PTX: `atom.<order>.<scope>.dec.u32`.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn fetch_dec(addr: *mut u32, limit: u32, scope: Scope, order: Order) -> u32 {
    // SAFETY: the caller upholds the module's contract.
    unsafe { imp::dec(addr, limit, scope, order) }
}

/// Atomic load. PTX: `ld.relaxed.<scope>` or `ld.acquire.<scope>`. Unlike a plain (or `volatile`)
/// load it is ordered and never torn, and the compiler may not hoist it out of a spin loop.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load<T: Atomic>(addr: *const T, scope: Scope, order: LoadOrder) -> T {
    // SAFETY: the caller upholds the module's contract.
    unsafe { T::load(addr, scope, order) }
}

/// Atomic store. PTX: `st.relaxed.<scope>` or `st.release.<scope>`.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store<T: Atomic>(addr: *mut T, val: T, scope: Scope, order: StoreOrder) {
    // SAFETY: the caller upholds the module's contract.
    unsafe { T::store(addr, val, scope, order) }
}

/// `*addr += val` without returning the old value. PTX: `red.<order>.<scope>.add`: the thread
/// does not wait for the result, so a stream of reductions costs less than `atom.add`.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn red_add<T: AtomicAdd>(addr: *mut T, val: T, scope: Scope, order: StoreOrder) {
    // SAFETY: the caller upholds the module's contract.
    unsafe { T::red_add(addr, val, scope, order) }
}

/// Applies `f` atomically with a compare-and-swap loop; returns the value `f` was applied to.
///
/// Any function of the old value can be made atomic this way: read, compute, and try to swap the
/// result in; if another thread changed the word meanwhile, the swap fails and the loop retries
/// with what it saw. This is how the CUDA book builds `double` `atomicAdd` from `atomicCAS`
/// (before sm_60 had it natively). `order` applies to the successful swap. Values are compared
/// bitwise, so a NaN does not loop forever.
///
/// Not wait-free: under contention a thread can retry many times, which is why the native
/// operations are faster.
///
/// # Safety
/// See the [module docs](self#safety).
// ANCHOR: fetch_update
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn fetch_update<T: Atomic>(
    addr: *mut T,
    scope: Scope,
    order: Order,
    mut f: impl FnMut(T) -> T,
) -> T {
    // SAFETY: the caller upholds the module's contract.
    unsafe {
        let mut old = T::load(addr, scope, LoadOrder::Relaxed);
        loop {
            let seen = T::cas(addr, old, f(old), scope, order);
            if seen.to_bits() == old.to_bits() {
                return old;
            }
            old = seen;
        }
    }
}
// ANCHOR_END: fetch_update

use crate::seam::atomic as imp;
