//! The builder's checks that need no nested build: bad input is an error that says what is
//! wrong, and the pieces around the build (architectures, target directory, dep-info).

use crate::{PtxBuilder, arch, cargo, default_target_dir};
use std::path::{Path, PathBuf};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gridsync-builder-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_missing_device_crate_is_named() {
    let out = temp("missing");
    let e = PtxBuilder::new(out.join("nowhere"))
        .out_dir(&out)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("no device crate at"), "{e}");
    assert!(e.to_string().contains("nowhere"), "{e}");
}

#[test]
fn unknown_or_no_architectures_are_refused_before_building() {
    let dir = temp("arches");
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
    let e = PtxBuilder::new(&dir)
        .arches(&["sm_61"])
        .out_dir(&dir)
        .build()
        .unwrap_err();
    assert!(
        e.to_string().contains("unknown architecture \"sm_61\""),
        "{e}"
    );
    assert!(e.to_string().contains("sm_70"), "{e}");
    let none: [&str; 0] = [];
    let e = PtxBuilder::new(&dir)
        .arches(&none)
        .out_dir(&dir)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("no architecture"), "{e}");
    // `Debug` (what `fn main() -> Result<(), Error>` prints) reads as a message.
    assert!(format!("{e:?}").starts_with("could not build the device crate to PTX"));
}

#[test]
fn every_default_architecture_has_an_isa() {
    for a in crate::DEFAULT_ARCHES {
        assert!(arch::ptx_isa(a).is_some(), "{a}");
    }
    assert_eq!(arch::ptx_isa("sm_90"), Some("ptx78"));
}

#[test]
fn the_target_directory_is_beside_the_profiles() {
    let out = Path::new("/t/debug/build/pkg-0123/out");
    assert_eq!(default_target_dir(out), Path::new("/t/ptx"));
    let cross = Path::new("/t/x86_64-unknown-linux-gnu/release/build/pkg-0123/out");
    assert_eq!(
        default_target_dir(cross),
        Path::new("/t/x86_64-unknown-linux-gnu/ptx")
    );
    let elsewhere = Path::new("/somewhere/out");
    assert_eq!(
        default_target_dir(elsewhere),
        Path::new("/somewhere/out/ptx-target")
    );
}

#[test]
fn dep_info_lists_sources_but_not_the_toolchain() {
    let dir = temp("depinfo");
    let d = dir.join("libk.d");
    std::fs::write(
        &d,
        "/t/libk.a: /src/a\\ b.rs /src/lib.rs /rt/lib/rustlib/src/rust/library/core/src/lib.rs\n",
    )
    .unwrap();
    assert_eq!(
        cargo::sources(&d),
        [PathBuf::from("/src/a b.rs"), PathBuf::from("/src/lib.rs")]
    );
}
