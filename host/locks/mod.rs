//! Locks on the GPU, run and checked: every variant of the progression in `gpu/src/lessons/locks.rs`,
//! at the sources' launch shapes and at a full-GPU shape.
//!
//! Sources: Numba CUDA by example, part 4, example 4.5 (`add_one_mutex`, 10 × 16); the blog on
//! CUDA lock pitfalls (`<<<128,1>>>`, `<<<1,128>>>`, `<<<4,128>>>`). Device code:
//! `gpu/src/primitives/lock/` (the locks) and `gpu/src/lessons/locks.rs` (the kernels).

use crate::primitives::lock::{DeviceMutex, DeviceTicketLock, MutexBounds};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::LaunchConfig;
use serde::Serialize;
use std::time::Duration;

/// A launch shape: blocks × threads per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
}

impl Shape {
    /// Total threads.
    pub fn count(self) -> u64 {
        self.blocks as u64 * self.threads as u64
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}", self.blocks, self.threads)
    }
}

/// The sources' shapes: the blog's `<<<128,1>>>` (one thread per block — the only shape its
/// first lock survived before Volta), `<<<1,128>>>` (the deadlock), `<<<4,128>>>` (its "true
/// thread lock"), and the tutorial's 10 × 16.
pub const SOURCE_SHAPES: [Shape; 4] = [
    Shape {
        blocks: 128,
        threads: 1,
    },
    Shape {
        blocks: 1,
        threads: 128,
    },
    Shape {
        blocks: 4,
        threads: 128,
    },
    Shape {
        blocks: 10,
        threads: 16,
    },
];

/// Threads per block of the full-GPU shape: one block of 256 per SM, every thread contending.
pub const FULL_GPU_THREADS: u32 = 256;

/// The full-GPU shape of `target`: SMs × 256 (132 × 256 on an H200); on the simulator 16 × 256,
/// its thread limit.
pub fn full_gpu_shape(target: &Target) -> Shape {
    let blocks = match target {
        Target::Gpu(g) => g.info().sm_count,
        Target::Sim => (gpu::sim::MAX_THREADS / FULL_GPU_THREADS as u64) as u32,
    };
    Shape {
        blocks,
        threads: FULL_GPU_THREADS,
    }
}

/// Most acquisitions one launch of an unbounded (source) lock may make: at the naive lock's
/// full-GPU rate (~30 000 per second) about two seconds. Bigger launches are refused.
pub const UNBOUNDED_LIMIT: u64 = 1 << 16;

/// One lock of the progression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// `lock_unfenced`: the blog's lock, no fences.
    Unfenced,
    /// `lock_fenced`: the Numba tutorial's lock, `threadfence` around the critical section.
    Fenced,
    /// `lock_loop`: the blog's "true thread lock" loop.
    Loop,
    /// `lock_warp_leader`: one lane per warp takes the [`Mutex`](gpu::lock::Mutex).
    WarpLeader,
    /// `lock_mutex`: the production [`Mutex`](gpu::lock::Mutex).
    Mutex,
    /// `lock_mutex_with`: the same mutex through [`Mutex::with`](gpu::lock::Mutex::with), the
    /// critical section as a closure.
    MutexWith,
    /// `lock_ticket`: the [`TicketLock`](gpu::lock::TicketLock).
    Ticket,
}

impl Variant {
    /// Every variant, in the order of the progression.
    pub const ALL: [Variant; 7] = [
        Variant::Unfenced,
        Variant::Fenced,
        Variant::Loop,
        Variant::WarpLeader,
        Variant::Mutex,
        Variant::MutexWith,
        Variant::Ticket,
    ];

