//! Tells the crates that depend on this one where its sources are (`DEP_GRIDSYNC_GPU_ROOT` in
//! their build scripts): gridsync's build script builds them to PTX from there, whether they
//! come from this repository, a git checkout or the registry.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
        println!(
            "cargo::metadata=root={}",
            std::path::Path::new(&dir).display()
        );
    }
}
