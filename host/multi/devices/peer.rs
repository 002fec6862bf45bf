//! System scope across the GPUs of a node: a counter, a [`Mutex`](gpu::lock::Mutex) and a
//! [`MultiGridBarrier`](gpu::multi_grid::MultiGridBarrier) in device 0's memory, used by a grid
//! on every device of the set at once (the kernels of [`gpu::lessons::peer`]).
//!
//! Device 0's memory reaches the other GPUs through peer access ([`enable_peer_access`]: with
//! unified addressing the pointer is the same on every GPU, and the loads, stores and atomics
//! travel over NVLink or PCIe to device 0's L2). Each run takes the scope of the shared words'
//! atomics, so that system scope (correct) and device scope (a race across GPUs) can be
//! compared, and reports what it counted against what it should have, and its rate.

use super::DeviceSet;
use super::together::at_once;
pub use super::together::enable_peer_access;
use crate::primitives::lock::{DeviceMutex, MutexBounds};
use crate::runtime::args::SharedArgs;
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::wait::wait_bound;
use gpu::LaunchConfig;
use gpu::atomic::Scope;
use gpu::multi_grid::MultiGridBarrierState;
use serde::Serialize;
use std::time::Duration;

// SAFETY: `#[repr(C)]` of u32/u64 with explicit padding; every bit pattern is a valid state.
unsafe impl Plain for MultiGridBarrierState {}

/// Which shared object a run exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerObject {
    /// Relaxed atomic adds to one counter.
    Counter,
    /// A mutex guarding a plain counter.
    Lock,
    /// A barrier over every device's grid, with a check of what each block sees after it.
    Barrier,
}

/// What one run did.
#[derive(Clone, Debug, Serialize)]
pub struct PeerRun {
    /// The object.
    pub object: PeerObject,
    /// `"system"` or `"device"`.
    pub scope: &'static str,
    /// Devices that took part.
    pub devices: usize,
    /// The device whose memory holds what the lock guards, or the barrier's slots (the lock
    /// and barrier words are always in device 0's).
    pub data_device: usize,
    /// Blocks and threads per block of each device's grid.
    pub grid: (u32, u32),
    /// Operations every thread (counter, lock) or block (barrier rounds) did.
    pub per_thread: u32,
    /// What the counter should read (counter, lock), or 0 stale reads (barrier: the rounds ×
    /// blocks checked).
    pub expected: u64,
    /// What it read (counter, lock), or the reads checked that were not stale (barrier).
    pub counted: u64,
    /// `expected − counted`: updates lost, or stale reads.
    pub wrong: u64,
    /// Wall time of the launches on every device, to the last one's end, ms.
    pub ms: f64,
    /// Atomic adds, lock acquisitions or barriers per second.
    pub per_second: f64,
}

fn scope_name(scope: Scope) -> Result<&'static str> {
    match scope {
        Scope::Device => Ok("device"),
        Scope::System => Ok("system"),
        Scope::Block => Err(Error::InvalidInput(
            "block scope cannot span blocks, let alone GPUs: use system or device".into(),
        )),
    }
}

/// Device `d` of the set, for the data of a run.
fn data_target(set: &DeviceSet, d: usize) -> Result<&Target> {
    set.targets()
        .get(d)
        .ok_or_else(|| Error::InvalidInput(format!("device {d} of a set of {}", set.len())))
}

/// Zeroed buffer of `len` on device 0, the shared home of the run's words.
fn home<T: Plain>(set: &DeviceSet, len: usize) -> Result<Buffer<T>> {
    set.targets()[0].zeros(len)
}

/// What a run counted and how long it took, before it becomes a [`PeerRun`].
struct Measured {
    /// What the count should be.
    expected: u64,
    /// What it was.
    counted: u64,
    /// Wall time, ms.
    ms: f64,
    /// Operations done in that time, for the rate.
    operations: f64,
}

impl Measured {
    /// A counter that should read `expected`, one operation per count (the counter, the lock).
    fn count(expected: u64, counted: u64, ms: f64) -> Measured {
        Measured {
            expected,
            counted,
            ms,
            operations: expected as f64,
        }
    }
}