    /// The kernel's name.
    pub fn kernel(self) -> &'static str {
        match self {
            Variant::Unfenced => "lock_unfenced",
            Variant::Fenced => "lock_fenced",
            Variant::Loop => "lock_loop",
            Variant::WarpLeader => "lock_warp_leader",
            Variant::Mutex => "lock_mutex",
            Variant::MutexWith => "lock_mutex_with",
            Variant::Ticket => "lock_ticket",
        }
    }

    /// One line on what it is.
    pub fn what(self) -> &'static str {
        match self {
            Variant::Unfenced => "CAS spin + exch, no fence (blog's CudaKernelLock)",
            Variant::Fenced => "CAS spin + threadfence (Numba lock/unlock)",
            Variant::Loop => "lock inside one loop body (blog's true thread lock)",
            Variant::WarpLeader => "one leader lane per warp takes the Mutex",
            Variant::Mutex => "Mutex: acquire/release, back-off, bounded",
            Variant::MutexWith => "Mutex::with: lanes pass it at a warp barrier",
            Variant::Ticket => "ticket lock: fair, bounded",
        }
    }

    /// Whether the wait is bounded (the kernel cannot hang).
    pub fn bounded(self) -> bool {
        matches!(
            self,
            Variant::WarpLeader | Variant::Mutex | Variant::MutexWith | Variant::Ticket
        )
    }

    /// Whether a lost update is the expected lesson rather than a bug.
    pub fn may_lose_updates(self) -> bool {
        self == Variant::Unfenced
    }
}

/// One launch of one variant.
#[derive(Clone, Debug, Serialize)]
pub struct LockRun {
    /// The variant.
    pub variant: Variant,
    /// The launch shape.
    pub shape: Shape,
    /// Critical sections per thread.
    pub iters: u32,
    /// Critical sections run: threads × iters. The counter must end here.
    pub expected: u64,
    /// The counter's final value.
    pub counter: u64,
    /// Lock acquisitions (for the warp-leader variant one per warp and round).
    pub acquisitions: u64,
    /// Kernel time in milliseconds (event-timed; `None` on the simulator).
    pub ms: Option<f64>,
}

impl LockRun {
    /// Updates lost: `expected - counter`.
    pub fn lost(&self) -> u64 {
        self.expected.saturating_sub(self.counter)
    }

    /// Critical sections per second, in millions (`None` on the simulator).
    pub fn mega_per_s(&self) -> Option<f64> {
        self.ms.map(|ms| self.expected as f64 / (ms * 1e-3) / 1e6)
    }
}

/// Runs `variant` once: `shape` threads each take the lock `iters` times around `*counter += 1`.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty shape, zero iterations, a count past `u32`, or an
/// unbounded variant past [`UNBOUNDED_LIMIT`] acquisitions; [`Error::LockTimeout`] /
/// [`Error::LockHeld`] from a bounded lock; [`Error::Mismatch`] if a variant other than the
/// unfenced one lost an update; launch errors.
pub fn run_variant(
    target: &Target,
    variant: Variant,
    shape: Shape,
    iters: u32,
    bounds: MutexBounds,
) -> Result<LockRun> {
    let per_ticket = gpu::lock::DEFAULT_BACKOFF_PER_TICKET_NS;
    run_variant_with(target, variant, shape, iters, bounds, per_ticket)
}

/// [`run_variant`] with the ticket lock's back-off per waiting ticket chosen too.
///
/// # Errors
/// As [`run_variant`].
pub fn run_variant_with(
    target: &Target,
    variant: Variant,
    shape: Shape,
    iters: u32,
    bounds: MutexBounds,
    ticket_backoff_ns: u32,
) -> Result<LockRun> {
    let expected = check_request(variant, shape, iters)?;
    let counter = target.zeros::<u32>(1)?;
    let mut launch = CounterLaunch {
        target,
        cfg: LaunchConfig::linear(shape.blocks, shape.threads),
        counter: counter.ptr(),
        iters,
        timer: Timer::on(target)?,
    };
    let ms = match variant {
        Variant::Unfenced | Variant::Fenced | Variant::Loop => launch.spinlock(variant)?,
        Variant::WarpLeader | Variant::Mutex | Variant::MutexWith => {
            launch.mutex(variant, bounds)?
        }
        Variant::Ticket => launch.ticket(bounds, ticket_backoff_ns)?,
    };
    let counter = target.download(&counter)?[0] as u64;
    let warps = shape.blocks as u64 * shape.threads.div_ceil(gpu::warp::WARP_SIZE) as u64;
    let run = LockRun {
        variant,
        shape,
        iters,
        expected,
        counter,
        acquisitions: if variant == Variant::WarpLeader {
            warps * iters as u64
        } else {
            expected
        },
        ms,
    };
    if run.lost() > 0 && !variant.may_lose_updates() || run.counter > expected {
        return Err(Error::Mismatch(format!(
            "{} at {shape}: the counter is {counter}, expected {expected}",
            variant.kernel()
        )));
    }
    Ok(run)
}

