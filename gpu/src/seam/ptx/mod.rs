//! The PTX side of the seam: one `#[inline(always)]` function per instruction form, its body
//! the `asm!` block. Scopes and orderings given as values fold away with the constants a
//! kernel passes, leaving one instruction. What needs sm_80 or sm_90 is compiled for it only.

pub(crate) mod access;
#[cfg(target_feature = "sm_80")]
pub(crate) mod async_copy;
pub(crate) mod atomic;
#[cfg(target_feature = "sm_90")]
pub(crate) mod cluster;
pub(crate) mod global;
#[cfg(target_feature = "sm_90")]
pub(crate) mod mbarrier;
pub(crate) mod mem;
pub(crate) mod readonly;
pub(crate) mod shared;
pub(crate) mod site;
pub(crate) mod spin;
pub(crate) mod sreg;
pub(crate) mod sync;
pub(crate) mod warp;
