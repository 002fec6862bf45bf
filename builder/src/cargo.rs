//! One nested `cargo rustc` of the device crate for one architecture.
//!
//! The environment is the build script's less what belongs to the outer build — its flags,
//! target, profile, features, output directory and wrappers ([`leaks`]) — so that the user's
//! proxy, certificates, SSH agent, `CARGO_HOME` and registry settings reach the nested cargo,
//! and so does the outer build's jobserver (`CARGO_MAKEFLAGS`): the nested build takes its jobs
//! from the same pool instead of starting one per core on top of it. Its own target directory
//! per architecture (a nested cargo must not wait on the outer one's lock, and each architecture
//! keeps its build of `core` cached), and the profile given on the command line, so that the
//! device crate's workspace needs no `[profile]` of its own.

use crate::{Error, TOOLCHAIN};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Variables of the outer build that must not reach the nested one: they describe the host
/// crate's compilation (its target and flags would be applied to the NVPTX build, its
/// `OUT_DIR` and features are not the device crate's) or are cargo's own internals.
pub(crate) fn leaks(key: &OsStr) -> bool {
    let Some(key) = key.to_str() else {
        return false;
    };
    const EXACT: &[&str] = &[
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_LINKER",
        "RUSTDOC",
        "OUT_DIR",
        "TARGET",
        "HOST",
        "NUM_JOBS",
        "OPT_LEVEL",
        "DEBUG",
        "PROFILE",
    ];
    // The `CARGO_*` a nested cargo should share with the outer one: where cargo lives, its
    // network and registries, and the jobserver.
    const CARGO_KEPT: &[&str] = &[
        "CARGO_HOME",
        "CARGO_MAKEFLAGS",
        "CARGO_NET_",
        "CARGO_HTTP_",
        "CARGO_REGISTRIES_",
        "CARGO_REGISTRY_",
        "CARGO_TERM_",
    ];
    EXACT.contains(&key)
        || key.starts_with("DEP_")
        || key.starts_with("__CARGO")
        || (key.starts_with("CARGO") && !CARGO_KEPT.iter().any(|k| key.starts_with(k)))
}

pub(crate) struct Job<'a> {
    pub manifest: &'a Path,
    pub target_dir: &'a Path,
    pub name: &'a str,
    pub arch: &'a str,
    pub release: bool,
    pub features: &'a [String],
    /// Flags for rustc after the builder's own.
    pub rustflags: &'a [String],
}

