//! An endurance run under load: several host threads per device, each with a stream of its
//! own, run gridsync's calls — reductions, histograms, the count through the staged upload,
//! normalization, the mutex, the warp-leader lock and the ticket lock, a grid barrier (plain and
//! cooperative launches), neighbor lists — on random inputs of random sizes (0, 1 and odd
//! sizes included) for a bounded time, each result checked against the CPU (every worker goes
//! round the operations from its own place, so a few rounds run each); where the set has
//! several devices, one more thread runs a counter, a `Mutex<SystemScope>` and a
//! `MultiGridBarrier` across all of them at system scope. It reports the operations done, the
//! failures (which must be none, each with the seed that replays it) and every device's free
//! memory before and after (memory not given back is a leak).
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! use gridsync_cli::stress::{StressOptions, run};
//! let report = run(&StressOptions { seconds: 10.0, ..StressOptions::default() }, |_| {})?;
//! assert!(report.passed(), "{} failures", report.failures);
//! # Ok(()) }
//! ```

mod ops;
mod system;

pub use ops::Op;

use gridsync::inputs::splitmix64;
use gridsync::multi::{DeviceList, DeviceSet};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::memory::device_free_bytes;
use ops::Limits;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The most seconds a run may be asked for: a day.
pub const MAX_SECONDS: f64 = 86_400.0;

/// The most worker threads per device.
pub const MAX_WORKERS: usize = 64;

/// Free device memory that may be missing after the run without calling it a leak: the driver
/// hands memory out in pages of up to 2 MiB, and keeps some for itself.
pub const LEAK_SLACK_BYTES: u64 = 32 << 20;

/// Failures kept with their details (all are counted).
const KEPT_FAILURES: usize = 20;

/// What [`run`] does.
#[derive(Clone, Debug, PartialEq)]
pub struct StressOptions {
    /// How long, in seconds (operations that started before the end finish).
    pub seconds: f64,
    /// The devices.
    pub devices: DeviceList,
    /// Host threads per device, each with its own stream.
    pub workers_per_device: usize,
    /// The operations: each worker goes round them, starting from its own place.
    pub ops: Vec<Op>,
    /// The seed every operation's seed comes from.
    pub seed: u64,
    /// Run on simulated devices.
    pub simulate: bool,
}

impl Default for StressOptions {
    /// 60 s on device 0, four threads, every operation, a seed from the clock.
    fn default() -> StressOptions {
        StressOptions {
            seconds: 60.0,
            devices: DeviceList::Ordinals(vec![0]),
            workers_per_device: 4,
            ops: Op::ALL.to_vec(),
            seed: clock_seed(),
            simulate: false,
        }
    }
}

/// A seed from the clock.
pub fn clock_seed() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    splitmix64(now.map_or(1, |d| d.as_nanos() as u64))
}

/// One operation's tally.
#[derive(Clone, Debug, Serialize)]
pub struct OpTally {
    /// The operation (`"system-scope"` for the cross-device one).
    pub op: String,
    /// How many ran.
    pub done: u64,
    /// How many failed.
    pub failed: u64,
}

/// One failure, with what replays it.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    /// The operation.
    pub op: String,
    /// The device (`None` for the cross-device operation or a simulator).
    pub device: Option<u32>,
    /// The operation's seed: `gridsync stress --device D --ops OP --replay SEED` runs it again
    /// (the system-scope operation is replayed by a run of its devices with its seed).
    pub seed: u64,
    /// What went wrong.
    pub error: String,
}

/// A device's free memory before and after.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceMemory {
    /// The device.
    pub device: u32,
    /// Free bytes before the workers started.
    pub free_before: u64,
    /// Free bytes after they ended and gave everything back.
    pub free_after: u64,
    /// `free_before − free_after` (negative: more free after).
    pub missing: i64,
    /// Whether more than [`LEAK_SLACK_BYTES`] is missing.
    pub leaked: bool,
}

