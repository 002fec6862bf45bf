//! Shared memory: the launch's dynamic shared memory, addresses in the shared window, and the
//! reductions addressed in it.

/// An address in the shared window (`.shared::cta`, or `.shared::cluster` after `mapa`): the
/// 32 bits the `.shared` forms of the instructions take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SharedAddr(pub(crate) u32);

impl SharedAddr {
    /// The address `bytes` further on.
    #[inline(always)]
    pub(crate) fn wrapping_add(self, bytes: u32) -> SharedAddr {
        SharedAddr(self.0.wrapping_add(bytes))
    }
}

/// `cvta.to.shared.u64 s, p; cvt.u32.u64 a, s;`: the shared-window address of a generic
/// pointer into shared memory.
#[inline(always)]
pub(crate) fn cvta_to_shared<T>(p: *const T) -> SharedAddr {
    let addr: u32;
    // SAFETY: address arithmetic only; nothing is dereferenced.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 s; cvta.to.shared.u64 s, {1}; cvt.u32.u64 {0}, s; }}",
            out(reg32) addr, in(reg64) p, options(nostack, pure, nomem)
        )
    };
    SharedAddr(addr)
}

/// The start of the launch's dynamic shared memory (`extern __shared__`), as a generic pointer.
///
/// # Safety
/// As [`crate::shared::dynamic_shared`].
#[inline(always)]
pub(crate) unsafe fn dynamic_shared_base<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// `red.relaxed.cta.shared.add.u32 [a], v;`
///
/// # Safety
/// `addr` is a 4-byte aligned word of this block's shared memory, only accessed atomically.
#[inline(always)]
pub(crate) unsafe fn red_relaxed_cta_shared_add_u32(addr: SharedAddr, val: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "red.relaxed.cta.shared.add.u32 [{0}], {1};",
            in(reg32) addr.0, in(reg32) val, options(nostack)
        )
    };
}
