//! 32-bit loads and stores of the litmus tests: the compiler's own (`*p`), or one instruction
//! as written (`ld.u32`, `ld.volatile.u32`, …), which the compiler may neither merge nor drop.

/// `*p`: the compiler's load, which it may merge, hoist or drop.
///
/// # Safety
/// As [`access::load_plain`](crate::access::load_plain).
#[inline(always)]
pub(crate) unsafe fn read_u32(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { *p }
}

/// `*p = v`: the compiler's store.
///
/// # Safety
/// As [`access::store_plain`](crate::access::store_plain).
#[inline(always)]
pub(crate) unsafe fn write_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { *p = v }
}

/// `ld.u32 v, [p];`
///
/// # Safety
/// As [`access::load_plain`](crate::access::load_plain).
#[inline(always)]
pub(crate) unsafe fn ld_u32(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller's contract; the asm reads 4 bytes at `p`.
    unsafe {
        core::arch::asm!("ld.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack, readonly))
    };
    v
}

/// `st.u32 [p], v;`
///
/// # Safety
/// As [`access::store_plain`](crate::access::store_plain).
#[inline(always)]
pub(crate) unsafe fn st_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract; the asm writes 4 bytes at `p`.
    unsafe {
        core::arch::asm!("st.u32 [{p}], {v};", v = in(reg32) v, p = in(reg64) p, options(nostack))
    };
}

/// `ld.volatile.u32 v, [p];`
///
/// # Safety
/// As [`access::load_plain`](crate::access::load_plain).
#[inline(always)]
pub(crate) unsafe fn ld_volatile_u32(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller's contract; the asm reads 4 bytes at `p`.
    unsafe {
        core::arch::asm!("ld.volatile.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack, readonly))
    };
    v
}

/// `st.volatile.u32 [p], v;`
///
/// # Safety
/// As [`access::store_plain`](crate::access::store_plain).
#[inline(always)]
pub(crate) unsafe fn st_volatile_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract; the asm writes 4 bytes at `p`.
    unsafe {
        core::arch::asm!("st.volatile.u32 [{p}], {v};", v = in(reg32) v, p = in(reg64) p, options(nostack))
    };
}