/// What [`run`] did.
#[derive(Clone, Debug, Serialize)]
pub struct StressReport {
    /// The devices.
    pub devices: String,
    /// Seconds it ran.
    pub seconds: f64,
    /// Worker threads in all (the cross-device thread included).
    pub workers: usize,
    /// The base seed.
    pub seed: u64,
    /// Operations done.
    pub operations: u64,
    /// Operations that failed: wrong results or errors.
    pub failures: u64,
    /// Per operation.
    pub per_op: Vec<OpTally>,
    /// The first failures, in detail.
    pub first_failures: Vec<Failure>,
    /// Free memory before and after, per GPU (none on the simulator).
    pub memory: Vec<DeviceMemory>,
    /// Why the cross-device operation did not run, where it did not.
    pub system_scope: Option<String>,
}

impl StressReport {
    /// No failure and no leak.
    pub fn passed(&self) -> bool {
        self.failures == 0 && !self.memory.iter().any(|m| m.leaked)
    }
}

/// What every worker adds to.
#[derive(Default)]
struct Tallies {
    operations: AtomicU64,
    failures: AtomicU64,
    per_op: Mutex<BTreeMap<String, (u64, u64)>>,
    first: Mutex<Vec<Failure>>,
}

impl Tallies {
    fn record(&self, op: &str, device: Option<u32>, seed: u64, outcome: Result<String>) {
        self.operations.fetch_add(1, Ordering::Relaxed);
        let failed = outcome.is_err();
        if let Ok(mut m) = self.per_op.lock() {
            let e = m.entry(op.to_string()).or_default();
            e.0 += 1;
            e.1 += failed as u64;
        }
        if let Err(e) = outcome {
            self.failures.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut f) = self.first.lock()
                && f.len() < KEPT_FAILURES
            {
                f.push(Failure {
                    op: op.to_string(),
                    device,
                    seed,
                    error: e.to_string(),
                });
            }
        }
    }
}

/// Progress: seconds so far, operations done, failures.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Seconds since the start.
    pub seconds: f64,
    /// Operations done.
    pub operations: u64,
    /// Failures.
    pub failures: u64,
}

/// The seed of operation `k` of worker `w`.
fn op_seed(base: u64, worker: usize, k: u64) -> u64 {
    splitmix64(base ^ splitmix64((worker as u64) << 40 ^ k))
}

/// Runs `op` once on `device` (or the simulator) with `seed`: what a failure's seed replays.
///
/// # Errors
/// The operation's failure: [`Error::Mismatch`] or the call's own error.
pub fn replay(op: Op, device: u32, simulate: bool, seed: u64) -> Result<String> {
    let set = DeviceSet::open(&DeviceList::Ordinals(vec![device]), simulate)?;
    ops::run(op, &set, Limits::for_target(&set.targets()[0]), seed)
}

/// Runs the endurance run of `opts`; `progress` is called about once a second.
///
/// # Errors
/// [`Error::InvalidInput`] for a duration that is not positive and finite or past
/// [`MAX_SECONDS`], no operations, or no or too many workers; an error opening a device.
/// Failures of the operations are not errors: they are in the report.
pub fn run(opts: &StressOptions, mut progress: impl FnMut(Progress)) -> Result<StressReport> {
    check_options(opts)?;
    // Holds every device's context for the whole run, so that the memory after is measured in
    // the context the memory before was.
    let monitor = DeviceSet::open(&opts.devices, opts.simulate)?;
    let ordinals: Vec<Option<u32>> = monitor.ordinals();
    let before = free_memory(&monitor)?;
    let tallies = Tallies::default();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(opts.seconds);
    let system_scope = (monitor.len() < 2).then(|| {
        "one device: the system-scope counter, lock and barrier need two or more".to_string()
    });
    let workers = ordinals.len() * opts.workers_per_device + system_scope.is_none() as usize;
    let clock = (start, deadline);
    run_workers(
        opts,
        &ordinals,
        system_scope.is_none(),
        &tallies,
        clock,
        &mut progress,
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let after = free_memory(&monitor)?;
    let per_op = tallies
        .per_op
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|(op, (done, failed))| OpTally { op, done, failed })
        .collect();
    Ok(StressReport {
        devices: monitor.describe(),
        seconds,
        workers,
        seed: opts.seed,
        operations: tallies.operations.into_inner(),
        failures: tallies.failures.into_inner(),
        per_op,
        first_failures: tallies.first.into_inner().unwrap_or_default(),
        memory: memory_change(before, after),
        system_scope,
    })
}

