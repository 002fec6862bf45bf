//! `gridsync check`: every lesson and library kernel at small, awkward shapes under the
//! library's checker ([`gridsync::check`]), each with what it must show — a deliberately broken
//! kernel its finding, every other kernel nothing.

mod cases;

pub use cases::cases;
use gridsync::check::{Access, FindingKind, Options, VolatileAs, checked};

use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::stats::Stats;
use serde::Serialize;
use std::time::Instant;

/// What a kernel must show under the checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// Nothing: no race, no stuck wait.
    Clean,
    /// A data race ([`FindingKind::DataRace`]): at least one weak access of the two.
    DataRace,
    /// A scope race ([`FindingKind::ScopeRace`]): atomics whose scope leaves the other out.
    ScopeRace,
    /// A wait that cannot complete: the kernel's bounded wait gave up (a deadlock).
    Stuck,
    /// A read of shared memory that nothing of the launch wrote
    /// ([`FindingKind::UninitializedRead`]).
    Uninitialized,
    /// A wait by parity that passed on a phase its thread had already waited for
    /// ([`FindingKind::StaleParity`]).
    StaleParity,
}

impl Expect {
    /// `clean`, `data race`, `scope race`, `stuck wait`, `uninit read`, `stale parity`.
    pub const fn name(self) -> &'static str {
        match self {
            Expect::Clean => "clean",
            Expect::DataRace => "data race",
            Expect::ScopeRace => "scope race",
            Expect::Stuck => "stuck wait",
            Expect::Uninitialized => "uninit read",
            Expect::StaleParity => "stale parity",
        }
    }

    /// The checker's finding it must show, if it is one (a clean kernel must show none, a stuck
    /// one a wait that gave up).
    pub const fn finding(self) -> Option<FindingKind> {
        match self {
            Expect::DataRace => Some(FindingKind::DataRace),
            Expect::ScopeRace => Some(FindingKind::ScopeRace),
            Expect::Uninitialized => Some(FindingKind::UninitializedRead),
            Expect::StaleParity => Some(FindingKind::StaleParity),
            Expect::Clean | Expect::Stuck => None,
        }
    }
}

/// How one case's run ended, apart from what the checker found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ran {
    /// The kernel ran to its end.
    Finished,
    /// A bounded wait in the kernel gave up: what the run said.
    Stuck(String),
}

/// One kernel, how it is run, and what it must show.
#[derive(Clone, Copy)]
pub struct Case {
    /// The topic (`gridsync <topic>`), for choosing cases.
    pub topic: &'static str,
    /// The kernel's name.
    pub kernel: &'static str,
    /// What it must show.
    pub expect: Expect,
    /// The launch: its shape and input.
    pub shape: &'static str,
    /// Why, in one line.
    pub why: &'static str,
    /// Why the weak memory cannot judge it, if it cannot (it is then not run with `--weak`).
    pub not_on_weak: Option<&'static str>,
    run: fn(&Target) -> Result<Ran>,
}

impl Case {
    /// This case, not run on the weak memory because `why`: what it must show depends on an
    /// order of threads or a clock that the weak memory's turns, one thread at a time, do not
    /// give.
    pub(crate) fn not_run_on_weak(self, why: &'static str) -> Case {
        Case {
            not_on_weak: Some(why),
            ..self
        }
    }
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Case({} {}: {})",
            self.topic,
            self.kernel,
            self.expect.name()
        )
    }
}

/// The verdict on one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// It showed what it must.
    Ok,
    /// A broken kernel whose bug was not found.
    Missed,
    /// A kernel expected clean with a finding.
    FalsePositive,
    /// The run failed (an error other than the broken kernel's own).
    Failed,
    /// Not run: on the weak memory, a kernel it does not simulate (clusters) or cannot judge
    /// ([`Case::not_on_weak`]); the outcome says why.
    NotRun,
}

/// One access of a finding, as `gridsync check --json` writes it.
#[derive(Clone, Debug, Serialize)]
pub struct AccessJson {
    /// `file:line:column` of the kernel's source.
    pub site: String,
    /// Its line.
    pub line: u32,
    /// Device, block and thread in block.
    pub thread: [u32; 3],
    /// The access in words: mode, kind, width, space and address.
    pub access: String,
}

impl AccessJson {
    fn of(a: &Access) -> AccessJson {
        AccessJson {
            site: a.site.to_string(),
            line: a.site.line(),
            thread: [a.thread.device, a.thread.block, a.thread.thread],
            access: a.to_string(),
        }
    }
}

