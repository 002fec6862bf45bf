//! Where `ptxas` is, for the tests that assemble every PTX build.

/// Tells the tests where `ptxas` is ([`gridsync_builder::locate_ptxas`]), or sets `gridsync_no_ptxas` so that the
/// `ptxas` tests are reported as ignored.
pub fn find_ptxas() {
    match gridsync_builder::locate_ptxas() {
        Some(p) => println!("cargo::rustc-env=GRIDSYNC_PTXAS={}", p.display()),
        None => println!("cargo::rustc-cfg=gridsync_no_ptxas"),
    }
}
