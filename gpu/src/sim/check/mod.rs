//! The checker: races and scope bugs found in what the simulated threads do.
//!
//! The simulator runs a kernel's threads as OS threads on the host's memory, which is coherent
//! and strongly ordered: a kernel that races, or uses a `.cta` atomic across blocks, usually
//! computes the right answer here. The checker does not wait for a wrong answer: it follows
//! happens-before itself, with vector clocks (one per thread, FastTrack's epochs for the
//! accesses), and reports every two conflicting accesses that nothing orders and PTX does not
//! allow to run concurrently — with both source lines.
//!
//! - [`Checker`] keeps the findings of every launch it follows, bounded
//!   ([`Options::max_findings`]), once per pair of call sites; [`Checker::report`].
//! - [`LaunchCheck`]: one launch — its [`Shape`] (devices, blocks, threads, clusters) and what
//!   it has seen so far. Everything before the launch happens before all of it, and its end
//!   before everything after: a launch starts with empty shadow memory and fresh clocks.
//! - [`ThreadCheck`]: one thread's events, in its program order — accesses of any width with
//!   their [`Mode`] (plain, volatile, atomic with ordering and [`ThreadScope`], a bulk copy's),
//!   fences, arrivals at and waits on the phases of synchronization objects ([`SyncId`]: block
//!   and cluster barriers, warps, `mbarrier`s).
//!
//! Scope is decided as PTX decides it: a release synchronizes with an acquire only if each one's
//! scope includes the other's thread, and two atomics race unless they are morally strong
//! ([`FindingKind`]). `docs/checker.md` tells the design: the events, the clocks, the rules
//! with their PTX sections, the memory bounds and the locking.
//!
//! [`checked`] runs the simulator's launches under a checker: the primitives' simulator side
//! reports to it (see `docs/checker.md`, "Wiring", for what reports and what does not yet).
//! Host only, like the rest of the simulator.

mod access;
mod bounds;
mod clock;
mod mode;
mod report;
mod shadow;
mod shape;
mod sync;
mod thread;

#[cfg(test)]
mod tests;

pub use access::{Access, AccessKind, Bytes, FindingKind, Mode, Space, VolatileAs};
pub use bounds::{Allocation, allocation};
pub use clock::StopReason;
pub(crate) use mode::{
    MBarrierUpdate, access as report_access, atomic as report_atomic, barrier_arrive,
    barrier_leave, claimed_global, cluster_arrive, cluster_waited,
    compare_and_swap as report_compare_and_swap, enter, fence as report_fence, leave,
    mbarrier_misuse, mbarrier_test, mbarrier_update, next_launch, warp_arrive, warp_met,
};
pub use mode::{checked, in_checked_launch};
pub use report::{Finding, Report};
pub use shape::{Instance, Shape, ThreadId, ThreadScope};
pub use sync::{SyncId, SyncKind};
pub use thread::ThreadCheck;

use crate::sim::SimError;
use clock::Meter;
use report::Findings;
use shadow::Shadow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use sync::{Releases, SyncTable};

/// The checker's bounds and rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Findings kept (each a distinct kind and pair of call sites); races past them are only
    /// counted ([`Report::dropped`]).
    pub max_findings: usize,
    /// Reads, and writes, one granule remembers at most (one per thread that has not
    /// synchronized with the others); past it the oldest is forgotten ([`Report::forgotten`]).
    pub records_per_granule: usize,
    /// Shadow memory a launch may hold (bytes); past it the launch is no longer checked
    /// ([`Report::stopped`]).
    pub shadow_bytes: usize,
    /// Memory of the clocks kept at locations, barrier phases and fences (bytes); the same.
    pub clock_bytes: usize,
    /// Whether a volatile access counts as PTX counts it, or as a plain one.
    pub volatile: VolatileAs,
}

impl Options {
    /// 100 findings; 32 records per granule; 1 GiB of shadow memory and 512 MiB of clocks per
    /// launch; volatile as PTX has it. A constant, for options built from it in a `const`.
    pub const DEFAULT: Options = Options {
        max_findings: 100,
        records_per_granule: 32,
        shadow_bytes: 1 << 30,
        clock_bytes: 512 << 20,
        volatile: VolatileAs::RelaxedSystem,
    };
}