impl Job<'_> {
    /// The profile: fat LTO and one codegen unit make the whole crate graph one PTX module;
    /// `panic = "abort"` because the device has no unwinding. The debug profile keeps
    /// optimizing: unoptimized `core` calls `memcmp` and friends, which nothing provides on the
    /// device (`ptxas`: "Unresolved extern function").
    fn profile(&self) -> (&'static str, Vec<String>) {
        let (name, inherits) = if self.release {
            ("ptx", "release")
        } else {
            ("ptx-debug", "dev")
        };
        let keys = [
            format!("inherits=\"{inherits}\""),
            "opt-level=3".into(),
            "lto=\"fat\"".into(),
            "codegen-units=1".into(),
            "panic=\"abort\"".into(),
            "debug=false".into(),
            "incremental=false".into(),
        ];
        let config = keys.iter().map(|k| format!("profile.{name}.{k}")).collect();
        (name, config)
    }

    /// rustc's flags, as `CARGO_ENCODED_RUSTFLAGS` (separated by `0x1f`): the architecture,
    /// the PTX ISA where one is forced, then the caller's.
    pub fn rustflags(&self) -> String {
        let mut flags = vec![format!("-Ctarget-cpu={}", self.arch)];
        if let Some(isa) = crate::arch::forced_isa(self.arch) {
            flags.push(format!("-Ctarget-feature=+{isa}"));
        }
        flags.extend(self.rustflags.iter().cloned());
        flags.join("\x1f")
    }

    /// The file a build as `crate_type` emits: named after the device crate's manifest and
    /// everything else that makes cargo build it anew (profile, features, flags, crate type),
    /// so that a build cargo finds fresh — and so skips, writing no file — finds the file of
    /// the last build like it: never another crate's (two checkouts of one, say, in one target
    /// directory), nor another configuration's of the same crate.
    pub fn ptx_path(&self, crate_type: &str) -> PathBuf {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        self.manifest.hash(&mut h);
        (self.release, self.features, self.rustflags(), crate_type).hash(&mut h);
        self.target_dir
            .join(format!("{}-{:016x}.ptx", self.name, h.finish()))
    }

    /// Builds, and returns the PTX file and the source files the build read.
    ///
    /// # Errors
    /// [`Failure`]: the build failed, or left no PTX.
    pub fn run(&self) -> Result<(PathBuf, Vec<PathBuf>), Failure> {
        self.emit("staticlib")
    }

    /// The PTX of the device crate's own code alone, built as an `rlib` (no LTO, and none of
    /// what only a finished module needs: a crate whose items are all left out of this
    /// architecture builds), with the source files it read; `None` if that build fails too.
    /// Its `.entry` points are the crate's kernels for this architecture.
    pub fn own_code(&self) -> Option<(String, Vec<PathBuf>)> {
        let (ptx, sources) = self.emit("rlib").ok()?;
        let text = std::fs::read_to_string(&ptx).ok()?;
        Some((text, sources))
    }

    /// Builds as `crate_type`; returns the PTX file and the source files the build read.
    fn emit(&self, crate_type: &str) -> Result<(PathBuf, Vec<PathBuf>), Failure> {
        let ptx = self.ptx_path(crate_type);
        let first = self.cargo(&ptx, crate_type)?;
        let dep_info = if ptx.is_file() {
            first
        } else {
            // Cargo thought the crate fresh, but the emitted file is gone: forget the
            // fingerprints and build again.
            let fingerprints = self
                .target_dir
                .join("nvptx64-nvidia-cuda")
                .join(self.profile().0)
                .join(".fingerprint");
            let _ = std::fs::remove_dir_all(fingerprints);
            self.cargo(&ptx, crate_type)?
        };
        if !ptx.is_file() {
            return Err(Failure {
                error: Error(format!(
                    "the device build for {} succeeded but left no {}",
                    self.arch,
                    ptx.display()
                )),
                unlocated: false,
            });
        }
        Ok((ptx, dep_info.map(|d| sources(&d)).unwrap_or_default()))
    }

    /// Runs cargo once, building the device crate as `crate_type` and emitting its assembly
    /// to `ptx`; returns cargo's dep-info file of the device crate, if it said where.
    fn cargo(&self, ptx: &Path, crate_type: &str) -> Result<Option<PathBuf>, Failure> {
        let (profile, config) = self.profile();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        for (key, _) in std::env::vars_os() {
            if leaks(&key) {
                cmd.env_remove(key);
            }
        }
        cmd.env("CARGO_ENCODED_RUSTFLAGS", self.rustflags())
            .env("CARGO_TERM_COLOR", "never");
        if let Some(dir) = self.manifest.parent() {
            cmd.current_dir(dir);
        }
        // The compiler's diagnostics as JSON, to tell an error in the source from one about
        // the crate as a whole (see `Failure::unlocated`); rendered into the message below.
        cmd.args(["rustc", "--message-format=json", "--manifest-path"])
            .arg(self.manifest);
        for c in &config {
            cmd.arg("--config").arg(c);
        }
        if !self.features.is_empty() {
            cmd.arg("--features").arg(self.features.join(","));
        }
        cmd.args(["--profile", profile, "--target", "nvptx64-nvidia-cuda"])
            .args(["-Zbuild-std=core", "--lib", "--crate-type", crate_type])
            .arg("--target-dir")
            .arg(self.target_dir)
            .arg("--")
            .arg(format!("--emit=asm={}", ptx.display()));
        let output = cmd.output().map_err(|e| Failure {
            error: Error(format!(
                "could not run cargo for the device crate: {e}\n\nInstall the toolchain:\n    \
                 rustup toolchain install {TOOLCHAIN} --component rust-src"
            )),
            unlocated: false,
        })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if output.status.success() {
            return Ok(dep_info(&stdout));
        }
        let diagnostics = Diagnostics::of(&stdout);
        let output = format!(
            "{}{}",
            diagnostics.rendered,
            String::from_utf8_lossy(&output.stderr)
        );
        // What to install, if that is what is missing: told from the messages, less cargo's
        // `Compiling core (…/toolchains/nightly-…)` lines, which name the toolchain always.
        let told: String = output
            .lines()
            .filter(|l| !l.trim_start().starts_with("Compiling "))
            .collect();
        let hint = if told.contains("rust-src") || told.contains("build-std") {
            format!(
                "\nThe device crate is built with -Zbuild-std=core, which needs the `rust-src` \
                 component:\n    rustup component add rust-src --toolchain {TOOLCHAIN}\n"
            )
        } else if told.contains("-Z") || told.contains("nightly") {
            format!(
                "\nThe device crate needs the nightly toolchain gridsync pins; put gridsync's \
                 rust-toolchain.toml beside your Cargo.toml and install it:\n    \
                 rustup toolchain install {TOOLCHAIN} --component rust-src\n"
            )
        } else {
            String::new()
        };
        Err(Failure {
            error: Error(format!(
                "`cargo rustc` of {} for {} failed:\n{output}{hint}",
                self.manifest.display(),
                self.arch,
            )),
            unlocated: diagnostics.errors > 0 && diagnostics.unlocated,
        })
    }
}

