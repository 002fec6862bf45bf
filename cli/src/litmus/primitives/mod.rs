//! gridsync's locks and barriers under litmus-style stress (`gpu/src/checks/sync_stress.rs`):
//! each guards plain memory checked on every use, on the GPU or on the simulator (its weak
//! memory inside `gpu::sim::weak::scoped`); beside them, a variant of each with its ordering
//! removed, which the same checks must catch.

mod run;

pub use run::{run, run_on};

use super::Stress;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A primitive under stress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Primitive {
    /// `Mutex<DeviceScope>`, warp cohorts.
    Mutex,
    /// `Mutex<SystemScope>`.
    MutexSystem,
    /// `TicketLock`.
    Ticket,
    /// The Numba tutorial's spin lock, `threadfence` on both sides.
    SpinFenced,
    /// The same without its fences (broken).
    SpinUnfenced,
    /// `GridBarrier`.
    GridBarrier,
    /// `MultiGridBarrier` at device scope, one grid.
    MultiGridDevice,
    /// `MultiGridBarrier` at system scope, one grid.
    MultiGridSystem,
    /// `ClusterGridBarrier` (sm_90; clusters of 2; not on the weak memory, which has no
    /// clusters).
    ClusterGridBarrier,
    /// A counting barrier with relaxed arrivals and polls and no fence (broken).
    RelaxedBarrier,
}

impl Primitive {
    /// Every primitive, the broken ones after the correct ones of their kind.
    pub const ALL: [Primitive; 10] = [
        Primitive::Mutex,
        Primitive::MutexSystem,
        Primitive::Ticket,
        Primitive::SpinFenced,
        Primitive::SpinUnfenced,
        Primitive::GridBarrier,
        Primitive::MultiGridDevice,
        Primitive::MultiGridSystem,
        Primitive::ClusterGridBarrier,
        Primitive::RelaxedBarrier,
    ];

    /// Its name in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Primitive::Mutex => "Mutex<DeviceScope>",
            Primitive::MutexSystem => "Mutex<SystemScope>",
            Primitive::Ticket => "TicketLock",
            Primitive::SpinFenced => "spin lock + threadfence",
            Primitive::SpinUnfenced => "spin lock, no fence (broken)",
            Primitive::GridBarrier => "GridBarrier",
            Primitive::MultiGridDevice => "MultiGridBarrier (device)",
            Primitive::MultiGridSystem => "MultiGridBarrier (system)",
            Primitive::ClusterGridBarrier => "ClusterGridBarrier (clusters of 2)",
            Primitive::RelaxedBarrier => "relaxed barrier, no fence (broken)",
        }
    }

    /// The primitives that also run across GPUs ([`run_on`] several devices: one grid per GPU,
    /// the state in the first one's memory): the system-scope ones, which must hold there; the
    /// device-scope ones, whose scope is too narrow for two GPUs (the model promises nothing:
    /// what they do is measured); and the broken ones.
    pub const ACROSS_GPUS: [Primitive; 6] = [
        Primitive::MutexSystem,
        Primitive::Mutex,
        Primitive::SpinUnfenced,
        Primitive::MultiGridSystem,
        Primitive::MultiGridDevice,
        Primitive::RelaxedBarrier,
    ];

    /// Whether its scope holds every thread of grids on `devices` GPUs: system scope always,
    /// the others on one GPU only.
    pub const fn covers(self, devices: u32) -> bool {
        devices <= 1 || matches!(self, Primitive::MutexSystem | Primitive::MultiGridSystem)
    }

    /// Whether every check must pass on `devices` GPUs: a correct primitive whose scope covers
    /// them.
    pub const fn must_hold(self, devices: u32) -> bool {
        !self.broken() && self.covers(devices)
    }

    /// Whether it is a lock (else a barrier).
    pub const fn is_lock(self) -> bool {
        !matches!(
            self,
            Primitive::GridBarrier
                | Primitive::MultiGridDevice
                | Primitive::MultiGridSystem
                | Primitive::ClusterGridBarrier
                | Primitive::RelaxedBarrier
        )
    }

    /// Whether it runs on `target` (with the weak memory if `weak`): the cluster-aware barrier
    /// needs sm_90 and a memory with clusters.
    pub fn runs_on(self, target: &Target, weak: bool) -> bool {
        self != Primitive::ClusterGridBarrier
            || (target.has_kernel(gpu::Kernel::ClusterBarrierStress) && !(target.is_sim() && weak))
    }

    /// Whether it is the variant with its ordering removed, which the checks must catch.
    pub const fn broken(self) -> bool {
        matches!(self, Primitive::SpinUnfenced | Primitive::RelaxedBarrier)
    }
}

