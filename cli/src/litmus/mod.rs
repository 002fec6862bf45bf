//! Litmus tests: the memory model tested on the GPU under stress, and on the simulator's weak
//! memory — every outcome of small racing programs counted and judged against the PTX model.
//!
//! Each test (MP, SB, LB, CoRR, CoWW, S, R, 2+2W, WRC, IRIW) runs in each variant (plain,
//! volatile, relaxed, release/acquire, `fence.acq_rel` and `fence.sc` at three scopes) and each
//! placement of its threads (one warp, one block, one SM, different SMs, different GPUs —
//! [`run_on`] a set of GPUs). An outcome no
//! interleaving gives is *weak*; where the model forbids it for that variant and placement, it
//! is *forbidden*, and seeing one is either a bug in the test or a finding about the hardware:
//! the report's [`LitmusReport::passed`] is then false and the CLI exits non-zero. So it is
//! when a combination ran fewer than a tenth of the instances asked for ([`COVERAGE_FLOOR`]):
//! a check that looked too little did not pass ([`RunVerdict::TooFewInstances`]).
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! use gridsync::Target;
//! use gridsync_cli::litmus::{LitmusOptions, Test, Variant, run};
//! let target = Target::open(0, false)?;
//! let opts = LitmusOptions {
//!     tests: vec![Test::MP],
//!     variants: vec![Variant::Relaxed, Variant::ReleaseAcquire],
//!     ..LitmusOptions::for_target(&target)
//! };
//! let report = run(&target, &opts, |_| {})?;
//! assert!(report.passed());
//! for r in &report.results {
//!     println!("{} {}: {} weak in {}", r.name, r.variant.name(), r.weak, r.instances);
//! }
//! # Ok(()) }
//! ```
//!
//! Device code: `gpu/src/lessons/litmus/`; the weak memory: `gpu/src/sim/weak/`.

pub mod catalogue;
mod coverage;
mod kernel;
pub mod model;
pub mod outcome;
mod plot;
pub mod primitives;
mod stress;
pub mod tune;
mod variant;

pub use catalogue::{Placement, Test, Variant, Verdict};
pub use coverage::{COVERAGE_FLOOR, RunVerdict, Shortfall, coverage_floor};
pub use kernel::{Observed, Runner};
pub use outcome::{OutcomeCount, WeakSeen};
pub use stress::{
    MAX_STRESS_ITERS, MAX_STRESS_LINES, MAX_STRIDE_WORDS, SmOrder, Stress, StressPattern,
};

use gpu::sim::weak::Mode;
use gridsync::primitives::barrier::DeviceGridBarrier;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Instances per test, variant and placement on a GPU, by default.
pub const GPU_ITERATIONS: u64 = 10_000_000;
/// Seeded runs per test and variant on the simulator, by default.
pub const SIM_ITERATIONS: u64 = 100_000;
/// The most instances or runs one combination may be asked for.
pub const MAX_ITERATIONS: u64 = 1 << 40;
/// The most seconds a whole run may be given: a day.
pub const MAX_SECONDS: f64 = 86_400.0;
/// The seed when none is given.
pub const DEFAULT_SEED: u64 = 0x6c69_746d_7573;

/// What [`run`] runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LitmusOptions {
    /// The tests.
    pub tests: Vec<Test>,
    /// The variants of each.
    pub variants: Vec<Variant>,
    /// The placements (GPU only; the simulator has none).
    pub placements: Vec<Placement>,
    /// Instances (GPU) or seeded runs (simulator) per combination.
    pub iterations: u64,
    /// A bound on the whole run: each combination gets its share, and stops early if past it.
    pub seconds: f64,
    /// Seeds every permutation (GPU) and every run (simulator).
    pub seed: u64,
    /// On the simulator: the weak memory (`gpu::sim::weak`) instead of the sequentially
    /// consistent one.
    pub weak: bool,
    /// The stressing parameters of the kernel: placement, locations, stress (GPU, and the
    /// kernel on the simulator; the simulator's programs have none).
    pub stress: Stress,
}

