//! The host-side owner of a grid barrier's state: [`DeviceGridBarrier`].
//!
//! A [`gpu::grid::GridBarrier`] works only if three things hold at every launch, and none of them
//! can be checked on the device: its state starts reset, every block of the grid is resident
//! at once, and the state outlives the launch. [`DeviceGridBarrier::launch`] does the first two
//! ([`check_coresident`], then the reset) before it launches; for the third, call
//! [`DeviceGridBarrier::check`] (it waits for the launch) before the owner is dropped — freeing
//! the memory also waits for the kernels using it, as for [`DeviceLock`](super::lock::DeviceLock).

use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::enqueue;
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::{check_coresident, check_coresident_in};
use crate::runtime::launch::{KernelArgs, LaunchMode, Target};
use crate::runtime::module::Module;
use crate::runtime::wait::wait_bound;
use gpu::LaunchConfig;
use gpu::grid::{Arrival, DEFAULT_TIMEOUT_NS, GridBarrierState, GroupWord, MAX_GROUPS, PollSleep};
use std::time::Duration;

// SAFETY: `#[repr(C, align(128))]` of u32/u64 fields with every padding byte an explicit field
// (256 bytes plus a 128-byte line per group, asserted on the device side); every bit pattern is
// a valid state.
unsafe impl Plain for GridBarrierState {}

/// A grid barrier's state in device memory, owned by the host.
///
/// The one owner of its memory: neither `Clone` nor `Copy`, freed once when dropped. Kernels
/// receive only [`DeviceGridBarrier::ptr`], a raw pointer, and build a non-owning handle from it
/// on the device with `gpu::grid::GridBarrier::from_ptr(state)`, then call its `sync()` between
/// stages and return on an error (`gpu::bench::barrier::grid_barrier_bare` is the smallest
/// such kernel). On the host:
///
/// ```no_run
/// # fn main() -> gridsync::Result<()> {
/// use gridsync::primitives::barrier::DeviceGridBarrier;
/// use gridsync::runtime::launch::LaunchMode;
/// use gridsync::{LaunchConfig, Target, launch_grid_synced};
///
/// let target = Target::open(0, false)?;
/// let barrier = DeviceGridBarrier::new(&target)?;
/// let cfg = LaunchConfig::linear(2, 64);
/// // SAFETY: the kernel's only pointer is the barrier's state, which outlives the launch
/// // (`check` waits for it).
/// unsafe {
///     launch_grid_synced!(
///         &target,
///         barrier,
///         gridsync::gpu::bench::barrier::grid_barrier_bare,
///         cfg,
///         LaunchMode::Cooperative,
///         (barrier.ptr(), 100u32)
///     )?;
/// }
/// barrier.check(&target)?;
/// # Ok(()) }
/// ```
///
/// One barrier serves any number of launches, one at a time: each [`launch`](Self::launch)
/// resets it, and [`check`](Self::check) after each says whether a block gave up waiting.
pub struct DeviceGridBarrier {
    state: Buffer<GridBarrierState>,
    timeout_ns: u64,
    arrival: Arrival,
    poll_sleep: PollSleep,
}

impl DeviceGridBarrier {
    /// A barrier on `target` whose blocks give up after `gpu::grid::DEFAULT_TIMEOUT_NS` (1 s,
    /// stretched under a sanitizer: [`wait_bound`]).
    ///
    /// # Errors
    /// A driver error (out of memory, …).
    pub fn new(target: &Target) -> Result<DeviceGridBarrier> {
        DeviceGridBarrier::with_state(target, DEFAULT_TIMEOUT_NS)
    }

    /// A barrier on `target` whose blocks give up after waiting `timeout` for the others
    /// (stretched under a sanitizer where it is a second or more: [`wait_bound`]; a shorter,
    /// deliberate one is kept). On the simulator keep it well under its 20 s deadlock limit, or
    /// the threads waiting at `sync_threads` behind a stuck block report a deadlock first.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero timeout (every barrier would fail); a driver error.
    pub fn with_timeout(target: &Target, timeout: Duration) -> Result<DeviceGridBarrier> {
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        if ns == 0 {
            return Err(Error::InvalidInput(
                "a grid barrier timeout of zero would fail every barrier".into(),
            ));
        }
        DeviceGridBarrier::with_state(target, ns)
    }

