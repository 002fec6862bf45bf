//! [`PtxBuilder`]: the options of one device crate's build, and the build — every architecture,
//! then the files.

use crate::{DEFAULT_ARCHES, EmptyArch, Error, Ptx, Result, arch, cargo, empty};
use std::path::{Path, PathBuf};

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
    empty_arches: EmptyArch,
}

impl PtxBuilder {
    /// The device crate at `crate_dir` (the directory of its `Cargo.toml`; a relative path is
    /// taken from the calling crate's directory, `CARGO_MANIFEST_DIR`). Defaults: the
    /// architectures of [`DEFAULT_ARCHES`], a release build, the crate's default features, the
    /// output in `OUT_DIR`, named after the directory (`kernels` → `kernels_sm_90.ptx`), an
    /// architecture without kernels written as a module without kernels, with a warning
    /// ([`EmptyArch::Warn`]).
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
            empty_arches: EmptyArch::default(),
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
    /// A crate whose kernels are all for newer architectures (behind
    /// `#[cfg(target_feature = "sm_90")]`, say) lists only those: `.arches(&["sm_90"])`.
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

    /// What to do with an architecture that gets none of the device crate's kernels (each is
    /// behind a `cfg` that leaves it out of that build): [`EmptyArch::Warn`] (the default)
    /// writes a module without kernels and says so in a cargo warning, [`EmptyArch::Error`]
    /// stops the build.
    pub fn empty_arches(mut self, empty: EmptyArch) -> PtxBuilder {
        self.empty_arches = empty;
        self
    }

    /// Builds every architecture, writes `<name>_<arch>.ptx` and the index `<name>_ptx.rs` to
    /// the output directory, and prints `cargo::rerun-if-changed` for the device crate's
    /// directory and every source file the device build read (path dependencies included).
    ///
    /// An architecture that gets none of the crate's kernels is written as a module without
    /// kernels with a `cargo::warning` naming it and [`PtxBuilder::arches`], or is an error,
    /// as [`PtxBuilder::empty_arches`] says.
    ///
    /// # Errors
    /// A malformed architecture, one the compiler does not know, or an empty list; the device
    /// crate missing; the nested build failing (its compiler output, and what to install when
    /// the toolchain or `rust-src` is missing); no architecture with a kernel, or (with
    /// [`EmptyArch::Error`]) one without; a file that cannot be written.
    pub fn build(&self) -> Result<Vec<Ptx>> {
        let mut warnings = Vec::new();
        let built = self.build_noting(&mut warnings)?;
        for w in warnings {
            println!("cargo::warning={w}");
        }
        Ok(built)
    }

    /// [`PtxBuilder::build`], the warnings added to `warnings` instead of printed.
    pub(crate) fn build_noting(&self, warnings: &mut Vec<String>) -> Result<Vec<Ptx>> {
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

        let mut sources = std::collections::BTreeSet::new();
        let mut builds = Vec::new();
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
            let build = match job.run() {
                Ok((ptx, read)) => {
                    sources.extend(read);
                    let text = std::fs::read_to_string(&ptx)
                        .map_err(|e| Error(format!("reading {}: {e}", ptx.display())))?;
                    ArchBuild::new(arch, text, None)
                }
                // A build that stopped on something missing from the crate as a whole is an
                // architecture without kernels if the crate's own code, built alone for it,
                // has none; anything else is the compiler's error, as it said it.
                Err(failure) => {
                    let own_code = failure.unlocated.then(|| job.own_code()).flatten();
                    let module = own_code.and_then(|(code, read)| {
                        empty::module_without_kernels(&code, &name, arch).map(|m| (m, read))
                    });
                    let Some((module, read)) = module else {
                        return Err(failure.error);
                    };
                    sources.extend(read);
                    ArchBuild::new(arch, module, Some(failure.error))
                }
            };
            builds.push(build);
        }
        self.judge_empty(&name, &builds, warnings)?;

        let mut built = Vec::new();
        let mut index = String::from("&[\n");
        for b in builds {
            let dest = out_dir.join(format!("{name}_{}.ptx", b.arch));
            std::fs::write(&dest, &b.text)
                .map_err(|e| Error(format!("writing {}: {e}", dest.display())))?;
            let path = dest.to_str().ok_or_else(|| {
                Error(format!(
                    "{} is not UTF-8, which include_str! needs",
                    dest.display()
                ))
            })?;
            index.push_str(&format!("    ({:?}, include_str!({path:?})),\n", b.arch));
            built.push(Ptx {
                arch: b.arch.to_string(),
                path: dest,
                kernels: b.kernels,
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

    /// The architectures without kernels, as [`PtxBuilder::empty_arches`] says: a warning or
    /// an error, naming them all. None with a kernel is an error either way.
    fn judge_empty(
        &self,
        name: &str,
        builds: &[ArchBuild<'_>],
        warnings: &mut Vec<String>,
    ) -> Result<()> {
        let (with, without): (Vec<&ArchBuild>, Vec<&ArchBuild>) =
            builds.iter().partition(|b| !b.kernels.is_empty());
        let with: Vec<&str> = with.iter().map(|b| b.arch).collect();
        let without: Vec<&str> = without.iter().map(|b| b.arch).collect();
        if with.is_empty() {
            let first_failure = builds.iter().find_map(|b| b.failure.as_ref());
            return Err(empty::no_kernels_anywhere(name, &without, first_failure));
        }
        match self.empty_arches {
            _ if without.is_empty() => {}
            EmptyArch::Error => return Err(empty::refusal(name, &without, &with)),
            EmptyArch::Warn => {
                warnings.push(empty::warning(name, &without, &with));
            }
        }
        Ok(())
    }
}

/// One architecture's module, before it is written.
struct ArchBuild<'a> {
    arch: &'a str,
    text: String,
    kernels: Vec<String>,
    /// Where the compiler stopped and the builder wrote the module: what the compiler said.
    failure: Option<Error>,
}

impl<'a> ArchBuild<'a> {
    fn new(arch: &'a str, text: String, failure: Option<Error>) -> ArchBuild<'a> {
        let kernels = empty::entries(&text);
        ArchBuild {
            arch,
            text,
            kernels,
            failure,
        }
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).map(PathBuf::from)
}

/// `<target>/ptx`, where `<target>` is the outer build's target directory: cargo's `OUT_DIR`
/// is `<target>/[<triple>/]<profile>/build/<package>-<hash>/out`. For an output directory laid
/// out otherwise, `<out_dir>/ptx-target`.
pub(crate) fn default_target_dir(out_dir: &Path) -> PathBuf {
    let build = out_dir.ancestors().nth(2);
    match (build, out_dir.ancestors().nth(4)) {
        (Some(build), Some(target)) if build.file_name() == Some("build".as_ref()) => {
            target.join("ptx")
        }
        _ => out_dir.join("ptx-target"),
    }
}
