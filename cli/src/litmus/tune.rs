//! The stressing parameters searched for the highest rate of one test's weak outcome on the
//! device at hand (`gridsync litmus --tune`).
//!
//! Kirkham et al. (OOPSLA 2020) tune per device, because what provokes weak outcomes on one GPU
//! does little on another; GPUHarbor (ISSTA 2023) tunes with random parameter sets. With a time
//! budget of a minute and one test, this search is a coordinate descent from the starting
//! parameters: each parameter in turn is tried at each of a few values — the literature's
//! ranges, a factor of 4–8 apart — with the others at the best found so far, and the best trial
//! is kept; passes repeat until the budget is spent or a pass finds nothing better. Every trial
//! runs for the same time, so the rates per second compare too.
//!
//! "Best" is not the highest rate per instance as measured: a trial cut short (one launch, or
//! the last before the budget ran out) that saw the weak outcome once in three instances would
//! win on that one event. A trial is ranked only when it saw the weak outcome at least
//! [`MIN_TRIAL_WEAK`] times, and then by the lower end of the 95% Wilson score interval of its
//! rate per instance ([`wilson_lower`]): a rate measured on few instances counts for less than
//! the same rate on many, and on the 10⁷ instances and more of a trial on a GPU the bound is the
//! rate to within a few per cent.

use super::catalogue::{Placement, Test, Variant};
use super::kernel::Runner;
use super::outcome::{WeakSeen, tally_keys};
use super::stress::{SmOrder, Stress, StressPattern};
use super::{DEFAULT_SEED, check_seconds, describe_targets};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// What [`tune`] searches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneOptions {
    /// The test whose weak outcome's rate is maximized.
    pub test: Test,
    /// Its variant.
    pub variant: Variant,
    /// Its placement (within one GPU).
    pub placement: Placement,
    /// The whole search's time bound; each trial gets an equal share of one pass.
    pub seconds: f64,
    /// Seeds every trial's permutations.
    pub seed: u64,
    /// The parameters the search starts from (its first trial).
    pub start: Stress,
}

impl TuneOptions {
    /// MP with relaxed accesses across SMs from [`Stress::DEFAULT`], for a minute on a GPU and
    /// ten seconds on the simulator.
    pub fn for_target(target: &Target) -> TuneOptions {
        TuneOptions {
            test: Test::MP,
            variant: Variant::Relaxed,
            placement: Placement::DifferentSms,
            seconds: if target.is_sim() { 10.0 } else { 60.0 },
            seed: DEFAULT_SEED,
            start: Stress::DEFAULT,
        }
    }
}

/// One parameter set, run for one trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The parameters.
    pub stress: Stress,
    /// The parameter this trial changed from the best before it (`None` for the start).
    pub changed: Option<String>,
    /// Instances run.
    pub instances: u64,
    /// How often the weak outcome was seen.
    pub weak: u64,
    /// `weak / instances`.
    pub weak_rate: f64,
    /// The lower end of the 95% Wilson score interval of `weak_rate` ([`wilson_lower`]): what
    /// the trial is ranked by.
    #[serde(default)]
    pub weak_rate_low: f64,
    /// `weak / seconds`.
    pub weak_per_second: f64,
    /// Seconds the trial's launches took.
    pub seconds: f64,
}

/// The search.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TuneReport {
    /// Where it ran.
    pub target: String,
    /// What it searched.
    pub options: TuneOptions,
    /// The test's name.
    pub name: String,
    /// Seconds each trial was given.
    pub trial_seconds: f64,
    /// Every trial, the start first.
    pub trials: Vec<Trial>,
    /// The best trial's index ([`best_of`]): of the trials that saw the weak outcome at least
    /// [`MIN_TRIAL_WEAK`] times, the one with the highest [`Trial::weak_rate_low`] (the start
    /// where none did).
    pub best: usize,
    /// Seconds in all.
    pub seconds: f64,
}

impl TuneReport {
    /// The best trial.
    pub fn best(&self) -> &Trial {
        &self.trials[self.best]
    }

    /// The first trial: the starting parameters.
    pub fn start(&self) -> &Trial {
        &self.trials[0]
    }
}

/// The fewest weak outcomes a trial must have seen to be ranked: below ten the rate is known to
/// no better than a factor of about two either way, and one lucky event in a short trial would
/// otherwise win the search.
pub const MIN_TRIAL_WEAK: u64 = 10;

/// The normal quantile of a two-sided 95% interval: the true rate lies below the interval's
/// lower end with probability 2.5%.
pub const WILSON_Z: f64 = 1.96;

/// The lower end of the 95% Wilson score interval of a rate of `weak` in `instances` (0 when
/// nothing ran). Unlike the normal approximation it stays within [0, 1] and is sound for the
/// rare outcomes counted here and for few instances.
pub fn wilson_lower(weak: u64, instances: u64) -> f64 {
    if instances == 0 {
        return 0.0;
    }
    let n = instances as f64;
    let p = weak as f64 / n;
    let z2 = WILSON_Z * WILSON_Z;
    let centre = p + z2 / (2.0 * n);
    let margin = WILSON_Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - margin) / (1.0 + z2 / n)).max(0.0)
}

impl Trial {
    /// What the trial is ranked by: its [`Trial::weak_rate_low`], if it saw the weak outcome at
    /// least [`MIN_TRIAL_WEAK`] times (`None` ranks below every `Some`).
    pub fn score(&self) -> Option<f64> {
        (self.weak >= MIN_TRIAL_WEAK).then_some(self.weak_rate_low)
    }
}

