//! The example project `examples/own-kernel` — a crate of your own kernels on gridsync's
//! primitives, built by `gridsync-builder` and launched through `gridsync::Module`: its PTX
//! holds its kernels only and `ptxas` accepts it for every architecture, and its binary runs on
//! the GPU and matches the CPU. (CI builds and runs it on the simulator, from its own directory.)

#[cfg(not(gridsync_no_ptxas))]
#[path = "common/ptxas.rs"]
mod assembler;
mod common;

use std::path::{Path, PathBuf};

/// The example's kernels, as the entry points of its PTX: every build's, and the sm_90 build's
/// cluster kernel.
const KERNELS: [&str; 2] = ["append_multiples", "count_multiples"];
const HOPPER_KERNELS: [&str; 3] = [
    "append_multiples",
    "count_multiples",
    "count_multiples_cluster",
];

/// The target directory of this build: the test runs from `<target>/<profile>/deps/`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .expect("a test binary under <target>/<profile>/deps")
}

/// Builds the example's device crate with the builder, as its build script does, into a
/// directory of this test (the device builds themselves are cached under `<target>/ptx`).
fn example_ptx() -> Vec<(String, String)> {
    let out = std::env::temp_dir().join(format!("gridsync-own-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let built = gridsync_builder::PtxBuilder::new("examples/own-kernel/kernels")
        .out_dir(&out)
        .target_dir(target_dir().join("ptx"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let ptx = built
        .into_iter()
        .map(|b| (b.arch, std::fs::read_to_string(&b.path).unwrap()))
        .collect();
    let _ = std::fs::remove_dir_all(&out);
    ptx
}

#[test]
#[cfg_attr(
    gridsync_no_ptxas,
    ignore = "ptxas not found at build time (pip install nvidia-cuda-nvcc-cu12)"
)]
fn example_ptx_holds_its_kernels_only_and_ptxas_accepts_it() {
    let ptx = example_ptx();
    let arches: Vec<&str> = ptx.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(arches, gridsync_builder::DEFAULT_ARCHES);
    for (arch, text) in &ptx {
        let mut entries: Vec<&str> = gridsync::runtime::ptx::entries(text).collect();
        entries.sort_unstable();
        let kernels: &[&str] = if arch == "sm_90" {
            &HOPPER_KERNELS
        } else {
            &KERNELS
        };
        assert_eq!(entries, kernels, "{arch}: not the example's kernels alone");
        // The count: block-scope adds in shared memory, one device-scope add per block.
        assert!(text.contains("red.relaxed.cta.shared.add.u32"), "{arch}");
        assert!(text.contains("atom.relaxed.gpu.add.u32"), "{arch}");
        #[cfg(not(gridsync_no_ptxas))]
        {
            let log = assembler::ptxas(arch, text);
            let functions = log.matches("Function properties for").count();
            assert_eq!(
                functions,
                kernels.len(),
                "{arch}: ptxas saw {functions}\n{log}"
            );
        }
    }
}

/// The example's binary: `OWN_KERNEL_BIN`, or where CI builds it (the example's `cargo build`
/// with this target directory).
fn example_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("OWN_KERNEL_BIN") {
        return bin.into();
    }
    let target = target_dir();
    ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile).join("own-kernel"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no own-kernel binary under {}: build the example with \
                 `cd examples/own-kernel && CARGO_TARGET_DIR=../../target cargo build --release`, \
                 or set OWN_KERNEL_BIN",
                target.display()
            )
        })
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn example_runs_on_the_gpu_and_matches_the_cpu() {
    let bin = example_bin();
    let out = std::process::Command::new(&bin)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", bin.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("running on the GPU"),
        "not on a GPU:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all match the CPU"), "{stdout}");
    assert!(stdout.contains("count_multiples_cluster:"), "{stdout}");
}
