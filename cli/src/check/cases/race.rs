//! The race lesson: a lost update, its atomic fix, and an atomic of too narrow a scope.

use super::{BLOCKS, THREADS};
use crate::check::{Case, Ran};
use gpu::LaunchConfig;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// The race lesson's three kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "race",
            K::AddOne.name(),
            DataRace,
            "3 × 40",
            "`x[0] += 1`: a plain load and store by every thread",
            |t| race_kernel(t, 0)
        ),
        case!(
            "race",
            K::AddOneAtomic.name(),
            Clean,
            "3 × 40",
            "one device-scope atomic add per thread",
            |t| race_kernel(t, 1)
        ),
        case!(
            "race",
            K::AddOneBlockScope.name(),
            ScopeRace,
            "3 × 40",
            "a block-scope atomic on a counter every block shares",
            |t| race_kernel(t, 2)
        ),
    ]
}

/// The race lesson's kernel `which` (0: `add_one`, 1: atomic, 2: block scope) on one zeroed
/// counter.
fn race_kernel(t: &Target, which: u32) -> Result<Ran> {
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    let x = t.zeros::<u32>(1)?;
    // SAFETY: `x` holds the one u32 each kernel touches, and outlives the launch.
    unsafe {
        match which {
            0 => gridsync::launch!(t, gpu::lessons::race::add_one, cfg, (x.ptr()))?,
            1 => gridsync::launch!(t, gpu::lessons::race::add_one_atomic, cfg, (x.ptr()))?,
            _ => gridsync::launch!(t, gpu::lessons::race::add_one_block_scope, cfg, (x.ptr()))?,
        }
    };
    let got = t.download(&x)?[0];
    let want = BLOCKS * THREADS;
    if which == 1 && got != want {
        return Err(Error::Mismatch(format!(
            "add_one_atomic counted {got}, not {want}"
        )));
    }
    Ok(Ran::Finished)
}