fn run_report(
    object: PeerObject,
    scope: &'static str,
    set: &DeviceSet,
    cfg: LaunchConfig,
    per_thread: u32,
    data_device: usize,
    m: Measured,
) -> PeerRun {
    PeerRun {
        object,
        scope,
        devices: set.len(),
        data_device,
        grid: (cfg.grid.x, cfg.block.x),
        per_thread,
        expected: m.expected,
        counted: m.counted,
        wrong: m.expected.saturating_sub(m.counted),
        ms: m.ms,
        per_second: m.operations / (m.ms / 1e3).max(f64::MIN_POSITIVE),
    }
}

fn total_threads(set: &DeviceSet, cfg: LaunchConfig, per_thread: u32) -> Result<u64> {
    let total = (set.len() as u64)
        .checked_mul(cfg.threads())
        .and_then(|t| t.checked_mul(per_thread as u64))
        .unwrap_or(u64::MAX);
    if total > u32::MAX as u64 {
        return Err(Error::InvalidInput(format!(
            "{total} increments overflow the 32-bit counter: fewer threads or iterations"
        )));
    }
    Ok(total)
}

/// Every thread of every device adds 1 to a counter in device 0's memory `per_thread` times
/// (relaxed atomics at `scope`).
///
/// # Errors
/// [`Error::InvalidInput`] for block scope or a total past `u32`; [`Error::Unsupported`] for
/// GPUs that cannot map each other's memory (peer access is enabled here); a launch or driver
/// error.
pub fn count(set: &DeviceSet, scope: Scope, cfg: LaunchConfig, per_thread: u32) -> Result<PeerRun> {
    let name = scope_name(scope)?;
    enable_peer_access(set)?;
    let data_device = 0;
    let expected = total_threads(set, cfg, per_thread)?;
    let counter = home::<u32>(set, 1)?;
    let args = SharedArgs((counter.ptr(), per_thread, scope));
    let ms = at_once(set, |_, t| {
        let (counter, per_thread, scope) = args.get();
        // SAFETY: `counter` is one live u32 that every device reaches (device 0's memory, peer
        // access enabled by the caller, or the simulators' shared host memory), only added to
        // atomically; `at_once` waits for every launch before it is read or freed.
        unsafe {
            crate::launch!(
                t,
                gpu::lessons::peer::peer_count,
                cfg,
                (counter, per_thread, scope)
            )
        }
    })?;
    let counted = set.targets()[0].download(&counter)?[0] as u64;
    let m = Measured::count(expected, counted, ms);
    Ok(run_report(
        PeerObject::Counter,
        name,
        set,
        cfg,
        per_thread,
        data_device,
        m,
    ))
}

/// Every thread of every device takes a mutex in device 0's memory (at `scope`) and adds 1 to
/// a plain counter in device `data_device`'s memory, `per_thread` times. With the counter on
/// another GPU than the lock word, a release must wait for the holder's store to reach that
/// GPU before the lock word says free — what `.sys` scope orders and `.gpu` does not.
///
/// # Errors
/// As [`count`]; [`Error::LockTimeout`] if a thread waited past `timeout`.
pub fn lock(
    set: &DeviceSet,
    scope: Scope,
    cfg: LaunchConfig,
    per_thread: u32,
    timeout: Duration,
    data_device: usize,
) -> Result<PeerRun> {
    let name = scope_name(scope)?;
    enable_peer_access(set)?;
    let expected = total_threads(set, cfg, per_thread)?;
    let t0 = &set.targets()[0];
    let home_of_data = data_target(set, data_device)?;
    let mutex = DeviceMutex::with_bounds(
        t0,
        MutexBounds {
            timeout,
            ..MutexBounds::default()
        },
    )?;
    let data = home_of_data.zeros::<u32>(1)?;
    let args = SharedArgs((mutex.ptr(), data.ptr(), per_thread, scope));
    let ms = at_once(set, |_, t| {
        let (mutex, data, per_thread, scope) = args.get();
        // SAFETY: the mutex state and `data` are live words in memory every device reaches; the
        // kernel touches `data` only while holding the mutex; `at_once` waits for every launch.
        unsafe {
            crate::launch!(
                t,
                gpu::lessons::peer::peer_lock,
                cfg,
                (mutex, data, per_thread, scope)
            )
        }
    })?;
    mutex.check(t0)?;
    let counted = home_of_data.download(&data)?[0] as u64;
    let m = Measured::count(expected, counted, ms);
    Ok(run_report(
        PeerObject::Lock,
        name,
        set,
        cfg,
        per_thread,
        data_device,
        m,
    ))
}