impl LitmusOptions {
    /// Everything on one device: every test, variant and placement within one GPU,
    /// [`GPU_ITERATIONS`] on a GPU within ten minutes, [`SIM_ITERATIONS`] seeded runs on the
    /// simulator within one (its sequentially consistent memory; set `weak` for the weak one).
    /// Add [`Placement::DifferentGpus`] to run across the GPUs given to [`run_on`].
    pub fn for_target(target: &Target) -> LitmusOptions {
        let sim = target.is_sim();
        LitmusOptions {
            tests: Test::ALL.to_vec(),
            variants: Variant::ALL.to_vec(),
            placements: Placement::ONE_GPU.to_vec(),
            iterations: if sim { SIM_ITERATIONS } else { GPU_ITERATIONS },
            seconds: if sim { 60.0 } else { 600.0 },
            seed: DEFAULT_SEED,
            weak: false,
            stress: Stress::default(),
        }
    }
}

/// One test × variant × placement.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LitmusResult {
    /// The test.
    pub test: Test,
    /// Its name (`MP`, `2+2W`, …).
    pub name: String,
    /// The variant.
    pub variant: Variant,
    /// The placement (`None` on the simulator, and for one-thread tests).
    pub placement: Option<Placement>,
    /// Instances (GPU) or runs (simulator) observed.
    pub instances: u64,
    /// Every outcome seen, most frequent first.
    pub outcomes: Vec<OutcomeCount>,
    /// How often the test's weak outcome was seen.
    pub weak: u64,
    /// `weak / instances`: the rate per instance.
    pub weak_rate: f64,
    /// `weak / seconds`: the rate per second of the combination's wall-clock time (launches,
    /// copies and counting included).
    #[serde(default)]
    pub weak_per_second: f64,
    /// Whether the model forbids the weak outcome here.
    pub weak_forbidden: bool,
    /// Forbidden outcomes seen (which must be 0).
    pub forbidden: u64,
    /// The simulator's first run that gave the weak outcome: `--replay` shows it step by step.
    pub first_weak_run: Option<u64>,
    /// Spin-up barriers given up on the GPU (the instance ran without it).
    pub spin_up_timeouts: u64,
    /// Rounds of the litmus kernel (0 on the simulator).
    pub rounds: u64,
    /// Blocks whose `%smid` was past the SM table, and so only stressed (GPU; expected 0).
    pub blocks_off_table: u64,
    /// Seconds it took.
    pub seconds: f64,
}

/// The whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LitmusReport {
    /// Where it ran.
    pub target: String,
    /// Which memory: `gpu`, `sc` (the simulator's default) or `weak`.
    pub memory: String,
    /// What ran.
    pub options: LitmusOptions,
    /// Blocks per launch and how many per SM test (GPU).
    pub blocks: Option<(u32, u32)>,
    /// Every combination, in order.
    pub results: Vec<LitmusResult>,
    /// Forbidden outcomes seen in all.
    pub forbidden: u64,
    /// Combinations that fell short of the iterations asked for (time ran out first).
    pub short: usize,
    /// The instances every combination had to run: [`coverage_floor`] of the iterations.
    #[serde(default)]
    pub coverage_floor: u64,
    /// The combinations that ran fewer than `coverage_floor` instances (in order).
    #[serde(default)]
    pub fell_short: Vec<Shortfall>,
    /// The run's verdict: passed, a forbidden outcome seen, or too few instances.
    #[serde(default = "passed_verdict")]
    pub verdict: RunVerdict,
    /// Seconds in all.
    pub seconds: f64,
}

/// The verdict of a report saved before reports had one (read back by `--report`); it is judged
/// again from the counts ([`LitmusReport::judge`]).
fn passed_verdict() -> RunVerdict {
    RunVerdict::Passed
}