/// A device build that made no PTX.
pub(crate) struct Failure {
    /// What to tell the user: the compiler's diagnostics and cargo's output.
    pub error: Error,
    /// The compiler stopped, and none of its errors points into a source file: what is
    /// missing is missing from the crate as a whole — `#[panic_handler]`, when nothing of the
    /// crate (and so nothing of the dependency that holds it) is left for this architecture.
    pub unlocated: bool,
}

/// The compiler's messages in cargo's JSON output.
pub(crate) struct Diagnostics {
    /// Every message as the compiler renders it, in order.
    pub rendered: String,
    /// How many are errors.
    pub errors: usize,
    /// Whether every error has no source location.
    pub unlocated: bool,
}

impl Diagnostics {
    /// The `compiler-message` lines of cargo's `--message-format=json`.
    pub fn of(json_lines: &str) -> Diagnostics {
        let mut d = Diagnostics {
            rendered: String::new(),
            errors: 0,
            unlocated: true,
        };
        let messages = json_lines
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["reason"] == "compiler-message");
        for m in messages {
            let m = &m["message"];
            if let Some(text) = m["rendered"].as_str() {
                d.rendered.push_str(text);
            }
            if m["level"].as_str().is_some_and(|l| l.starts_with("error")) {
                d.errors += 1;
                let located = m["spans"].as_array().is_none_or(|s| !s.is_empty());
                d.unlocated &= !located;
            }
        }
        d
    }
}

/// The dep-info file beside the last artifact cargo reported (the device crate's staticlib, or
/// its rlib): it lists every source file of the build.
fn dep_info(json_lines: &str) -> Option<PathBuf> {
    let last = json_lines
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .rfind(|v| v["reason"] == "compiler-artifact")?;
    let lib = last["filenames"]
        .as_array()?
        .iter()
        .filter_map(|f| f.as_str())
        .find(|f| f.ends_with(".a") || f.ends_with(".rlib"))?;
    Some(Path::new(lib).with_extension("d"))
}

/// The source files a dep-info file lists (`target: src1 src2 …`, spaces escaped with `\`),
/// leaving out the toolchain's own sources, which do not change.
pub(crate) fn sources(dep_info: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dep_info) else {
        return Vec::new();
    };
    let Some((_, deps)) = text.lines().next().and_then(|l| l.split_once(": ")) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => files.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    files.push(current);
    files
        .into_iter()
        .filter(|f| !f.is_empty() && !f.contains("/lib/rustlib/src/"))
        .map(PathBuf::from)
        .collect()
}
