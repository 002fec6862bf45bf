//! The grid barrier: the lesson's X→P→X variants, `GridBarrier`'s phases and an absent block,
//! and the barriers of `gridsync litmus primitives` under stress.

use super::stress::stress;
use super::{BLOCKS, THREADS};
use crate::check::{Case, Ran};
use crate::litmus::primitives::Primitive;
use gpu::LaunchConfig;
use gridsync::barrier::{BarrierOptions, Variant as BarrierVariant};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::{LaunchMode, Target};

/// The grid barriers, the broken ones with their finding.
pub(super) fn cases() -> Vec<Case> {
    let mut all = xpx_cases();
    all.extend(grid_barrier_cases());
    all
}

/// The lesson's X→P→X: one correct barrier, the launches' own, and each broken one.
fn xpx_cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
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
        )
        .not_run_on_weak(
            "its race needs the spin to start before the other blocks arrive; the weak memory's \
             turns order every fence.sc of theirs first",
        ),
        case!(
            "barrier",
            K::XpxArticle.name(),
            Stuck,
            "3 × 1, W = 101, up to 100 rounds",
            "the article's counter, reused: a waiter misses its brief zero and waits for ever",
            |t| article(t)
        ),
        case!(
            "barrier",
            K::XpxCountToN.name(),
            DataRace,
            "3 × 40, W = 101, 3 rounds",
            "a counter never reset: from the second barrier on nobody waits",
            |t| barrier(t, BarrierVariant::CountToN)
        ),
    ]
}

/// `GridBarrier`'s phases and an absent block, and the barriers under stress.
fn grid_barrier_cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
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
    ]
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
    let run = gridsync::barrier::run_variant(t, &o, variant)?;
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

fn grid_phases(t: &Target) -> Result<Ran> {
    let rounds = 5u32;
    let barrier = gridsync::DeviceGridBarrier::new(t)?;
    let slots = t.zeros::<u32>(BLOCKS as usize)?;
    let errors = t.zeros::<u32>(1)?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    // SAFETY: one phase slot per block, one error word, the barrier's live state.
    unsafe {
        gridsync::launch_grid_synced!(
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
    let barrier =
        gridsync::DeviceGridBarrier::with_timeout(t, std::time::Duration::from_millis(50))?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    // SAFETY: the barrier's live state.
    unsafe {
        gridsync::launch_grid_synced!(
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

/// Rounds of `xpx_article`: far more than its first miss needs (on 2 cores 30 checked runs of
/// 30 were stuck, and 20 more run four at once).
const ARTICLE_ROUNDS: u32 = 100;

/// The article's threads per block: one. The zero lasts from the last arrival to the next
/// arrival at the following barrier; with one thread a block, the block that made it goes on
/// at once and its next arrival ends it within a few microseconds, while the other blocks poll
/// between yields of their cores. With blocks of 40 threads, the block first passes its own
/// `__syncthreads`, with its threads sharing two cores with everyone else's, and the waiters
/// read the zero in most runs: on 2 cores such a run was found stuck in 1 or 2 of 12, whether
/// the simulator's block barriers parked their waiters at once or yielded first.
const ARTICLE_THREADS: u32 = 1;

/// The bound on the article's waits: far above a barrier's wait in a checked run of 3 blocks,
/// short enough that the stuck run costs little.
const ARTICLE_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(200);

/// `xpx_article` for up to [`ARTICLE_ROUNDS`] rounds: the first barrier whose zero a waiter
/// misses leaves it waiting, and every other block at the next barrier with it, until the
/// timeout — when every block returns.
fn article(t: &Target) -> Result<Ran> {
    let w = 101;
    let barrier = gridsync::DeviceGridBarrier::with_timeout(t, ARTICLE_TIMEOUT)?;
    let x = t.upload(&gridsync::barrier::initial_x(w, 1))?;
    let p = t.zeros::<f32>(w)?;
    let cfg = LaunchConfig::linear(BLOCKS, ARTICLE_THREADS);
    // SAFETY: `x` and `p` hold `w` floats each; the barrier's live state.
    unsafe {
        gridsync::launch_grid_synced!(
            t,
            &barrier,
            gpu::lessons::barrier::xpx_article,
            cfg,
            LaunchMode::Plain,
            (x.ptr(), p.ptr(), w as u64, ARTICLE_ROUNDS, barrier.ptr())
        )?
    };
    t.synchronize()?;
    match barrier.check(t) {
        Err(e @ Error::BarrierTimeout { .. }) => Ok(Ran::Stuck(e.to_string())),
        Err(e) => Err(e),
        Ok(()) => Ok(Ran::Finished),
    }
}
