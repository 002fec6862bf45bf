//! The PTX the build script made of `gpu/`, one module per architecture, and the choice among
//! them at run time.

/// `(architecture, PTX text)`, oldest architecture first: every build of the device crate.
pub const BUILDS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/gpu_ptx.rs"));

/// The compute capability of an `sm_XY` name: `sm_90` → `(9, 0)`.
pub fn arch_capability(arch: &str) -> Option<(u32, u32)> {
    let digits = arch.strip_prefix("sm_")?;
    let n: u32 = digits.parse().ok()?;
    Some((n / 10, n % 10))
}

/// The newest build a device of compute capability `cc` can run: the highest architecture not
/// above it (the driver compiles PTX for newer devices). `None` below sm_70, which lacks the
/// independent thread scheduling the lock kernels rely on.
pub fn best_for(cc: (u32, u32)) -> Option<(&'static str, &'static str)> {
    best_in(BUILDS, cc)
}

/// [`best_for`] among `builds`: the highest architecture not above `cc`.
pub fn best_in(
    builds: &'static [(&'static str, &'static str)],
    cc: (u32, u32),
) -> Option<(&'static str, &'static str)> {
    builds
        .iter()
        .copied()
        .rfind(|(arch, _)| arch_capability(arch).is_some_and(|a| a <= cc))
}

/// The kernels (`.entry` points) of a PTX module, in order.
pub fn entries(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter_map(|l| {
        let l = l.trim_start();
        let rest = l
            .strip_prefix(".visible .entry ")
            .or_else(|| l.strip_prefix(".entry "))?;
        rest.split(['(', ' '])
            .next()
            .filter(|name| !name.is_empty())
    })
}
