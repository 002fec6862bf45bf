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

    /// The file the build emits: named after the device crate's manifest too, so that two
    /// crates (two checkouts of one, say) building into one target directory never read each
    /// other's PTX — cargo skips a crate it finds fresh, and then writes no file.
    pub fn ptx_path(&self) -> PathBuf {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        self.manifest.hash(&mut h);
        self.target_dir
            .join(format!("{}-{:016x}.ptx", self.name, h.finish()))
    }

    /// Builds, and returns the PTX file and the source files the build read.
    pub fn run(&self) -> Result<(PathBuf, Vec<PathBuf>), Error> {
        let ptx = self.ptx_path();
        let (profile, config) = self.profile();
        let first = self.cargo(&ptx, profile, &config)?;
        let dep_info = if ptx.is_file() {
            first
        } else {
            // Cargo thought the crate fresh, but the emitted file is gone: forget the
            // fingerprints and build again.
            let fingerprints = self
                .target_dir
                .join("nvptx64-nvidia-cuda")
                .join(profile)
                .join(".fingerprint");
            let _ = std::fs::remove_dir_all(fingerprints);
            self.cargo(&ptx, profile, &config)?
        };
        if !ptx.is_file() {
            return Err(Error(format!(
                "the device build for {} succeeded but left no {}",
                self.arch,
                ptx.display()
            )));
        }
        Ok((ptx, dep_info.map(|d| sources(&d)).unwrap_or_default()))
    }

    /// Runs cargo once; returns cargo's dep-info file of the device crate, if it said where.
    fn cargo(
        &self,
        ptx: &Path,
        profile: &str,
        config: &[String],
    ) -> Result<Option<PathBuf>, Error> {
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
        cmd.args([
            "rustc",
            "--message-format=json-render-diagnostics",
            "--manifest-path",
        ])
        .arg(self.manifest);
        for c in config {
            cmd.arg("--config").arg(c);
        }
        if !self.features.is_empty() {
            cmd.arg("--features").arg(self.features.join(","));
        }
        cmd.args(["--profile", profile, "--target", "nvptx64-nvidia-cuda"])
            .args(["-Zbuild-std=core", "--lib", "--crate-type", "staticlib"])
            .arg("--target-dir")
            .arg(self.target_dir)
            .arg("--")
            .arg(format!("--emit=asm={}", ptx.display()));
        let output = cmd.output().map_err(|e| {
            Error(format!(
                "could not run cargo for the device crate: {e}\n\nInstall the toolchain:\n    \
                 rustup toolchain install {TOOLCHAIN} --component rust-src"
            ))
        })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if output.status.success() {
            return Ok(dep_info(&stdout));
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let hint = if stderr.contains("rust-src") || stderr.contains("build-std") {
            format!(
                "\nThe device crate is built with -Zbuild-std=core, which needs the `rust-src` \
                 component:\n    rustup component add rust-src --toolchain {TOOLCHAIN}\n"
            )
        } else if stderr.contains("-Z") || stderr.contains("nightly") {
            format!(
                "\nThe device crate needs the nightly toolchain gridsync pins; put gridsync's \
                 rust-toolchain.toml beside your Cargo.toml and install it:\n    \
                 rustup toolchain install {TOOLCHAIN} --component rust-src\n"
            )
        } else {
            String::new()
        };
        Err(Error(format!(
            "`cargo rustc` of {} for {} failed:\n{stderr}{hint}",
            self.manifest.display(),
            self.arch
        )))
    }
}

/// The dep-info file beside the last artifact cargo reported (the device crate's staticlib):
/// it lists every source file of the build.
fn dep_info(json_lines: &str) -> Option<PathBuf> {
    let last = json_lines
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .rfind(|v| v["reason"] == "compiler-artifact")?;
    let lib = last["filenames"]
        .as_array()?
        .iter()
        .filter_map(|f| f.as_str())
        .find(|f| f.ends_with(".a"))?;
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
