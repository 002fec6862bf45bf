//! Vector clocks, and the meter that bounds the memory of every clock but the threads' own.
//!
//! A thread's clock holds, for each thread of the launch, how far into that thread's history
//! it has synchronized: entry *u* of thread *t*'s clock is the last epoch of *u* that happens
//! before *t*'s present. An access is recorded as one epoch (its thread and that thread's own
//! entry at the time), and is ordered before a later access of thread *t* exactly when the
//! epoch's value is at most *t*'s entry for the epoch's thread (FastTrack, PLDI 2009).
//!
//! A clock stores only the range of entries that can be non-zero: a thread that synchronized
//! with its block only has its block's entries, so block-local kernels pay for block-sized
//! clocks, not launch-sized ones.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A vector clock over the dense thread indices of a launch; entries outside
/// `lo..lo + v.len()` are zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct VectorClock {
    lo: u32,
    v: Vec<u32>,
}

impl VectorClock {
    /// The clock of thread `slot` at its start: its own first epoch, nothing of anyone else.
    pub(super) fn start(slot: u32) -> VectorClock {
        VectorClock {
            lo: slot,
            v: vec![1],
        }
    }

    /// `slot`'s entry.
    #[inline]
    pub(super) fn get(&self, slot: u32) -> u32 {
        self.v
            .get(slot.wrapping_sub(self.lo) as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Advances `slot`'s own entry (after a release: what the thread does next is not part of
    /// what it released). `None` if the entry would overflow.
    pub(super) fn tick(&mut self, slot: u32) -> Option<()> {
        self.cover(slot, slot + 1);
        let e = &mut self.v[(slot - self.lo) as usize];
        *e = e.checked_add(1)?;
        Some(())
    }

    /// Raises every entry to at least `other`'s (the clock of a synchronization joins the
    /// clock of the other side).
    pub(super) fn join(&mut self, other: &VectorClock) {
        if other.v.is_empty() {
            return;
        }
        self.cover(other.lo, other.lo + other.v.len() as u32);
        let at = (other.lo - self.lo) as usize;
        for (a, &b) in self.v[at..at + other.v.len()].iter_mut().zip(&other.v) {
            *a = (*a).max(b);
        }
    }

    /// Raises `slot`'s entry to at least `value`.
    pub(super) fn join_entry(&mut self, slot: u32, value: u32) {
        self.cover(slot, slot + 1);
        let e = &mut self.v[(slot - self.lo) as usize];
        *e = (*e).max(value);
    }

    /// Heap bytes.
    pub(super) fn bytes(&self) -> usize {
        self.v.capacity() * size_of::<u32>()
    }

    /// Widens the stored range to hold `lo..hi`.
    fn cover(&mut self, lo: u32, hi: u32) {
        if self.v.is_empty() {
            self.lo = lo;
            self.v = vec![0; (hi - lo) as usize];
            return;
        }
        let (old_lo, old_hi) = (self.lo, self.lo + self.v.len() as u32);
        if lo >= old_lo && hi <= old_hi {
            return;
        }
        let (new_lo, new_hi) = (lo.min(old_lo), hi.max(old_hi));
        let mut v = vec![0; (new_hi - new_lo) as usize];
        let at = (old_lo - new_lo) as usize;
        v[at..at + self.v.len()].copy_from_slice(&self.v);
        self.lo = new_lo;
        self.v = v;
    }
}

/// Why the checker stopped checking a launch before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The shadow memory (what is remembered of each accessed byte) reached its bound.
    ShadowBytes {
        /// [`Options::shadow_bytes`](super::Options::shadow_bytes).
        limit: usize,
    },
    /// The clocks kept at locations, barriers and fences reached their bound.
    ClockBytes {
        /// [`Options::clock_bytes`](super::Options::clock_bytes).
        limit: usize,
    },
    /// A thread made more than 2³² − 1 releases: its clock would wrap.
    ClockOverflow,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::ShadowBytes { limit } => {
                write!(f, "the shadow memory reached its bound of {limit} bytes")
            }
            StopReason::ClockBytes { limit } => write!(
                f,
                "the clocks of locations, barriers and fences reached their bound of {limit} bytes"
            ),
            StopReason::ClockOverflow => write!(f, "a thread's clock reached 2^32 - 1 releases"),
        }
    }
}

