//! What an access is — where, how wide, how made — and when two conflicting accesses that no
//! synchronization orders are a race.
//!
//! PTX (Memory Consistency Model, "Morally strong operations", "Data races"): two operations
//! are *morally strong* relative to each other if they are in program order (one thread), or
//! both are strong — relaxed, acquire, release, acq_rel, or volatile, which PTX treats as relaxed
//! at system scope — each specifies a scope that includes the other's thread, and, both being
//! memory accesses, they overlap completely (same address, same size). Two conflicting accesses
//! (overlapping, at least one a write) that are not morally strong and not ordered by causality
//! race.

use super::shape::{Shape, ThreadId, ThreadScope};
use crate::atomic::{LoadOrder, Order, StoreOrder};
use core::panic::Location;

/// The state space an address lies in: only to say where a race is, never to decide one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Device memory (`.global`).
    Global,
    /// A block's shared memory (`.shared::cta`), or a cluster sibling's (`.shared::cluster`):
    /// a race here is racecheck's "shared-memory hazard".
    Shared,
    /// Host memory mapped into the device's address space (pinned, or a peer's).
    Host,
}

impl Space {
    /// `global`, `shared` or `host`.
    pub const fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Host => "host",
        }
    }
}

/// The bytes an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bytes {
    /// The first byte's address.
    pub addr: usize,
    /// How many bytes (any width: 1 to 16 for one instruction, more for a bulk copy).
    pub width: u32,
    /// Where they are.
    pub space: Space,
}

impl Bytes {
    /// `width` bytes of global memory at `addr`.
    pub const fn global(addr: usize, width: u32) -> Bytes {
        Bytes {
            addr,
            width,
            space: Space::Global,
        }
    }

    /// `width` bytes of shared memory at `addr`.
    pub const fn shared(addr: usize, width: u32) -> Bytes {
        Bytes {
            addr,
            width,
            space: Space::Shared,
        }
    }

    /// The bytes of the `T` that `p` points to, in `space`.
    pub fn of<T>(p: *const T, space: Space) -> Bytes {
        Bytes {
            addr: p as usize,
            width: size_of::<T>() as u32,
            space,
        }
    }
}

/// Whether an access reads, writes, or both in one indivisible step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// A load.
    Load,
    /// A store.
    Store,
    /// A read-modify-write (`atom`, `red`): one access that reads and writes.
    Rmw,
    /// No access: an arrival at a block barrier (`bar.sync`), as a barrier finding shows it.
    Barrier,
    /// No access: an arrival at an `mbarrier` (its bytes are the barrier's).
    MBarrierArrive,
    /// No access: a wait by parity on an `mbarrier` that saw its phase complete.
    MBarrierWait,
}

impl AccessKind {
    /// Whether it writes (a store or a read-modify-write): what makes two accesses conflict.
    pub const fn writes(self) -> bool {
        matches!(self, AccessKind::Store | AccessKind::Rmw)
    }

    /// `load`, `store` or `read-modify-write`.
    pub const fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Rmw => "read-modify-write",
            AccessKind::Barrier => "block barrier",
            AccessKind::MBarrierArrive => "mbarrier arrival",
            AccessKind::MBarrierWait => "mbarrier wait",
        }
    }
}

/// How an access is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// An ordinary access (`ld`, `st`): weak, no scope, orders nothing.
    Plain,
    /// `ld.volatile` / `st.volatile`: PTX treats it as relaxed at system scope (see
    /// [`VolatileAs`] for how the checker counts it).
    Volatile,
    /// An atomic access (`ld.<order>.<scope>`, `st.<order>.<scope>`, `atom`, `red`).
    Atomic {
        /// Its ordering. A load's release half and a store's acquire half mean nothing (PTX has
        /// neither) and are ignored.
        order: Order,
        /// Its scope.
        scope: ThreadScope,
    },
    /// A write of an asynchronous bulk copy (`cp.async.bulk`), made by the copy on behalf of
    /// the thread that issued it: weak, like a plain store.
    BulkCopy,
}