/// Refuses a duration that is not positive and finite or past [`MAX_SECONDS`], no
/// operations, and no or too many workers per device.
fn check_options(opts: &StressOptions) -> Result<()> {
    if !(opts.seconds > 0.0 && opts.seconds <= MAX_SECONDS) {
        return Err(Error::InvalidInput(format!(
            "--seconds {}: more than 0, at most {MAX_SECONDS}",
            opts.seconds
        )));
    }
    if opts.ops.is_empty() {
        return Err(Error::InvalidInput("no operations to run".into()));
    }
    if !(1..=MAX_WORKERS).contains(&opts.workers_per_device) {
        return Err(Error::InvalidInput(format!(
            "--workers {}: between 1 and {MAX_WORKERS} per device",
            opts.workers_per_device
        )));
    }
    Ok(())
}

/// Runs every device's workers, and the system-scope worker if `system`, until the deadline
/// of `(start, deadline)`, reporting progress meanwhile; then joins them.
fn run_workers(
    opts: &StressOptions,
    ordinals: &[Option<u32>],
    system: bool,
    tallies: &Tallies,
    (start, deadline): (Instant, Instant),
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    let device_workers = ordinals.len() * opts.workers_per_device;
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (d, &ordinal) in ordinals.iter().enumerate() {
            for w in 0..opts.workers_per_device {
                let worker = d * opts.workers_per_device + w;
                let first_op = worker * opts.ops.len().div_ceil(device_workers);
                let device = (d, ordinal);
                handles.push(gridsync::multi::devices::spawn_in(s, move || {
                    device_worker(opts, device, (worker, first_op), deadline, tallies)
                })?);
            }
        }
        if system {
            handles.push(gridsync::multi::devices::spawn_in(s, move || {
                system_worker(opts, deadline, tallies)
            })?);
        }
        while Instant::now() < deadline && !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(200).min(deadline - Instant::now()));
            progress(Progress {
                seconds: start.elapsed().as_secs_f64(),
                operations: tallies.operations.load(Ordering::Relaxed),
                failures: tallies.failures.load(Ordering::Relaxed),
            });
        }
        handles
            .into_iter()
            .map(gridsync::multi::devices::join)
            .collect::<Result<Vec<()>>>()
            .map(drop)
    })
}

/// One worker on device `d` (of `ordinal`): operation after operation, each with a seed of
/// its own, until the deadline.
fn device_worker(
    opts: &StressOptions,
    (d, ordinal): (usize, Option<u32>),
    (worker, first_op): (usize, usize),
    deadline: Instant,
    tallies: &Tallies,
) -> Result<()> {
    let list = DeviceList::Ordinals(vec![ordinal.unwrap_or(d as u32)]);
    let set = DeviceSet::open(&list, opts.simulate)?;
    let limits = Limits::for_target(&set.targets()[0]);
    let mut k = 0;
    while Instant::now() < deadline {
        k += 1;
        let seed = op_seed(opts.seed, worker, k);
        // Each worker goes round the operations from its own place, so that
        // a few rounds of all workers run every one; the inputs are random.
        let op = opts.ops[(first_op + k as usize) % opts.ops.len()];
        let outcome = caught(|| ops::run(op, &set, limits, seed));
        tallies.record(op.name(), ordinal, seed, outcome);
    }
    Ok(())
}

/// The worker across every device at system scope, until the deadline.
fn system_worker(opts: &StressOptions, deadline: Instant, tallies: &Tallies) -> Result<()> {
    let set = DeviceSet::open(&opts.devices, opts.simulate)?;
    let mut k = 0;
    while Instant::now() < deadline {
        k += 1;
        let seed = op_seed(opts.seed, usize::MAX >> 24, k);
        let outcome = caught(|| system::run(&set, seed));
        tallies.record(system::NAME, None, seed, outcome);
    }
    Ok(())
}