/// The index of the best of `trials` by [`Trial::score`], the earliest among equals; 0 (the
/// start) where none may be ranked.
pub fn best_of(trials: &[Trial]) -> usize {
    let mut best = 0;
    for (i, t) in trials.iter().enumerate() {
        if t.score() > trials[best].score() {
            best = i;
        }
    }
    best
}

/// One value of one parameter, applied to a parameter set.
type Set = Box<dyn Fn(&mut Stress)>;

/// One parameter of the search and the values it tries.
struct Axis {
    name: &'static str,
    values: Vec<Set>,
}

/// The parameters searched, in order, and the values of each; stress blocks only where they
/// leave `blocks_per_sm` at least one block to test.
fn axes(blocks_per_sm: u32) -> Vec<Axis> {
    fn axis<T: Copy + 'static>(
        name: &'static str,
        values: impl IntoIterator<Item = T>,
        set: fn(&mut Stress, T),
    ) -> Axis {
        Axis {
            name,
            values: values
                .into_iter()
                .map(|v| Box::new(move |s: &mut Stress| set(s, v)) as Set)
                .collect(),
        }
    }
    vec![
        axis("sm-order", SmOrder::ALL, |s, v| s.sm_order = v),
        axis("stress-iters", [0, 16, 64, 256], |s, v| s.iters = v),
        axis("stress-lines", [2, 16, 64, 512], |s, v| s.lines = v),
        axis("stress-pattern", StressPattern::ALL, |s, v| s.pattern = v),
        axis(
            "stress-blocks",
            [0, 1, 2, 4].into_iter().filter(|&n| n < blocks_per_sm),
            |s, v| s.stress_blocks = Some(v),
        ),
        axis("stride", [4, 32, 64], |s, v| s.stride_words = v),
        axis("pre-stress", [0, 16, 128], |s, v| s.pre_iters = v),
        axis("spin-up", [true, false], |s, v| s.spin_up = v),
    ]
}

/// Searches the stressing parameters on `target` for the highest rate per instance (ranked as
/// [`best_of`] ranks) of `opts.test`'s weak outcome with `opts.variant` at `opts.placement`, within `opts.seconds`
/// (the trial running when the time is up finishes its launch), calling `progress` after each
/// trial.
///
/// # Errors
/// [`Error::InvalidInput`] for a time bound out of range, a placement across GPUs, starting
/// parameters the kernel cannot use, or a test whose placement formed no instance at all; as
/// [`Runner::run`].
pub fn tune(
    target: &Target,
    opts: &TuneOptions,
    mut progress: impl FnMut(&Trial),
) -> Result<TuneReport> {
    check_seconds(opts.seconds)?;
    opts.start.check()?;
    if opts.placement == Placement::DifferentGpus {
        return Err(Error::InvalidInput(
            "--tune searches within one GPU: the placement gpus is not tuned".into(),
        ));
    }
    let began = Instant::now();
    let end = began + Duration::from_secs_f64(opts.seconds);
    let blocks_per_sm = Runner::new(target, opts.start)?.blocks_per_sm();
    let axes = axes(blocks_per_sm);
    // One pass tries every value but each axis's current one, after the start.
    let per_pass = 1 + axes.iter().map(|a| a.values.len() - 1).sum::<usize>();
    let trial_seconds = opts.seconds / per_pass as f64;
    let mut trials: Vec<Trial> = Vec::new();
    let mut best = 0;
    let mut trial = |stress: Stress, changed: Option<&str>, trials: &mut Vec<Trial>| {
        let runner = Runner::new(target, stress)?;
        let started = Instant::now();
        let deadline = (started + Duration::from_secs_f64(trial_seconds)).min(end);
        let seed = gridsync::inputs::splitmix64(opts.seed ^ ((trials.len() as u64) << 32));
        let seen = runner.run(
            opts.test,
            opts.variant,
            opts.placement,
            u64::MAX,
            deadline,
            seed,
        )?;
        let seconds = started.elapsed().as_secs_f64();
        let outcomes = tally_keys(opts.test, opts.variant, Some(opts.placement), &seen.counts);
        let instances: u64 = seen.counts.iter().sum();
        let weak = WeakSeen::of(opts.test, &outcomes, instances, seconds);
        let t = Trial {
            stress,
            changed: changed.map(str::to_string),
            instances,
            weak: weak.count,
            weak_rate: weak.per_instance,
            weak_rate_low: wilson_lower(weak.count, instances),
            weak_per_second: weak.per_second,
            seconds,
        };
        progress(&t);
        trials.push(t);
        Ok::<(), Error>(())
    };
    trial(opts.start, None, &mut trials)?;
    'passes: loop {
        let mut improved = false;
        for axis in &axes {
            for set in &axis.values {
                if Instant::now() >= end {
                    break 'passes;
                }
                let mut s = trials[best].stress;
                set(&mut s);
                if trials.iter().any(|t| t.stress == s) {
                    continue;
                }
                trial(s, Some(axis.name), &mut trials)?;
                let now = best_of(&trials);
                if now != best {
                    best = now;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
    if trials.iter().all(|t| t.instances == 0) {
        return Err(Error::InvalidInput(format!(
            "{} {} at {}: no instance ran in any trial (the device cannot form that placement)",
            opts.test.name(),
            opts.variant.name(),
            opts.placement.name()
        )));
    }
    Ok(TuneReport {
        target: describe_targets(std::slice::from_ref(target)),
        options: opts.clone(),
        name: opts.test.name().to_string(),
        trial_seconds,
        trials,
        best,
        seconds: began.elapsed().as_secs_f64(),
    })
}
