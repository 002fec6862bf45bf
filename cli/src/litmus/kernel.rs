//! Runs the litmus kernel (`gpu/src/lessons/litmus/`): buffers sized once, then launches of
//! many rounds until a combination has been observed often enough or its time is up.

use super::catalogue::{Placement, Test, Variant};
use super::stress::Stress;
use gpu::LaunchConfig;
use gpu::grid::GridBarrierState;
use gpu::index::SIM_SMS;
use gpu::lessons::litmus::{
    self as k, ERR_BARRIER, ERR_SM_TABLE, ERR_SPIN_UP, ERR_VARIANT, LITMUS_BLOCK_THREADS,
    LITMUS_ERROR_WORDS, LITMUS_KEYS, LITMUS_MAX_THREADS, LITMUS_PROGRAM_WORDS, LITMUS_REG_SLOTS,
    LITMUS_SHARED_BYTES, LitmusLaunch,
};
use gpu::multi_grid::MultiGridBarrierState;
use gridsync::primitives::barrier::DeviceGridBarrier;
use gridsync::runtime::args::SharedArgs;
use gridsync::runtime::buffer::Buffer;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::grid::max_coresident_blocks;
use gridsync::runtime::launch::{LaunchMode, Target};
use gridsync::runtime::memory::{Footprint, check_fits};
use std::time::Instant;

/// Rounds of the first launch of a combination, which measures how many instances a round has.
const FIRST_ROUNDS: u32 = 8;
/// The most rounds in one launch (tens of milliseconds on an H100).
const MAX_ROUNDS: u32 = 2048;
/// Polls of the spin-up barrier before a tester gives up on it, on a GPU (milliseconds).
const GPU_SPIN_POLLS: u32 = 1 << 16;
/// The same on the simulator.
const SIM_SPIN_POLLS: u32 = 1 << 8;
/// Blocks per SM on the simulator (its SMs are [`SIM_SMS`]).
const SIM_BLOCKS_PER_SM: u32 = 2;

/// What one combination gave.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// Instances seen per outcome key.
    pub counts: Vec<u64>,
    /// Rounds run.
    pub rounds: u64,
    /// Spin-up barriers given up (the instance still ran, unsynchronized).
    pub spin_up_timeouts: u64,
    /// Blocks whose `%smid` was past the SM table (they stressed instead).
    pub blocks_off_table: u64,
}

/// The buffers and launch shape of the litmus kernel on one target — or, for
/// [`Placement::DifferentGpus`], on several at once ([`Runner::across`]).
pub struct Runner<'t> {
    /// One target, or the GPUs of the cross-GPU placement (the shared buffers on the first).
    targets: &'t [Target],
    cfg: LaunchConfig,
    sms: u32,
    test_blocks_per_sm: u32,
    slot_bits: u32,
    max_instances: u32,
    stress: Stress,
    locations: Buffer<u32>,
    start: Buffer<u32>,
    regs: Buffer<u32>,
    scratch: Buffer<u32>,
    sm_tickets: Buffer<u32>,
    /// Each target's own.
    program: Vec<Buffer<u32>>,
    counts: Vec<Buffer<u64>>,
    errors: Vec<Buffer<u32>>,
    /// One target: its grid barrier. Several: the barrier across their grids.
    rounds: RoundBarrier,
}

/// What ends the rounds.
enum RoundBarrier {
    Grid(DeviceGridBarrier),
    Multi(Buffer<MultiGridBarrierState>, u64),
}