impl LitmusReport {
    /// No forbidden outcome was seen, and every combination ran at least the
    /// [`coverage_floor`] of the instances asked for.
    pub fn passed(&self) -> bool {
        self.verdict == RunVerdict::Passed
    }

    /// Judges the report again from its results: the coverage floor, the combinations that fell
    /// below it, the verdict (for a report read back from a file, which may predate them).
    pub fn judge(&mut self) {
        self.coverage_floor = coverage_floor(self.options.iterations);
        self.fell_short = self
            .results
            .iter()
            .filter_map(|r| Shortfall::of(r, self.coverage_floor))
            .collect();
        self.forbidden = self.results.iter().map(|r| r.forbidden).sum();
        self.verdict = RunVerdict::of(self.forbidden, &self.fell_short);
    }
}

/// Checks the options before anything runs.
fn check(opts: &LitmusOptions) -> Result<()> {
    if opts.tests.is_empty() || opts.variants.is_empty() || opts.placements.is_empty() {
        return Err(Error::InvalidInput(
            "litmus needs at least one test, one variant and one placement".into(),
        ));
    }
    if !(1..=MAX_ITERATIONS).contains(&opts.iterations) {
        return Err(Error::InvalidInput(format!(
            "--iterations must be 1 to {MAX_ITERATIONS}, not {}",
            opts.iterations
        )));
    }
    check_seconds(opts.seconds)
}

/// Refuses a time bound that is not above 0 and at most [`MAX_SECONDS`].
fn check_seconds(seconds: f64) -> Result<()> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_SECONDS {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "--seconds must be above 0 and at most {MAX_SECONDS}, not {seconds}"
        )))
    }
}

/// Which memory a run on `target` has: `gpu`, or the simulator's `sc` or `weak` one.
fn memory_name(target: &Target, weak: bool) -> String {
    match (target.is_sim(), weak) {
        (false, _) => "gpu",
        (true, false) => "sc",
        (true, true) => "weak",
    }
    .to_string()
}

/// The devices a report ran on, joined with " + ".
fn describe_targets(targets: &[Target]) -> String {
    let names: Vec<String> = targets.iter().map(Target::describe).collect();
    names.join(" + ")
}

/// How long a simulated block waits at a grid barrier of the litmus and stress kernels before
/// giving up: the simulator's threads take far longer per round than a GPU's, and on its weak
/// memory run one at a time.
const SIM_BARRIER_TIMEOUT: Duration = Duration::from_secs(10);

/// The grid barrier of the litmus and stress kernels' rounds: the GPU's default bound, or
/// [`SIM_BARRIER_TIMEOUT`] on the simulator.
fn round_barrier(target: &Target) -> Result<DeviceGridBarrier> {
    match target {
        Target::Sim => DeviceGridBarrier::with_timeout(target, SIM_BARRIER_TIMEOUT),
        Target::Gpu(_) => DeviceGridBarrier::new(target),
    }
}

/// Runs every combination of `opts` on `target` — the litmus kernel on a GPU, the tests'
/// programs on the simulator's memory — calling `progress` after each.
///
/// # Errors
/// [`Error::InvalidInput`] for options out of range, or [`Placement::DifferentGpus`] (which
/// needs [`run_on`] several GPUs); on a GPU, as the kernel's runner (buffers that do not fit,
/// a grid barrier that gave up, a driver error).
pub fn run(
    target: &Target,
    opts: &LitmusOptions,
    progress: impl FnMut(&LitmusResult),
) -> Result<LitmusReport> {
    run_on(std::slice::from_ref(target), opts, progress)
}

