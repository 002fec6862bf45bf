//! The PTX pipeline: `gpu/` → rustc's NVPTX backend → one `.ptx` per architecture.
//!
//! Each architecture is a nested `cargo rustc` of the device crate for `nvptx64-nvidia-cuda`
//! with `-Zbuild-std=core`, as a staticlib with fat LTO (profile `ptx`), emitting assembly —
//! which on NVPTX *is* PTX. Each gets its own target directory: a nested cargo must not wait on
//! the outer one's lock, and per-architecture directories keep each build's `core` cached.

use std::path::{Path, PathBuf};
use std::process::Command;

/// (architecture, PTX ISA version): sm_70 is the first with independent thread scheduling,
/// which the lock patterns rely on, and with `nanosleep` (PTX 6.3); PTX 7.0 needs only a CUDA 11
/// driver. sm_80 adds Ampere's `redux.sync`; sm_90 is Hopper, whose minimum PTX is 7.8.
pub const ARCHES: &[(&str, &str)] = &[("sm_70", "ptx70"), ("sm_80", "ptx70"), ("sm_90", "ptx78")];

fn env_path(name: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(name).unwrap_or_else(|| panic!("cargo did not set {name}")))
}

pub fn build_all() -> Result<(), String> {
    let root = env_path("CARGO_MANIFEST_DIR");
    let out = env_path("OUT_DIR");
    let target_root = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    };
    let mut index = String::new();
    for (arch, ptx_isa) in ARCHES {
        let dir = target_root.join("ptx").join(arch);
        let ptx = build_one(&root, &dir, arch, ptx_isa)?;
        let dest = out.join(format!("gpu_{arch}.ptx"));
        std::fs::copy(&ptx, &dest)
            .map_err(|e| format!("copying {} to {}: {e}", ptx.display(), dest.display()))?;
        index.push_str(&format!(
            "(\"{arch}\", include_str!(concat!(env!(\"OUT_DIR\"), \"/gpu_{arch}.ptx\"))),\n"
        ));
    }
    std::fs::write(out.join("ptx_index.rs"), format!("&[\n{index}]"))
        .map_err(|e| format!("writing the PTX index: {e}"))
}

fn build_one(root: &Path, dir: &Path, arch: &str, ptx_isa: &str) -> Result<PathBuf, String> {
    let ptx = dir.join("gpu.ptx");
    let run = || -> Result<(), String> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        // A clean environment: nothing of the outer build (its RUSTFLAGS, target, profile,
        // jobserver, wrappers) may leak into the device build.
        cmd.env_clear();
        for keep in [
            "PATH",
            "HOME",
            "RUSTUP_HOME",
            "CARGO_HOME",
            "RUSTUP_TOOLCHAIN",
            "TMPDIR",
            "RUSTC",
        ] {
            if let Some(v) = std::env::var_os(keep) {
                cmd.env(keep, v);
            }
        }
        cmd.env(
            "CARGO_ENCODED_RUSTFLAGS",
            format!("-Ctarget-cpu={arch}\x1f-Ctarget-feature=+{ptx_isa}"),
        )
        .env("CARGO_TERM_COLOR", "never")
        .current_dir(root)
        .args(["rustc", "--quiet", "--manifest-path"])
        .arg(root.join("gpu").join("Cargo.toml"))
        .args([
            "--profile",
            "ptx",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
        ])
        .args(["--crate-type", "staticlib", "--target-dir"])
        .arg(dir)
        .arg("--")
        .arg(format!("--emit=asm={}", ptx.display()));
        let output = cmd
            .output()
            .map_err(|e| format!("could not run cargo for the device crate: {e}"))?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let hint = if stderr.contains("rust-src") || stderr.contains("build-std") {
            "\nThe device crate is built with -Zbuild-std=core, which needs the `rust-src` component \
             of the pinned nightly:\n    rustup component add rust-src --toolchain nightly-2026-05-20\n"
        } else if stderr.contains("-Z") || stderr.contains("nightly") {
            "\nThe device crate needs the pinned nightly toolchain of rust-toolchain.toml:\n    \
             rustup toolchain install nightly-2026-05-20 --component rust-src\n"
        } else {
            ""
        };
        Err(format!(
            "`cargo rustc` of gpu/ for {arch} failed:\n{stderr}{hint}"
        ))
    };
    run()?;
    if !ptx.is_file() {
        // Cargo thought the crate fresh, but the emitted file is gone: forget the fingerprint
        // and build again.
        let _ = std::fs::remove_dir_all(
            dir.join("nvptx64-nvidia-cuda")
                .join("ptx")
                .join(".fingerprint"),
        );
        run()?;
    }
    if ptx.is_file() {
        Ok(ptx)
    } else {
        Err(format!(
            "the device build for {arch} succeeded but left no {}",
            ptx.display()
        ))
    }
}

/// Tells the tests where `ptxas` is (env `PTXAS`, `PATH`, or PyPI's `nvidia-cuda-nvcc-cu12`),
/// or sets `gridsync_no_ptxas` so that the `ptxas` tests are reported as ignored.
pub fn find_ptxas() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let candidates = std::env::var_os("PTXAS")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::split_paths(&path).map(|d| d.join("ptxas")))
        .chain(python_ptxas());
    match candidates.into_iter().find(|p| p.is_file()) {
        Some(p) => println!("cargo::rustc-env=GRIDSYNC_PTXAS={}", p.display()),
        None => println!("cargo::rustc-cfg=gridsync_no_ptxas"),
    }
}

fn python_ptxas() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])",
        ])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(dir.trim()).join("bin").join("ptxas"))
}