impl Mode {
    /// An atomic load's mode.
    pub fn load(order: LoadOrder, scope: impl Into<ThreadScope>) -> Mode {
        let order = match order {
            LoadOrder::Relaxed => Order::Relaxed,
            LoadOrder::Acquire => Order::Acquire,
        };
        Mode::Atomic {
            order,
            scope: scope.into(),
        }
    }

    /// An atomic store's mode.
    pub fn store(order: StoreOrder, scope: impl Into<ThreadScope>) -> Mode {
        let order = match order {
            StoreOrder::Relaxed => Order::Relaxed,
            StoreOrder::Release => Order::Release,
        };
        Mode::Atomic {
            order,
            scope: scope.into(),
        }
    }

    /// A read-modify-write's mode.
    pub fn rmw(order: Order, scope: impl Into<ThreadScope>) -> Mode {
        Mode::Atomic {
            order,
            scope: scope.into(),
        }
    }

    /// The scope it is strong at, if it is strong.
    fn strong_at(self, volatile: VolatileAs) -> Option<ThreadScope> {
        match (self, volatile) {
            (Mode::Atomic { scope, .. }, _) => Some(scope),
            (Mode::Volatile, VolatileAs::RelaxedSystem) => Some(ThreadScope::System),
            _ => None,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Plain => write!(f, "plain"),
            Mode::Volatile => write!(f, "volatile"),
            Mode::Atomic { order, scope } => write!(f, "{}.{}", order.ptx(), scope.ptx()),
            Mode::BulkCopy => write!(f, "bulk copy"),
        }
    }
}

/// How the checker counts a volatile access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VolatileAs {
    /// As PTX does: relaxed at system scope, so two volatile accesses, or a volatile access and
    /// an atomic whose scope includes its thread, do not race (the sources' `volatile` spin on a
    /// counter other threads add to atomically).
    RelaxedSystem,
    /// As a plain access: any unordered conflict with it is a data race (stricter than PTX).
    Plain,
}

/// One access, as a finding shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The thread that made it.
    pub thread: ThreadId,
    /// Where in the source.
    pub site: &'static Location<'static>,
    /// Load, store or read-modify-write.
    pub kind: AccessKind,
    /// Its bytes.
    pub bytes: Bytes,
    /// How it was made.
    pub mode: Mode,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            AccessKind::Barrier => {
                return write!(
                    f,
                    "block barrier reached by {} at {}",
                    self.thread, self.site
                );
            }
            AccessKind::MBarrierArrive | AccessKind::MBarrierWait => {
                return write!(
                    f,
                    "{} at {} {:#x} by {} at {}",
                    self.kind.name(),
                    self.bytes.space.name(),
                    self.bytes.addr,
                    self.thread,
                    self.site
                );
            }
            _ => {}
        }
        write!(
            f,
            "{} {} of {} bytes at {} {:#x} by {} at {}",
            self.mode,
            self.kind.name(),
            self.bytes.width,
            self.bytes.space.name(),
            self.bytes.addr,
            self.thread,
            self.site
        )
    }
}