/// The shape of a stress run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrimitiveShape {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Locks the threads choose among.
    pub locks: u32,
}

impl PrimitiveShape {
    /// On a GPU two blocks of 128 per SM and 4096 locks; on the simulator 2 blocks of 8 and 4
    /// locks (the weak memory runs one thread at a time).
    pub fn for_target(target: &Target) -> PrimitiveShape {
        match target {
            Target::Sim => PrimitiveShape {
                blocks: 2,
                threads: 8,
                locks: 4,
            },
            Target::Gpu(g) => PrimitiveShape {
                blocks: 2 * g.info().sm_count,
                threads: 128,
                locks: 4096,
            },
        }
    }
}

/// What one primitive's stress run gave.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrimitiveRun {
    /// The primitive.
    pub primitive: Primitive,
    /// Its name.
    pub name: String,
    /// GPUs it ran on at once (one grid each).
    #[serde(default = "one")]
    pub devices: u32,
    /// Acquisitions (locks) or barrier rounds (barriers).
    pub uses: u64,
    /// Payload checks made (critical sections, or slots read after a barrier).
    pub checks: u64,
    /// Checks that saw the wrong value.
    pub violations: u64,
    /// Locks: acquisitions the final payload count is short of (updates lost).
    pub lost: u64,
    /// Waits that gave up (a bounded primitive's timeout), ending the launch.
    pub failures: u64,
    /// Seconds.
    pub seconds: f64,
}

/// One device: what reports written before the runs across GPUs meant.
fn one() -> u32 {
    1
}

impl PrimitiveRun {
    /// No violation, no update lost, no wait given up.
    pub fn clean(&self) -> bool {
        self.violations == 0 && self.lost == 0 && self.failures == 0
    }

    /// Clean where it must be ([`Primitive::must_hold`] on its devices).
    pub fn passed(&self) -> bool {
        !self.primitive.must_hold(self.devices) || self.clean()
    }
}

/// How long a stress run is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Amount {
    /// Acquisitions (locks) or rounds (barriers) in all.
    pub uses: u64,
    /// The most acquisitions per thread, or rounds, in one launch.
    pub per_launch: u32,
    /// The lock kernel's stress between acquisitions (`iters` loads and stores over `lines`).
    pub stress: Stress,
    /// Seeds the lock choices and the slots read.
    pub seed: u64,
}

/// What [`run_all`] runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrimitiveOptions {
    /// The primitives, in order.
    pub primitives: Vec<Primitive>,
    /// Acquisitions of each lock kind in all (over all its locks and threads).
    pub acquisitions: u64,
    /// Rounds per barrier.
    pub rounds: u64,
    /// A bound on the whole run, shared among the primitives.
    pub seconds: f64,
    /// Seeds the choices (and the weak memory's, on the simulator with `weak`).
    pub seed: u64,
    /// On the simulator: run on the weak memory.
    pub weak: bool,
    /// The locks' stress between acquisitions.
    pub stress: Stress,
}

impl PrimitiveOptions {
    /// Every primitive; on a GPU 10⁸ acquisitions per lock and 10⁷ rounds per barrier within
    /// ten minutes, on the simulator 320 and 30 on its weak memory.
    pub fn for_target(target: &Target) -> PrimitiveOptions {
        let sim = target.is_sim();
        PrimitiveOptions {
            primitives: Primitive::ALL.to_vec(),
            acquisitions: if sim { 320 } else { 100_000_000 },
            rounds: if sim { 30 } else { 10_000_000 },
            seconds: if sim { 60.0 } else { 600.0 },
            seed: super::DEFAULT_SEED,
            weak: sim,
            stress: Stress {
                iters: if sim { 2 } else { 8 },
                lines: if sim { 4 } else { 64 },
                ..Stress::LEGACY
            },
        }
    }
}

