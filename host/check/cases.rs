//! The kernels `gridsync check` runs, each at a small, awkward shape — several blocks, a last
//! warp only partly full, an input that is not a multiple of the block — with what it must
//! show. Each runs through the library's own call on [`Target::Sim`], with its CPU check.

use super::{Case, Expect, Ran};
use crate::MutexBounds;
use crate::barrier::{BarrierOptions, Variant as BarrierVariant};
use crate::count_above::{CountKernel, CountLaunch};
use crate::dot::{DotKernel, DotLaunch};
use crate::histogram::{Bins, HistKernel, HistogramLaunch};
use crate::locks::{Shape as LockShape, Variant as LockVariant};
use crate::mbarrier::{MbarrierOptions, RelayKernel};
use crate::neighbor::NeighborOptions;
use crate::neighbor::launch::BookKernel;
use crate::pipeline::{PipelineKernel, PipelineOptions};
use crate::reduce::{Accumulate, Step, StepLaunch};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::LaunchConfig;

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
