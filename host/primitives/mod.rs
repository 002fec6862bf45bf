//! The host half of the device primitives that need memory of their own: owners of a lock's or
//! a grid barrier's device state, allocated, checked and freed on the host while kernels get
//! only a pointer.

pub mod barrier;
pub mod lock;
pub mod warp;

use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;

/// The one value of a primitive's `state` buffer as it is now (waits for queued kernels
/// first); `owner` ("a lock") names the primitive in the error.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty buffer; a driver error, including a fault of a kernel
/// that used the primitive.
pub(crate) fn read_state<S: Plain>(target: &Target, state: &Buffer<S>, owner: &str) -> Result<S> {
    target
        .download(state)?
        .first()
        .copied()
        .ok_or_else(|| Error::InvalidInput(format!("{owner}'s state buffer is empty")))
}