    fn with_state(target: &Target, timeout_ns: u64) -> Result<DeviceGridBarrier> {
        let timeout_ns = wait_bound(timeout_ns);
        Ok(DeviceGridBarrier {
            state: target.upload(&[GridBarrierState::new(timeout_ns)])?,
            timeout_ns,
            arrival: Arrival::Auto,
            poll_sleep: PollSleep::Auto,
        })
    }

    /// The pointer kernels take. Valid while `self` lives; a launch must not outlive it, which
    /// [`DeviceGridBarrier::check`] (it synchronizes) before dropping guarantees.
    pub fn ptr(&self) -> *mut GridBarrierState {
        self.state.ptr()
    }

    /// How long a block waits before giving up: the bound the device got, after [`wait_bound`].
    pub fn timeout(&self) -> Duration {
        Duration::from_nanos(self.timeout_ns)
    }

    /// The state as it is now (waits for queued kernels first).
    ///
    /// # Errors
    /// A driver error, including a fault of a kernel that used the barrier.
    pub fn read(&self, target: &Target) -> Result<GridBarrierState> {
        super::read_state(target, &self.state, "a grid barrier")
    }

    /// Puts the barrier back in its state before any launch: no block arrived, none gave up,
    /// the same settings. On a GPU four 4-byte memsets and one of the group lines, queued on the
    /// library stream after the kernels already there and before the next: the host does not
    /// wait, so a timed launch does not time a round trip to the host.
    ///
    /// # Errors
    /// A driver error.
    pub fn reset(&self, target: &Target) -> Result<()> {
        let mut fresh = GridBarrierState::new(self.timeout_ns);
        fresh.group_blocks = self.arrival.to_word();
        fresh.poll_sleep_ns = self.poll_sleep.to_word();
        let Target::Gpu(gpu) = target else {
            return target.write(&self.state, &[fresh]);
        };
        let words = [
            (std::mem::offset_of!(GridBarrierState, arrived), 0),
            (
                std::mem::offset_of!(GridBarrierState, group_blocks),
                self.arrival.to_word(),
            ),
            (
                std::mem::offset_of!(GridBarrierState, poll_sleep_ns),
                self.poll_sleep.to_word(),
            ),
            (std::mem::offset_of!(GridBarrierState, timeouts), 0),
        ];
        let stream = gpu.stream();
        for (offset, value) in words {
            enqueue::fill_words(gpu, stream, &self.state, (offset, 4, 1), value)?;
        }
        // The group words: the first `u32` of each 128-byte line.
        let groups = std::mem::offset_of!(GridBarrierState, groups);
        let line = size_of::<GroupWord>();
        enqueue::fill_words(gpu, stream, &self.state, (groups, line, MAX_GROUPS), 0)
    }

    /// How the blocks arrive, for the next launches: [`Arrival::Auto`] (the default: the
    /// device chooses by the grid's size), [`Arrival::OneLevel`], or [`Arrival::Groups`] — a
    /// group size that would make more than [`MAX_GROUPS`] groups, or one group, arrives on one
    /// level ([`Arrival::group_size`] says which). For measuring; the default is the measured
    /// best.
    pub fn set_arrival(&mut self, arrival: Arrival) {
        self.arrival = arrival;
    }

    /// How long a waiting block sleeps between polls, for the next launches:
    /// [`PollSleep::Auto`] (the default) or [`PollSleep::Ns`]. For measuring.
    pub fn set_poll_sleep(&mut self, poll_sleep: PollSleep) {
        self.poll_sleep = poll_sleep;
    }

    /// Waits for the kernels using the barrier and checks that no block gave up waiting.
    ///
    /// This is what decides whether the launch's results can be used: once any block has
    /// timed out, an `Ok` from `GridBarrier::sync` in another block proves nothing (see
    /// [`GridBarrier`](gpu::grid::GridBarrier), "Bounded").
    ///
    /// # Errors
    /// [`Error::BarrierTimeout`] with the number of blocks that gave up; a driver error.
    pub fn check(&self, target: &Target) -> Result<()> {
        match self.read(target)?.timeouts {
            0 => Ok(()),
            blocks => Err(Error::BarrierTimeout { blocks }),
        }
    }

