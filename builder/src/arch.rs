//! GPU architectures: which names the builder takes, and the PTX ISA each is built with.

use crate::Error;

/// The architectures built when none are named: sm_70 is the first with independent thread
/// scheduling (which spin locks rely on) and `nanosleep`; sm_80 adds Ampere's `redux.sync`;
/// sm_90 is Hopper. A device runs the newest of them not above its compute capability.
pub const DEFAULT_ARCHES: &[&str] = &["sm_70", "sm_80", "sm_90"];

/// The oldest architecture: independent thread scheduling, scoped atomics and `nanosleep`.
const OLDEST: u32 = 70;

/// A well-formed architecture name: `sm_` and a compute capability of two or three digits
/// (major, then minor), optionally `a` (arch-specific: this exact GPU only) or `f` (this family
/// of GPUs) — `sm_70`, `sm_90a`, `sm_100f`, `sm_120` — at least `sm_70`.
///
/// # Errors
/// A name that is not of that form, or below `sm_70`, saying why.
pub fn check(arch: &str) -> Result<(), Error> {
    let bad = |why: &str| {
        Err(Error(format!(
            "unknown architecture {arch:?}: {why} (for example sm_70, sm_80, sm_90, sm_90a, \
             sm_100f, sm_120)"
        )))
    };
    let Some(rest) = arch.strip_prefix("sm_") else {
        return bad("an architecture is sm_ and a compute capability");
    };
    let digits = rest.trim_end_matches(['a', 'f']);
    if rest.len() - digits.len() > 1
        || !(2..=3).contains(&digits.len())
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return bad("an architecture is sm_, two or three digits, and an optional a or f");
    }
    match digits.parse::<u32>() {
        Ok(n) if n >= OLDEST => Ok(()),
        _ => bad("gridsync needs sm_70 or newer (independent thread scheduling, scoped atomics)"),
    }
}

/// The PTX ISA feature to force for `arch`, if any: `ptx70` for the sm_7x generation, whose
/// own minimum ISA (6.x) predates the scoped atomics and fences (PTX 7.0, CUDA 11); `ptx80` for
/// sm_9x, whose own minimum (7.8) predates `mbarrier.arrive.expect_tx`, the bulk asynchronous
/// copies that complete on an `mbarrier` and `fence.mbarrier_init` (PTX 8.0, CUDA 12.0); for
/// the others none — rustc's NVPTX backend then takes the architecture's own minimum ISA
/// (sm_80: 7.0; sm_100 and later: past 8.0), which is what loads on the oldest driver that
/// knows the architecture.
pub fn forced_isa(arch: &str) -> Option<&'static str> {
    let digits = arch.strip_prefix("sm_")?.trim_end_matches(['a', 'f']);
    let n: u32 = digits.parse().ok()?;
    match n {
        ..80 => Some("ptx70"),
        90..100 => Some("ptx80"),
        _ => None,
    }
}

/// Whether the compiler (`rustc`, as the nested build will run it) knows `arch` as a
/// `target-cpu` for `nvptx64-nvidia-cuda`; `None` where it cannot be asked.
pub fn known_to_rustc(arch: &str) -> Option<Result<(), Error>> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc)
        .args(["--print", "target-cpus", "--target", "nvptx64-nvidia-cuda"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let listing = String::from_utf8_lossy(&out.stdout);
    let cpus = cpus_in(&listing);
    if cpus.is_empty() {
        return None;
    }
    Some(if cpus.iter().any(|c| c == arch) {
        Ok(())
    } else {
        Err(Error(format!(
            "{arch} is well formed, but this compiler's NVPTX backend does not know it; it \
             knows {}",
            cpus.join(", ")
        )))
    })
}

/// The `sm_…` names of `rustc --print target-cpus`.
pub(crate) fn cpus_in(listing: &str) -> Vec<String> {
    listing
        .split_whitespace()
        .filter(|w| w.starts_with("sm_") && check(w).is_ok())
        .map(str::to_string)
        .collect()
}
