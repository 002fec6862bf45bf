//! The shadow memory: for every 8-byte granule a launch touched, the accesses that a later one
//! may still race with, each knowing which of the granule's bytes it covers.
//!
//! Per granule, not per byte: most accesses are aligned and 4 or 8 bytes wide, so one record
//! serves all their bytes, and a lookup is one hash per granule, not per byte. Precision stays
//! per byte: a record carries a mask of the granule's bytes it covers, two accesses conflict only
//! if their masks meet, and a later access makes an earlier one forgotten only on the bytes it
//! covers itself (the earlier one's mask shrinks). An access wider than a granule, or crossing
//! one, is checked granule by granule.
//!
//! What is remembered (FastTrack's epochs, generalized to atomics and scopes): per granule the
//! writes and the reads, each as its thread's epoch and what a finding shows. An access forgets
//! an earlier one it is ordered after when it races with everything the earlier one would race
//! with later ([`covers`]); so in a race-free granule of plain accesses one write and one read
//! per concurrent reader remain. Concurrent atomics, which need not be ordered, remain one per
//! thread; past [`Options::records_per_granule`](super::Options::records_per_granule) of one
//! kind the oldest is forgotten (counted in the report: a race with it may go unseen).

use super::access::{AccessKind, Bytes, FindingKind, Mode, Space, VolatileAs, classify, covers};
use super::clock::{Meter, VectorClock};
use super::shape::Shape;
use super::sync::Releases;
use core::panic::Location;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Bytes per granule.
pub(super) const GRANULE: usize = 8;

/// Shards of the shadow memory, each under its own lock: enough that threads touching
/// different granules rarely wait for each other.
const SHARDS: usize = 256;

/// One remembered access, on the bytes of one granule.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record {
    /// The thread's dense index.
    pub(super) slot: u32,
    /// The thread's own clock entry when it made the access.
    pub(super) clock: u32,
    /// The granule's bytes it covers (bit *i*: byte *i*).
    pub(super) mask: u8,
    pub(super) kind: AccessKind,
    pub(super) mode: Mode,
    /// All its bytes (beyond this granule too), as the finding shows them.
    pub(super) bytes: Bytes,
    pub(super) site: &'static Location<'static>,
}

impl Record {
    /// Whether `new` is this access again, by the same thread at the same epoch: from the same
    /// line, of the same kind and mode, at the same bytes, on bytes of this granule this record
    /// still covers.
    fn repeated_by(&self, new: &Record) -> bool {
        self.slot == new.slot
            && self.clock == new.clock
            && new.mask & !self.mask == 0
            && self.kind == new.kind
            && self.mode == new.mode
            && self.bytes == new.bytes
            && core::ptr::eq(self.site, new.site)
    }
}

/// What deciding a race needs besides the two accesses.
pub(super) struct Rules<'a> {
    pub(super) shape: &'a Shape,
    pub(super) volatile: VolatileAs,
    pub(super) cap: usize,
}

/// The shadow of one granule.
#[derive(Default)]
pub(super) struct Cell {
    writes: Vec<Record>,
    reads: Vec<Record>,
    /// The releases kept at each atomic location that starts in this granule.
    locations: Vec<(usize, u32, Releases)>,
    /// The bytes written so far in this launch (bit *i*: byte *i*): a read of shared memory
    /// outside them reads what the hardware left there.
    written: u8,
}

