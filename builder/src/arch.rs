//! GPU architectures the builder knows, and the PTX ISA each one is built with.

/// The architectures built when none are named: sm_70 is the first with independent thread
/// scheduling (which spin locks rely on) and `nanosleep`; sm_80 adds Ampere's `redux.sync`;
/// sm_90 is Hopper. A device runs the newest of them not above its compute capability.
pub const DEFAULT_ARCHES: &[&str] = &["sm_70", "sm_80", "sm_90"];

/// `(architecture, PTX ISA)`: the lowest ISA version that architecture accepts, but never
/// below 7.0 (CUDA 11), which the scoped atomics and fences need. A lower ISA loads on older
/// drivers.
const KNOWN: &[(&str, &str)] = &[
    ("sm_70", "ptx70"),
    ("sm_72", "ptx70"),
    ("sm_75", "ptx70"),
    ("sm_80", "ptx70"),
    ("sm_86", "ptx71"),
    ("sm_87", "ptx74"),
    ("sm_89", "ptx78"),
    ("sm_90", "ptx78"),
];

/// The PTX ISA feature (`ptx78`) to build `arch` with, or `None` for an architecture the
/// builder does not know.
pub fn ptx_isa(arch: &str) -> Option<&'static str> {
    KNOWN.iter().find(|(a, _)| *a == arch).map(|(_, isa)| *isa)
}

/// Every architecture the builder knows, for error messages.
pub fn known() -> String {
    KNOWN.iter().map(|(a, _)| *a).collect::<Vec<_>>().join(", ")
}