/// The critical sections a run asks for, refused when there are none, when the `u32`
/// counter cannot hold them, or when an unbounded variant would spin past
/// [`UNBOUNDED_LIMIT`].
fn check_request(variant: Variant, shape: Shape, iters: u32) -> Result<u64> {
    let expected = shape.count() * iters as u64;
    if expected == 0 {
        return Err(Error::InvalidInput(format!(
            "{shape} threads × {iters} iterations: nothing to lock"
        )));
    }
    if expected > u32::MAX as u64 {
        return Err(Error::InvalidInput(format!(
            "{expected} critical sections overflow the u32 counter"
        )));
    }
    if !variant.bounded() && expected > UNBOUNDED_LIMIT {
        return Err(Error::InvalidInput(format!(
            "{} spins without a bound; {expected} acquisitions in one launch could run for \
             minutes (limit {UNBOUNDED_LIMIT}): use a bounded variant for big launches",
            variant.kernel()
        )));
    }
    Ok(expected)
}

/// What every lock kernel's launch shares: the shape, the counter it increments, the
/// iterations, and the GPU's timer.
struct CounterLaunch<'t> {
    target: &'t Target,
    cfg: LaunchConfig,
    /// One zeroed `u32` that outlives the launch.
    counter: *mut u32,
    iters: u32,
    timer: Option<Timer>,
}

impl CounterLaunch<'_> {
    /// The spinlocks on one word (unfenced, fenced, loop), timed; the word must end unlocked.
    fn spinlock(&mut self, variant: Variant) -> Result<Option<f64>> {
        let (target, cfg, c, iters) = (self.target, self.cfg, self.counter, self.iters);
        let word = target.zeros::<u32>(1)?;
        let m = word.ptr();
        let ms = timed(target, &mut self.timer, || {
            // SAFETY: `counter` and `word` each hold one u32 and outlive the launch (the
            // download below synchronizes); the kernels touch nothing else.
            unsafe {
                match variant {
                    Variant::Unfenced => {
                        crate::launch!(
                            target,
                            gpu::lessons::locks::lock_unfenced,
                            cfg,
                            (c, m, iters)
                        )
                    }
                    Variant::Fenced => {
                        crate::launch!(target, gpu::lessons::locks::lock_fenced, cfg, (c, m, iters))
                    }
                    _ => crate::launch!(target, gpu::lessons::locks::lock_loop, cfg, (c, m, iters)),
                }
            }
        })?;
        if target.download(&word)?[0] != gpu::lock::UNLOCKED {
            return Err(Error::LockHeld("spinlock"));
        }
        Ok(ms)
    }

    /// The bounded mutex, taken by every thread (with a guard or through `with`) or by one
    /// leader per warp, timed; it must end unlocked and without a timeout.
    fn mutex(&mut self, variant: Variant, bounds: MutexBounds) -> Result<Option<f64>> {
        let (target, cfg, c, iters) = (self.target, self.cfg, self.counter, self.iters);
        let mutex = DeviceMutex::with_bounds(target, bounds)?;
        let s = mutex.ptr();
        let ms = timed(target, &mut self.timer, || {
            // SAFETY: `counter` holds one u32 and `mutex` one live state; both outlive the
            // launch (`check` synchronizes first).
            unsafe {
                match variant {
                    Variant::Mutex => {
                        crate::launch!(target, gpu::lessons::locks::lock_mutex, cfg, (c, s, iters))
                    }
                    Variant::MutexWith => crate::launch!(
                        target,
                        gpu::lessons::locks::lock_mutex_with,
                        cfg,
                        (c, s, iters)
                    ),
                    _ => crate::launch!(
                        target,
                        gpu::lessons::locks::lock_warp_leader,
                        cfg,
                        (c, s, iters)
                    ),
                }
            }
        })?;
        mutex.check(target)?;
        Ok(ms)
    }

    /// The ticket lock with `backoff_ns` per waiting ticket, timed; checked as the mutex is.
    fn ticket(&mut self, bounds: MutexBounds, backoff_ns: u32) -> Result<Option<f64>> {
        let (target, cfg, c, iters) = (self.target, self.cfg, self.counter, self.iters);
        let lock = DeviceTicketLock::with_bounds(target, bounds.timeout, backoff_ns)?;
        let s = lock.ptr();
        let ms = timed(target, &mut self.timer, || {
            // SAFETY: as for the mutex, for the ticket lock's state.
            unsafe { crate::launch!(target, gpu::lessons::locks::lock_ticket, cfg, (c, s, iters)) }
        })?;
        lock.check(target)?;
        Ok(ms)
    }
}