    /// Launches `kernel`, which uses this barrier, on the library stream: refuses a grid that
    /// cannot be resident at once ([`check_coresident`]), resets the barrier, then launches in
    /// `mode` ([`Target::launch_with`]). It does not wait: call [`DeviceGridBarrier::check`]
    /// afterwards. Use [`launch_grid_synced!`](crate::launch_grid_synced!), which fills in
    /// `name`.
    ///
    /// # Safety
    /// As [`Target::launch`], and:
    /// - the kernel's barrier state argument is [`DeviceGridBarrier::ptr`] of `self`;
    /// - no other launch using this barrier runs meanwhile (launches on the library stream run
    ///   one after another; a launch on another stream must have finished).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a grid over the co-residency limit (nothing is launched) or a
    /// bad shape; as [`Target::launch_with`].
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        target: &Target,
        name: &'static str,
        cfg: LaunchConfig,
        args: A,
        kernel: A::Fn,
        mode: LaunchMode,
    ) -> Result<()> {
        check_coresident(target, name, &cfg)?;
        self.reset(target)?;
        // SAFETY: forwarded to the caller; the state is zeroed and the grid fits at once.
        unsafe { target.launch_with(name, cfg, args, kernel, mode) }
    }

    /// [`DeviceGridBarrier::launch`] for a kernel of your own `module`
    /// ([`check_coresident_in`], [`Target::launch_in`]). Use
    /// `launch_grid_synced!(&target, barrier, module => kernels::step, cfg, mode, (args…))`.
    ///
    /// # Safety
    /// As [`DeviceGridBarrier::launch`].
    ///
    /// # Errors
    /// As [`DeviceGridBarrier::launch`] and [`Target::launch_in`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch_in<A: KernelArgs>(
        &self,
        target: &Target,
        module: &Module,
        name: &'static str,
        cfg: LaunchConfig,
        args: A,
        kernel: A::Fn,
        mode: LaunchMode,
    ) -> Result<()> {
        check_coresident_in(target, module, name, &cfg)?;
        self.reset(target)?;
        // SAFETY: forwarded to the caller; the state is zeroed and the grid fits at once.
        unsafe { target.launch_in(module, name, cfg, args, kernel, mode) }
    }
}

impl std::fmt::Debug for DeviceGridBarrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceGridBarrier")
            .field("timeout_ns", &self.timeout_ns)
            .finish_non_exhaustive()
    }
}

/// Launches a kernel that uses a [`DeviceGridBarrier`], by its path:
/// `launch_grid_synced!(&target, barrier, gpu::bench::barrier::grid_barrier_bare, cfg,
/// LaunchMode::Cooperative, (barrier.ptr(), rounds))`.
///
/// Expands to [`DeviceGridBarrier::launch`] with the kernel's PTX name (`target` is a
/// `&Target`); `unsafe` for the same reasons, so it must be used inside an `unsafe` block that
/// says why the pointers are valid. Call [`DeviceGridBarrier::check`] after it.
#[macro_export]
macro_rules! launch_grid_synced {
    ($target:expr, $barrier:expr, $module:expr => $kernel:path, $cfg:expr, $mode:expr, ($($arg:expr),* $(,)?)) => {
        $barrier.launch_in(
            $target,
            &$module,
            $crate::runtime::launch::kernel_name(stringify!($kernel)),
            $cfg,
            ($($arg,)*),
            $kernel,
            $mode,
        )
    };
    ($target:expr, $barrier:expr, $kernel:path, $cfg:expr, $mode:expr, ($($arg:expr),* $(,)?)) => {
        $barrier.launch(
            $target,
            $crate::runtime::launch::kernel_name(stringify!($kernel)),
            $cfg,
            ($($arg,)*),
            $kernel,
            $mode,
        )
    };
}
