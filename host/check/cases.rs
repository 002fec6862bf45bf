//! The kernels `gridsync check` runs, each at a small, awkward shape — several blocks, a last
//! warp only partly full, an input that is not a multiple of the block — with what it must
//! show. Each runs through the library's own call on [`Target::Sim`], with its CPU check.

use super::{Case, Expect, Ran};
use crate::MutexBounds;
use crate::barrier::{BarrierOptions, Variant as BarrierVariant};
use crate::count_above::{CountKernel, CountLaunch};
use crate::dot::{DotKernel, DotLaunch};
use crate::histogram::wide::{RANGE_BINS, WideKernel, WideLaunch};
use crate::histogram::{Bins, HistKernel, HistogramLaunch};
use crate::litmus::primitives::{Primitive, PrimitiveShape};
use crate::locks::{Shape as LockShape, Variant as LockVariant};
use crate::mbarrier::{MbarrierOptions, RelayKernel};
use crate::neighbor::NeighborOptions;
use crate::neighbor::launch::BookKernel;
use crate::normalize::Pipeline;
use crate::pipeline::{PipelineKernel, PipelineOptions};
use crate::reduce::{Accumulate, Step, StepLaunch};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::{LaunchMode, Target};
use gpu::LaunchConfig;
use gpu::atomic::{Order, Scope};
use gpu::checks::atomics::AtomicOp;

/// Blocks of the small launches: more than one, so that blocks can race.
const BLOCKS: u32 = 3;
/// Threads per block: a warp and a partial one.
const THREADS: u32 = 40;
/// Elements of the reductions' and counts' inputs: not a multiple of any block.
const LEN: usize = 3001;

macro_rules! case {
    ($topic:literal, $kernel:expr, $expect:ident, $shape:literal, $why:literal, $run:expr) => {
        Case {
            topic: $topic,
            kernel: $kernel,
            expect: Expect::$expect,
            shape: $shape,
            why: $why,
            run: $run,
        }
    };
}

