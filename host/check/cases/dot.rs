//! Dot products: a partial sum per block, finished by the host, a lock, an atomic, or 16-byte
//! loads.

use super::LEN;
use crate::check::{Case, Ran};
use crate::dot::{DotKernel, DotLaunch};
use crate::runtime::error::Result;
use crate::runtime::launch::Target;

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
    let (a, b) = crate::dot::random_data(LEN, 1);
    let (da, db) = (t.upload(&a)?, t.upload(&b)?);
    let cfg = crate::dot::config_for(t, kernel, LEN, None)?;
    let (got, _) = DotLaunch::new(t, kernel, &da, &db, cfg)?.run_timed(None)?;
    crate::dot::check(kernel, got, &crate::dot::dot_cpu(&a, &b))?;
    Ok(Ran::Finished)
}
