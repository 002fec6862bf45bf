//! Where `ptxas` is: the assembler that turns PTX into a cubin, which the tests of a PTX build
//! and `gridsync doctor` look for (the PTX build itself does not need it).

use std::path::PathBuf;
use std::process::Command;

/// Where `ptxas` is: env `PTXAS`, the `PATH`, or PyPI's `nvidia-cuda-nvcc-cu12` (also what
/// `gridsync doctor` reports).
pub fn locate_ptxas() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::var_os("PTXAS")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::split_paths(&path).map(|d| d.join("ptxas")))
        .chain(python_ptxas())
        .find(|p| p.is_file())
}

fn python_ptxas() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])",
        ])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(dir.trim()).join("bin").join("ptxas"))
}
