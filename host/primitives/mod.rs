//! The host half of the device primitives that need memory of their own: owners of a lock's or
//! a grid barrier's device state, allocated, checked and freed on the host while kernels get
//! only a pointer.

pub mod barrier;
pub mod lock;
pub mod warp;
