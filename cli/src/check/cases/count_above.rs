//! Counting the elements above a threshold: a lock, an atomic per element, per warp, per block.

use super::LEN;
use crate::check::{Case, Ran};
use gridsync::count_above::{CountKernel, CountLaunch};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// The count-above kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "count-above",
            K::GtThrCntMutex.name(),
            Clean,
            "301 floats",
            "the blog's lock around `*cnt += 1`",
            |t| count(t, CountKernel::Mutex)
        ),
        case!(
            "count-above",
            K::GtThrCntAtomic.name(),
            Clean,
            "3001 floats",
            "an atomic per element above",
            |t| count(t, CountKernel::Atomic)
        ),
        case!(
            "count-above",
            K::GtThrCntWarp.name(),
            Clean,
            "3001 floats",
            "ballot and popcount, an atomic per warp",
            |t| count(t, CountKernel::Warp)
        ),
        case!(
            "count-above",
            K::GtThrCntBlock.name(),
            Clean,
            "3001 floats",
            "a block reduction, an atomic per block",
            |t| count(t, CountKernel::Block)
        ),
        case!(
            "count-above",
            K::GtThrCntVec4.name(),
            Clean,
            "3001 floats",
            "the block kernel with 16-byte loads",
            |t| count(t, CountKernel::Vec4)
        ),
    ]
}

fn count(t: &Target, kernel: CountKernel) -> Result<Ran> {
    // The lock kernel takes its lock once per element above: fewer elements, as `gridsync
    // count-above` gives it (`--lock-elements`).
    let len = if kernel == CountKernel::Mutex {
        301
    } else {
        LEN
    };
    let data = gridsync::count_above::default_input(len);
    let threshold = 0.5;
    let want = gridsync::count_above::count_above_cpu(&data, threshold);
    let src = t.upload(&data)?;
    let cfg = gridsync::count_above::config_for(t, kernel, len, None)?;
    let bounds = gridsync::count_above::lock_bounds(t, want);
    let got = CountLaunch::new(t, kernel, &src, len, threshold, cfg, bounds)?.run()?;
    if got != want {
        return Err(Error::Mismatch(format!(
            "{kernel:?} counted {got}, the CPU {want}"
        )));
    }
    Ok(Ran::Finished)
}