/// Every primitive's run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrimitivesReport {
    /// Where it ran.
    pub target: String,
    /// `gpu`, `sc` or `weak`.
    pub memory: String,
    /// What ran.
    pub options: PrimitiveOptions,
    /// The locks' launch shape.
    pub lock_shape: PrimitiveShape,
    /// The barriers' launch shape.
    pub barrier_shape: PrimitiveShape,
    /// Each primitive's run (those that do not run on the target are left out: the
    /// cluster-aware barrier before sm_90 and on the weak memory).
    pub runs: Vec<PrimitiveRun>,
}

impl PrimitivesReport {
    /// Every correct primitive ran clean wherever its scope covered the threads.
    pub fn passed(&self) -> bool {
        self.runs.iter().all(PrimitiveRun::passed)
    }
}

/// Runs every primitive of `opts` on `target`, calling `progress` after each.
///
/// # Errors
/// [`Error::InvalidInput`] for no primitive, zero uses or a bad time bound; as [`run`].
pub fn run_all(
    target: &Target,
    opts: &PrimitiveOptions,
    progress: impl FnMut(&PrimitiveRun),
) -> Result<PrimitivesReport> {
    run_all_on(std::slice::from_ref(target), opts, progress)
}

/// [`run_all`] on the first of `targets`, then — with two or more — each primitive of `opts`
/// that is one of [`Primitive::ACROSS_GPUS`] again with a grid on every device at once.
///
/// # Errors
/// As [`run_all`]; as [`run_on`] across the devices.
pub fn run_all_on(
    targets: &[Target],
    opts: &PrimitiveOptions,
    mut progress: impl FnMut(&PrimitiveRun),
) -> Result<PrimitivesReport> {
    let Some(target) = targets.first() else {
        return Err(Error::InvalidInput("--primitives needs a device".into()));
    };
    if opts.primitives.is_empty() || opts.acquisitions == 0 || opts.rounds == 0 {
        return Err(Error::InvalidInput(
            "--primitives needs at least one primitive, acquisitions and rounds".into(),
        ));
    }
    super::check_seconds(opts.seconds)?;
    let lock_shape = PrimitiveShape::for_target(target);
    // Barriers: one block of 128 per SM on a GPU (every block must be resident), 4 × 4 on the
    // simulator.
    let barrier_shape = match target {
        Target::Sim => PrimitiveShape {
            blocks: 4,
            threads: 4,
            locks: 1,
        },
        Target::Gpu(g) => PrimitiveShape {
            blocks: g.info().sm_count,
            threads: 128,
            locks: 1,
        },
    };
    // (primitive, devices): every primitive on the first device, then those that span devices
    // on all of them.
    let mut plan: Vec<(Primitive, &[Target])> = opts
        .primitives
        .iter()
        .filter(|p| p.runs_on(target, opts.weak))
        .map(|&p| (p, std::slice::from_ref(target)))
        .collect();
    if targets.len() > 1 {
        plan.extend(
            opts.primitives
                .iter()
                .filter(|p| Primitive::ACROSS_GPUS.contains(p))
                .map(|&p| (p, targets)),
        );
    }
    let start = Instant::now();
    let n = plan.len();
    let mut runs = Vec::with_capacity(n);
    for (i, (p, on)) in plan.into_iter().enumerate() {
        let deadline =
            start + std::time::Duration::from_secs_f64(opts.seconds * (i + 1) as f64 / n as f64);
        let (shape, uses, per_launch) = if p.is_lock() {
            (
                lock_shape,
                opts.acquisitions,
                if target.is_sim() { 20 } else { 256 },
            )
        } else {
            (
                barrier_shape,
                opts.rounds,
                if target.is_sim() { 30 } else { 200_000 },
            )
        };
        let amount = Amount {
            uses,
            per_launch,
            stress: opts.stress,
            seed: opts.seed ^ i as u64,
        };
        let one = || run_on(on, p, shape, amount, deadline);
        let r = if target.is_sim() && opts.weak {
            gpu::sim::weak::scoped(opts.seed ^ i as u64, one).0?
        } else {
            one()?
        };
        progress(&r);
        runs.push(r);
    }
    Ok(PrimitivesReport {
        target: super::describe_targets(targets),
        memory: super::memory_name(target, opts.weak),
        options: opts.clone(),
        lock_shape,
        barrier_shape,
        runs,
    })
}
