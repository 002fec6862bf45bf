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

#![deny(missing_docs)]

mod arch;
mod cargo;
#[cfg(test)]
mod tests;

pub use arch::DEFAULT_ARCHES;

/// The nightly toolchain the device build needs, as `rust-toolchain.toml` pins it (a test
/// checks that they agree): named in the messages that say what to install.
pub const TOOLCHAIN: &str = "nightly-2026-05-20";

use std::fmt;
use std::path::{Path, PathBuf};

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
}

/// The build of one device crate, configured builder-style, run by [`PtxBuilder::build`].
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    name: Option<String>,
    arches: Vec<String>,
    release: bool,
    features: Vec<String>,
    rustflags: Vec<String>,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
}

impl PtxBuilder {
    /// The device crate at `crate_dir` (the directory of its `Cargo.toml`; a relative path is
    /// taken from the calling crate's directory, `CARGO_MANIFEST_DIR`). Defaults: the
    /// architectures of [`DEFAULT_ARCHES`], a release build, the crate's default features, the
    /// output in `OUT_DIR`, named after the directory (`kernels` → `kernels_sm_90.ptx`).
    pub fn new(crate_dir: impl AsRef<Path>) -> PtxBuilder {
        PtxBuilder {
            crate_dir: crate_dir.as_ref().to_path_buf(),
            name: None,
            arches: DEFAULT_ARCHES.iter().map(|a| a.to_string()).collect(),
            release: true,
            features: Vec::new(),
            rustflags: Vec::new(),
            out_dir: None,
            target_dir: None,
        }
    }

    /// The stem of the output files, `<name>_<arch>.ptx` and `<name>_ptx.rs` (default: the
    /// device crate's directory name, `-` replaced by `_`).
    pub fn name(mut self, name: impl Into<String>) -> PtxBuilder {
        self.name = Some(name.into());
        self
    }

    /// The architectures to build, oldest first: any `sm_NN` from `sm_70` that the compiler
    /// knows, with `a` (this exact GPU: `sm_90a`) or `f` (this family: `sm_100f`) where wanted;
    /// a device loads the newest one it can run, and the driver compiles it for that device.
    pub fn arches<S: AsRef<str>>(mut self, arches: &[S]) -> PtxBuilder {
        self.arches = arches.iter().map(|a| a.as_ref().to_string()).collect();
        self
    }

    /// `true` (the default): the `release` profile. `false`: debug assertions and overflow
    /// checks on (a failed one traps: the launch fails), still optimized, with fat LTO (one
    /// PTX module needs the whole crate graph) and `panic = "abort"`.
    pub fn release(mut self, release: bool) -> PtxBuilder {
        self.release = release;
        self
    }

    /// Cargo features of the device crate to enable, in addition to its default ones.
    pub fn features<S: AsRef<str>>(mut self, features: &[S]) -> PtxBuilder {
        self.features
            .extend(features.iter().map(|f| f.as_ref().to_string()));
        self
    }

    /// Flags for rustc in the device build, after the builder's own (`-Ctarget-cpu`, the PTX
    /// ISA): `-Cllvm-args=…`, `--cfg …`, `-Ctarget-feature=+ptx80`. The outer build's
    /// `RUSTFLAGS` do not reach the device build; these do.
    pub fn rustflags<S: AsRef<str>>(mut self, flags: &[S]) -> PtxBuilder {
        self.rustflags
            .extend(flags.iter().map(|f| f.as_ref().to_string()));
        self
    }

    /// Where the PTX files and the index go (default `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> PtxBuilder {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The nested builds' target directory, one subdirectory per architecture (default
    /// `<target>/ptx` of the outer build, so that the device builds, and their build of
    /// `core`, stay cached across `cargo clean -p`, profiles and `OUT_DIR`s).
    pub fn target_dir(mut self, dir: impl AsRef<Path>) -> PtxBuilder {
        self.target_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Builds every architecture, writes `<name>_<arch>.ptx` and the index `<name>_ptx.rs` to
    /// the output directory, and prints `cargo::rerun-if-changed` for the device crate's
    /// directory and every source file the device build read (path dependencies included).
    ///
    /// # Errors
    /// A malformed architecture, one the compiler does not know, or an empty list; the device
    /// crate missing; the nested build
    /// failing (its compiler output, and what to install when the toolchain or `rust-src` is
    /// missing); a file that cannot be written.
    pub fn build(&self) -> Result<Vec<Ptx>> {
        let manifest_dir = env_path("CARGO_MANIFEST_DIR");
        let crate_dir = match &manifest_dir {
            Some(root) => root.join(&self.crate_dir),
            None => self.crate_dir.clone(),
        };
        let manifest = crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(Error(format!(
                "no device crate at {}: {} does not exist",
                crate_dir.display(),
                manifest.display()
            )));
        }
        if self.arches.is_empty() {
            return Err(Error("no architecture to build: the list is empty".into()));
        }
        for arch in &self.arches {
            arch::check(arch)?;
            if let Some(known) = arch::known_to_rustc(arch) {
                known?;
            }
        }
        let name = self.name.clone().unwrap_or_else(|| {
            let dir = crate_dir.file_name().unwrap_or_default();
            dir.to_string_lossy().replace('-', "_")
        });
        let out_dir = self
            .out_dir
            .clone()
            .or_else(|| env_path("OUT_DIR"))
            .ok_or_else(|| {
                Error("no output directory: set one, or run from a build script".into())
            })?;
        let target_dir = self
            .target_dir
            .clone()
            .unwrap_or_else(|| default_target_dir(&out_dir));
        println!("cargo::rerun-if-changed={}", crate_dir.display());

        let mut built = Vec::new();
        let mut sources = std::collections::BTreeSet::new();
        let mut index = String::from("&[\n");
        for arch in &self.arches {
            let job = cargo::Job {
                manifest: &manifest,
                target_dir: &target_dir.join(arch),
                name: &name,
                arch,
                release: self.release,
                features: &self.features,
                rustflags: &self.rustflags,
            };
            let (ptx, read) = job.run()?;
            sources.extend(read);
            let dest = out_dir.join(format!("{name}_{arch}.ptx"));
            std::fs::copy(&ptx, &dest).map_err(|e| {
                Error(format!(
                    "copying {} to {}: {e}",
                    ptx.display(),
                    dest.display()
                ))
            })?;
            let text = dest.to_str().ok_or_else(|| {
                Error(format!(
                    "{} is not UTF-8, which include_str! needs",
                    dest.display()
                ))
            })?;
            index.push_str(&format!("    ({arch:?}, include_str!({text:?})),\n"));
            built.push(Ptx {
                arch: arch.clone(),
                path: dest,
            });
        }
        for source in sources {
            println!("cargo::rerun-if-changed={}", source.display());
        }
        index.push(']');
        let index_path = out_dir.join(format!("{name}_ptx.rs"));
        std::fs::write(&index_path, index)
            .map_err(|e| Error(format!("writing {}: {e}", index_path.display())))?;
        Ok(built)
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).map(PathBuf::from)
}

/// `<target>/ptx`, where `<target>` is the outer build's target directory: cargo's `OUT_DIR`
/// is `<target>/[<triple>/]<profile>/build/<package>-<hash>/out`. For an output directory laid
/// out otherwise, `<out_dir>/ptx-target`.
fn default_target_dir(out_dir: &Path) -> PathBuf {
    let build = out_dir.ancestors().nth(2);
    match (build, out_dir.ancestors().nth(4)) {
        (Some(build), Some(target)) if build.file_name() == Some("build".as_ref()) => {
            target.join("ptx")
        }
        _ => out_dir.join("ptx-target"),
    }
}