impl Cell {
    /// Checks `new`, made by a thread whose clock is `clock`, against what the granule
    /// remembers — `race` is called with each earlier access it races with — then remembers
    /// it. Returns how many records were forgotten for room, and the heap bytes grown.
    pub(super) fn access(
        &mut self,
        new: &Record,
        clock: &VectorClock,
        rules: &Rules<'_>,
        race: &mut dyn FnMut(&Record, FindingKind),
    ) -> (u64, isize) {
        let ordered = |r: &Record| r.slot == new.slot || r.clock <= clock.get(r.slot);
        let me = rules.shape.thread_of(new.slot);
        // Shared memory starts undefined on a GPU (the simulator's is zeroed): a read of bytes
        // no access of this launch has written is initcheck's finding, for shared memory.
        let reads = matches!(new.kind, AccessKind::Load | AccessKind::Rmw);
        if reads && new.bytes.space == Space::Shared && new.mask & !self.written != 0 {
            race(new, FindingKind::UninitializedRead);
        }
        if new.kind.writes() {
            self.written |= new.mask;
        }
        // FastTrack's same epoch: this thread made the very access since its last release (a
        // spin's repeated load, a loop's repeated atomic add). Nothing synchronized after that
        // one that it does not also synchronize after, so the new one races with no access the
        // earlier did not race with, from the same two lines; only the count of a finding
        // misses the repeats.
        let own = if new.kind.writes() {
            &self.writes
        } else {
            &self.reads
        };
        if own.iter().any(|r| r.repeated_by(new)) {
            return (0, 0);
        }
        let lists: &[&Vec<Record>] = if new.kind.writes() {
            &[&self.writes, &self.reads]
        } else {
            &[&self.writes]
        };
        for r in lists.iter().flat_map(|l| l.iter()) {
            if r.mask & new.mask != 0 && !ordered(r) {
                let them = rules.shape.thread_of(r.slot);
                if let Some(kind) = classify(
                    rules.shape,
                    rules.volatile,
                    (them, r.mode, r.bytes),
                    (me, new.mode, new.bytes),
                ) {
                    race(r, kind);
                }
            }
        }
        let forget = |list: &mut Vec<Record>| {
            list.retain_mut(|r| {
                if r.mask & new.mask != 0
                    && ordered(r)
                    && covers(
                        rules.volatile,
                        (new.slot, new.mode, new.bytes),
                        (r.slot, r.mode, r.bytes),
                    )
                {
                    r.mask &= !new.mask;
                }
                r.mask != 0
            });
        };
        // A write makes earlier writes and reads forgotten; a read only earlier reads (a later
        // read need not race with the writes it follows).
        if new.kind.writes() {
            forget(&mut self.writes);
        }
        forget(&mut self.reads);
        let list = if new.kind.writes() {
            &mut self.writes
        } else {
            &mut self.reads
        };
        let before = list.capacity();
        if before == 0 {
            // Most granules keep one record of each kind: no room for four.
            list.reserve_exact(1);
        }
        let mut forgotten = 0;
        if list.len() >= rules.cap {
            list.remove(0);
            forgotten = 1;
        }
        list.push(*new);
        let grown = (list.capacity() - before) * size_of::<Record>();
        (forgotten, grown as isize)
    }

    /// The releases kept at the atomic location `bytes` (which starts in this granule), made
    /// empty if new; and the heap bytes grown.
    pub(super) fn location(&mut self, bytes: Bytes) -> (&mut Releases, isize) {
        let key = (bytes.addr, bytes.width);
        let before = self.locations.capacity();
        let at = match self.locations.iter().position(|l| (l.0, l.1) == key) {
            Some(at) => at,
            None => {
                self.locations.push((key.0, key.1, Releases::default()));
                self.locations.len() - 1
            }
        };
        let grown = (self.locations.capacity() - before) * size_of::<(usize, u32, Releases)>();
        (&mut self.locations[at].2, grown as isize)
    }
}

/// A multiplicative hash of a granule's index (its address over [`GRANULE`]).
#[derive(Default)]
struct GranuleHasher(u64);

impl Hasher for GranuleHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Cells = HashMap<usize, Cell, BuildHasherDefault<GranuleHasher>>;

/// A shard's lock on a cache line of its own, so that threads locking neighbouring shards do
/// not slow each other down.
#[repr(align(128))]
#[derive(Default)]
struct Shard(Mutex<Cells>);

/// Heap bytes of one granule's entry in its shard's table (the key, the cell, the table's
/// control byte), before its records.
const CELL_BYTES: isize = (size_of::<(usize, Cell)>() + 1) as isize;

/// The shadow memory of one launch.
pub(super) struct Shadow {
    shards: Box<[Shard]>,
}

impl Shadow {
    pub(super) fn new() -> Shadow {
        Shadow {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
        }
    }

    fn shard(&self, granule: usize) -> MutexGuard<'_, Cells> {
        // Another multiplier than the table's hash: the table's buckets must not all share the
        // bits that chose the shard.
        let h = (granule as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SHARDS.ilog2());
        // A panic under the lock (none is expected) leaves a granule's lists consistent.
        self.shards[h as usize]
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the shadow of granule `granule`, under its shard's lock.
    pub(super) fn with_cell<R>(
        &self,
        granule: usize,
        meter: &Meter,
        f: impl FnOnce(&mut Cell) -> R,
    ) -> R {
        let mut cells = self.shard(granule);
        let cell = cells.entry(granule).or_insert_with(|| {
            meter.shadow(CELL_BYTES);
            Cell::default()
        });
        f(cell)
    }
}

/// The granules `bytes` touches, each with the mask of its bytes in it.
pub(super) fn granules(bytes: Bytes) -> impl Iterator<Item = (usize, u8)> {
    let (start, end) = (bytes.addr, bytes.addr + bytes.width as usize);
    let (first, last) = (start / GRANULE, (end - 1) / GRANULE);
    (first..=last).map(move |g| {
        let lo = start.max(g * GRANULE) - g * GRANULE;
        let hi = end.min((g + 1) * GRANULE) - g * GRANULE;
        let mask = ((1u16 << hi) - (1u16 << lo)) as u8;
        (g, mask)
    })
}
