//! Marks the GPU tests as ignored where the library linked the stub driver (no NVIDIA driver at
//! build time): `cfg(gridsync_no_driver)`, as in the library's own tests. The library's build
//! script says so through `links` metadata (`DEP_GRIDSYNC_NO_DRIVER`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(gridsync_no_driver)");
    println!("cargo::rerun-if-env-changed=DEP_GRIDSYNC_NO_DRIVER");
    if std::env::var_os("DEP_GRIDSYNC_NO_DRIVER").is_some() {
        println!("cargo::rustc-cfg=gridsync_no_driver");
    }
}
