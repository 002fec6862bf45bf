//! The builder's checks that need no nested build: bad input is an error that says what is
//! wrong, and the pieces around the build (architectures, target directory, dep-info). Those
//! that build device crates are in [`empty`].

mod empty;

use crate::builder::default_target_dir;
use crate::{PtxBuilder, arch, cargo};
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
fn malformed_old_or_no_architectures_are_refused_before_building() {
    let dir = temp("arches");
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
    for (arch, why) in [
        ("sm_61", "sm_70 or newer"),
        ("compute_90", "sm_ and a compute capability"),
        ("sm_9", "two or three digits"),
        ("sm_90ab", "two or three digits"),
        ("sm_9x", "two or three digits"),
    ] {
        let e = PtxBuilder::new(&dir)
            .arches(&[arch])
            .out_dir(&dir)
            .build()
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(&format!("unknown architecture \"{arch}\"")),
            "{text}"
        );
        assert!(text.contains(why), "{arch}: {text}");
    }
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
fn any_well_formed_architecture_is_taken() {
    for a in [
        "sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100f", "sm_120",
        "sm_121a",
    ] {
        arch::check(a).unwrap();
    }
    // The sm_7x generation is built with PTX 7.0 (scoped atomics), sm_9x with 8.0 (transaction
    // counts, bulk copies); the others take their own minimum.
    assert_eq!(arch::forced_isa("sm_70"), Some("ptx70"));
    assert_eq!(arch::forced_isa("sm_75"), Some("ptx70"));
    assert_eq!(arch::forced_isa("sm_80"), None);
    assert_eq!(arch::forced_isa("sm_90"), Some("ptx80"));
    assert_eq!(arch::forced_isa("sm_90a"), Some("ptx80"));
    assert_eq!(arch::forced_isa("sm_120a"), None);
    let listing = "Available CPUs for this target:\n    sm_100\n    sm_100a\n    sm_60\n    \
                   sm_70    - This is the default target CPU\n    sm_90a\n";
    assert_eq!(
        arch::cpus_in(listing),
        ["sm_100", "sm_100a", "sm_70", "sm_90a"]
    );
    // This toolchain's rustc knows every default architecture, and names what it knows when
    // asked for one it does not.
    for a in crate::DEFAULT_ARCHES {
        if let Some(known) = arch::known_to_rustc(a) {
            known.unwrap();
        }
    }
    if let Some(known) = arch::known_to_rustc("sm_990") {
        let e = known.unwrap_err().to_string();
        assert!(e.contains("does not know it") && e.contains("sm_90"), "{e}");
    }
}

#[test]
fn rustflags_follow_the_architecture_and_its_isa() {
    let job = |arch, extra: &[String]| {
        cargo::Job {
            manifest: Path::new("k/Cargo.toml"),
            target_dir: Path::new("t"),
            name: "k",
            arch,
            release: true,
            features: &[],
            rustflags: extra,
        }
        .rustflags()
    };
    assert_eq!(
        job("sm_70", &[]),
        "-Ctarget-cpu=sm_70\x1f-Ctarget-feature=+ptx70"
    );
    assert_eq!(
        job("sm_90", &[]),
        "-Ctarget-cpu=sm_90\x1f-Ctarget-feature=+ptx80"
    );
    assert_eq!(job("sm_80", &[]), "-Ctarget-cpu=sm_80");
    let extra = [
        "-Ctarget-feature=+ptx81".to_string(),
        "--cfg=hopper".to_string(),
    ];
    assert_eq!(
        job("sm_90", &extra),
        "-Ctarget-cpu=sm_90\x1f-Ctarget-feature=+ptx80\x1f-Ctarget-feature=+ptx81\x1f--cfg=hopper"
    );
}

#[test]
fn two_device_crates_in_one_target_directory_emit_different_files() {
    let features = ["extra".to_string()];
    let job = |manifest, release, features| cargo::Job {
        manifest,
        target_dir: Path::new("t/sm_90"),
        name: "kernels",
        arch: "sm_90",
        release,
        features,
        rustflags: &[],
    };
    let one = Path::new("/one/kernels/Cargo.toml");
    let a = job(one, true, &[]).ptx_path("staticlib");
    let b = job(Path::new("/two/kernels/Cargo.toml"), true, &[]).ptx_path("staticlib");
    assert_ne!(a, b);
    assert_eq!(a, job(one, true, &[]).ptx_path("staticlib"));
    assert!(a.starts_with("t/sm_90") && a.extension() == Some("ptx".as_ref()));
    // Nor does one crate built otherwise (a build cargo finds fresh writes no file: it must
    // find its own).
    for other in [
        job(one, false, &[]).ptx_path("staticlib"),
        job(one, true, &features).ptx_path("staticlib"),
        job(one, true, &[]).ptx_path("rlib"),
    ] {
        assert_ne!(a, other);
    }
}

#[test]
fn the_outer_builds_flags_stay_out_and_the_users_environment_goes_in() {
    use std::ffi::OsStr;
    let leaks = |k: &str| cargo::leaks(OsStr::new(k));
    for k in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_PROFILE_RELEASE_LTO",
        "CARGO_FEATURE_KERNELS",
        "CARGO_CFG_TARGET_OS",
        "CARGO_MANIFEST_DIR",
        "CARGO_PKG_NAME",
        "CARGO",
        "OUT_DIR",
        "TARGET",
        "RUSTC_WRAPPER",
        "DEP_Z_INCLUDE",
        "__CARGO_FIX_PLZ",
    ] {
        assert!(leaks(k), "{k} must not reach the device build");
    }
    for k in [
        "PATH",
        "HOME",
        "HTTPS_PROXY",
        "https_proxy",
        "NO_PROXY",
        "SSL_CERT_FILE",
        "SSH_AUTH_SOCK",
        "CARGO_HOME",
        "CARGO_MAKEFLAGS",
        "CARGO_NET_OFFLINE",
        "CARGO_HTTP_CAINFO",
        "CARGO_REGISTRIES_MINE_INDEX",
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "TMPDIR",
    ] {
        assert!(!leaks(k), "{k} must reach the device build");
    }
}

#[test]
fn the_toolchain_is_the_one_rust_toolchain_toml_pins() {
    // The repository's pin, and the example project's copy of it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for file in [
        "rust-toolchain.toml",
        "examples/own-kernel/rust-toolchain.toml",
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let channel = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("channel"))
            .and_then(|l| l.split('"').nth(1));
        assert_eq!(channel, Some(crate::TOOLCHAIN), "{file}");
    }
    // The README's set-up line names it too.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains(&format!("rustup toolchain install {}", crate::TOOLCHAIN)));
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