/// The memory a launch's checker holds beyond the threads' own clocks, against its bounds; and
/// whether checking has stopped because one was reached.
#[derive(Debug)]
pub(super) struct Meter {
    shadow: AtomicUsize,
    shadow_limit: usize,
    clocks: AtomicUsize,
    clock_limit: usize,
    stopped: AtomicBool,
    reason: OnceLock<StopReason>,
}

impl Meter {
    pub(super) fn new(shadow_limit: usize, clock_limit: usize) -> Meter {
        Meter {
            shadow: AtomicUsize::new(0),
            shadow_limit,
            clocks: AtomicUsize::new(0),
            clock_limit,
            stopped: AtomicBool::new(false),
            reason: OnceLock::new(),
        }
    }

    /// Whether checking has stopped: every later event is ignored (and counted).
    #[inline]
    pub(super) fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    pub(super) fn stop(&self, why: StopReason) {
        let _ = self.reason.set(why);
        self.stopped.store(true, Ordering::Relaxed);
    }

    pub(super) fn reason(&self) -> Option<StopReason> {
        self.reason.get().copied()
    }

    /// Counts `grown` more (or fewer) bytes of shadow memory; stops checking past the bound.
    pub(super) fn shadow(&self, grown: isize) {
        let now = self.shadow.fetch_add(grown as usize, Ordering::Relaxed) as isize + grown;
        if grown > 0 && now as usize > self.shadow_limit {
            self.stop(StopReason::ShadowBytes {
                limit: self.shadow_limit,
            });
        }
    }

    /// As [`Meter::shadow`], for clocks.
    fn clocks(&self, grown: isize) {
        let now = self.clocks.fetch_add(grown as usize, Ordering::Relaxed) as isize + grown;
        if grown > 0 && now as usize > self.clock_limit {
            self.stop(StopReason::ClockBytes {
                limit: self.clock_limit,
            });
        }
    }

    /// The bytes counted now: (shadow, clocks).
    pub(super) fn used(&self) -> (usize, usize) {
        (
            self.shadow.load(Ordering::Relaxed),
            self.clocks.load(Ordering::Relaxed),
        )
    }
}

/// A clock kept outside its thread — at a location, a barrier phase, a fence — counted by the
/// launch's [`Meter`] while it lives. Shared (`Arc`) where one release is kept in several
/// places; copied on write.
#[derive(Debug)]
pub(super) struct SyncClock {
    clock: VectorClock,
    meter: Arc<Meter>,
}

impl SyncClock {
    pub(super) fn new(clock: VectorClock, meter: &Arc<Meter>) -> Arc<SyncClock> {
        meter.clocks(clock.bytes() as isize);
        Arc::new(SyncClock {
            clock,
            meter: Arc::clone(meter),
        })
    }

    pub(super) fn clock(&self) -> &VectorClock {
        &self.clock
    }

    /// Joins `other` into the clock behind `this`, copying it first if it is shared.
    pub(super) fn join(this: &mut Arc<SyncClock>, other: &VectorClock) {
        if Arc::get_mut(this).is_none() {
            *this = SyncClock::new(this.clock.clone(), &this.meter);
        }
        let me = Arc::get_mut(this).expect("a clock just copied is unshared");
        let before = me.clock.bytes();
        me.clock.join(other);
        me.meter.clocks(me.clock.bytes() as isize - before as isize);
    }
}

impl Drop for SyncClock {
    fn drop(&mut self) {
        self.meter.clocks(-(self.clock.bytes() as isize));
    }
}
