//! Builds the device crate to PTX for every supported architecture (with `gridsync-builder`,
//! which any crate's build script can use the same way) and embeds it, and arranges
//! the link against the CUDA driver — the real one where it is installed, a generated stub where
//! it is not (see `build/driver.rs`).

#[path = "build/driver.rs"]
mod driver;
#[path = "build/ptxas.rs"]
mod ptxas;
#[path = "build/shim.rs"]
mod shim;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=build");
    println!("cargo::rerun-if-changed=Cargo.toml");
    println!("cargo::rerun-if-env-changed=GRIDSYNC_CUDA_STUB");
    println!("cargo::rerun-if-env-changed=PTXAS");
    println!("cargo::rustc-check-cfg=cfg(gridsync_no_driver)");
    println!("cargo::rustc-check-cfg=cfg(gridsync_no_ptxas)");

    println!("cargo::rerun-if-env-changed=DOCS_RS");

    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    // docs.rs: no network, no device toolchain, nothing to link — the API documents the same
    // without the PTX, so write the empty index and stop.
    let docs_rs = std::env::var_os("DOCS_RS").is_some();
    // The device crate with gridsync's own kernels: `gpu_sm_70.ptx`, … and `gpu_ptx.rs`. Without
    // the `ptx` feature (a build that needs no kernels on a GPU: fuzzing the parsers, the API
    // docs) an empty index instead, and no nightly device build. Its sources are wherever cargo
    // took `gridsync-gpu` from (this repository's `gpu/`, a git checkout, the registry): its
    // build script says where.
    if std::env::var_os("CARGO_FEATURE_PTX").is_some() && !docs_rs {
        let Some(root) = std::env::var_os("DEP_GRIDSYNC_GPU_ROOT") else {
            eprintln!(
                "\nerror: gridsync-gpu did not say where its sources are (DEP_GRIDSYNC_GPU_ROOT)\n"
            );
            std::process::exit(1);
        };
        // Named `gpu` (`gpu_ptx.rs`, …) whatever the directory is called.
        let device = gridsync_builder::PtxBuilder::new(root)
            .name("gpu")
            .features(&["kernels"]);
        if let Err(e) = device.build() {
            // A build script reports failure by exiting non-zero; the message is what the user
            // reads.
            eprintln!("\nerror: could not build the device crate to PTX\n\n{e}\n");
            std::process::exit(1);
        }
    } else if let Err(e) = std::fs::write(out.join("gpu_ptx.rs"), "&[]") {
        eprintln!("\nerror: could not write the empty PTX index: {e}\n");
        std::process::exit(1);
    }
    if docs_rs {
        return;
    }
    if let Err(e) = shim::build(&out.join("cuda-shim")).and_then(|()| driver::link()) {
        eprintln!("\nerror: could not set up the link against the CUDA driver\n\n{e}\n");
        std::process::exit(1);
    }
    ptxas::find_ptxas();
}