/// Runs `launch` between the timer's events on the GPU (milliseconds), or just runs it.
fn timed(
    target: &Target,
    timer: &mut Option<Timer>,
    launch: impl FnOnce() -> Result<()>,
) -> Result<Option<f64>> {
    match (target, timer) {
        (Target::Gpu(gpu), Some(t)) => Ok(Some(t.time(gpu.stream(), launch)? as f64)),
        _ => launch().map(|()| None),
    }
}

/// Runs the source's `add_one_mutex` at 10 × 16 and returns `x[0]`: 160.
///
/// # Errors
/// Launch errors; [`Error::Mismatch`] if the count is not 160; [`Error::LockHeld`] if the lock
/// word is left set.
pub fn add_one_mutex(target: &Target) -> Result<u32> {
    let shape = SOURCE_SHAPES[3];
    let x = target.zeros::<u32>(1)?;
    let mutex = target.zeros::<u32>(1)?;
    let cfg = LaunchConfig::linear(shape.blocks, shape.threads);
    // SAFETY: `x` and `mutex` hold one u32 each and outlive the launch (downloads synchronize).
    unsafe {
        crate::launch!(
            target,
            gpu::lessons::locks::add_one_mutex,
            cfg,
            (x.ptr(), mutex.ptr())
        )?
    };
    let got = target.download(&x)?[0];
    if target.download(&mutex)?[0] != gpu::lock::UNLOCKED {
        return Err(Error::LockHeld("spinlock"));
    }
    if got as u64 != shape.count() {
        return Err(Error::Mismatch(format!(
            "add_one_mutex counted {got}, expected {}",
            shape.count()
        )));
    }
    Ok(got)
}

/// The failure the bound exists for: thread 0 takes a [`DeviceMutex`] and never releases it,
/// and `shape`'s other threads try to take it. Returns what the host call reports — on a working
/// GPU, [`Error::LockTimeout`] after about `timeout` — and how long it took.
///
/// # Errors
/// Launch errors and invalid bounds only; the lock's own failure is the returned value.
pub fn held_forever(target: &Target, shape: Shape, timeout: Duration) -> Result<(Error, Duration)> {
    let bounds = MutexBounds {
        timeout,
        ..MutexBounds::default()
    };
    let mutex = DeviceMutex::with_bounds(target, bounds)?;
    let counter = target.zeros::<u32>(1)?;
    let cfg = LaunchConfig::linear(shape.blocks, shape.threads);
    let started = std::time::Instant::now();
    // SAFETY: `counter` and the mutex state outlive the launch (`check` synchronizes).
    unsafe {
        crate::launch!(
            target,
            gpu::lessons::locks::mutex_held_forever,
            cfg,
            (counter.ptr(), mutex.ptr())
        )?
    };
    let outcome = mutex.check(target);
    let took = started.elapsed();
    match outcome {
        Err(e @ (Error::LockTimeout { .. } | Error::LockHeld(_))) => Ok((e, took)),
        Err(e) => Err(e),
        Ok(()) => Err(Error::Mismatch(
            "a lock held forever was found free after the launch".into(),
        )),
    }
}

mod demo;
pub use demo::{EXPLANATION, HeldForever, MutexDemo, default_shapes, demo};
