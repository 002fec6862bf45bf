//! The PTX the build script made of `gpu/`, one module per architecture, and the choice among
//! them at run time.

/// `(architecture, PTX text)`, oldest architecture first: every build of the device crate.
pub const BUILDS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/gpu_ptx.rs"));

/// The compute capability of an architecture's name: `sm_90` → `(9, 0)`, `sm_120` → `(12, 0)`;
/// an `a` or `f` suffix (`sm_90a`, `sm_100f`) names the same capability.
pub fn arch_capability(arch: &str) -> Option<(u32, u32)> {
    let digits = arch.strip_prefix("sm_")?.trim_end_matches(['a', 'f']);
    if !(2..=3).contains(&digits.len()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    Some((n / 10, n % 10))
}

/// Whether a build for `arch` runs on a device of compute capability `cc`: a plain build on
/// every device from its capability up (the driver compiles the PTX), an arch-specific one
/// (`sm_90a`) on that capability alone, a family one (`sm_100f`) on the same major version from
/// its minor up.
pub fn runs_on(arch: &str, cc: (u32, u32)) -> bool {
    let Some(cap) = arch_capability(arch) else {
        return false;
    };
    if arch.ends_with('a') {
        cap == cc
    } else if arch.ends_with('f') {
        cap.0 == cc.0 && cap.1 <= cc.1
    } else {
        cap <= cc
    }
}

/// The newest build a device of compute capability `cc` can run ([`best_in`]; the driver
/// compiles PTX for newer devices). `None` below sm_70, which lacks the independent thread
/// scheduling the lock kernels rely on.
pub fn best_for(cc: (u32, u32)) -> Option<(&'static str, &'static str)> {
    best_in(BUILDS, cc)
}

/// [`best_for`] among `builds`: of those that run on `cc` ([`runs_on`]), the highest
/// architecture — at one capability, an arch-specific build before a family one before a plain
/// one (each can use more of the device than the next).
pub fn best_in(
    builds: &'static [(&'static str, &'static str)],
    cc: (u32, u32),
) -> Option<(&'static str, &'static str)> {
    let specific = |arch: &str| match arch.chars().last() {
        Some('a') => 2,
        Some('f') => 1,
        _ => 0,
    };
    builds
        .iter()
        .copied()
        .filter(|(arch, _)| runs_on(arch, cc))
        .max_by_key(|(arch, _)| (arch_capability(arch), specific(arch)))
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