impl<'t> Runner<'t> {
    /// Sizes the launch (every SM full of blocks of [`LITMUS_BLOCK_THREADS`]; of each SM's
    /// blocks `stress.stress_blocks` stress — by default a quarter — and the rest test) and
    /// allocates the buffers.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for parameters [`Stress::check`] refuses, or stress blocks that
    /// leave no block of an SM to test; [`Error::TooLarge`] if the buffers do not fit; a driver
    /// error.
    pub fn new(target: &'t Target, stress: Stress) -> Result<Runner<'t>> {
        Runner::build(std::slice::from_ref(target), stress)
    }

    /// The runner of [`Placement::DifferentGpus`]: one grid per target, all at once, sized as
    /// [`Runner::new`] sizes one (by the smallest GPU), the locations in the first target's
    /// memory mapped into the others.
    ///
    /// # Errors
    /// As [`Runner::new`]; [`Error::InvalidInput`] for fewer than two targets;
    /// [`Error::Unsupported`] for GPUs without peer access.
    pub fn across(targets: &'t [Target], stress: Stress) -> Result<Runner<'t>> {
        if targets.len() < 2 {
            return Err(Error::InvalidInput(format!(
                "the placement across GPUs needs two or more devices, not {}",
                targets.len()
            )));
        }
        gridsync::multi::devices::enable_peer_access_on(targets)?;
        Runner::build(targets, stress)
    }

    fn build(targets: &'t [Target], stress: Stress) -> Result<Runner<'t>> {
        stress.check()?;
        let mut shape: Option<(u32, u32)> = None;
        for target in targets {
            let (sms, per_sm) = match target {
                Target::Sim => (SIM_SMS, SIM_BLOCKS_PER_SM),
                Target::Gpu(gpu) => {
                    let sms = gpu.info().sm_count;
                    let all = max_coresident_blocks(
                        gpu,
                        gpu::Kernel::LitmusRun.name(),
                        LITMUS_BLOCK_THREADS,
                        LITMUS_SHARED_BYTES,
                    )?;
                    (sms, (all / sms.max(1)).max(1))
                }
            };
            shape = Some(match shape {
                None => (sms, per_sm),
                Some((a, b)) => (a.min(sms), b.min(per_sm)),
            });
        }
        let (sms, per_sm) = shape.ok_or_else(|| Error::InvalidInput("no device".into()))?;
        let test_blocks_per_sm = match stress.stress_blocks {
            None if per_sm <= LITMUS_MAX_THREADS => per_sm,
            None => (per_sm * 3 / 4).max(LITMUS_MAX_THREADS),
            Some(n) if n < per_sm => per_sm - n,
            Some(n) => {
                return Err(Error::InvalidInput(format!(
                    "--stress-blocks {n} leaves no block to test: {} holds {per_sm} blocks of \
                     the litmus kernel per SM, so at most {} may stress",
                    targets[0].describe(),
                    per_sm - 1
                )));
            }
        };
        let max_instances = sms * test_blocks_per_sm * LITMUS_BLOCK_THREADS;
        let slot_bits = (2 * u64::from(max_instances))
            .next_power_of_two()
            .trailing_zeros();
        let slots = 1u64 << slot_bits;
        let location_words = slots * u64::from(stress.stride_words);
        let gpus = targets.len() as u32;
        let words = location_words
            + u64::from(max_instances) * (1 + u64::from(LITMUS_REG_SLOTS))
            + u64::from(stress.lines) * 32
            + u64::from(gpus * sms);
        let home = &targets[0];
        check_fits(
            home,
            "the litmus buffers",
            Footprint::per_element(words, 4, 4),
        )?;
        let cfg = LaunchConfig::linear(sms * per_sm, LITMUS_BLOCK_THREADS)
            .with_shared_bytes(LITMUS_SHARED_BYTES);
        let rounds = if gpus > 1 {
            for t in targets {
                gridsync::runtime::grid::check_coresident(t, gpu::Kernel::LitmusRun.name(), &cfg)?;
            }
            let timeout_ns = match home {
                Target::Sim => SIM_MULTI_TIMEOUT_NS,
                // Stretched under a sanitizer, as every bound the host hands a kernel.
                Target::Gpu(_) => {
                    gridsync::runtime::wait::wait_bound(gpu::grid::DEFAULT_TIMEOUT_NS)
                }
            };
            RoundBarrier::Multi(
                home.upload(&[MultiGridBarrierState::new(1, timeout_ns)])?,
                timeout_ns,
            )
        } else {
            RoundBarrier::Grid(super::round_barrier(home)?)
        };
        Ok(Runner {
            targets,
            cfg,
            sms,
            test_blocks_per_sm,
            slot_bits,
            max_instances,
            stress,
            locations: home.zeros(location_words as usize)?,
            start: home.zeros(max_instances as usize)?,
            regs: home.zeros((max_instances * LITMUS_REG_SLOTS) as usize)?,
            scratch: home.zeros((stress.lines * 32) as usize)?,
            sm_tickets: home.zeros((gpus * sms) as usize)?,
            program: targets
                .iter()
                .map(|t| t.zeros(LITMUS_PROGRAM_WORDS as usize))
                .collect::<Result<_>>()?,
            counts: targets
                .iter()
                .map(|t| t.zeros(LITMUS_KEYS as usize))
                .collect::<Result<_>>()?,
            errors: targets
                .iter()
                .map(|t| t.zeros(LITMUS_ERROR_WORDS as usize))
                .collect::<Result<_>>()?,
            rounds,
        })
    }

    /// Blocks of the launch (of each grid, across GPUs).
    pub fn blocks(&self) -> u32 {
        self.cfg.grid.count() as u32
    }

    /// Grids (GPUs) that run each launch together.
    pub fn gpus(&self) -> u32 {
        self.targets.len() as u32
    }

    /// Blocks per SM that test.
    pub fn test_blocks_per_sm(&self) -> u32 {
        self.test_blocks_per_sm
    }

    /// Blocks on each SM (those that test and those that stress).
    pub fn blocks_per_sm(&self) -> u32 {
        self.blocks() / self.sms.max(1)
    }

    /// The stressing parameters it runs with.
    pub fn stress(&self) -> Stress {
        self.stress
    }

    /// Runs `test` with `variant` at `placement` until at least `instances` instances have been
    /// observed, or `deadline` has passed (after at least one launch; each later launch is
    /// sized to end about when the deadline does). `seed` seeds the
    /// permutations; every launch derives its own from it.
    ///
    /// # Errors
    /// [`Error::BarrierTimeout`] if a grid barrier gave up (the counts would be wrong);
    /// [`Error::InvalidInput`] for [`Placement::DifferentGpus`] on a runner of one target, or
    /// another placement on one of several; a driver error.
    pub fn run(
        &self,
        test: Test,
        variant: Variant,
        placement: Placement,
        instances: u64,
        deadline: Instant,
        seed: u64,
    ) -> Result<Observed> {
        if (placement == Placement::DifferentGpus) != (self.targets.len() > 1) {
            return Err(Error::InvalidInput(format!(
                "placement {} on a litmus runner of {} device(s): the placement across GPUs \
                 runs on Runner::across, the others on Runner::new",
                placement.name(),
                self.targets.len()
            )));
        }
        let table = test.table();
        for (d, t) in self.targets.iter().enumerate() {
            t.write(&self.program[d], &table)?;
            t.clear(&self.counts[d])?;
            t.clear(&self.errors[d])?;
        }
        let mut rounds = 0u64;
        let mut launch = 0u64;
        // A guess of a round's instances (a quarter of the room) sizes the first launch.
        let guess = u64::from(self.max_instances / 4).max(1);
        let mut next = instances.div_ceil(guess).clamp(1, u64::from(FIRST_ROUNDS)) as u32;
        let started = Instant::now();
        loop {
            let launch_seed = gridsync::inputs::splitmix64(
                seed ^ (launch << 40)
                    ^ ((test as u64) << 32)
                    ^ (u64::from(variant.code()) << 8)
                    ^ u64::from(placement.code()),
            ) as u32;
            let launched = self.launch(variant, placement, next, launch_seed);
            let checked = launched.and_then(|()| self.check_rounds());
            checked.inspect_err(|_| {
                // A round cut short leaves locations and counters dirty.
                let home = &self.targets[0];
                let _ = home.clear(&self.locations);
                let _ = home.clear(&self.start);
            })?;
            rounds += u64::from(next);
            launch += 1;
            let seen = self.counted()?.iter().sum::<u64>();
            if seen >= instances || Instant::now() >= deadline || seen == 0 {
                break;
            }
            let per_round = seen.div_ceil(rounds).max(1);
            // As many rounds as the instances still wanted, and as fit before the deadline at
            // the rounds' pace so far (a launch is not cut short, so it must not be too long).
            let pace = started.elapsed().as_secs_f64() / rounds as f64;
            let in_time = (deadline
                .saturating_duration_since(Instant::now())
                .as_secs_f64()
                / pace.max(f64::MIN_POSITIVE))
            .ceil() as u64;
            next = (instances - seen)
                .div_ceil(per_round)
                .min(in_time)
                .clamp(1, u64::from(MAX_ROUNDS)) as u32;
        }
        let mut errors = [0u64; LITMUS_ERROR_WORDS as usize];
        for (t, e) in self.targets.iter().zip(&self.errors) {
            for (sum, v) in errors.iter_mut().zip(t.download(e)?) {
                *sum += u64::from(v);
            }
        }
        if errors[ERR_VARIANT] != 0 {
            return Err(Error::InvalidInput(format!(
                "the litmus kernel refused variant {}, placement {} or the stress parameters \
                 {:?}",
                variant.code(),
                placement.code(),
                self.stress
            )));
        }
        if errors[ERR_BARRIER] != 0 {
            return Err(Error::BarrierTimeout {
                blocks: errors[ERR_BARRIER].min(u64::from(u32::MAX)) as u32,
            });
        }
        Ok(Observed {
            counts: self.counted()?,
            rounds,
            spin_up_timeouts: errors[ERR_SPIN_UP],
            blocks_off_table: errors[ERR_SM_TABLE],
        })
    }

    /// The outcome counts of every target, added up.
    fn counted(&self) -> Result<Vec<u64>> {
        let mut sum = vec![0u64; LITMUS_KEYS as usize];
        for (t, c) in self.targets.iter().zip(&self.counts) {
            for (s, v) in sum.iter_mut().zip(t.download(c)?) {
                *s += v;
            }
        }
        Ok(sum)
    }

    /// Waits for the launch; an error if the rounds' barrier gave up.
    fn check_rounds(&self) -> Result<()> {
        match &self.rounds {
            RoundBarrier::Grid(b) => {
                let t = &self.targets[0];
                t.synchronize()?;
                b.check(t)
            }
            // `at_once_on` has waited for every grid.
            RoundBarrier::Multi(state, _) => match self.targets[0].download(state)?[0].timeouts {
                0 => Ok(()),
                blocks => Err(Error::BarrierTimeout { blocks }),
            },
        }
    }

    /// One launch of `rounds` rounds (one grid per target).
    fn launch(&self, variant: Variant, placement: Placement, rounds: u32, seed: u32) -> Result<()> {
        let home = &self.targets[0];
        home.clear(&self.sm_tickets)?;
        let gpus = self.gpus();
        let launch_of = |d: usize, multi| LitmusLaunch {
            program: self.program[d].ptr(),
            locations: self.locations.ptr(),
            start: self.start.ptr(),
            regs: self.regs.ptr(),
            scratch: self.scratch.ptr(),
            sm_tickets: self.sm_tickets.ptr(),
            counts: self.counts[d].ptr(),
            errors: self.errors[d].ptr(),
            variant: variant.code(),
            placement: placement.code(),
            iterations: rounds,
            seed,
            sms: self.sms,
            test_blocks_per_sm: self.test_blocks_per_sm,
            slot_bits: self.slot_bits,
            stride_words: self.stress.stride_words,
            stress_iters: self.stress.iters,
            stress_lines: self.stress.lines,
            stress_pattern: self.stress.pattern.code(),
            pre_stress_iters: self.stress.pre_iters,
            sm_order: self.stress.sm_order.code(),
            spin_up: u32::from(self.stress.spin_up),
            max_instances: self.max_instances,
            spin_polls: match home {
                Target::Gpu(_) => GPU_SPIN_POLLS,
                // The simulator's threads start far apart anyway; long spins only cost time.
                Target::Sim => SIM_SPIN_POLLS,
            },
            gpu: d as u32,
            gpus,
            multi,
        };
        let cfg = self.cfg;
        match &self.rounds {
            RoundBarrier::Grid(bar) => {
                let (l, state) = (launch_of(0, std::ptr::null_mut()), bar.ptr());
                // SAFETY: every pointer in `l` is a buffer of this runner sized as
                // `LitmusLaunch` asks (locations and counters zero, as every launch leaves
                // them); `state` is the barrier's; the buffers outlive the launch, which `run`
                // synchronizes.
                unsafe {
                    gridsync::launch_grid_synced!(
                        home,
                        bar,
                        k::litmus_run,
                        cfg,
                        LaunchMode::Plain,
                        (l, state)
                    )
                }
            }
            RoundBarrier::Multi(state, timeout_ns) => {
                let blocks = self.blocks() * gpus;
                home.write(state, &[MultiGridBarrierState::new(blocks, *timeout_ns)])?;
                let args: Vec<SharedArgs<(LitmusLaunch,)>> = (0..self.targets.len())
                    .map(|d| SharedArgs((launch_of(d, state.ptr()),)))
                    .collect();
                gridsync::multi::devices::at_once_on(self.targets, |d, t| {
                    let (l,) = args[d].get();
                    let no_grid: *mut GridBarrierState = std::ptr::null_mut();
                    // SAFETY: as above, with the shared buffers in the first target's memory,
                    // which every target maps (`Runner::across`); the barrier across the
                    // grids is reset, each grid's blocks fit at once (checked), and
                    // `at_once_on` launches every grid before it waits for any.
                    unsafe { gridsync::launch_cooperative!(t, k::litmus_run, cfg, (l, no_grid)) }
                })
                .map(|_ms| ())
            }
        }
    }
}

/// How long a simulated block waits at the barrier across simulated GPUs (they run one
/// launch each on host threads of their own, slowly).
const SIM_MULTI_TIMEOUT_NS: u64 = 20_000_000_000;
