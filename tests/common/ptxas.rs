//! `ptxas` on a PTX build, for the tests that assemble them (`GRIDSYNC_PTXAS`, found by the
//! build script; without it those tests are ignored).

/// Assembles `ptx` with `ptxas --gpu-name arch -v` and returns its report; fails the test if
/// `ptxas` rejects it.
pub fn ptxas(arch: &str, ptx: &str) -> String {
    let path = env!("GRIDSYNC_PTXAS");
    let dir = std::env::temp_dir().join(format!("gridsync-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{arch}-{}.ptx", ptx.len()));
    std::fs::write(&src, ptx).unwrap();
    let out = std::process::Command::new(path)
        .args(["--gpu-name", arch, "-v", "-o"])
        .arg(dir.join("out.cubin"))
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("running {path}: {e}"));
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "ptxas --gpu-name {arch} rejected the PTX:\n{log}"
    );
    log
}