/// [`run`] on several devices: the placements within one GPU on the first,
/// [`Placement::DifferentGpus`] on all of them at once (two or more GPUs with peer access). On
/// the simulator the placements do not apply and only the first target is used.
///
/// # Errors
/// As [`run`]; [`Error::InvalidInput`] for the placement across GPUs with fewer than two GPUs;
/// [`Error::Unsupported`] where they cannot map each other's memory.
pub fn run_on(
    targets: &[Target],
    opts: &LitmusOptions,
    mut progress: impl FnMut(&LitmusResult),
) -> Result<LitmusReport> {
    check(opts)?;
    let target = targets
        .first()
        .ok_or_else(|| Error::InvalidInput("litmus needs a device".into()))?;
    let start = Instant::now();
    let combos = combinations(target, opts);
    let share = |i: usize| {
        start + Duration::from_secs_f64(opts.seconds * (i + 1) as f64 / combos.len() as f64)
    };
    let runners = Runners::open(targets, opts, &combos)?;
    let mut results = Vec::with_capacity(combos.len());
    for (i, &combo) in combos.iter().enumerate() {
        let result = run_combination(runners.for_placement(combo.2), opts, combo, share(i))?;
        progress(&result);
        results.push(result);
    }
    Ok(report(targets, opts, &runners, results, start))
}

/// One combination: a test, a variant, and its placement (`None` for a one-thread test, or
/// on the simulator).
type Combination = (Test, Variant, Option<Placement>);

/// The combinations of `opts`, in order; one-thread tests once, without a placement.
fn combinations(target: &Target, opts: &LitmusOptions) -> Vec<Combination> {
    let mut combos = Vec::new();
    for &test in &opts.tests {
        for &variant in &opts.variants {
            if target.is_sim() || test.threads() == 1 {
                combos.push((test, variant, None));
            } else {
                combos.extend(opts.placements.iter().map(|&p| (test, variant, Some(p))));
            }
        }
    }
    combos
}

/// The kernel's runners a run needs: one on the first GPU, one across all of them; neither on
/// the simulator, whose combinations run in the model.
struct Runners<'a> {
    /// For the placements within one GPU, and the one-thread tests.
    one_gpu: Option<kernel::Runner<'a>>,
    /// For [`Placement::DifferentGpus`].
    across: Option<kernel::Runner<'a>>,
}

impl<'a> Runners<'a> {
    /// Opens the runners some combination of `combos` needs, refusing the placement across GPUs
    /// with fewer than two.
    fn open(targets: &'a [Target], opts: &LitmusOptions, combos: &[Combination]) -> Result<Self> {
        let target = &targets[0];
        // Whether some combination runs across GPUs, or on the first one (one-thread tests too).
        let wants = |across: bool| {
            combos
                .iter()
                .any(|c| (c.2 == Some(Placement::DifferentGpus)) == across)
        };
        if target.is_sim() {
            return Ok(Self {
                one_gpu: None,
                across: None,
            });
        }
        if wants(true) && (targets.len() < 2 || targets.iter().any(Target::is_sim)) {
            return Err(Error::InvalidInput(format!(
                "the placement gpus needs two or more GPUs (--devices), not {}",
                targets.len()
            )));
        }
        Ok(Self {
            one_gpu: wants(false)
                .then(|| kernel::Runner::new(target, opts.stress))
                .transpose()?,
            across: wants(true)
                .then(|| kernel::Runner::across(targets, opts.stress))
                .transpose()?,
        })
    }

    /// The runner of `placement`, if it runs on a GPU.
    fn for_placement(&self, placement: Option<Placement>) -> Option<&kernel::Runner<'a>> {
        match placement {
            Some(Placement::DifferentGpus) => self.across.as_ref(),
            _ => self.one_gpu.as_ref(),
        }
    }
}

/// What one combination saw: instances run, outcomes counted, the first model run that was
/// weak, and the GPU runner's own counts.
struct Observation {
    instances: u64,
    outcomes: Vec<OutcomeCount>,
    first_weak_run: Option<u64>,
    gpu: kernel::Observed,
}

