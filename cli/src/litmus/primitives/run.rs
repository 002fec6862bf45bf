//! One primitive's stress run: the launches, the payload checks, the counts.

use super::{Amount, Primitive, PrimitiveRun, PrimitiveShape};
use gpu::LaunchConfig;
use gpu::checks::sync_stress::{
    self as k, BARRIER_GRID, BARRIER_MULTI_DEVICE, BARRIER_MULTI_SYSTEM, BARRIER_RELAXED,
    LOCK_MUTEX, LOCK_MUTEX_SYSTEM, LOCK_SPIN_FENCED, LOCK_SPIN_UNFENCED, LOCK_TICKET,
    PAYLOAD_STRIDE, SPIN_STRIDE, StressLocks,
};
use gpu::grid::GridBarrierState;
use gpu::lock::{MutexState, TicketState};
use gpu::multi_grid::MultiGridBarrierState;
use gridsync::primitives::barrier::DeviceGridBarrier;
use gridsync::runtime::args::SharedArgs;
use gridsync::runtime::buffer::{Buffer, Plain};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::{LaunchMode, Target};
use std::time::Instant;

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
    check_shape(shape, amount)?;
    prepare_devices(targets, primitive)?;
    let began = Instant::now();
    let run = StressRun::new(targets, primitive, shape, amount, deadline)?;
    let tally = if primitive.is_lock() {
        run.locks()?
    } else {
        run.barriers()?
    };
    run.report(tally, began)
}

/// Refuses a shape with nothing in it: no blocks, threads, locks or launch length.
fn check_shape(shape: PrimitiveShape, amount: Amount) -> Result<()> {
    let per_launch = amount.per_launch;
    if shape.blocks == 0 || shape.threads == 0 || shape.locks == 0 || per_launch == 0 {
        return Err(Error::InvalidInput(format!(
            "a stress shape needs blocks, threads, locks and a launch length: {shape:?}, {per_launch}"
        )));
    }
    Ok(())
}

/// Checks there is a device, and that a run over several is of a primitive that spans grids,
/// then lets those devices map each other's memory.
fn prepare_devices(targets: &[Target], primitive: Primitive) -> Result<()> {
    if targets.is_empty() {
        return Err(Error::InvalidInput("a stress run needs a device".into()));
    }
    if targets.len() > 1 {
        if !Primitive::ACROSS_GPUS.contains(&primitive) {
            return Err(Error::InvalidInput(format!(
                "{} does not run across devices (one of: {})",
                primitive.name(),
                Primitive::ACROSS_GPUS.map(|p| p.name()).join(", ")
            )));
        }
        gridsync::multi::devices::enable_peer_access_on(targets)?;
    }
    Ok(())
}

/// What the launches of one run did.
struct Tally {
    /// Acquisitions or rounds made.
    uses: u64,
    /// Checks of the payload (locks) or of the slots (barriers).
    checks: u64,
    /// Increments of the payload that a lock let through unprotected.
    lost: u64,
}

/// What every launch of one stress run shares: the devices, the shape, how long, and each
/// device's counters.
struct StressRun<'a> {
    targets: &'a [Target],
    primitive: Primitive,
    shape: PrimitiveShape,
    amount: Amount,
    deadline: Instant,
    cfg: LaunchConfig,
    /// Threads of every grid together.
    all_threads: u64,
    /// Each device's count of payload or slot violations.
    violations: Vec<Buffer<u64>>,
    /// Each device's count of failed acquisitions or timed-out waits.
    failures: Vec<Buffer<u32>>,
}

impl<'a> StressRun<'a> {
    /// The launch shape and zeroed counters on every device (`targets` checked non-empty).
    fn new(
        targets: &'a [Target],
        primitive: Primitive,
        shape: PrimitiveShape,
        amount: Amount,
        deadline: Instant,
    ) -> Result<Self> {
        let threads = u64::from(shape.blocks) * u64::from(shape.threads);
        Ok(Self {
            targets,
            primitive,
            shape,
            amount,
            deadline,
            cfg: LaunchConfig::linear(shape.blocks, shape.threads),
            all_threads: threads * targets.len() as u64,
            violations: word_each::<u64>(targets)?,
            failures: word_each::<u32>(targets)?,
        })
    }

    /// The device whose memory holds the shared states.
    fn first(&self) -> &Target {
        &self.targets[0]
    }

    fn gpus(&self) -> usize {
        self.targets.len()
    }

