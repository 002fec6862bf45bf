//! Architectures without kernels: a device crate whose only kernel is on Hopper's primitives
//! (behind `#[cfg(target_feature = "sm_90")]`, as the example project's cluster kernel is),
//! built for sm_70 and sm_90 — a module without kernels and a warning, or an error, as asked;
//! and a crate that has kernels but no panic handler keeps the compiler's error.
//!
//! The crates are written under `<target>/tmp`, and built into `<target>/ptx` beside the other
//! device builds, so that `core` is built once per architecture for all of them.

use crate::cargo::Diagnostics;
use crate::{EmptyArch, Ptx, PtxBuilder, TOOLCHAIN, empty};
use std::path::{Path, PathBuf};

/// The target directory of this build: the test runs from `<target>/<profile>/deps/`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .expect("a test binary under <target>/<profile>/deps")
}

/// Writes `path` unless it already holds `text` (an unchanged crate stays fresh for cargo).
fn write(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// A device crate of its own for each test (tests run at once, and two builds of one crate
/// would write the same files): `<target>/tmp/gridsync-builder/<dir>`.
fn device_crate(dir: &str, cargo_toml: &str, lib_rs: &str) -> PathBuf {
    let root = target_dir().join("tmp").join("gridsync-builder").join(dir);
    write(&root.join("Cargo.toml"), cargo_toml);
    write(&root.join("src/lib.rs"), lib_rs);
    write(
        &root.join("rust-toolchain.toml"),
        &format!("[toolchain]\nchannel = \"{TOOLCHAIN}\"\ncomponents = [\"rust-src\"]\n"),
    );
    root
}

/// A crate whose one kernel is sm_90's. With its feature `keep-gpu`, something of it refers to
/// `gridsync-gpu` on every architecture, so that the compiler makes a module without kernels
/// for sm_70; without it, nothing does, and the compiler stops for want of the panic handler.
fn hopper_only(dir: &str) -> PathBuf {
    let gpu = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpu");
    let cargo_toml = format!(
        "[package]\nname = \"hopper\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\ngpu = {{ path = {:?}, package = \"gridsync-gpu\" }}\n\n\
         [features]\nkeep-gpu = []\n\n[workspace]\n",
        gpu.display().to_string()
    );
    let lib_rs = r#"#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]

#[cfg(feature = "keep-gpu")]
pub use gpu::index::thread_idx_x;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
gpu::kernel! {
    /// Writes the block's rank in its cluster to `*out`.
    pub unsafe fn cluster_rank(out: *mut u32) {
        // SAFETY: the caller's.
        unsafe { *out = gpu::cluster::cluster_block_rank() };
    }
}
"#;
    device_crate(dir, &cargo_toml, lib_rs)
}

/// What [`build`] gave: each module with its text, or the error; the warnings; the output
/// directory.
struct Outcome {
    built: Result<Vec<(Ptx, String)>, String>,
    warnings: Vec<String>,
    out: PathBuf,
}

impl Outcome {
    /// The error, which the build must have ended with.
    fn error(&self) -> &str {
        match &self.built {
            Ok(built) => panic!("built, where an error was due: {built:?}"),
            Err(e) => e,
        }
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.out);
    }
}

/// Builds `krate` with `features` for `arches` into an output directory of its own, with the
/// policy `empty`.
fn build(krate: &Path, features: &[&str], arches: &[&str], empty: EmptyArch) -> Outcome {
    let tag = format!(
        "{}-{}",
        krate.file_name().unwrap().display(),
        features.len()
    );
    let out = super::temp(&tag);
    let mut warnings = Vec::new();
    let built = PtxBuilder::new(krate)
        .name("hopper")
        .arches(arches)
        .features(features)
        .empty_arches(empty)
        .out_dir(&out)
        .target_dir(target_dir().join("ptx"))
        .build_noting(&mut warnings)
        .map(|built| {
            let with_text = |p: Ptx| {
                let text = std::fs::read_to_string(&p.path).unwrap();
                (p, text)
            };
            built.into_iter().map(with_text).collect()
        })
        .map_err(|e| e.to_string());
    Outcome {
        built,
        warnings,
        out,
    }
}

