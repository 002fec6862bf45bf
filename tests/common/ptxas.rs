//! `ptxas` on a PTX build, for the tests that assemble them (`GRIDSYNC_PTXAS`, found by the
//! build script; without it those tests are ignored).

/// Assembles `ptx` with `ptxas --gpu-name arch -v` and returns its report; fails the test if
/// `ptxas` rejects it. Calls may run at once, from several threads: each has files of its own.
pub fn ptxas(arch: &str, ptx: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let path = env!("GRIDSYNC_PTXAS");
    let dir = std::env::temp_dir().join(format!("gridsync-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, cubin) = (
        dir.join(format!("{arch}-{call}.ptx")),
        dir.join(format!("{arch}-{call}.cubin")),
    );
    std::fs::write(&src, ptx).unwrap();
    let out = std::process::Command::new(path)
        .args(["--gpu-name", arch, "-v", "-o"])
        .arg(&cubin)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("running {path}: {e}"));
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    // A rejected build's file stays, for the lines the report names.
    assert!(
        out.status.success(),
        "ptxas --gpu-name {arch} rejected {}:\n{log}",
        src.display()
    );
    let _ = (std::fs::remove_file(src), std::fs::remove_file(cubin));
    log
}