/// The most rounds [`barrier`] runs: 10⁶ barriers across two GPUs take about 5 s.
pub const MAX_BARRIER_ROUNDS: u32 = 1_000_000;

/// Every device runs a cooperative grid of `cfg`; all grids meet at one barrier in device 0's
/// memory (at `scope`) `rounds` times, each block checking after each barrier that a block half
/// the grid away (on another device) wrote this round before it, in slots in device
/// `data_device`'s memory.
///
/// # Errors
/// [`Error::InvalidInput`] for a grid that does not fit at once on a device, block scope, or
/// more than [`MAX_BARRIER_ROUNDS`] rounds; [`Error::Unsupported`] without peer access
/// between the GPUs; [`Error::BarrierTimeout`] if blocks waited past `timeout` (stretched under
/// a sanitizer: [`wait_bound`]; a device's grid never started); a launch or driver error.
pub fn barrier(
    set: &DeviceSet,
    scope: Scope,
    cfg: LaunchConfig,
    rounds: u32,
    timeout: Duration,
    data_device: usize,
) -> Result<PeerRun> {
    let name = scope_name(scope)?;
    if rounds > MAX_BARRIER_ROUNDS {
        return Err(Error::InvalidInput(format!(
            "{rounds} barrier rounds: at most {MAX_BARRIER_ROUNDS} (seconds on GPUs, longer on \
             the simulator)"
        )));
    }
    enable_peer_access(set)?;
    let per_grid = cfg.grid.count();
    let blocks = per_grid * set.len() as u64;
    if blocks >= 1 << 31 {
        return Err(Error::InvalidInput(format!(
            "{blocks} blocks in all: at most 2³¹ − 1"
        )));
    }
    for t in set.targets() {
        crate::runtime::grid::check_coresident(t, "peer_barrier", &cfg)?;
    }
    let timeout_ns = wait_bound(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX).max(1));
    let t0 = &set.targets()[0];
    let state = t0.upload(&[MultiGridBarrierState::new(blocks as u32, timeout_ns)])?;
    let slots = data_target(set, data_device)?.zeros::<u32>(2 * blocks as usize)?;
    let stale: Vec<Buffer<u32>> = set
        .targets()
        .iter()
        .map(|t| t.zeros(1))
        .collect::<Result<_>>()?;
    let stale_ptrs: Vec<SharedArgs<(*mut u32,)>> =
        stale.iter().map(|s| SharedArgs((s.ptr(),))).collect();
    let args = SharedArgs((state.ptr(), slots.ptr(), rounds, scope));
    let ms = at_once(set, |d, t| {
        let (state, slots, rounds, scope) = args.get();
        let (stale,) = stale_ptrs[d].get();
        let first = (d as u64 * per_grid) as u32;
        // SAFETY: `state` (reset: fresh) and `slots` (2 × blocks words) live in memory every
        // device reaches; `stale[d]` is device d's own counter; every grid fits at once
        // (checked), and `at_once` launches all of them before waiting for any.
        unsafe {
            crate::launch_cooperative!(
                t,
                gpu::lessons::peer::peer_barrier,
                cfg,
                (state, slots, first, rounds, scope, stale)
            )
        }
    })?;
    let end = t0.download(&state)?[0];
    if end.timeouts > 0 {
        return Err(Error::BarrierTimeout {
            blocks: end.timeouts,
        });
    }
    let mut stale_reads = 0u64;
    for (t, s) in set.targets().iter().zip(&stale) {
        stale_reads += t.download(s)?[0] as u64;
    }
    let checked = blocks * rounds as u64;
    let m = Measured {
        expected: checked,
        counted: checked - stale_reads.min(checked),
        ms,
        operations: rounds as f64,
    };
    Ok(run_report(
        PeerObject::Barrier,
        name,
        set,
        cfg,
        rounds,
        data_device,
        m,
    ))
}
