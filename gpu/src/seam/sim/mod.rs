//! The simulator side of the seam: the twin of each PTX wrapper, same name and signature,
//! running the operation on [`crate::sim`] and reporting it to the checker.

pub(crate) mod access;
pub(crate) mod async_copy;
pub(crate) mod atomic;
pub(crate) mod cluster;
pub(crate) mod global;
pub(crate) mod mbarrier;
pub(crate) mod mem;
pub(crate) mod readonly;
pub(crate) mod shared;
pub(crate) mod site;
pub(crate) mod spin;
pub(crate) mod sreg;
pub(crate) mod sync;
pub(crate) mod warp;