/// `ptxas`: `PTXAS`, on `PATH`, or PyPI's `nvidia-cuda-nvcc-cu12` (as the root crate's
/// build script looks for it).
fn ptxas() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let python = std::process::Command::new("python3")
        .args([
            "-c",
            "import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("bin/ptxas"));
    std::env::var_os("PTXAS")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::split_paths(&path).map(|d| d.join("ptxas")))
        .chain(python)
        .find(|p| p.is_file())
}

/// Checks that `ptxas` assembles `ptx` for `arch`, where `ptxas` is installed.
fn assembles(ptx: &Path, arch: &str) {
    let Some(ptxas) = ptxas() else {
        eprintln!("ptxas not found (pip install nvidia-cuda-nvcc-cu12): {ptx:?} not assembled");
        return;
    };
    let out = std::process::Command::new(&ptxas)
        .args(["--gpu-name", arch, "-o"])
        .arg(ptx.with_extension("cubin"))
        .arg(ptx)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ptxas --gpu-name {arch} rejected {ptx:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_hopper_only_crate_gets_an_sm_70_module_without_kernels_and_a_warning() {
    let krate = hopper_only("hopper-warn");
    // Where the compiler stops (nothing refers to gridsync-gpu), and where it makes a module
    // without kernels itself.
    for features in [&[][..], &["keep-gpu"]] {
        let outcome = build(&krate, features, &["sm_70", "sm_90"], EmptyArch::Warn);
        let built = outcome
            .built
            .as_ref()
            .unwrap_or_else(|e| panic!("{features:?}: {e}"));
        let [(sm_70, text_70), (sm_90, _)] = &built[..] else {
            panic!("{features:?}: {built:?}");
        };
        assert_eq!(sm_70.arch, "sm_70");
        assert_eq!(sm_70.kernels, Vec::<String>::new(), "{features:?}");
        assert!(
            empty::entries(text_70).is_empty(),
            "{features:?}: {text_70}"
        );
        assert!(text_70.contains(".target sm_70"), "{features:?}: {text_70}");
        assert!(text_70.contains(".version 7.0"), "{features:?}: {text_70}");
        // Without the feature the compiler made no module, and the builder wrote its own.
        let ours = text_70.contains("written by gridsync-builder");
        assert_eq!(ours, features.is_empty(), "{features:?}: {text_70}");
        assert_eq!(sm_90.kernels, ["cluster_rank"], "{features:?}");
        for (ptx, _) in built {
            assembles(&ptx.path, &ptx.arch);
        }
        // One warning, naming the file, the architecture and the call that leaves it out.
        let [warning] = &outcome.warnings[..] else {
            panic!("{features:?}: {:?}", outcome.warnings);
        };
        assert!(warning.starts_with("no kernels for sm_70: "), "{warning}");
        assert!(
            warning.contains("without kernels (hopper_sm_70.ptx)"),
            "{warning}"
        );
        assert!(
            warning.contains("PtxBuilder::arches(&[\"sm_90\"])"),
            "{warning}"
        );
        assert!(
            !warning.contains('\n'),
            "a cargo warning is one line: {warning}"
        );
        // The index lists both, for the host to load the newest one a GPU runs.
        let index = std::fs::read_to_string(outcome.out.join("hopper_ptx.rs")).unwrap();
        assert!(
            index.contains("(\"sm_70\", ") && index.contains("(\"sm_90\", "),
            "{index}"
        );
    }
}

#[test]
fn a_hopper_only_crate_is_refused_for_sm_70_when_asked() {
    let krate = hopper_only("hopper-error");
    for features in [&[][..], &["keep-gpu"]] {
        let outcome = build(&krate, features, &["sm_70", "sm_90"], EmptyArch::Error);
        let e = outcome.error();
        assert!(e.contains("no kernels for sm_70:"), "{features:?}: {e}");
        assert!(
            e.contains("PtxBuilder::arches(&[\"sm_90\"])"),
            "{features:?}: {e}"
        );
        assert!(e.contains("EmptyArch::Warn"), "{features:?}: {e}");
        assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
        let written = |f: &str| outcome.out.join(f).exists();
        assert!(!written("hopper_sm_70.ptx") && !written("hopper_ptx.rs"));
    }
}

#[test]
fn no_architecture_with_a_kernel_is_an_error_whatever_the_policy() {
    let krate = hopper_only("hopper-none");
    let outcome = build(&krate, &[], &["sm_70"], EmptyArch::Warn);
    let e = outcome.error();
    assert!(
        e.contains("no kernels for any architecture built (sm_70)"),
        "{e}"
    );
    assert!(e.contains("PtxBuilder::arches(&[\"sm_90\"])"), "{e}");
    // The compiler's own words follow, for the panic handler it missed.
    assert!(
        e.contains("`cargo rustc` of") && e.contains("panic_handler"),
        "{e}"
    );
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

#[test]
fn a_crate_with_kernels_but_no_panic_handler_keeps_the_compilers_error() {
    // The same error as the Hopper crate's on sm_70, but this crate has a kernel there: it is
    // not an architecture without kernels, whatever the policy.
    let krate = device_crate(
        "no-panic-handler",
        "[package]\nname = \"bare\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
        "#![no_std]\n#![feature(abi_ptx)]\n\n/// Writes 1 to `*out`.\n///\n/// # Safety\n/// \
         `out` is valid.\n#[unsafe(no_mangle)]\npub unsafe extern \"ptx-kernel\" fn store_one(out: \
         *mut u32) {\n    unsafe { *out = 1 };\n}\n",
    );
    let outcome = build(&krate, &[], &["sm_70"], EmptyArch::Warn);
    let e = outcome.error();
    assert!(e.starts_with("`cargo rustc` of"), "{e}");
    assert!(e.contains("panic_handler"), "{e}");
    assert!(!e.contains("no kernels"), "{e}");
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

#[test]
fn a_module_without_kernels_takes_the_compilers_header() {
    let own_code = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.1\n.target sm_90\n\
                    .address_size 64\n\n.visible .func (.param .b32 r) helper()\n{\n\tret;\n}\n";
    let module = empty::module_without_kernels(own_code, "k", "sm_90").unwrap();
    assert!(
        module.starts_with("//\n// k_sm_90.ptx, written by gridsync-builder"),
        "{module}"
    );
    assert!(
        module.ends_with("\n.version 8.1\n.target sm_90\n.address_size 64\n"),
        "{module}"
    );
    assert!(!module.contains("helper"), "{module}");
    // The crate's own code with a kernel, or without a header, makes none.
    let kernel = format!("{own_code}\n.visible .entry k_main(\n)\n{{\n\tret;\n}}\n");
    assert_eq!(empty::entries(&kernel), ["k_main"]);
    assert_eq!(empty::module_without_kernels(&kernel, "k", "sm_90"), None);
    assert_eq!(
        empty::module_without_kernels("// nothing\n", "k", "sm_90"),
        None
    );
}

#[test]
fn only_errors_without_a_source_location_are_about_the_whole_crate() {
    let message = |level: &str, spans: &str| {
        format!(
            r#"{{"reason":"compiler-message","message":{{"rendered":"{level}: x\n","level":"{level}","spans":{spans},"code":null}}}}"#
        )
    };
    let span = r#"[{"file_name":"src/lib.rs","line_start":3}]"#;
    let unlocated_error = message("error", "[]");
    let located_warning = message("warning", span);
    let located_error = message("error", span);
    let lines = |ls: &[&str]| Diagnostics::of(&ls.join("\n"));
    let d = lines(&[
        &located_warning,
        &unlocated_error,
        r#"{"reason":"build-finished"}"#,
    ]);
    assert_eq!((d.errors, d.unlocated), (1, true));
    assert_eq!(d.rendered, "warning: x\nerror: x\n");
    let d = lines(&[&unlocated_error, &located_error]);
    assert_eq!((d.errors, d.unlocated), (2, false));
    assert_eq!(lines(&[&located_warning]).errors, 0);
}