/// One finding, as `gridsync check --json` writes it.
#[derive(Clone, Debug, Serialize)]
pub struct FindingJson {
    /// `data race` or `scope race`.
    pub kind: &'static str,
    /// The access seen first.
    pub first: AccessJson,
    /// The access that found the race.
    pub second: AccessJson,
    /// Races seen between these two lines.
    pub count: u64,
}

/// What one case showed.
#[derive(Clone, Debug, Serialize)]
pub struct CaseOutcome {
    /// The topic.
    pub topic: &'static str,
    /// The kernel.
    pub kernel: &'static str,
    /// What it must show.
    pub expect: Expect,
    /// The launch.
    pub shape: &'static str,
    /// Why it must.
    pub why: &'static str,
    /// The checker's findings, once per kind and pair of lines.
    pub findings: Vec<FindingJson>,
    /// What a wait that gave up said, if one did.
    pub stuck: Option<String>,
    /// The run's error, if it failed.
    pub error: Option<String>,
    /// Whether checking stopped at a bound (the report says which).
    pub stopped: Option<String>,
    /// Why it was not run, if it was not ([`Verdict::NotRun`]).
    pub not_run: Option<String>,
    /// Launches and events checked.
    pub launches: u64,
    /// Events checked.
    pub events: u64,
    /// Wall time of the checked run, ms.
    pub ms: f64,
    /// Wall time of the same run without the checker, ms (with `cost`, else `None`).
    pub plain_ms: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// The checker's report as text (the findings with both lines).
    #[serde(skip)]
    pub report: String,
}

impl CaseOutcome {
    /// `case` with `verdict` and nothing found, run or timed yet.
    fn of(case: &Case, verdict: Verdict) -> CaseOutcome {
        CaseOutcome {
            topic: case.topic,
            kernel: case.kernel,
            expect: case.expect,
            shape: case.shape,
            why: case.why,
            findings: Vec::new(),
            stuck: None,
            error: None,
            stopped: None,
            not_run: None,
            launches: 0,
            events: 0,
            ms: 0.0,
            plain_ms: None,
            verdict,
            report: String::new(),
        }
    }

    /// `case`, not run, because `why`.
    fn not_run(case: &Case, why: String) -> CaseOutcome {
        CaseOutcome {
            not_run: Some(why),
            ..CaseOutcome::of(case, Verdict::NotRun)
        }
    }
}

/// Every case run, and the totals `gridsync check` exits on.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// Whether volatile accesses counted as plain ones.
    pub volatile_as_plain: bool,
    /// The weak memory's seed, where the launches ran on it.
    pub weak_seed: Option<u64>,
    /// Kernels not run (on the weak memory, those on clusters).
    pub not_run: usize,
    /// Each kernel's outcome.
    pub kernels: Vec<CaseOutcome>,
    /// Broken kernels whose bug was not found.
    pub missed: usize,
    /// Kernels expected clean with a finding.
    pub false_positives: usize,
    /// Runs that failed.
    pub failed: usize,
}

impl CheckReport {
    /// Whether every case showed what it must.
    pub fn passed(&self) -> bool {
        self.missed == 0 && self.false_positives == 0 && self.failed == 0
    }
}

/// The topics of [`cases`], in order, each once.
pub fn topics() -> Vec<&'static str> {
    let mut t: Vec<&'static str> = Vec::new();
    for c in cases() {
        if !t.contains(&c.topic) {
            t.push(c.topic);
        }
    }
    t
}

/// How `gridsync check` runs its cases.
#[derive(Clone, Copy, Debug, Default)]
pub struct How {
    /// The checker's options.
    pub options: Options,
    /// Also run each case without the checker, to show what the checker costs: each run, plain
    /// and checked, [`COST_REPEATS`] times, and the medians compared.
    pub cost: bool,
    /// Run every launch on the weak memory, seeded with this (`gpu::sim::weak::scoped`): a
    /// stale read, or an update a narrow scope lost, shows as a wrong answer too
    /// (`gridsync check --weak`). The weak memory runs one thread at a time, so the whole list
    /// takes minutes. Kernels on clusters, which it does not simulate, and those it cannot
    /// judge ([`Case::not_on_weak`]) are not run ([`Verdict::NotRun`], with why).
    pub weak: Option<u64>,
}

/// How many times [`How::cost`] times each run, plain and checked: their median is shown.
/// The runs are short (milliseconds) and the simulator's threads share the host's cores with
/// whatever else runs, so one run's time can be several times another's.
pub const COST_REPEATS: usize = 5;

/// The wall time of `f`, ms.
fn time_ms(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e3
}

