//! One primitive's stress run: the launches, the payload checks, the counts.

use super::{Amount, Primitive, PrimitiveRun, PrimitiveShape};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::{LaunchMode, Target};
use gpu::LaunchConfig;
use gpu::checks::sync_stress::{
    self as k, BARRIER_GRID, BARRIER_MULTI_DEVICE, BARRIER_MULTI_SYSTEM, BARRIER_RELAXED,
    LOCK_MUTEX, LOCK_MUTEX_SYSTEM, LOCK_SPIN_FENCED, LOCK_SPIN_UNFENCED, LOCK_TICKET,
    PAYLOAD_STRIDE, SPIN_STRIDE, StressLocks,
};
use gpu::lock::{MutexState, TicketState};
use gpu::multi_grid::MultiGridBarrierState;
use std::time::Instant;

// SAFETY: `#[repr(C)]` of raw pointers and `u32`s, the same layout on both targets.
unsafe impl crate::runtime::args::KernelParam for StressLocks {}

/// Runs `primitive` at `shape` for `amount`, or until `deadline` after one launch.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty shape; co-residency refused for a barrier; a driver
/// error.
pub fn run(
    target: &Target,
    primitive: Primitive,
    shape: PrimitiveShape,
    amount: Amount,
    deadline: Instant,
) -> Result<PrimitiveRun> {
    let Amount {
        uses,
        per_launch,
        stress,
        seed,
    } = amount;
    if shape.blocks == 0 || shape.threads == 0 || shape.locks == 0 || per_launch == 0 {
        return Err(Error::InvalidInput(format!(
            "a stress shape needs blocks, threads, locks and a launch length: {shape:?}, {per_launch}"
        )));
    }
    let began = Instant::now();
    let t = target;
    let cfg = LaunchConfig::linear(shape.blocks, shape.threads);
    let threads = u64::from(shape.blocks) * u64::from(shape.threads);
    let violations = t.zeros::<u64>(1)?;
    let failures = t.zeros::<u32>(1)?;
    let mut done = 0u64;
    let mut checks = 0u64;
    let mut lost = 0u64;
    let mut launch = 0u64;
    if primitive.is_lock() {
        let n = shape.locks as usize;
        let mutexes = t.upload(&vec![MutexState::default(); n])?;
        let tickets = t.upload(&vec![TicketState::default(); n])?;
        let words = t.zeros::<u32>(n * SPIN_STRIDE)?;
        let payload = t.zeros::<u32>(n * PAYLOAD_STRIDE)?;
        let scratch = t.zeros::<u32>(stress.lines.max(1) as usize * 32)?;
        let kind = match primitive {
            Primitive::Mutex => LOCK_MUTEX,
            Primitive::MutexSystem => LOCK_MUTEX_SYSTEM,
            Primitive::Ticket => LOCK_TICKET,
            Primitive::SpinFenced => LOCK_SPIN_FENCED,
            _ => LOCK_SPIN_UNFENCED,
        };
        let locks = StressLocks {
            mutexes: mutexes.ptr(),
            tickets: tickets.ptr(),
            words: words.ptr(),
            count: shape.locks,
            kind,
        };
        while done < uses && (launch == 0 || Instant::now() < deadline) {
            let iters = (uses - done).div_ceil(threads).min(u64::from(per_launch)) as u32;
            let s = crate::inputs::splitmix64(seed ^ launch) as u32;
            let (p, v, f, sc) = (
                payload.ptr(),
                violations.ptr(),
                failures.ptr(),
                scratch.ptr(),
            );
            let (lines, si) = (stress.lines.max(1), stress.iters);
            // SAFETY: every array holds `locks` locks (states fresh or left unlocked by the
            // previous launch), `payload` a stride per lock, `scratch` `lines` lines; the
            // buffers outlive the launch, which is synchronized below.
            unsafe {
                crate::launch!(
                    t,
                    k::lock_stress,
                    cfg,
                    (locks, p, iters, s, v, f, sc, lines, si)
                )?
            };
            t.synchronize()?;
            done += threads * u64::from(iters);
            launch += 1;
            if t.download(&failures)?[0] != 0 {
                break;
            }
        }
        checks = done;
        let pay = t.download(&payload)?;
        let counted: u64 = (0..n).map(|i| u64::from(pay[i * PAYLOAD_STRIDE])).sum();
        lost = done.saturating_sub(counted);
    } else {
        let barrier = super::super::round_barrier(t)?;
        let multi = t.upload(&[MultiGridBarrierState::with_blocks(shape.blocks)])?;
        let count = t.zeros::<u32>(1)?;
        let slots = t.zeros::<u32>(2 * threads as usize)?;
        let kind = match primitive {
            Primitive::GridBarrier => BARRIER_GRID,
            Primitive::MultiGridDevice => BARRIER_MULTI_DEVICE,
            Primitive::MultiGridSystem => BARRIER_MULTI_SYSTEM,
            _ => BARRIER_RELAXED,
        };
        while done < uses && (launch == 0 || Instant::now() < deadline) {
            let rounds = (uses - done).min(u64::from(per_launch)) as u32;
            t.write(&multi, &[MultiGridBarrierState::with_blocks(shape.blocks)])?;
            t.clear(&count)?;
            t.clear(&slots)?;
            let s = crate::inputs::splitmix64(seed ^ launch) as u32;
            let (g, m, c, sl) = (barrier.ptr(), multi.ptr(), count.ptr(), slots.ptr());
            let (v, f) = (violations.ptr(), failures.ptr());
            // SAFETY: the states are fresh (the grid barrier's reset by the launch), `count`
            // zero, `slots` two banks of one word per thread; the launch is synchronized below.
            unsafe {
                if primitive == Primitive::ClusterGridBarrier {
                    let cfg = cfg.with_cluster(gpu::Dim3::x(CLUSTER_BLOCKS));
                    crate::launch_grid_synced!(
                        t,
                        &barrier,
                        gpu::checks::hopper::cluster_barrier_stress,
                        cfg,
                        LaunchMode::Plain,
                        (g, sl, rounds, s, v, f)
                    )?
                } else {
                    crate::launch_grid_synced!(
                        t,
                        &barrier,
                        k::barrier_stress,
                        cfg,
                        LaunchMode::Plain,
                        (kind, g, m, c, sl, rounds, s, v, f, RELAXED_POLLS)
                    )?
                }
            };
            t.synchronize()?;
            done += u64::from(rounds);
            launch += 1;
            if t.download(&failures)?[0] != 0 || barrier.check(t).is_err() {
                break;
            }
        }
        if shape.blocks > 1 {
            checks = done * threads;
        }
    }
    let failed = u64::from(t.download(&failures)?[0]);
    Ok(PrimitiveRun {
        primitive,
        name: primitive.name().to_string(),
        uses: done,
        checks,
        violations: t.download(&violations)?[0],
        lost,
        failures: failed,
        seconds: began.elapsed().as_secs_f64(),
    })
}

/// Blocks per cluster of the cluster-aware barrier's run.
const CLUSTER_BLOCKS: u32 = 2;

/// Polls of the relaxed barrier before a thread gives up.
const RELAXED_POLLS: u32 = 1 << 22;