/// What two conflicting accesses not ordered by happens-before are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// At least one is weak (plain, a bulk copy's write, or volatile under
    /// [`VolatileAs::Plain`]), or both are strong but overlap only in part: PTX's data race.
    DataRace,
    /// Both are strong and cover the same bytes, but the scope of one does not include the
    /// other's thread: a `.cta` atomic on a counter that threads of another block update too
    /// (iGUARD's scoped race).
    ScopeRace,
    /// Not a race of two accesses: threads of one block met at one block barrier (`bar.sync`,
    /// which is `.aligned`) from two different call sites — a barrier in a branch that not
    /// every thread takes, which PTX leaves undefined and `compute-sanitizer --tool synccheck`
    /// reports as divergent threads. Both sides are the barriers' call sites.
    BarrierDivergence,
    /// Not a race either: a read of shared memory that no access of the launch has written —
    /// on a GPU, whatever the last kernel left there (the simulator's shared memory is zeroed,
    /// which hides it). Both sides are the read.
    UninitializedRead,
    /// An access of a checked launch that runs past the end of a buffer the simulator
    /// allocated (into its guard zone): memcheck's out-of-bounds access. `second` is the
    /// access; `first` spans the buffer (its first byte and length), at the same site.
    OutOfBounds,
    /// An `mbarrier` arrival beyond the arrivals its phase still expects: undefined on the GPU
    /// (the phase may complete early, the next one with an arrival too many). Both sides are
    /// the arrival.
    ArrivalBeyondCount,
    /// A wait by parity that completed on a phase its thread had already waited for: the
    /// parity was not moved on, so the wait passed at once, without the phase it meant (a
    /// stale read may follow), or waits for one it did not mean. `first` is the earlier wait.
    StaleParity,
    /// Not a race either: a load or store that names global memory (`ld.global`, `st.global`,
    /// `ld.global.nc`: [`global::stg`](crate::global::stg),
    /// [`global::ldg_plain`](crate::global::ldg_plain), [`readonly::ldg`](crate::readonly::ldg))
    /// made to an address in a block's shared memory. On a GPU the address is taken as a
    /// global one: the access faults, or reaches whatever global memory lies there. Both sides
    /// are the access.
    WrongSpace,
}

impl FindingKind {
    /// `data race`, `scope race`, `barrier divergence`, `uninitialized read`, `out of bounds`,
    /// `arrival beyond count`, `stale parity` or `wrong space`.
    pub const fn name(self) -> &'static str {
        match self {
            FindingKind::DataRace => "data race",
            FindingKind::ScopeRace => "scope race",
            FindingKind::BarrierDivergence => "barrier divergence",
            FindingKind::UninitializedRead => "uninitialized read",
            FindingKind::OutOfBounds => "out of bounds",
            FindingKind::ArrivalBeyondCount => "arrival beyond count",
            FindingKind::StaleParity => "stale parity",
            FindingKind::WrongSpace => "wrong space",
        }
    }
}

/// What two conflicting accesses of different threads, not ordered by happens-before, are:
/// `None` when they are morally strong (two atomics in each other's scope, covering the same
/// bytes), which PTX allows.
pub(super) fn classify(
    shape: &Shape,
    volatile: VolatileAs,
    a: (ThreadId, Mode, Bytes),
    b: (ThreadId, Mode, Bytes),
) -> Option<FindingKind> {
    let (Some(sa), Some(sb)) = (a.1.strong_at(volatile), b.1.strong_at(volatile)) else {
        return Some(FindingKind::DataRace);
    };
    if (a.2.addr, a.2.width) != (b.2.addr, b.2.width) {
        return Some(FindingKind::DataRace);
    }
    if shape.includes(sa, a.0, b.0) && shape.includes(sb, b.0, a.0) {
        None
    } else {
        Some(FindingKind::ScopeRace)
    }
}

/// Whether a later access of mode `later` (with bytes `lb`), made after an earlier one
/// (`earlier`, `eb`) of the same or an ordered-before thread, races with every later access that
/// the earlier one would race with — so that the earlier one may be forgotten on the bytes they
/// share. A weak access covers anything; a strong one only a strong one of its own thread with
/// the same bytes and a scope no wider than the earlier one's (every thread the earlier one's
/// scope leaves out, the later one's leaves out too).
pub(super) fn covers(
    volatile: VolatileAs,
    later: (u32, Mode, Bytes),
    earlier: (u32, Mode, Bytes),
) -> bool {
    match (later.1.strong_at(volatile), earlier.1.strong_at(volatile)) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(sl), Some(se)) => {
            later.0 == earlier.0
                && sl <= se
                && (later.2.addr, later.2.width) == (earlier.2.addr, earlier.2.width)
        }
    }
}