/// The median of run times (never empty).
fn median_ms(times: &[f64]) -> f64 {
    Stats::of(times).map_or(f64::NAN, |s| s.median)
}

/// Runs one case on the simulator under the checker as `how` says.
pub fn run_case(case: &Case, how: How) -> CaseOutcome {
    if how.weak.is_some()
        && let Some(why) = case.not_on_weak
    {
        return CaseOutcome::not_run(case, why.to_string());
    }
    // What the other runs say is the first checked run's business; they are only timed.
    let plain_ms = how.cost.then(|| {
        let times: Vec<f64> = (0..COST_REPEATS)
            .map(|_| {
                time_ms(|| {
                    let _ = (case.run)(&Target::Sim);
                })
            })
            .collect();
        median_ms(&times)
    });
    let run = || checked(how.options, || (case.run)(&Target::Sim));
    let start = Instant::now();
    let (ran, report) = match how.weak {
        Some(seed) => gpu::sim::weak::scoped(seed, run).0,
        None => run(),
    };
    let mut times = vec![start.elapsed().as_secs_f64() * 1e3];
    if how.cost {
        times.extend((1..COST_REPEATS).map(|_| {
            time_ms(|| {
                let _ = run();
            })
        }));
    }
    let ms = median_ms(&times);
    let not_run = match &ran {
        Err(Error::Sim(gpu::sim::SimError::Config(why)))
            if how.weak.is_some() && why.contains("weak memory") =>
        {
            Some(why.clone())
        }
        _ => None,
    };
    let (stuck, error) = match ran {
        Ok(Ran::Finished) => (None, None),
        Ok(Ran::Stuck(why)) => (Some(why), None),
        // A broken kernel's wrong answer is its bug showing, not a failed run.
        Err(Error::Mismatch(_)) if case.expect != Expect::Clean => (None, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let has = |kind| report.of_kind(kind).next().is_some();
    let verdict = if not_run.is_some() {
        Verdict::NotRun
    } else if error.is_some() {
        Verdict::Failed
    } else {
        match (case.expect, case.expect.finding()) {
            (Expect::Clean, _) if report.is_clean() && stuck.is_none() => Verdict::Ok,
            (Expect::Clean, _) => Verdict::FalsePositive,
            (Expect::Stuck, _) if stuck.is_some() => Verdict::Ok,
            (_, Some(kind)) if has(kind) => Verdict::Ok,
            _ => Verdict::Missed,
        }
    };
    CaseOutcome {
        findings: report
            .findings
            .iter()
            .map(|f| FindingJson {
                kind: f.kind.name(),
                first: AccessJson::of(&f.first),
                second: AccessJson::of(&f.second),
                count: f.count,
            })
            .collect(),
        stuck,
        error,
        stopped: report.stopped.map(|s| s.to_string()),
        not_run,
        launches: report.launches,
        events: report.events,
        ms,
        plain_ms,
        report: report.to_string(),
        ..CaseOutcome::of(case, verdict)
    }
}

/// Runs the cases of `topics` (every case if empty) under the checker, as `how` says;
/// `progress` is called with (cases done, cases, the kernel about to run).
///
/// # Errors
/// [`Error::InvalidInput`] for a topic without cases (the message lists them).
pub fn run(
    topics_asked: &[String],
    how: How,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<CheckReport> {
    let known = topics();
    if let Some(t) = topics_asked.iter().find(|t| !known.contains(&t.as_str())) {
        return Err(Error::InvalidInput(format!(
            "no checked kernels of topic `{t}`; the topics are: {}",
            known.join(", ")
        )));
    }
    let chosen: Vec<Case> = cases()
        .into_iter()
        .filter(|c| topics_asked.is_empty() || topics_asked.iter().any(|t| t == c.topic))
        .collect();
    let mut kernels = Vec::with_capacity(chosen.len());
    for (i, case) in chosen.iter().enumerate() {
        progress(i, chosen.len(), case.kernel);
        kernels.push(run_case(case, how));
    }
    progress(chosen.len(), chosen.len(), "");
    let count = |v| {
        kernels
            .iter()
            .filter(|k: &&CaseOutcome| k.verdict == v)
            .count()
    };
    Ok(CheckReport {
        volatile_as_plain: how.options.volatile == VolatileAs::Plain,
        weak_seed: how.weak,
        not_run: count(Verdict::NotRun),
        missed: count(Verdict::Missed),
        false_positives: count(Verdict::FalsePositive),
        failed: count(Verdict::Failed),
        kernels,
    })
}