/// Every case, by topic in the book's order.
pub fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        // The race.
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
        // Locks.
        case!(
            "locks",
            K::LockUnfenced.name(),
            DataRace,
            "3 × 40, 2 each",
            "relaxed CAS and exch: nothing orders the critical section",
            |t| lock(t, LockVariant::Unfenced)
        ),
        case!(
            "locks",
            K::LockFenced.name(),
            Clean,
            "3 × 40, 2 each",
            "threadfence after the CAS and before the exch",
            |t| lock(t, LockVariant::Fenced)
        ),
        case!(
            "locks",
            K::LockLoop.name(),
            Clean,
            "3 × 40, 2 each",
            "lock, section and unlock in one loop body",
            |t| lock(t, LockVariant::Loop)
        ),
        case!(
            "locks",
            K::LockWarpLeader.name(),
            Clean,
            "3 × 40, 2 each",
            "a leader lane locks; the lanes pass the section along with sync_warp",
            |t| lock(t, LockVariant::WarpLeader)
        ),
        case!(
            "locks",
            K::LockMutex.name(),
            Clean,
            "3 × 40, 2 each",
            "the library's Mutex: acquire CAS, release store",
            |t| lock(t, LockVariant::Mutex)
        ),
        case!(
            "locks",
            K::LockTicket.name(),
            Clean,
            "3 × 40, 2 each",
            "the library's ticket lock",
            |t| lock(t, LockVariant::Ticket)
        ),
        case!(
            "locks",
            K::AddOneMutex.name(),
            Clean,
            "10 × 16",
            "the Numba tutorial's fenced lock",
            |t| {
                crate::locks::add_one_mutex(t)?;
                Ok(Ran::Finished)
            }
        ),
        case!(
            "locks",
            "lock_stress: Mutex<DeviceScope>",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "random locks, each guarding two plain payload words",
            |t| stress(t, Primitive::Mutex)
        ),
        case!(
            "locks",
            "lock_stress: Mutex<SystemScope>",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "random locks, each guarding two plain payload words",
            |t| stress(t, Primitive::MutexSystem)
        ),
        case!(
            "locks",
            "lock_stress: TicketLock",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "random ticket locks, each guarding two plain payload words",
            |t| stress(t, Primitive::Ticket)
        ),
        case!(
            "locks",
            "lock_stress: spin + threadfence",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "the tutorial's spin lock, fenced on both sides",
            |t| stress(t, Primitive::SpinFenced)
        ),
        case!(
            "locks",
            "lock_stress: spin, no fence",
            DataRace,
            "3 × 40, 4 locks, 2 each",
            "the same spin without its fences: nothing orders the payload",
            |t| stress(t, Primitive::SpinUnfenced)
        ),
        case!(
            "locks",
            K::MutexHeldForever.name(),
            Stuck,
            "3 × 40",
            "every thread waits for a Mutex nobody releases",
            |t| held_forever(t)
        ),
        // The grid barrier.
        case!(
            "barrier",
            "xpx_stage_p, xpx_stage_x",
            Clean,
            "3 × 40, W = 101, 3 rounds",
            "the end of a launch is the barrier",
            |t| barrier(t, BarrierVariant::ManyLaunches)
        ),
        case!(
            "barrier",
            K::XpxGridBarrier.name(),
            Clean,
            "3 × 40, W = 101, 3 rounds",
            "GridBarrier between the stages",
            |t| barrier(t, BarrierVariant::GridBarrier)
        ),
        case!(
            "barrier",
            K::XpxNoBarrier.name(),
            DataRace,
            "3 × 40, W = 101, 3 rounds",
            "no barrier between writing P and reading it",
            |t| barrier(t, BarrierVariant::NoBarrier)
        ),
        case!(
            "barrier",
            K::XpxSyncThreads.name(),
            DataRace,
            "3 × 40, W = 101, 3 rounds",
            "sync_threads orders a block, not the grid",
            |t| barrier(t, BarrierVariant::SyncThreads)
        ),
        case!(
            "barrier",
            K::XpxPlainSpin.name(),
            DataRace,
            "3 × 40, W = 101, 3 rounds",
            "a plain load spins on a counter other blocks add to",
            |t| barrier(t, BarrierVariant::PlainSpin)
        ),
        case!(
            "barrier",
            K::XpxCountToN.name(),
            DataRace,
            "3 × 40, W = 101, 3 rounds",
            "a counter never reset: from the second barrier on nobody waits",
            |t| barrier(t, BarrierVariant::CountToN)
        ),
        case!(
            "barrier",
            K::GridBarrierPhases.name(),
            Clean,
            "3 × 40, 5 rounds",
            "GridBarrier; each block checks every other's phase after it",
            |t| grid_phases(t)
        ),
        case!(
            "barrier",
            K::GridBarrierAbsentBlock.name(),
            Stuck,
            "3 × 40",
            "one block never arrives: the others give up at the timeout",
            |t| grid_absent(t)
        ),
        case!(
            "barrier",
            "barrier_stress: GridBarrier",
            Clean,
            "3 × 40, 6 rounds",
            "plain slots written, the barrier, another block's slot read",
            |t| stress(t, Primitive::GridBarrier)
        ),
        case!(
            "barrier",
            "barrier_stress: MultiGrid device",
            Clean,
            "3 × 40, 6 rounds",
            "plain slots written, MultiGridBarrier at device scope, read",
            |t| stress(t, Primitive::MultiGridDevice)
        ),
        case!(
            "barrier",
            "barrier_stress: MultiGrid system",
            Clean,
            "3 × 40, 6 rounds",
            "plain slots written, MultiGridBarrier at system scope, read",
            |t| stress(t, Primitive::MultiGridSystem)
        ),
        case!(
            "barrier",
            "barrier_stress: relaxed, no fence",
            DataRace,
            "3 × 33, 1 round",
            "GridBarrier's counting with its ordering removed",
            |t| stress(t, Primitive::RelaxedBarrier)
        ),
        case!(
            "barrier",
            K::ClusterBarrierStress.name(),
            Clean,
            "4 × 40, clusters of 2, 6 rounds",
            "ClusterGridBarrier between plain slot writes and reads (sm_90)",
            |t| stress(t, Primitive::ClusterGridBarrier)
        ),
        // Atomics.
        case!(
            "atomics",
            K::AtomicsCheckU32.name(),
            Clean,
            "3 × 40, 7 targets",
            "every u32 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, crate::atomics::ValueType::U32)
        ),
        case!(
            "atomics",
            K::AtomicsCheckI32.name(),
            Clean,
            "3 × 40, 7 targets",
            "every i32 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, crate::atomics::ValueType::I32)
        ),
        case!(
            "atomics",
            K::AtomicsCheckU64.name(),
            Clean,
            "3 × 40, 7 targets",
            "every u64 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, crate::atomics::ValueType::U64)
        ),
        case!(
            "atomics",
            K::AtomicsCheckI64.name(),
            Clean,
            "3 × 40, 7 targets",
            "every i64 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, crate::atomics::ValueType::I64)
        ),
        case!(
            "atomics",
            K::AtomicsCheckF32.name(),
            Clean,
            "3 × 40, 7 targets",
            "every f32 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, crate::atomics::ValueType::F32)
        ),
        case!(
            "atomics",
            K::AtomicsCheckF64.name(),
            Clean,
            "3 × 40, 7 targets",
            "every f64 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, crate::atomics::ValueType::F64)
        ),
        // Split-phase barriers (sm_90).
        case!(
            "mbarrier",
            K::RelaySyncThreads.name(),
            Clean,
            "2 × 64, 6 rounds",
            "write, sync_threads, read",
            |t| relay(t, RelayKernel::SyncThreads)
        ),
        case!(
            "mbarrier",
            K::RelaySplit.name(),
            Clean,
            "2 × 64, 6 rounds",
            "write, arrive, work, wait, read",
            |t| relay(t, RelayKernel::Split)
        ),
        case!(
            "mbarrier",
            K::RelayNoWait.name(),
            DataRace,
            "2 × 64, 6 rounds",
            "reads the partner's slot before waiting",
            |t| relay(t, RelayKernel::NoWait)
        ),
        case!(
            "mbarrier",
            K::RelayStuckParity.name(),
            DataRace,
            "2 × 64, 6 rounds",
            "waits by a parity it never moves on: later waits pass at once, reads come early",
            |t| relay(t, RelayKernel::StuckParity)
        ),
        case!(
            "mbarrier",
            K::RelayWaitBeforeArrive.name(),
            Stuck,
            "2 × 64, 6 rounds",
            "waits for a phase its own arrival completes",
            |t| relay(t, RelayKernel::WaitBeforeArrive)
        ),
        // Hopper's primitives (sm_90).
        case!(
            "hopper",
            K::MbarrierPhases.name(),
            Clean,
            "2 × 33, 4 rounds",
            "an mbarrier's phases: write, arrive, wait, read the neighbor's word",
            |t| hopper(t, Hopper::MbarrierPhases)
        ),
        case!(
            "hopper",
            K::BulkPipelineCopy.name(),
            Clean,
            "3 × 72, 1001 bytes, 3 stages",
            "bulk copies through a ring of stages, complete_tx on an mbarrier",
            |t| hopper(t, Hopper::BulkPipelineCopy)
        ),
        case!(
            "hopper",
            K::CpAsyncTransform.name(),
            Clean,
            "3 × 40, 1001 words",
            "cp.async into shared memory, waited for, transformed, stored",
            |t| hopper(t, Hopper::CpAsyncTransform)
        ),
        case!(
            "hopper",
            K::BulkStore.name(),
            Clean,
            "3 × 40, 100 words",
            "shared memory written, fenced to the async proxy, bulk-stored",
            |t| hopper(t, Hopper::BulkStore)
        ),
        case!(
            "hopper",
            K::ClusterCheck.name(),
            Clean,
            "6 × 33, clusters of 3",
            "cluster ranks, and siblings' shared memory read through DSMEM",
            |t| hopper(t, Hopper::ClusterCheck)
        ),
        case!(
            "hopper",
            K::MbarrierRemote.name(),
            Clean,
            "6 × 33, clusters of 3",
            "siblings' remote arrivals complete rank 0's phase",
            |t| hopper(t, Hopper::MbarrierRemote)
        ),
        case!(
            "hopper",
            K::MbarrierWrongParity.name(),
            Stuck,
            "1 × 1",
            "waits for a phase nobody arrives at",
            |t| hopper(t, Hopper::WrongParity)
        ),
        case!(
            "hopper",
            K::ClusterGridBarrierPhases.name(),
            Clean,
            "6 × 33, clusters of 3, 5 rounds",
            "ClusterGridBarrier; each block checks every other's phase after it",
            |t| cluster_grid(t, None)
        ),
        case!(
            "hopper",
            K::ClusterGridBarrierAbsentCluster.name(),
            Stuck,
            "6 × 33, clusters of 3",
            "one cluster never arrives: the others give up at the timeout",
            |t| cluster_grid(t, Some(1))
        ),
        // Pipelines (sm_90).
        case!(
            "pipeline",
            K::PipelineTransform.name(),
            Clean,
            "2 blocks, 8 tiles",
            "consumers wait for the copy, the producer for the reads",
            |t| pipeline(t, PipelineKernel::Transform)
        ),
        case!(
            "pipeline",
            K::PipelineNoFullWait.name(),
            DataRace,
            "2 blocks, 8 tiles",
            "consumers read a stage before its copy lands",
            |t| pipeline(t, PipelineKernel::NoFullWait)
        ),
        case!(
            "pipeline",
            K::PipelineNoEmptyWait.name(),
            Stuck,
            "2 blocks, 8 tiles",
            "the producer refills a stage still being read; here, where copies land at once, \
             its consumers fall two fills behind and wait for a phase that passed",
            |t| pipeline(t, PipelineKernel::NoEmptyWait)
        ),
        // Reductions.
        case!(
            "reduce",
            K::PartialReduce.name(),
            Clean,
            "3001 floats",
            "a block's tree in shared memory, sums finished on the host",
            |t| reduce(t, Step::Partial)
        ),
        case!(
            "reduce",
            K::ReduceAtomic.name(),
            Clean,
            "3001 floats",
            "the book's atomicAdd per block",
            |t| reduce(t, Step::Atomic)
        ),
        case!(
            "reduce",
            K::ReduceWarp.name(),
            Clean,
            "3001 floats",
            "shuffles, one atomic per block",
            |t| reduce(t, Step::Warp)
        ),
        case!(
            "reduce",
            K::ReduceLastBlockSumF32.name(),
            Clean,
            "3001 floats",
            "the last block to finish sums the partials (threadfence reduction)",
            |t| reduce(t, Step::LastBlock)
        ),
        case!(
            "reduce",
            K::ReduceVecSumF32.name(),
            Clean,
            "3001 floats",
            "16-byte loads, the last block finishes",
            |t| reduce(t, Step::Vec)
        ),
        case!(
            "reduce",
            K::ReducePipelineSumF32.name(),
            Clean,
            "3001 floats",
            "bulk copies into a ring of stages (sm_90)",
            |t| reduce(t, Step::Pipeline)
        ),
        case!(
            "reduce",
            K::ReduceAtomicF64.name(),
            Clean,
            "3001 doubles",
            "the book's atomicAdd per block, in double",
            |t| reduce_atomic_f64(t)
        ),
        case!(
            "reduce",
            K::ReduceLastBlockSumF32InF64.name(),
            Clean,
            "3001 floats",
            "the last block sums the partials, in f64",
            |t| reduce_with(t, Step::LastBlock, Accumulate::F64)
        ),
        case!(
            "reduce",
            K::ReduceLastBlockSumF32Kahan.name(),
            Clean,
            "3001 floats",
            "the last block sums the partials, compensated",
            |t| reduce_with(t, Step::LastBlock, Accumulate::Kahan)
        ),
        case!(
            "reduce",
            K::ReduceVecSumF32InF64.name(),
            Clean,
            "3001 floats",
            "16-byte loads, in f64, the last block finishes",
            |t| reduce_with(t, Step::Vec, Accumulate::F64)
        ),
        case!(
            "reduce",
            K::ReduceVecSumF32Kahan.name(),
            Clean,
            "3001 floats",
            "16-byte loads, compensated, the last block finishes",
            |t| reduce_with(t, Step::Vec, Accumulate::Kahan)
        ),
        case!(
            "reduce",
            K::ReducePipelineSumF32InF64.name(),
            Clean,
            "3001 floats",
            "bulk copies into a ring of stages, in f64 (sm_90)",
            |t| reduce_with(t, Step::Pipeline, Accumulate::F64)
        ),
        case!(
            "reduce",
            K::ReducePipelineSumF32Kahan.name(),
            Clean,
            "3001 floats",
            "bulk copies into a ring of stages, compensated (sm_90)",
            |t| reduce_with(t, Step::Pipeline, Accumulate::Kahan)
        ),
        case!(
            "reduce",
            K::ReduceVecSumF64.name(),
            Clean,
            "3001 doubles",
            "Σ f64: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::SumF64)
        ),
        case!(
            "reduce",
            K::ReduceVecSumI32.name(),
            Clean,
            "3001 ints",
            "Σ i32, wrapping: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::SumI32)
        ),
        case!(
            "reduce",
            K::ReduceVecSumU64.name(),
            Clean,
            "3001 u64",
            "Σ u64, wrapping: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::SumU64)
        ),
        case!(
            "reduce",
            K::ReduceVecMinF32.name(),
            Clean,
            "3001 floats",
            "min: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MinF32)
        ),
        case!(
            "reduce",
            K::ReduceVecMaxF32.name(),
            Clean,
            "3001 floats",
            "max: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MaxF32)
        ),
        case!(
            "reduce",
            K::ReduceVecMinI32.name(),
            Clean,
            "3001 ints",
            "min: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MinI32)
        ),
        case!(
            "reduce",
            K::ReduceVecMaxI32.name(),
            Clean,
            "3001 ints",
            "max: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MaxI32)
        ),
        // Normalizing, on streams.
        case!(
            "streams",
            "single_thread_sum, divide_by",
            Clean,
            "3001 floats",
            "partial_reduce, one thread adds the partials, every element divided",
            |t| normalize(t, Pipeline::Source)
        ),
        case!(
            "streams",
            K::DivideBySum.name(),
            Clean,
            "3001 floats",
            "after the single-pass sum in f64: a division with 16-byte loads",
            |t| normalize(t, Pipeline::SinglePass)
        ),
        // Histograms.
        case!(
            "histogram",
            K::HistogramGlobal.name(),
            Clean,
            "5003 bytes",
            "a global atomic per byte",
            |t| histogram(t, HistKernel::Global)
        ),
        case!(
            "histogram",
            K::HistogramShared.name(),
            Clean,
            "5003 bytes",
            "a shared histogram per block, barriers around it",
            |t| histogram(t, HistKernel::Shared)
        ),
        case!(
            "histogram",
            K::HistogramSharedRows.name(),
            Clean,
            "5003 bytes",
            "a row of plain stores per block",
            |t| histogram(t, HistKernel::SharedRows)
        ),
        case!(
            "histogram",
            K::HistogramWarp.name(),
            Clean,
            "5003 bytes",
            "a histogram per warp",
            |t| histogram(t, HistKernel::Warp)
        ),
        case!(
            "histogram",
            K::HistogramVec16.name(),
            Clean,
            "5003 bytes",
            "per warp, 16-byte loads",
            |t| histogram(t, HistKernel::Vec16)
        ),
        case!(
            "histogram",
            K::HistogramLane.name(),
            Clean,
            "5003 bytes",
            "a histogram per lane",
            |t| histogram(t, HistKernel::Lane)
        ),
        case!(
            "histogram",
            K::HistogramPipeline.name(),
            Clean,
            "5003 bytes",
            "fed by a producer warp's bulk copies (sm_90)",
            |t| histogram(t, HistKernel::Pipeline)
        ),
        case!(
            "histogram",
            K::HistogramU16Global.name(),
            Clean,
            "3 × 40, 5003 u16",
            "a global atomic per value, 65 536 bins",
            |t| histogram_u16(t, WideKernel::Global)
        ),
        case!(
            "histogram",
            K::HistogramU16Ranges.name(),
            Clean,
            "3×2 × 40, 5003 u16",
            "a block per bin range, counted in shared memory, then flushed",
            |t| histogram_u16(t, WideKernel::Ranges)
        ),
        case!(
            "histogram",
            K::HistogramU16Cluster.name(),
            Clean,
            "2 clusters × 4, 5003 u16",
            "the bins spread over a cluster's blocks, counted through DSMEM (sm_90)",
            |t| histogram_u16(t, WideKernel::Cluster(4))
        ),
        // Dot products.
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
        // Neighbor lists.
        case!(
            "neighbor",
            K::FindNeighborAtomicF32.name(),
            Clean,
            "graphene, 200 atoms",
            "the slot is atomicAdd's result",
            |t| neighbor(t, BookKernel::Atomic)
        ),
        case!(
            "neighbor",
            K::FindNeighborNoAtomicF32.name(),
            Clean,
            "graphene, 200 atoms",
            "every pair twice, a count in a register per atom",
            |t| neighbor(t, BookKernel::NoAtomic)
        ),
        case!(
            "neighbor",
            K::FindNeighborWrongF32.name(),
            DataRace,
            "graphene, 200 atoms",
            "the slot read from NN before the atomicAdd, not taken from its result",
            |t| neighbor(t, BookKernel::Wrong)
        ),
        // Counting above a threshold.
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