    /// Whether to launch again: uses are left, and this is the first launch or time is left.
    fn goes_on(&self, done: u64, launch: u64) -> bool {
        done < self.amount.uses && (launch == 0 || Instant::now() < self.deadline)
    }

    /// Each device's own counters, as kernel arguments.
    fn counters(&self) -> Vec<SharedArgs<(*mut u64, *mut u32)>> {
        (0..self.gpus())
            .map(|d| SharedArgs((self.violations[d].ptr(), self.failures[d].ptr())))
            .collect()
    }

    /// Failures on all devices so far.
    fn failures(&self) -> Result<u64> {
        sum_words(self.targets, &self.failures)
    }

    /// Launches the lock kernel until the uses are made, time is up or a lock fails, then
    /// counts the payload's lost increments.
    fn locks(&self) -> Result<Tally> {
        let states = LockStates::new(self.first(), self.shape, self.amount.stress)?;
        let locks = SharedArgs((states.args(self.shape.locks, lock_kind(self.primitive)),));
        let (mut done, mut launch) = (0u64, 0u64);
        while self.goes_on(done, launch) {
            let iters = (self.amount.uses - done)
                .div_ceil(self.all_threads)
                .min(u64::from(self.amount.per_launch)) as u32;
            self.launch_locks(&locks, &states, iters, launch)?;
            done += self.all_threads * u64::from(iters);
            launch += 1;
            if self.failures()? != 0 {
                break;
            }
        }
        let pay = self.first().download(&states.payload)?;
        let counted: u64 = (0..self.shape.locks as usize)
            .map(|i| u64::from(pay[i * PAYLOAD_STRIDE]))
            .sum();
        Ok(Tally {
            uses: done,
            checks: done,
            lost: done.saturating_sub(counted),
        })
    }

    /// One launch of `lock_stress` on every device, `iters` acquisitions per thread.
    fn launch_locks(
        &self,
        locks: &SharedArgs<(StressLocks,)>,
        states: &LockStates,
        iters: u32,
        launch: u64,
    ) -> Result<()> {
        let (cfg, seed) = (self.cfg, self.amount.seed);
        let shared = SharedArgs((states.payload.ptr(), states.scratch.ptr()));
        let mine = self.counters();
        let (lines, si) = (self.amount.stress.lines.max(1), self.amount.stress.iters);
        launch_all(self.targets, |d, dt| {
            let s = gridsync::inputs::splitmix64(seed ^ launch ^ ((d as u64) << 48)) as u32;
            let ((locks,), (p, sc), (v, f)) = (locks.get(), shared.get(), mine[d].get());
            // SAFETY: every array holds `locks` locks (states fresh or left unlocked by
            // the previous launch), `payload` a stride per lock, `scratch` `lines` lines,
            // all in memory every device maps; `v`, `f` are the device's own; the buffers
            // outlive the launch, which `launch_all` waits for.
            unsafe {
                let l = k::LockStressLaunch {
                    locks,
                    payload: p,
                    violations: v,
                    failures: f,
                    scratch: sc,
                    iters,
                    seed: s,
                    stress_lines: lines,
                    stress_iters: si,
                };
                gridsync::launch!(dt, k::lock_stress, cfg, (l,))
            }
        })
    }

    /// Launches the barrier kernel until the rounds are made, time is up, or a wait fails or
    /// times out.
    fn barriers(&self) -> Result<Tally> {
        let t = self.first();
        let barrier = super::super::round_barrier(t)?;
        let blocks = self.shape.blocks * self.gpus() as u32;
        let states = BarrierStates::new(t, blocks, self.all_threads)?;
        if self.gpus() > 1 {
            for dt in self.targets {
                let name = gpu::Kernel::BarrierStress.name();
                gridsync::runtime::grid::check_coresident(dt, name, &self.cfg)?;
            }
        }
        let (mut done, mut launch) = (0u64, 0u64);
        while self.goes_on(done, launch) {
            let rounds = (self.amount.uses - done).min(u64::from(self.amount.per_launch)) as u32;
            states.reset(t, blocks)?;
            let s = gridsync::inputs::splitmix64(self.amount.seed ^ launch) as u32;
            let shared = SharedArgs((
                barrier.ptr(),
                states.multi.ptr(),
                states.count.ptr(),
                states.slots.ptr(),
            ));
            if self.gpus() > 1 {
                self.launch_barriers_across(&shared, rounds, s, blocks)?;
            } else {
                self.launch_barrier_alone(&barrier, &shared, rounds, s, blocks)?;
            }
            done += u64::from(rounds);
            launch += 1;
            let timed_out = if self.gpus() > 1 {
                t.download(&states.multi)?[0].timeouts != 0
            } else {
                barrier.check(t).is_err()
            };
            if self.failures()? != 0 || timed_out {
                break;
            }
        }
        let checks = if blocks > 1 {
            done * self.all_threads
        } else {
            0
        };
        Ok(Tally {
            uses: done,
            checks,
            lost: 0,
        })
    }

