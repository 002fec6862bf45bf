//! The primitives of `gridsync litmus primitives` (locks and barriers) at a small shape, shared
//! by the locks' and the barriers' cases.

use super::{BLOCKS, THREADS};
use crate::check::Ran;
use crate::litmus::primitives::{Primitive, PrimitiveShape};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// A primitive of `gridsync litmus primitives` at a small shape on the simulator's
/// sequentially consistent memory: what the checker sees is the happens-before, not a value.
pub(super) fn stress(t: &Target, primitive: Primitive) -> Result<Ran> {
    let shape = PrimitiveShape {
        // Clusters of two: an even grid.
        blocks: if primitive == Primitive::ClusterGridBarrier {
            BLOCKS + 1
        } else {
            BLOCKS
        },
        // The broken barrier's relaxed polls are events each: a warp and a lane, one round.
        threads: if primitive == Primitive::RelaxedBarrier {
            33
        } else {
            THREADS
        },
        locks: 4,
    };
    let (uses, per_launch) = if primitive.is_lock() {
        (2 * u64::from(shape.blocks * shape.threads), 2)
    } else if primitive == Primitive::RelaxedBarrier {
        (1, 1)
    } else {
        (6, 6)
    };
    let amount = crate::litmus::primitives::Amount {
        uses,
        per_launch,
        stress: crate::litmus::Stress {
            iters: 2,
            lines: 4,
            ..crate::litmus::Stress::LEGACY
        },
        seed: 1,
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let run = crate::litmus::primitives::run(t, primitive, shape, amount, deadline)?;
    if !primitive.broken() && !run.clean() {
        return Err(Error::Mismatch(format!(
            "{}: {} violations, {} lost, {} failures",
            run.name, run.violations, run.lost, run.failures
        )));
    }
    Ok(Ran::Finished)
}
