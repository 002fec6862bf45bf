//! Helpers shared by the command's integration tests: the library tests' own (`tests/common` at
//! the root), and the `gridsync` binary run as a user runs it.
#![allow(dead_code)]

#[path = "../../../tests/common/mod.rs"]
mod library;
#[allow(unused_imports)]
pub use library::*;

/// The `gridsync` binary's path: `GRIDSYNC_BIN`, for test binaries copied to another machine,
/// else where cargo built it.
pub fn bin() -> String {
    std::env::var("GRIDSYNC_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gridsync").to_string())
}

/// Runs the `gridsync` binary ([`bin`]).
pub fn cli(args: &[&str]) -> std::process::Output {
    cli_env(args, &[])
}

/// [`cli`] with variables added to its environment.
pub fn cli_env(args: &[&str], vars: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(bin())
        .args(args)
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}

/// [`cli`], which must succeed: fails the test with the command's stderr otherwise.
pub fn cli_ok(args: &[&str]) -> std::process::Output {
    let out = cli(args);
    assert!(
        out.status.success(),
        "gridsync {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`cli_ok`]'s standard output, parsed as JSON (the command run with `--json`).
pub fn cli_json(args: &[&str]) -> serde_json::Value {
    let out = cli_ok(args);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "gridsync {}: not JSON ({e}): {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
