//! Builds a `#![no_std]` Rust device crate to PTX from a build script — gridsync's answer to
//! Rust-CUDA's `cuda_builder`, with rustc's own NVPTX backend: no CUDA toolkit, no LLVM install.
//!
//! ```no_run
//! // build.rs of the host crate; `kernels/` is the device crate.
//! fn main() -> Result<(), gridsync_builder::Error> {
//!     gridsync_builder::PtxBuilder::new("kernels").build()?;
//!     Ok(())
//! }
//! ```
//!
//! For each architecture (default [`DEFAULT_ARCHES`]) the device crate is built by a nested
//! `cargo rustc --target nvptx64-nvidia-cuda -Zbuild-std=core` as a staticlib with fat LTO,
//! emitting assembly — which on NVPTX is PTX. The builder writes `<name>_<arch>.ptx` for each
//! architecture and `<name>_ptx.rs`, a Rust expression of type `&[(&str, &str)]` listing
//! `(architecture, PTX text)` oldest first, into the output directory (default `OUT_DIR`); the
//! host crate embeds it with `gridsync::include_ptx!("<name>")` and loads it with
//! `gridsync::Module::load`.
//!
//! # What the build needs
//!
//! The nightly toolchain gridsync pins ([`TOOLCHAIN`], the channel of its
//! `rust-toolchain.toml`) with its `rust-src` component, and nothing else: no CUDA, no driver.
//! The device crate is built with the same `cargo` as the outer build, so the host crate needs
//! the same `rust-toolchain.toml`.
//!
//! # The device crate
//!
//! An ordinary library crate (`rlib`, so that the host crate can also depend on it and run its
//! kernels on gridsync's simulator) that depends on `gridsync-gpu` and starts with
//! `#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]`; kernels are declared with
//! `gpu::kernel!`. The builder sets the profile itself (fat LTO, one codegen unit, `panic =
//! "abort"`), so the device crate's workspace needs no `[profile]` section.
//!
//! # Kernels for some architectures only
//!
//! A kernel on Hopper's primitives goes behind the `cfg` they are behind,
//! `#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]`: it is in the sm_90
//! build (and on the simulator) only. A crate whose kernels are *all* behind it has nothing for
//! sm_70 and sm_80, which the default list builds too — and when nothing of the crate is left,
//! nothing refers to `gridsync-gpu` either, so the compiler leaves out the `#[panic_handler]`
//! it holds and stops ("`#[panic_handler]` function required, but not found"). The builder
//! recognizes such an architecture (see [`EmptyArch`]: by the crate's own code, built alone for
//! it, having no kernel — not by the compiler's wording) and, by default, writes a module
//! without kernels for it with a cargo warning; [`PtxBuilder::empty_arches`] with
//! [`EmptyArch::Error`] makes it an error instead. To build no such module, list only the
//! architectures that have kernels: `PtxBuilder::arches(&["sm_90"])`.
//!
//! What the host does with each (`gridsync::Module`): `Module::load` picks the newest build not
//! above the GPU's compute capability. Where that is a module without kernels, it loads (the
//! driver takes a module with no `.entry`), and a launch of a kernel that a newer build has is
//! `Error::Unsupported`, naming the architecture the kernel needs and the GPU's compute
//! capability — the same as for a kernel behind the `cfg` in a crate that has others; a kernel
//! no build has is `Error::MissingKernel`. With the architectures listed instead, a GPU older
//! than all of them is refused by `Module::load` itself (`Error::Unsupported`, naming the
//! builds there are).

#![deny(missing_docs)]

mod arch;
mod builder;
mod cargo;
mod empty;
mod ptxas;
#[cfg(test)]
mod tests;

pub use arch::DEFAULT_ARCHES;
pub use builder::PtxBuilder;
pub use empty::EmptyArch;
pub use ptxas::locate_ptxas;

/// The nightly toolchain the device build needs, as `rust-toolchain.toml` pins it (a test
/// checks that they agree): named in the messages that say what to install.
pub const TOOLCHAIN: &str = "nightly-2026-05-20";

use std::fmt;
use std::path::PathBuf;

/// What went wrong, worded for the person reading the build's output. `Debug` prints the same
/// text as `Display`, so that `fn main() -> Result<(), Error>` in a build script reads well.
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "could not build the device crate to PTX\n\n{}", self.0)
    }
}

impl std::error::Error for Error {}

/// `Result<T, gridsync_builder::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One architecture's PTX, as built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptx {
    /// `sm_90`, …
    pub arch: String,
    /// The `<name>_<arch>.ptx` file in the output directory.
    pub path: PathBuf,
    /// Its kernels (`.entry` points), in order: none for an architecture that gets none of the
    /// device crate's kernels ([`EmptyArch`]).
    pub kernels: Vec<String>,
}