/// Runs one combination until `deadline` (on `runner`, or in the model when there is none)
/// and judges its outcomes.
fn run_combination(
    runner: Option<&kernel::Runner>,
    opts: &LitmusOptions,
    (test, variant, placement): Combination,
    deadline: Instant,
) -> Result<LitmusResult> {
    let began = Instant::now();
    let seen = match runner {
        Some(r) => observe_on_gpu(r, opts, (test, variant, placement), deadline)?,
        None => observe_in_model(opts, test, variant, deadline),
    };
    let forbidden = seen
        .outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Forbidden)
        .map(|o| o.count)
        .sum();
    let seconds = began.elapsed().as_secs_f64();
    let weak = outcome::WeakSeen::of(test, &seen.outcomes, seen.instances, seconds);
    Ok(LitmusResult {
        test,
        name: test.name().to_string(),
        variant,
        placement,
        instances: seen.instances,
        weak: weak.count,
        weak_rate: weak.per_instance,
        weak_per_second: weak.per_second,
        weak_forbidden: test.forbidden(variant, placement),
        forbidden,
        first_weak_run: seen.first_weak_run,
        spin_up_timeouts: seen.gpu.spin_up_timeouts,
        rounds: seen.gpu.rounds,
        blocks_off_table: seen.gpu.blocks_off_table,
        outcomes: seen.outcomes,
        seconds,
    })
}

/// One combination on the litmus kernel.
fn observe_on_gpu(
    runner: &kernel::Runner,
    opts: &LitmusOptions,
    (test, variant, placement): Combination,
    deadline: Instant,
) -> Result<Observation> {
    let seen = runner.run(
        test,
        variant,
        placement.unwrap_or(Placement::SameWarp),
        opts.iterations,
        deadline,
        opts.seed,
    )?;
    Ok(Observation {
        instances: seen.counts.iter().sum(),
        outcomes: outcome::tally_keys(test, variant, placement, &seen.counts),
        first_weak_run: None,
        gpu: seen,
    })
}

/// One test and variant run as a program on the simulator's memory (sequentially consistent,
/// or weak if `opts` asks).
fn observe_in_model(
    opts: &LitmusOptions,
    test: Test,
    variant: Variant,
    deadline: Instant,
) -> Observation {
    let mode = if opts.weak { Mode::Weak } else { Mode::Sc };
    let runs = model::run_seeded(test, variant, mode, opts.iterations, opts.seed, deadline);
    let weak = test.weak_outcome();
    let first = runs.outcomes.get(&weak).map(|&(_, first)| first);
    let outcomes = outcome::tally(
        test,
        variant,
        None,
        runs.outcomes
            .iter()
            .map(|(v, &(c, _))| (Some(v.clone()), c)),
    );
    Observation {
        instances: runs.runs,
        outcomes,
        first_weak_run: first,
        gpu: kernel::Observed::default(),
    }
}

/// The judged report of `results`, naming the devices the run used.
fn report(
    targets: &[Target],
    opts: &LitmusOptions,
    runners: &Runners<'_>,
    results: Vec<LitmusResult>,
    start: Instant,
) -> LitmusReport {
    let target = &targets[0];
    let short = results
        .iter()
        .filter(|r| r.instances < opts.iterations)
        .count();
    let used = if runners.across.is_some() {
        targets
    } else {
        std::slice::from_ref(target)
    };
    let mut report = LitmusReport {
        target: describe_targets(used),
        memory: memory_name(target, opts.weak),
        options: opts.clone(),
        blocks: runners
            .one_gpu
            .as_ref()
            .or(runners.across.as_ref())
            .map(|r| (r.blocks(), r.test_blocks_per_sm())),
        results,
        forbidden: 0,
        short,
        coverage_floor: 0,
        fell_short: Vec::new(),
        verdict: RunVerdict::Passed,
        seconds: start.elapsed().as_secs_f64(),
    };
    report.judge();
    report
}
