//! The kernels `gridsync check` runs, each at a small, awkward shape — several blocks, a last
//! warp only partly full, an input that is not a multiple of the block — with what it must
//! show. Each runs through the library's own call on [`Target::Sim`], with its CPU check.
//!
//! One file per topic (the large ones in two), each with its cases in the book's order and the
//! runs they need; [`cases`] joins them.
//!
//! [`Target::Sim`]: gridsync::runtime::launch::Target::Sim

use super::Case;

/// Blocks of the small launches: more than one, so that blocks can race.
const BLOCKS: u32 = 3;
/// Threads per block: a warp and a partial one.
const THREADS: u32 = 40;
/// Elements of the reductions' and counts' inputs: not a multiple of any block.
const LEN: usize = 3001;

/// One [`Case`]: topic, kernel, the [`Expect`](super::Expect) variant, shape, why, run. Defined
/// before the topics' modules, which use it.
macro_rules! case {
    ($topic:literal, $kernel:expr, $expect:ident, $shape:literal, $why:literal, $run:expr) => {
        $crate::check::Case {
            topic: $topic,
            kernel: $kernel,
            expect: $crate::check::Expect::$expect,
            shape: $shape,
            why: $why,
            not_on_weak: None,
            run: $run,
        }
    };
}

mod atomics;
mod barrier;
mod count_above;
mod dot;
mod histogram;
mod hopper;
mod hopper_checks;
mod locks;
mod mbarrier;
mod neighbor;
mod neighbor_cells;
mod pipeline;
mod primitives;
mod race;
mod reduce;
mod reduce_typed;
mod streams;
mod stress;

/// Every case, by topic in the book's order.
pub fn cases() -> Vec<Case> {
    [
        race::cases(),
        locks::cases(),
        barrier::cases(),
        atomics::cases(),
        primitives::cases(),
        mbarrier::cases(),
        hopper::cases(),
        pipeline::cases(),
        reduce::cases(),
        reduce_typed::cases(),
        streams::cases(),
        histogram::cases(),
        dot::cases(),
        neighbor::cases(),
        neighbor_cells::cases(),
        count_above::cases(),
    ]
    .concat()
}