/// The race lesson's kernel `which` (0: `add_one`, 1: atomic, 2: block scope) on one zeroed
/// counter.
fn race_kernel(t: &Target, which: u32) -> Result<Ran> {
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    let x = t.zeros::<u32>(1)?;
    // SAFETY: `x` holds the one u32 each kernel touches, and outlives the launch.
    unsafe {
        match which {
            0 => crate::launch!(t, gpu::lessons::race::add_one, cfg, (x.ptr()))?,
            1 => crate::launch!(t, gpu::lessons::race::add_one_atomic, cfg, (x.ptr()))?,
            _ => crate::launch!(t, gpu::lessons::race::add_one_block_scope, cfg, (x.ptr()))?,
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

fn lock(t: &Target, variant: LockVariant) -> Result<Ran> {
    let shape = LockShape {
        blocks: BLOCKS,
        threads: THREADS,
    };
    crate::locks::run_variant(t, variant, shape, 2, MutexBounds::default())?;
    Ok(Ran::Finished)
}

fn barrier(t: &Target, variant: BarrierVariant) -> Result<Ran> {
    let o = BarrierOptions {
        blocks: BLOCKS,
        threads: THREADS,
        len: 101,
        iterations: 3,
        seed: 1,
        repeats: 1,
        variants: vec![variant],
    };
    let run = crate::barrier::run_variant(t, &o, variant)?;
    match run.launch_error {
        Some(e) if e.contains("timed out") => Ok(Ran::Stuck(e)),
        Some(e) if variant.correct() => Err(Error::Mismatch(e)),
        _ if variant.correct() && !run.matches_cpu => Err(Error::Mismatch(format!(
            "{}: {} elements differ from the CPU",
            run.kernel, run.wrong_elements
        ))),
        _ => Ok(Ran::Finished),
    }
}

fn relay(t: &Target, kernel: RelayKernel) -> Result<Ran> {
    let o = MbarrierOptions {
        rounds: 6,
        work: 4,
        blocks: Some(2),
    };
    let report = crate::mbarrier::run_kernels(t, &o, &[kernel])?;
    Ok(match report.runs.first() {
        Some(r) if r.timed_out => Ran::Stuck(format!("{}: a wait timed out", r.name)),
        _ => Ran::Finished,
    })
}

fn pipeline(t: &Target, kernel: PipelineKernel) -> Result<Ran> {
    let o = PipelineOptions {
        tiles: 8,
        work: 2,
        blocks: Some(2),
        seed: 1,
    };
    let report = crate::pipeline::run_kernels(t, &o, &[kernel])?;
    Ok(match report.runs.first() {
        Some(r) if r.timed_out => Ran::Stuck(format!("{}: a wait timed out", r.name)),
        _ => Ran::Finished,
    })
}

fn reduce(t: &Target, step: Step) -> Result<Ran> {
    let data = crate::reduce::random_input(LEN, 1, true);
    let x = t.upload(&data)?;
    let got = StepLaunch::new(t, step, Accumulate::F32, LEN, None)?.run(&x, LEN)?;
    let want = crate::reduce::sum_cpu(&data);
    let bound = 1e-4 * crate::reduce::sum_abs_cpu(&data);
    if (got - want).abs() > bound {
        return Err(Error::Mismatch(format!("{step:?}: {got}, the CPU {want}")));
    }
    Ok(Ran::Finished)
}

fn histogram(t: &Target, kernel: HistKernel) -> Result<Ran> {
    let len = 5003;
    let data = crate::histogram::uniform_bytes(len, 1);
    let buf = t.upload(&data)?;
    let cfg = crate::histogram::config_for(t, kernel, Bins::Byte, len, Some(BLOCKS))?;
    let got = HistogramLaunch::new(t, kernel, &buf, len, Bins::Byte, cfg)?.run()?;
    crate::histogram::check(
        kernel,
        &got,
        &crate::histogram::histogram_cpu(&data, Bins::Byte),
    )?;
    Ok(Ran::Finished)
}

fn dot(t: &Target, kernel: DotKernel) -> Result<Ran> {
    let (a, b) = crate::dot::random_data(LEN, 1);
    let (da, db) = (t.upload(&a)?, t.upload(&b)?);
    let cfg = crate::dot::config_for(t, kernel, LEN, None)?;
    let (got, _) = DotLaunch::new(t, kernel, &da, &db, cfg)?.run_timed(None)?;
    crate::dot::check(kernel, got, &crate::dot::dot_cpu(&a, &b))?;
    Ok(Ran::Finished)
}

fn neighbor(t: &Target, kernel: BookKernel) -> Result<Ran> {
    let atoms = crate::neighbor::graphene::graphene(200, 1)?;
    let opts = NeighborOptions::default();
    crate::neighbor::demo::run_book_kernel(t, &atoms, &opts, kernel)?;
    Ok(Ran::Finished)
}

fn count(t: &Target, kernel: CountKernel) -> Result<Ran> {
    // The lock kernel takes its lock once per element above: fewer elements, as `gridsync
    // count-above` gives it (`--lock-elements`).
    let len = if kernel == CountKernel::Mutex {
        301
    } else {
        LEN
    };
    let data = crate::count_above::default_input(len);
    let threshold = 0.5;
    let want = crate::count_above::count_above_cpu(&data, threshold);
    let src = t.upload(&data)?;
    let cfg = crate::count_above::config_for(t, kernel, len, None)?;
    let bounds = crate::count_above::lock_bounds(t, want);
    let got = CountLaunch::new(t, kernel, &src, len, threshold, cfg, bounds)?.run()?;
    if got != want {
        return Err(Error::Mismatch(format!(
            "{kernel:?} counted {got}, the CPU {want}"
        )));
    }
    Ok(Ran::Finished)
}

fn reduce_with(t: &Target, step: Step, acc: Accumulate) -> Result<Ran> {
    let data = crate::reduce::random_input(LEN, 1, true);
    let x = t.upload(&data)?;
    let got = StepLaunch::new(t, step, acc, LEN, None)?.run(&x, LEN)?;
    let want = crate::reduce::sum_cpu(&data);
    let bound = 1e-4 * crate::reduce::sum_abs_cpu(&data);
    if (got - want).abs() > bound {
        return Err(Error::Mismatch(format!(
            "{step:?} {acc:?}: {got}, the CPU {want}"
        )));
    }
    Ok(Ran::Finished)
}

/// The book's `reduce` in double: `(N + 127) / 128` blocks of 128, `*d_y` zeroed first.
fn reduce_atomic_f64(t: &Target) -> Result<Ran> {
    let data: Vec<f64> = crate::reduce::random_input(LEN, 1, true)
        .into_iter()
        .map(f64::from)
        .collect();
    let x = t.upload(&data)?;
    let y = t.zeros::<f64>(1)?;
    let (threads, shared) = crate::reduce::shape_of(gpu::Kernel::ReduceAtomicF64);
    let blocks = LEN.div_ceil(threads as usize) as u32;
    let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(shared);
    // SAFETY: `x` holds `LEN` doubles, `y` one, touched only atomically; `shared` is
    // `blockDim.x` doubles.
    unsafe {
        crate::launch!(
            t,
            gpu::lessons::reduce::reduce_atomic_f64,
            cfg,
            (x.ptr().cast_const(), y.ptr(), LEN as u64)
        )?
    };
    let got = t.download(&y)?[0];
    let want = crate::reduce::sum_cpu(&data);
    if (got - want).abs() > 1e-9 * data.iter().map(|v| v.abs()).sum::<f64>() {
        return Err(Error::Mismatch(format!("{got}, the CPU {want}")));
    }
    Ok(Ran::Finished)
}

/// The typed reductions of [`reduce_typed`].
#[derive(Clone, Copy, Debug)]
enum Typed {
    SumF64,
    SumI32,
    SumU64,
    MinF32,
    MaxF32,
    MinI32,
    MaxI32,
}

/// A typed reduction through the library's call (its vectorized kernel), over an input derived
/// from the `f32` one as the demo derives it; exactly the CPU's result (the `f64` sum: nearly).
fn reduce_typed(t: &Target, which: Typed) -> Result<Ran> {
    let f = crate::reduce::random_input(LEN, 1, true);
    use crate::reduce::Value as V;
    let (got, want) = match which {
        Typed::SumF64 => {
            let d: Vec<f64> = f.iter().map(|&v| v as f64).collect();
            let got = crate::reduce::sum_f64(t, &d)?;
            let want = crate::reduce::sum_cpu(&d);
            if (got - want).abs() > 1e-12 * d.iter().map(|v| v.abs()).sum::<f64>() {
                return Err(Error::Mismatch(format!("{which:?}: {got}, the CPU {want}")));
            }
            return Ok(Ran::Finished);
        }
        Typed::SumI32 => {
            let d = crate::reduce::derived_i32(&f);
            (
                V::Int(crate::reduce::sum_i32(t, &d)? as i64),
                V::Int(crate::reduce::sum_i32_wrapping(&d) as i64),
            )
        }
        Typed::SumU64 => {
            let d = crate::reduce::derived_u64(&f);
            (
                V::Uint(crate::reduce::sum_u64(t, &d)?),
                V::Uint(crate::reduce::sum_u64_wrapping(&d)),
            )
        }
        Typed::MinF32 => (
            V::Float(crate::reduce::min(t, &f)? as f64),
            V::Float(crate::reduce::min_cpu(&f).unwrap_or(f32::NAN) as f64),
        ),
        Typed::MaxF32 => (
            V::Float(crate::reduce::max(t, &f)? as f64),
            V::Float(crate::reduce::max_cpu(&f).unwrap_or(f32::NAN) as f64),
        ),
        Typed::MinI32 => {
            let d = crate::reduce::derived_i32(&f);
            (
                V::Int(crate::reduce::min_i32(t, &d)? as i64),
                V::Int(crate::reduce::min_cpu(&d).unwrap_or(0) as i64),
            )
        }
        Typed::MaxI32 => {
            let d = crate::reduce::derived_i32(&f);
            (
                V::Int(crate::reduce::max_i32(t, &d)? as i64),
                V::Int(crate::reduce::max_cpu(&d).unwrap_or(0) as i64),
            )
        }
    };
    if got != want {
        return Err(Error::Mismatch(format!(
            "{which:?}: {got:?}, the CPU {want:?}"
        )));
    }
    Ok(Ran::Finished)
}

fn normalize(t: &Target, pipeline: Pipeline) -> Result<Ran> {
    let data = crate::reduce::random_input(LEN, 1, false);
    let mut got = data.clone();
    crate::normalize::normalize_with(t, &mut got, pipeline)?;
    let (_, want) = crate::normalize::normalize_cpu(&data)
        .ok_or_else(|| Error::Mismatch("the input's sum cannot divide".into()))?;
    // The source's sum is in f32, added by one thread: a few ulps of the f64 one.
    let tolerance = 1e-5;
    match got
        .iter()
        .zip(&want)
        .position(|(g, w)| ((g - w) / w).abs() > tolerance)
    {
        None => Ok(Ran::Finished),
        Some(i) => Err(Error::Mismatch(format!(
            "{pipeline:?}: element {i} is {}, the CPU {}",
            got[i], want[i]
        ))),
    }
}

/// The 65 536-bin histogram of 5003 random 16-bit values, small launches: 3 blocks of 40
/// (twice, once per bin range, for the ranges), the clusters as `wide_config` makes them.
fn histogram_u16(t: &Target, kernel: WideKernel) -> Result<Ran> {
    let len = 5003;
    let values: Vec<u16> = crate::histogram::uniform_bytes(2 * len, 1)
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    let buf = t.upload(&values)?;
    let cfg = match kernel {
        WideKernel::Global => LaunchConfig::linear(BLOCKS, THREADS),
        WideKernel::Ranges => {
            let mut cfg = LaunchConfig::linear(BLOCKS, THREADS).with_shared_bytes(4 * RANGE_BINS);
            cfg.grid.y = crate::histogram::wide::BINS as u32 / RANGE_BINS;
            cfg
        }
        WideKernel::Cluster(_) => crate::histogram::wide::wide_config(t, kernel, len)?,
    };
    let launch = WideLaunch::new(t, kernel, &buf, len, cfg)?;
    launch.launch()?;
    let got = launch.result()?;
    crate::histogram::wide::check(kernel, &got, &crate::histogram::histogram_u16_cpu(&values))?;
    Ok(Ran::Finished)
}

/// Every operation the check kernel of `ty` has, each at a scope and an ordering of its own
/// (cycling through them), over 7 contended targets: the model of `gridsync atomics` judges
/// the values.
fn atomics(t: &Target, ty: crate::atomics::ValueType) -> Result<Ran> {
    let shape = crate::atomics::CheckShape::new(BLOCKS, THREADS, 7);
    let ops = AtomicOp::ALL.into_iter().filter(|op| ty.supports(*op));
    for (i, op) in ops.enumerate() {
        let case = crate::atomics::Case {
            ty,
            op,
            scope: Scope::ALL[i % Scope::ALL.len()],
            order: Order::ALL[i % Order::ALL.len()],
        };
        crate::atomics::check(t, &case, &shape, 1)?;
    }
    Ok(Ran::Finished)
}

/// A primitive of `gridsync litmus primitives` at a small shape on the simulator's
/// sequentially consistent memory: what the checker sees is the happens-before, not a value.
fn stress(t: &Target, primitive: Primitive) -> Result<Ran> {
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

/// `mutex_held_forever` with a short timeout: the lock's bounded wait gives up.
fn held_forever(t: &Target) -> Result<Ran> {
    let shape = LockShape {
        blocks: BLOCKS,
        threads: THREADS,
    };
    let (e, _) = crate::locks::held_forever(t, shape, std::time::Duration::from_millis(50))?;
    Ok(Ran::Stuck(e.to_string()))
}

fn grid_phases(t: &Target) -> Result<Ran> {
    let rounds = 5u32;
    let barrier = crate::DeviceGridBarrier::new(t)?;
    let slots = t.zeros::<u32>(BLOCKS as usize)?;
    let errors = t.zeros::<u32>(1)?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    // SAFETY: one phase slot per block, one error word, the barrier's live state.
    unsafe {
        crate::launch_grid_synced!(
            t,
            &barrier,
            gpu::checks::barrier::grid_barrier_phases,
            cfg,
            LaunchMode::Plain,
            (barrier.ptr(), slots.ptr(), rounds, errors.ptr())
        )?
    };
    t.synchronize()?;
    barrier.check(t)?;
    let last = t.download(&slots)?;
    let errors = t.download(&errors)?[0];
    if errors != 0 || last.iter().any(|&p| p != rounds) {
        return Err(Error::Mismatch(format!(
            "{errors} blocks passed early; phases {last:?}"
        )));
    }
    Ok(Ran::Finished)
}

/// Block 1 never arrives at the barrier: the others wait for it until the timeout.
fn grid_absent(t: &Target) -> Result<Ran> {
    let barrier = crate::DeviceGridBarrier::with_timeout(t, std::time::Duration::from_millis(50))?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    // SAFETY: the barrier's live state.
    unsafe {
        crate::launch_grid_synced!(
            t,
            &barrier,
            gpu::checks::barrier::grid_barrier_absent_block,
            cfg,
            LaunchMode::Plain,
            (barrier.ptr(), 1u32)
        )?
    };
    t.synchronize()?;
    match barrier.check(t) {
        Err(e @ Error::BarrierTimeout { .. }) => Ok(Ran::Stuck(e.to_string())),
        Err(e) => Err(e),
        Ok(()) => Ok(Ran::Finished),
    }
}

/// A bound far above any real wait in the Hopper checks: 2 s.
const HOPPER_TIMEOUT_NS: u64 = 2_000_000_000;

/// The Hopper checks of `gpu/src/checks/hopper.rs`, as `tests/hopper.rs` runs them.
#[derive(Clone, Copy, Debug)]
enum Hopper {
    MbarrierPhases,
    BulkPipelineCopy,
    CpAsyncTransform,
    BulkStore,
    ClusterCheck,
    MbarrierRemote,
    WrongParity,
}

/// Clusters of the cluster checks: 3, so that 6 blocks are two of them.
const CLUSTER: u32 = 3;

fn hopper(t: &Target, which: Hopper) -> Result<Ran> {
    use gpu::checks::hopper::{self as h, BARRIER_BYTES, CLUSTER_CHECK_FIELDS};
    let err = t.zeros::<u32>(1)?;
    let clustered = |grid: u32, block: u32| {
        LaunchConfig::linear(grid, block)
            .with_shared_bytes(16)
            .with_cluster(CLUSTER.into())
    };
    let mismatch = |what: String| Err(Error::Mismatch(format!("{which:?}: {what}")));
    // SAFETY (every launch): each buffer holds what the kernel's contract asks (the sizes are
    // beside it), the shared memory is the kernel's, and every buffer outlives the launch.
    match which {
        Hopper::MbarrierPhases => {
            let (blocks, block, rounds) = (2u32, 33u32, 4u32);
            let out = t.zeros::<u32>((blocks * block) as usize)?;
            let cfg =
                LaunchConfig::linear(blocks, block).with_shared_bytes(BARRIER_BYTES + 4 * block);
            unsafe {
                crate::launch!(
                    t,
                    h::mbarrier_phases,
                    cfg,
                    (out.ptr(), rounds, 1u32, HOPPER_TIMEOUT_NS, err.ptr())
                )?
            };
            let got = t.download(&out)?;
            for (g, have) in got.iter().enumerate() {
                let right = (g as u32 % block + 1) % block;
                let want = (0..rounds).fold(0u32, |s, r| s.wrapping_add((r + 1) * 1000 + right));
                if *have != want {
                    return mismatch(format!("thread {g}: {have}, not {want}"));
                }
            }
        }
        Hopper::BulkPipelineCopy => {
            let (len, stage_bytes, stages) = (1001usize, 64u32, 3u32);
            let src_words: Vec<u32> = (0..len.div_ceil(4) as u32)
                .map(|i| i.wrapping_mul(0x9e37_79b9))
                .collect();
            let src = t.upload(&src_words)?;
            let dst = t.zeros::<u8>(len)?;
            // A producer warp and consumers: at least 64 threads, here a partial third warp.
            let cfg = LaunchConfig::linear(BLOCKS, 72)
                .with_shared_bytes(BARRIER_BYTES + stages * stage_bytes);
            unsafe {
                crate::launch!(
                    t,
                    h::bulk_pipeline_copy,
                    cfg,
                    (
                        src.ptr().cast::<u8>().cast_const(),
                        dst.ptr(),
                        len as u64,
                        stage_bytes,
                        stages,
                        HOPPER_TIMEOUT_NS,
                        err.ptr()
                    )
                )?
            };
            let bytes: Vec<u8> = src_words.iter().flat_map(|w| w.to_le_bytes()).collect();
            if t.download(&dst)?[..] != bytes[..len] {
                return mismatch("the copy differs from the source".into());
            }
        }
        Hopper::CpAsyncTransform => {
            let len = 1001usize;
            let input: Vec<u32> = (0..len.div_ceil(4) as u32 * 4)
                .map(|i| i.wrapping_mul(0x9e37_79b9))
                .collect();
            let src = t.upload(&input)?;
            let dst = t.zeros::<u32>(len)?;
            let cfg = LaunchConfig::linear(BLOCKS, THREADS)
                .with_shared_bytes(BARRIER_BYTES + 32 * THREADS);
            unsafe {
                crate::launch!(
                    t,
                    h::cp_async_transform,
                    cfg,
                    (
                        src.ptr().cast_const(),
                        dst.ptr(),
                        len as u64,
                        HOPPER_TIMEOUT_NS,
                        err.ptr()
                    )
                )?
            };
            let got = t.download(&dst)?;
            if let Some(i) = (0..len).find(|&i| got[i] != input[i].wrapping_mul(3).wrapping_add(1))
            {
                return mismatch(format!("word {i}"));
            }
        }
        Hopper::BulkStore => {
            // A multiple of 4: the bulk copy moves whole 16-byte pieces.
            let words = 100u32;
            let dst = t.zeros::<u32>((BLOCKS * words) as usize)?;
            let cfg = LaunchConfig::linear(BLOCKS, THREADS).with_shared_bytes(4 * words);
            unsafe { crate::launch!(t, h::bulk_store, cfg, (dst.ptr(), words, err.ptr()))? };
            let got = t.download(&dst)?;
            if let Some(k) = (0..got.len() as u32)
                .find(|&k| got[k as usize] != (k / words) * 1_000_000 + k % words)
            {
                return mismatch(format!("word {k}"));
            }
        }
        Hopper::ClusterCheck => {
            let (grid, block) = (2 * CLUSTER, 33u32);
            let out = t.zeros::<u32>(grid as usize * CLUSTER_CHECK_FIELDS)?;
            unsafe { crate::launch!(t, h::cluster_check, clustered(grid, block), (out.ptr(),))? };
            let got = t.download(&out)?;
            for b in 0..grid {
                let row = &got[b as usize * CLUSTER_CHECK_FIELDS..][..CLUSTER_CHECK_FIELDS];
                let (rank, first) = (b % CLUSTER, b - b % CLUSTER);
                let value = |r: u32| 100 + first + r;
                let sum: u32 = (0..CLUSTER).map(value).sum();
                let want = [
                    rank,
                    CLUSTER,
                    rank + 1000 * CLUSTER,
                    b / CLUSTER,
                    grid / CLUSTER,
                    value((rank + 1) % CLUSTER),
                    CLUSTER * block,
                    sum - value(rank),
                ];
                if row != want {
                    return mismatch(format!("block {b}: {row:?}, not {want:?}"));
                }
            }
        }
        Hopper::MbarrierRemote => {
            let (grid, block) = (2 * CLUSTER, 33u32);
            let out = t.zeros::<u32>((grid / CLUSTER) as usize)?;
            unsafe {
                crate::launch!(
                    t,
                    h::mbarrier_remote,
                    clustered(grid, block),
                    (out.ptr(), HOPPER_TIMEOUT_NS, err.ptr())
                )?
            };
            if !t.download(&out)?.iter().all(|&v| v == 1) {
                return mismatch("a cluster's phase did not complete".into());
            }
        }
        Hopper::WrongParity => {
            let cfg = LaunchConfig::linear(1, 1).with_shared_bytes(16);
            unsafe {
                crate::launch!(t, h::mbarrier_wrong_parity, cfg, (50_000_000u64, err.ptr()))?
            };
        }
    }
    match t.download(&err)?[0] {
        0 => Ok(Ran::Finished),
        h::errors::TIMED_OUT => Ok(Ran::Stuck(format!("{which:?}: a wait timed out"))),
        e => mismatch(format!("error word {e:#x}")),
    }
}

/// The cluster-aware grid barrier over 6 blocks of 33 in clusters of 3: 5 rounds of
/// `cluster_grid_barrier_phases`, or with `absent` the cluster of that block never arriving.
fn cluster_grid(t: &Target, absent: Option<u32>) -> Result<Ran> {
    let (grid, rounds) = (2 * CLUSTER, 5u32);
    let barrier = match absent {
        Some(_) => crate::DeviceGridBarrier::with_timeout(t, std::time::Duration::from_millis(50))?,
        None => crate::DeviceGridBarrier::new(t)?,
    };
    let slots = t.zeros::<u32>(grid as usize)?;
    let errs = t.zeros::<u32>(1)?;
    let cfg = LaunchConfig::linear(grid, 33).with_cluster(CLUSTER.into());
    // SAFETY: one phase slot per block, one error word, the barrier's live state.
    unsafe {
        match absent {
            None => crate::launch_grid_synced!(
                t,
                &barrier,
                gpu::checks::hopper::cluster_grid_barrier_phases,
                cfg,
                LaunchMode::Plain,
                (barrier.ptr(), slots.ptr(), rounds, errs.ptr())
            )?,
            Some(a) => crate::launch_grid_synced!(
                t,
                &barrier,
                gpu::checks::hopper::cluster_grid_barrier_absent_cluster,
                cfg,
                LaunchMode::Plain,
                (barrier.ptr(), a)
            )?,
        }
    };
    t.synchronize()?;
    match barrier.check(t) {
        Err(e @ Error::BarrierTimeout { .. }) if absent.is_some() => {
            return Ok(Ran::Stuck(e.to_string()));
        }
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    if absent.is_none() {
        let last = t.download(&slots)?;
        let errors = t.download(&errs)?[0];
        if errors != 0 || last.iter().any(|&p| p != rounds) {
            return Err(Error::Mismatch(format!(
                "{errors} blocks passed early; phases {last:?}"
            )));
        }
    }
    Ok(Ran::Finished)
}