/// Each device's free memory before and after, and whether what went missing is a leak.
fn memory_change(before: Vec<(u32, u64)>, after: Vec<(u32, u64)>) -> Vec<DeviceMemory> {
    before
        .into_iter()
        .zip(after)
        .map(|((device, free_before), (_, free_after))| {
            let missing = free_before as i64 - free_after as i64;
            DeviceMemory {
                device,
                free_before,
                free_after,
                missing,
                leaked: missing > LEAK_SLACK_BYTES as i64,
            }
        })
        .collect()
}

/// `op`'s outcome, a panic in it included (a bug the run must report with its seed, not end
/// on).
fn caught(op: impl FnOnce() -> Result<String>) -> Result<String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(op)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::Mismatch(format!("panicked: {why}")))
    })
}

/// Every GPU's free memory (`cuMemGetInfo`), after everything queued on it is done.
fn free_memory(set: &DeviceSet) -> Result<Vec<(u32, u64)>> {
    let mut out = Vec::new();
    for t in set.targets() {
        if let Target::Gpu(g) = t {
            g.synchronize_all()?;
            out.push((g.info().ordinal, device_free_bytes(g)?.0));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_options_are_refused_before_anything_runs() {
        let sim = |o: StressOptions| StressOptions {
            simulate: true,
            ..o
        };
        for o in [
            StressOptions {
                seconds: 0.0,
                ..StressOptions::default()
            },
            StressOptions {
                seconds: f64::NAN,
                ..StressOptions::default()
            },
            StressOptions {
                ops: Vec::new(),
                ..StressOptions::default()
            },
            StressOptions {
                workers_per_device: 0,
                ..StressOptions::default()
            },
        ] {
            assert!(matches!(run(&sim(o), |_| {}), Err(Error::InvalidInput(_))));
        }
    }

    #[test]
    fn a_failure_or_a_leak_fails_the_run() {
        let report = |failures, missing: i64| StressReport {
            devices: "test".into(),
            seconds: 1.0,
            workers: 1,
            seed: 1,
            operations: 10,
            failures,
            per_op: Vec::new(),
            first_failures: Vec::new(),
            memory: vec![DeviceMemory {
                device: 0,
                free_before: 1 << 30,
                free_after: ((1i64 << 30) - missing) as u64,
                missing,
                leaked: missing > LEAK_SLACK_BYTES as i64,
            }],
            system_scope: None,
        };
        assert!(report(0, 0).passed());
        assert!(report(0, -(1 << 20)).passed(), "more free after is no leak");
        assert!(!report(1, 0).passed());
        assert!(!report(0, 256 << 20).passed());
        let t = Tallies::default();
        t.record("reduce", Some(0), 7, Ok(String::new()));
        t.record("reduce", Some(0), 8, Err(Error::Mismatch("x".into())));
        assert_eq!(t.operations.load(Ordering::Relaxed), 2);
        assert_eq!(t.failures.load(Ordering::Relaxed), 1);
        let first = t.first.lock().unwrap();
        assert_eq!((first.len(), first[0].seed), (1, 8));
    }

    #[test]
    fn a_panicking_operation_is_a_failure_not_the_end_of_the_run() {
        let e = caught(|| panic!("index out of bounds")).unwrap_err();
        assert!(
            e.to_string().contains("panicked: index out of bounds"),
            "{e}"
        );
        assert_eq!(caught(|| Ok("fine".into())).unwrap(), "fine");
    }

    #[test]
    fn seeds_differ_per_worker_and_operation() {
        let a: Vec<u64> = (0..3)
            .flat_map(|w| (1..4).map(move |k| op_seed(9, w, k)))
            .collect();
        let mut b = a.clone();
        b.sort_unstable();
        b.dedup();
        assert_eq!(a.len(), b.len());
    }
}
