//! How a kernel is declared, listed and shaped: the [`kernel!`](crate::kernel!) macro, the one
//! list of the crate's kernels ([`Kernel`]), and launch shapes ([`LaunchConfig`], [`Dim3`]).

#[macro_use]
mod macros;
mod config;
#[cfg(feature = "kernels")]
mod list;

pub use config::{Dim3, LaunchConfig};
#[cfg(feature = "kernels")]
pub use list::Kernel;
