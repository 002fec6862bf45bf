//! gridsync's device crate.
//!
//! On `nvptx64-nvidia-cuda` this is a `#![no_std]` crate whose kernels become PTX. On the host
//! the same source compiles with `std`, and [`sim`] runs every kernel body on OS threads — one
//! thread per GPU thread — so that the logic of each kernel can be tested, and a race watched,
//! without a GPU.
//!
//! Layered like CUB, primitives below and kernels above; kernels call primitives, never the
//! reverse, and only the primitive modules touch `core::arch::nvptx` or inline PTX:
//!
//! | layer | modules |
//! |---|---|
//! | thread | [`index`], [`time`], [`vector`] |
//! | memory model | [`atomic`], [`sync`], [`lock`] |
//! | block | [`shared`], [`shared_atomic`], [`sync::sync_threads`], [`block_reduce`] |
//! | warp | [`warp`] |
//! | kernels | [`race`], [`reduce`], [`count_above`], [`histogram`], [`dot`], [`mutex`], [`bench`], [`atomics_check`], [`atomics_bench`], [`primitives_check`] |
//!
//! Every kernel is declared with [`kernel!`], listed once in [`Kernel`], and says which source
//! it comes from.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        core_intrinsics
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![warn(missing_docs)]

#[macro_use]
mod macros;

pub mod atomic;
pub mod block_reduce;
pub mod index;
pub mod lock;
pub mod shared;
pub mod shared_atomic;
pub mod sync;
pub mod time;
pub mod vector;
pub mod warp;

pub mod atomics_bench;
pub mod atomics_check;
pub mod bench;
pub mod count_above;
pub mod dot;
pub mod histogram;
pub mod mutex;
pub mod normalize;
pub mod primitives_check;
pub mod race;
pub mod reduce;

mod config;
mod kernels;
pub use config::{Dim3, LaunchConfig};
pub use kernels::Kernel;

#[cfg(not(target_arch = "nvptx64"))]
pub mod sim;

/// A kernel that panics traps: the launch fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION` and the
/// host sees an error. There is no unwinding on the device.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