    /// One cooperative launch of `barrier_stress` on every device, its grids meeting at the
    /// multi-grid barrier in the first device's memory.
    fn launch_barriers_across(
        &self,
        shared: &SharedArgs<BarrierArgs>,
        rounds: u32,
        s: u32,
        blocks: u32,
    ) -> Result<()> {
        let (cfg, kind, shape) = (self.cfg, barrier_kind(self.primitive), self.shape);
        let mine = self.counters();
        launch_all(self.targets, |d, dt| {
            let ((_, m, c, sl), (v, f)) = (shared.get(), mine[d].get());
            let (first, no_grid) = (d as u32 * shape.blocks, std::ptr::null_mut());
            // SAFETY: the multi-grid state is fresh, `count` zero, `slots` two banks
            // of one word per thread of every grid, all in the first device's memory,
            // which every device maps; `v`, `f` the device's own; every grid fits at
            // once (checked) and `launch_all` launches each before it waits for any.
            unsafe {
                let l = barrier_record(
                    kind,
                    (no_grid, m, c, sl),
                    (v, f),
                    (rounds, s),
                    (first, blocks),
                );
                gridsync::launch_cooperative!(dt, k::barrier_stress, cfg, (l,))
            }
        })
    }

    /// One launch of the barrier kernel (or the cluster-aware one) on the one device, its
    /// grid barrier reset by the launch.
    fn launch_barrier_alone(
        &self,
        barrier: &DeviceGridBarrier,
        shared: &SharedArgs<BarrierArgs>,
        rounds: u32,
        s: u32,
        blocks: u32,
    ) -> Result<()> {
        let (t, cfg, kind) = (self.first(), self.cfg, barrier_kind(self.primitive));
        let ((g, m, c, sl), (v, f)) = (shared.get(), self.counters()[0].get());
        // SAFETY: the states are fresh (the grid barrier's reset by the launch),
        // `count` zero, `slots` two banks of one word per thread; the launch is
        // synchronized below.
        unsafe {
            if self.primitive == Primitive::ClusterGridBarrier {
                let cfg = cfg.with_cluster(gpu::Dim3::x(CLUSTER_BLOCKS));
                gridsync::launch_grid_synced!(
                    t,
                    barrier,
                    gpu::checks::hopper::cluster_barrier_stress,
                    cfg,
                    LaunchMode::Plain,
                    (g, sl, rounds, s, v, f)
                )?
            } else {
                let l = barrier_record(kind, (g, m, c, sl), (v, f), (rounds, s), (0, blocks));
                gridsync::launch_grid_synced!(
                    t,
                    barrier,
                    k::barrier_stress,
                    cfg,
                    LaunchMode::Plain,
                    (l,)
                )?
            }
        };
        t.synchronize()
    }

    /// The run's result: the tally, and the violations and failures every device counted.
    fn report(&self, tally: Tally, began: Instant) -> Result<PrimitiveRun> {
        Ok(PrimitiveRun {
            primitive: self.primitive,
            name: self.primitive.name().to_string(),
            devices: self.gpus() as u32,
            uses: tally.uses,
            checks: tally.checks,
            violations: sum_words(self.targets, &self.violations)?,
            lost: tally.lost,
            failures: self.failures()?,
            seconds: began.elapsed().as_secs_f64(),
        })
    }
}

/// The locks of a lock run, every kind's state for each, and the payload they guard, in the
/// first device's memory.
struct LockStates {
    mutexes: Buffer<MutexState>,
    tickets: Buffer<TicketState>,
    words: Buffer<u32>,
    /// A stride per lock; its first word counts the increments made under the lock.
    payload: Buffer<u32>,
    /// Lines the kernel loads and stores between acquisitions.
    scratch: Buffer<u32>,
}