impl Default for Options {
    /// [`Options::DEFAULT`].
    fn default() -> Options {
        Options::DEFAULT
    }
}

/// Follows launches and keeps what they race on. Cloning it gives another handle to the same
/// findings.
#[derive(Clone)]
pub struct Checker {
    options: Options,
    findings: Arc<Findings>,
}

impl Checker {
    /// A checker with no findings yet.
    pub fn new(options: Options) -> Checker {
        Checker {
            options,
            findings: Arc::new(Findings::new(options.max_findings)),
        }
    }

    /// Starts following a launch of `shape`. The launch ends when the [`LaunchCheck`] and
    /// every [`ThreadCheck`] made from it are dropped; only then are its totals in the report.
    ///
    /// # Errors
    /// What [`Shape::validate`] refuses.
    pub fn launch(&self, shape: Shape) -> Result<LaunchCheck, SimError> {
        shape.validate()?;
        Ok(LaunchCheck {
            state: Arc::new(LaunchState {
                shape,
                options: self.options,
                shadow: Shadow::new(),
                syncs: SyncTable::new(),
                sc: Mutex::default(),
                mbarrier_phases: Mutex::default(),
                barrier_sites: Mutex::default(),
                meter: Arc::new(Meter::new(
                    self.options.shadow_bytes,
                    self.options.clock_bytes,
                )),
                findings: Arc::clone(&self.findings),
                events: AtomicU64::new(0),
                forgotten: AtomicU64::new(0),
                unchecked: AtomicU64::new(0),
            }),
        })
    }

    /// What was found so far.
    pub fn report(&self) -> Report {
        self.findings.report()
    }
}

/// One launch being followed.
pub struct LaunchCheck {
    state: Arc<LaunchState>,
}

impl LaunchCheck {
    /// The launch's shape.
    pub fn shape(&self) -> &Shape {
        &self.state.shape
    }

    /// The checker's side of thread `id`, at the start of the launch. One per thread: the
    /// thread reports its events through it alone.
    ///
    /// # Errors
    /// [`SimError::Config`] if `id` is not a thread of the launch.
    pub fn thread(&self, id: ThreadId) -> Result<ThreadCheck, SimError> {
        let slot = self.state.shape.slot(id).ok_or_else(|| {
            SimError::Config(format!("{id} is not a thread of the checked launch"))
        })?;
        Ok(ThreadCheck::new(Arc::clone(&self.state), id, slot))
    }

    /// The memory the launch's checking holds now, beyond the threads' own clocks: (shadow
    /// memory, clocks kept at locations, barriers and fences), in bytes.
    pub fn memory(&self) -> (usize, usize) {
        self.state.meter.used()
    }
}

/// What the threads of one launch share.
struct LaunchState {
    shape: Shape,
    options: Options,
    shadow: Shadow,
    syncs: SyncTable,
    /// The releases of the `fence.sc`s so far: Fence-SC order, as this run made it.
    sc: Mutex<Releases>,
    /// Phases completed per `mbarrier` (by address), counted by the simulator under this lock
    /// with every update of the barrier's word: the word holds only the phase's parity.
    mbarrier_phases: Mutex<HashMap<usize, u64>>,
    /// Per block (its [`Instance`] of block scope), the phase of its barrier that threads are
    /// arriving at now and the first arrival's thread and call site: every thread of a block
    /// arrives at phase `k` before any arrives at `k + 1`, so one entry per block is enough.
    barrier_sites:
        Mutex<HashMap<Instance, (u64, ThreadId, &'static core::panic::Location<'static>)>>,
    meter: Arc<Meter>,
    findings: Arc<Findings>,
    events: AtomicU64,
    forgotten: AtomicU64,
    unchecked: AtomicU64,
}

impl Drop for LaunchState {
    fn drop(&mut self) {
        self.findings.launch_ended(
            self.events.load(Ordering::Relaxed),
            self.forgotten.load(Ordering::Relaxed),
            self.meter.reason(),
            self.unchecked.load(Ordering::Relaxed),
        );
    }
}
