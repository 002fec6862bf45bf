//! One primitive's stress run: the launches, the payload checks, the counts.

use super::{Amount, Primitive, PrimitiveRun, PrimitiveShape};
use crate::runtime::args::SharedArgs;
use crate::runtime::buffer::{Buffer, Plain};
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
    run_on(
        std::slice::from_ref(target),
        primitive,
        shape,
        amount,
        deadline,
    )
}

/// [`run`] with a grid of `shape` on every device of `targets` at once (two or more: the
/// lock states, the payload, the barrier's state and its slots in the first one's memory,
/// mapped into the others), for the primitives of [`Primitive::ACROSS_GPUS`].
///
/// # Errors
/// As [`run`]; [`Error::InvalidInput`] for a primitive that cannot span grids;
/// [`Error::Unsupported`] for devices without peer access.
pub fn run_on(
    targets: &[Target],
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
    let Some(t) = targets.first() else {
        return Err(Error::InvalidInput("a stress run needs a device".into()));
    };
    let gpus = targets.len();
    if gpus > 1 {
        if !Primitive::ACROSS_GPUS.contains(&primitive) {
            return Err(Error::InvalidInput(format!(
                "{} does not run across devices (one of: {})",
                primitive.name(),
                Primitive::ACROSS_GPUS.map(|p| p.name()).join(", ")
            )));
        }
        crate::multi::devices::enable_peer_access_on(targets)?;
    }
    let began = Instant::now();
    let cfg = LaunchConfig::linear(shape.blocks, shape.threads);
    let threads = u64::from(shape.blocks) * u64::from(shape.threads);
    let all_threads = threads * gpus as u64;
    let violations = word_each::<u64>(targets)?;
    let failures = word_each::<u32>(targets)?;
    let total = |bufs| sum_words(targets, bufs);
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
        let locks = SharedArgs((StressLocks {
            mutexes: mutexes.ptr(),
            tickets: tickets.ptr(),
            words: words.ptr(),
            count: shape.locks,
            kind,
        },));
        while done < uses && (launch == 0 || Instant::now() < deadline) {
            let iters = (uses - done)
                .div_ceil(all_threads)
                .min(u64::from(per_launch)) as u32;
            let shared = SharedArgs((payload.ptr(), scratch.ptr()));
            let mine: Vec<_> = (0..gpus)
                .map(|d| SharedArgs((violations[d].ptr(), failures[d].ptr())))
                .collect();
            let (lines, si) = (stress.lines.max(1), stress.iters);
            launch_all(targets, |d, dt| {
                let s = crate::inputs::splitmix64(seed ^ launch ^ ((d as u64) << 48)) as u32;
                let ((locks,), (p, sc), (v, f)) = (locks.get(), shared.get(), mine[d].get());
                // SAFETY: every array holds `locks` locks (states fresh or left unlocked by
                // the previous launch), `payload` a stride per lock, `scratch` `lines` lines,
                // all in memory every device maps; `v`, `f` are the device's own; the buffers
                // outlive the launch, which `launch_all` waits for.
                unsafe {
                    crate::launch!(
                        dt,
                        k::lock_stress,
                        cfg,
                        (locks, p, iters, s, v, f, sc, lines, si)
                    )
                }
            })?;
            done += all_threads * u64::from(iters);
            launch += 1;
            if total(&failures)? != 0 {
                break;
            }
        }
        checks = done;
        let pay = t.download(&payload)?;
        let counted: u64 = (0..n).map(|i| u64::from(pay[i * PAYLOAD_STRIDE])).sum();
        lost = done.saturating_sub(counted);
    } else {
        let barrier = super::super::round_barrier(t)?;
        let blocks = shape.blocks * gpus as u32;
        let fresh = || MultiGridBarrierState::with_blocks(blocks);
        let multi = t.upload(&[fresh()])?;
        let count = t.zeros::<u32>(1)?;
        let slots = t.zeros::<u32>(2 * all_threads as usize)?;
        let kind = match primitive {
            Primitive::GridBarrier => BARRIER_GRID,
            Primitive::MultiGridDevice => BARRIER_MULTI_DEVICE,
            Primitive::MultiGridSystem => BARRIER_MULTI_SYSTEM,
            _ => BARRIER_RELAXED,
        };
        if gpus > 1 {
            for dt in targets {
                crate::runtime::grid::check_coresident(
                    dt,
                    gpu::Kernel::BarrierStress.name(),
                    &cfg,
                )?;
            }
        }
        while done < uses && (launch == 0 || Instant::now() < deadline) {
            let rounds = (uses - done).min(u64::from(per_launch)) as u32;
            t.write(&multi, &[fresh()])?;
            t.clear(&count)?;
            t.clear(&slots)?;
            let s = crate::inputs::splitmix64(seed ^ launch) as u32;
            let shared = SharedArgs((barrier.ptr(), multi.ptr(), count.ptr(), slots.ptr()));
            let mine: Vec<_> = (0..gpus)
                .map(|d| SharedArgs((violations[d].ptr(), failures[d].ptr())))
                .collect();
            if gpus > 1 {
                launch_all(targets, |d, dt| {
                    let ((_, m, c, sl), (v, f)) = (shared.get(), mine[d].get());
                    let (first, no_grid) = (d as u32 * shape.blocks, std::ptr::null_mut());
                    // SAFETY: the multi-grid state is fresh, `count` zero, `slots` two banks
                    // of one word per thread of every grid, all in the first device's memory,
                    // which every device maps; `v`, `f` the device's own; every grid fits at
                    // once (checked) and `launch_all` launches each before it waits for any.
                    unsafe {
                        crate::launch_cooperative!(
                            dt,
                            k::barrier_stress,
                            cfg,
                            (
                                kind,
                                no_grid,
                                m,
                                c,
                                sl,
                                rounds,
                                s,
                                v,
                                f,
                                RELAXED_POLLS,
                                first,
                                blocks
                            )
                        )
                    }
                })?;
            } else {
                let ((g, m, c, sl), (v, f)) = (shared.get(), mine[0].get());
                // SAFETY: the states are fresh (the grid barrier's reset by the launch),
                // `count` zero, `slots` two banks of one word per thread; the launch is
                // synchronized below.
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
                            (kind, g, m, c, sl, rounds, s, v, f, RELAXED_POLLS, 0, blocks)
                        )?
                    }
                };
                t.synchronize()?;
            }
            done += u64::from(rounds);
            launch += 1;
            let timed_out = if gpus > 1 {
                t.download(&multi)?[0].timeouts != 0
            } else {
                barrier.check(t).is_err()
            };
            if total(&failures)? != 0 || timed_out {
                break;
            }
        }
        if blocks > 1 {
            checks = done * all_threads;
        }
    }
    let seen = sum_words(targets, &violations)?;
    Ok(PrimitiveRun {
        primitive,
        name: primitive.name().to_string(),
        devices: gpus as u32,
        uses: done,
        checks,
        violations: seen,
        lost,
        failures: total(&failures)?,
        seconds: began.elapsed().as_secs_f64(),
    })
}

/// One zeroed word of `T` on each target: a per-device counter.
fn word_each<T: Plain>(targets: &[Target]) -> Result<Vec<Buffer<T>>> {
    targets.iter().map(|t| t.zeros(1)).collect()
}

/// The per-device counters of [`word_each`], added up.
fn sum_words<T: Plain + Into<u64>>(targets: &[Target], words: &[Buffer<T>]) -> Result<u64> {
    let mut n = 0u64;
    for (t, w) in targets.iter().zip(words) {
        n += t.download(w)?[0].into();
    }
    Ok(n)
}

/// Launches `launch(device, target)` on every target and waits: one target alone, or all at
/// once ([`crate::multi::devices::at_once_on`]).
fn launch_all(
    targets: &[Target],
    launch: impl Fn(usize, &Target) -> Result<()> + Sync,
) -> Result<()> {
    match targets {
        [one] => {
            launch(0, one)?;
            one.synchronize()
        }
        _ => crate::multi::devices::at_once_on(targets, launch).map(|_ms| ()),
    }
}

/// Blocks per cluster of the cluster-aware barrier's run.
const CLUSTER_BLOCKS: u32 = 2;

/// Polls of the relaxed barrier before a thread gives up.
const RELAXED_POLLS: u32 = 1 << 22;