impl LockStates {
    /// Fresh, unlocked states for `shape.locks` locks, a zeroed payload and scratch.
    fn new(t: &Target, shape: PrimitiveShape, stress: super::Stress) -> Result<Self> {
        let n = shape.locks as usize;
        Ok(Self {
            mutexes: t.upload(&vec![MutexState::default(); n])?,
            tickets: t.upload(&vec![TicketState::default(); n])?,
            words: t.zeros::<u32>(n * SPIN_STRIDE)?,
            payload: t.zeros::<u32>(n * PAYLOAD_STRIDE)?,
            scratch: t.zeros::<u32>(stress.lines.max(1) as usize * 32)?,
        })
    }

    /// The lock kernel's view of the states: `count` locks of `kind`.
    fn args(&self, count: u32, kind: u32) -> StressLocks {
        StressLocks {
            mutexes: self.mutexes.ptr(),
            tickets: self.tickets.ptr(),
            words: self.words.ptr(),
            count,
            kind,
        }
    }
}

/// The barrier kernel's record for one grid: the barrier states and slots (`BarrierArgs`), the
/// device's counters, the rounds and seed, and this grid's first block among `total`.
fn barrier_record(
    kind: u32,
    (grid, multi, count, slots): BarrierArgs,
    (violations, failures): (*mut u64, *mut u32),
    (rounds, seed): (u32, u32),
    (first, total): (u32, u32),
) -> k::BarrierStressLaunch {
    k::BarrierStressLaunch {
        grid,
        multi,
        count,
        slots,
        violations,
        failures,
        kind,
        rounds,
        seed,
        polls: RELAXED_POLLS,
        first,
        total,
    }
}

/// The barrier kernel's shared arguments: the grid barrier, the multi-grid state, the
/// arrival count, the slots.
type BarrierArgs = (
    *mut GridBarrierState,
    *mut MultiGridBarrierState,
    *mut u32,
    *mut u32,
);

/// The states of a barrier run in the first device's memory, reset before each launch.
struct BarrierStates {
    multi: Buffer<MultiGridBarrierState>,
    count: Buffer<u32>,
    /// Two banks of one word per thread of every grid.
    slots: Buffer<u32>,
}

impl BarrierStates {
    /// A fresh multi-grid state for `blocks` blocks, a zero count, `all_threads` slot pairs.
    fn new(t: &Target, blocks: u32, all_threads: u64) -> Result<Self> {
        Ok(Self {
            multi: t.upload(&[MultiGridBarrierState::with_blocks(blocks)])?,
            count: t.zeros::<u32>(1)?,
            slots: t.zeros::<u32>(2 * all_threads as usize)?,
        })
    }

    /// Puts every state back as [`BarrierStates::new`] made it.
    fn reset(&self, t: &Target, blocks: u32) -> Result<()> {
        t.write(&self.multi, &[MultiGridBarrierState::with_blocks(blocks)])?;
        t.clear(&self.count)?;
        t.clear(&self.slots)
    }
}

/// The lock kernel's number for `primitive`'s lock.
fn lock_kind(primitive: Primitive) -> u32 {
    match primitive {
        Primitive::Mutex => LOCK_MUTEX,
        Primitive::MutexSystem => LOCK_MUTEX_SYSTEM,
        Primitive::Ticket => LOCK_TICKET,
        Primitive::SpinFenced => LOCK_SPIN_FENCED,
        _ => LOCK_SPIN_UNFENCED,
    }
}

/// The barrier kernel's number for `primitive`'s barrier.
fn barrier_kind(primitive: Primitive) -> u32 {
    match primitive {
        Primitive::GridBarrier => BARRIER_GRID,
        Primitive::MultiGridDevice => BARRIER_MULTI_DEVICE,
        Primitive::MultiGridSystem => BARRIER_MULTI_SYSTEM,
        _ => BARRIER_RELAXED,
    }
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
/// once ([`gridsync::multi::devices::at_once_on`]).
fn launch_all(
    targets: &[Target],
    launch: impl Fn(usize, &Target) -> Result<()> + Sync,
) -> Result<()> {
    match targets {
        [one] => {
            launch(0, one)?;
            one.synchronize()
        }
        _ => gridsync::multi::devices::at_once_on(targets, launch).map(|_ms| ()),
    }
}

/// Blocks per cluster of the cluster-aware barrier's run.
const CLUSTER_BLOCKS: u32 = 2;

/// Polls of the relaxed barrier before a thread gives up.
const RELAXED_POLLS: u32 = 1 << 22;
