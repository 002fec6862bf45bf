//! Dot products: a partial sum per block, finished by the host, a lock, an atomic, or 16-byte
//! loads.

use super::LEN;
use crate::check::{Case, Ran};
use gridsync::dot::{DotKernel, DotLaunch};
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// The dot product kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "dot",
            K::DotPartial.name(),
            Clean,
            "3001 pairs",
            "one sum per block, finished on the host",
            |t| dot(t, DotKernel::Partial)
        ),
        case!(
            "dot",
            K::DotMutex.name(),
            Clean,
            "3001 pairs",
            "each block adds under the Mutex",
            |t| dot(t, DotKernel::Mutex)
        ),
        case!(
            "dot",
            K::DotAtomic.name(),
            Clean,
            "3001 pairs",
            "one float atomic per block",
            |t| dot(t, DotKernel::Atomic)
        ),
        case!(
            "dot",
            K::DotVec4.name(),
            Clean,
            "3001 pairs",
            "16-byte loads, shuffles",
            |t| dot(t, DotKernel::Vec4)
        ),
    ]
}

fn dot(t: &Target, kernel: DotKernel) -> Result<Ran> {
    let (a, b) = gridsync::dot::random_data(LEN, 1);
    let (da, db) = (t.upload(&a)?, t.upload(&b)?);
    let cfg = gridsync::dot::config_for(t, kernel, LEN, None)?;
    let (got, _) = DotLaunch::new(t, kernel, &da, &db, cfg)?.run_timed(None)?;
    gridsync::dot::check(kernel, got, &gridsync::dot::dot_cpu(&a, &b))?;
    Ok(Ran::Finished)
}
