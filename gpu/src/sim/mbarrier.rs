//! The simulator's `mbarrier`: the same state machine as the hardware's, in one 64-bit word.
//!
//! The GPU keeps an `mbarrier`'s state in its 8 bytes of shared memory in a layout of its own;
//! here the 8 bytes hold, from the low bits up: the arrivals still pending in the current phase
//! (21 bits), the arrivals each phase expects (21 bits), the transaction count (21 bits, two's
//! complement: a copy may complete its bytes before they are expected) and the phase's parity
//! (bit 63). Every operation is one compare-and-swap on the word, so the simulated threads
//! update it as atomically as the hardware does.
//!
//! A phase completes when no arrival is pending and the transaction count is zero; then the
//! parity flips, the pending count is reset to the expected count and the transaction count to
//! zero. Misuse that is undefined on the GPU — using a barrier before `init`, more arrivals than
//! are pending — panics here, which the simulator reports as the kernel's failure; in a checked
//! launch an arrival beyond the pending count is the checker's finding instead, with its line,
//! and the phase completes with the arrivals it had.
//!
//! In a checked launch every update of the word is reported (`check::mbarrier_update`): an
//! arrival releases into the phase it lands in, a completed test acquires the phase it saw
//! complete, and the checker counts the phases the word's parity cannot.

use super::check::{self, FindingKind, MBarrierUpdate};
use crate::mbarrier::BarrierScope;
use core::cell::Cell;
use core::panic::Location;
use core::sync::atomic::{AtomicU64, Ordering};

const FIELD_BITS: u32 = 21;
const FIELD_MASK: u64 = (1 << FIELD_BITS) - 1;
const PENDING_SHIFT: u32 = 0;
const EXPECTED_SHIFT: u32 = FIELD_BITS;
const TX_SHIFT: u32 = 2 * FIELD_BITS;
/// The phase parity bit, where the simulator's tokens keep it too.
pub(crate) const PARITY_BIT: u64 = 1 << 63;

/// The decoded word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    pending: u32,
    expected: u32,
    tx: i32,
    parity: bool,
}

impl State {
    fn decode(w: u64) -> State {
        let tx = ((w >> TX_SHIFT) & FIELD_MASK) as u32;
        // Sign-extend the 21-bit field.
        let tx = ((tx << (32 - FIELD_BITS)) as i32) >> (32 - FIELD_BITS);
        State {
            pending: ((w >> PENDING_SHIFT) & FIELD_MASK) as u32,
            expected: ((w >> EXPECTED_SHIFT) & FIELD_MASK) as u32,
            tx,
            parity: w & PARITY_BIT != 0,
        }
    }

    fn encode(self) -> u64 {
        (self.pending as u64) << PENDING_SHIFT
            | (self.expected as u64) << EXPECTED_SHIFT
            | ((self.tx as u32 as u64) & FIELD_MASK) << TX_SHIFT
            | if self.parity { PARITY_BIT } else { 0 }
    }

    /// Completes the phase if nothing is pending.
    fn settle(mut self) -> State {
        if self.pending == 0 && self.tx == 0 {
            self.parity = !self.parity;
            self.pending = self.expected;
        }
        self
    }
}

/// The largest arrival count and transaction count an `mbarrier` holds: 2²⁰ − 1.
pub(crate) const MAX_COUNT: u32 = (1 << 20) - 1;

/// # Safety
/// `p` is a valid, 8-byte-aligned word for the duration of the call.
unsafe fn word<'a>(p: *mut u64) -> &'a AtomicU64 {
    // SAFETY: forwarded to the caller.
    unsafe { AtomicU64::from_ptr(p) }
}

/// `mbarrier.init`: phase 0, `count` arrivals expected, no transactions.
///
/// # Safety
/// As [`word`].
pub(crate) unsafe fn init(p: *mut u64, count: u32) {
    assert!(
        (1..=MAX_COUNT).contains(&count),
        "mbarrier.init with count {count}: the count is 1 to 2^20 - 1"
    );
    let s = State {
        pending: count,
        expected: count,
        tx: 0,
        parity: false,
    };
    check::mbarrier_update(p as usize, MBarrierUpdate::Init, || {
        // SAFETY: forwarded to the caller.
        unsafe { word(p) }.store(s.encode(), Ordering::Release);
        (false, false)
    });
}

/// `mbarrier.inval`: the word is ordinary memory again.
///
/// # Safety
/// As [`word`].
pub(crate) unsafe fn inval(p: *mut u64) {
    // SAFETY: forwarded to the caller.
    unsafe { word(p) }.store(0, Ordering::Release);
}

/// One update of the word, reported to the checker as `report`: `f` gets the decoded state and
/// returns the new one (before the phase is settled). Returns the word before the update.
///
/// # Safety
/// As [`word`].
unsafe fn update(
    p: *mut u64,
    what: &str,
    report: MBarrierUpdate,
    f: impl Fn(State) -> State,
) -> u64 {
    let mut before = 0;
    check::mbarrier_update(p as usize, report, || {
        // SAFETY: forwarded to the caller.
        let (old, new) = unsafe { update_word(p, what, f) };
        before = old;
        (old & PARITY_BIT != 0, new & PARITY_BIT != 0)
    });
    before
}

/// [`update`]'s compare-and-swap loop: returns the word before and after.
///
/// # Safety
/// As [`word`].
unsafe fn update_word(p: *mut u64, what: &str, f: impl Fn(State) -> State) -> (u64, u64) {
    // SAFETY: forwarded to the caller.
    let w = unsafe { word(p) };
    let mut old = w.load(Ordering::Acquire);
    loop {
        let s = State::decode(old);
        assert!(
            s.expected != 0 || s.pending != 0,
            "{what} on an mbarrier that was never initialized (undefined on the GPU)"
        );
        let new = f(s).settle().encode();
        match w.compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return (old, new),
            Err(seen) => old = seen,
        }
    }
}

/// An arrival of `count` (dropping `drop` from the expected count for the phases after this
/// one) that first expects `tx` more bytes, releasing at `scope`, made at `site`. Returns the
/// token: the parity of the phase it arrived at, in [`PARITY_BIT`].
///
/// # Safety
/// As [`word`].
pub(crate) unsafe fn arrive(
    p: *mut u64,
    count: u32,
    drop: u32,
    tx: u32,
    scope: BarrierScope,
    site: &'static Location<'static>,
) -> u64 {
    // In a weak launch an arrival releases what this thread has seen to those who complete a
    // wait on the barrier (`mbarrier.arrive` has release semantics).
    let _ = super::weak_op(|w, me| w.barrier_arrive(me, p as usize, scope.into()));
    let beyond = Cell::new(false);
    // Asked before the update: the update runs inside the checker's report of it, where the
    // thread's checker state is borrowed.
    let checked = check::in_checked_launch();
    // SAFETY: forwarded to the caller.
    let old = unsafe {
        update(
            p,
            "mbarrier.arrive",
            MBarrierUpdate::Arrive(scope.into()),
            |mut s| {
                if count > s.pending {
                    assert!(
                        checked,
                        "mbarrier.arrive of {count} with {} arrivals pending (undefined on the GPU)",
                        s.pending
                    );
                    beyond.set(true);
                }
                s.pending -= count.min(s.pending);
                s.expected -= drop.min(s.expected);
                s.tx = add_tx(s.tx, tx as i64);
                s
            },
        )
    };
    if beyond.get() {
        check::mbarrier_misuse(FindingKind::ArrivalBeyondCount, p as usize, site);
    }
    old & PARITY_BIT
}

/// `expect_tx` (`bytes` positive) or `complete_tx` (negative; a bulk copy's completion reports
/// its write as `report`).
///
/// # Safety
/// As [`word`].
pub(crate) unsafe fn transact(p: *mut u64, bytes: i64, report: MBarrierUpdate) {
    // SAFETY: forwarded to the caller.
    unsafe {
        update(p, "mbarrier transaction count", report, |mut s| {
            s.tx = add_tx(s.tx, bytes);
            s
        })
    };
}

fn add_tx(tx: i32, bytes: i64) -> i32 {
    let sum = tx as i64 + bytes;
    assert!(
        sum.unsigned_abs() <= MAX_COUNT as u64,
        "mbarrier transaction count {sum} is out of range (±(2^20 - 1) bytes; undefined on the GPU)"
    );
    sum as i32
}

/// Whether the phase of parity `parity` (in [`PARITY_BIT`]) has completed: the barrier's
/// current parity differs from it. One that has acquires at `scope`. `by_parity`: the line of a
/// wait by parity (not by a token), whose completion on a phase the thread already waited for
/// the checker reports.
///
/// # Safety
/// As [`word`].
pub(crate) unsafe fn phase_done(
    p: *mut u64,
    parity: u64,
    scope: BarrierScope,
    by_parity: Option<&'static Location<'static>>,
) -> bool {
    check::mbarrier_test(
        p as usize,
        parity & PARITY_BIT != 0,
        scope,
        by_parity,
        || {
            // SAFETY: forwarded to the caller.
            unsafe { test_word(p, parity, scope) }
        },
    )
}

/// [`phase_done`]'s read of the word.
///
/// # Safety
/// As [`word`].
unsafe fn test_word(p: *mut u64, parity: u64, scope: BarrierScope) -> bool {
    // SAFETY: forwarded to the caller.
    let w = unsafe { word(p) }.load(Ordering::Acquire);
    let s = State::decode(w);
    assert!(
        s.expected != 0 || s.pending != 0,
        "waiting on an mbarrier that was never initialized (undefined on the GPU)"
    );
    let done = (w & PARITY_BIT) != (parity & PARITY_BIT);
    if done {
        // A completed wait acquires what the arrivals released.
        let _ = super::weak_op(|w, me| w.barrier_leave(me, p as usize, scope.into()));
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: BarrierScope = BarrierScope::Block;

    /// An arrival made on this line.
    unsafe fn arrive_(p: *mut u64, count: u32, drop: u32, tx: u32, scope: BarrierScope) -> u64 {
        // SAFETY: forwarded to the caller.
        unsafe { arrive(p, count, drop, tx, scope, Location::caller()) }
    }

    #[test]
    fn the_word_round_trips() {
        for s in [
            State {
                pending: 3,
                expected: MAX_COUNT,
                tx: -(MAX_COUNT as i32),
                parity: true,
            },
            State {
                pending: 0,
                expected: 1,
                tx: MAX_COUNT as i32,
                parity: false,
            },
        ] {
            assert_eq!(State::decode(s.encode()), s);
        }
    }

    #[test]
    fn a_phase_needs_its_arrivals_and_its_bytes() {
        let mut w = 0u64;
        let p = &raw mut w;
        unsafe {
            init(p, 2);
            assert_eq!(arrive_(p, 1, 0, 64, S), 0);
            assert!(!phase_done(p, 0, S, None));
            transact(p, -32, MBarrierUpdate::Transact);
            assert_eq!(arrive_(p, 1, 0, 0, S), 0);
            assert!(!phase_done(p, 0, S, None), "32 bytes are still to come");
            transact(p, -32, MBarrierUpdate::Transact);
            assert!(phase_done(p, 0, S, None));
            assert!(!phase_done(p, PARITY_BIT, S, None));
            // A copy may complete before its bytes are expected.
            transact(p, -16, MBarrierUpdate::Transact);
            assert_eq!(arrive_(p, 2, 0, 16, S), PARITY_BIT);
            assert!(phase_done(p, PARITY_BIT, S, None));
            // Dropping: the next phases expect one arrival.
            arrive_(p, 1, 1, 0, S);
            arrive_(p, 1, 0, 0, S);
            assert!(phase_done(p, 0, S, None));
            arrive_(p, 1, 0, 0, S);
            assert!(
                phase_done(p, PARITY_BIT, S, None),
                "one arrival completes a phase now"
            );
        }
    }

    #[test]
    #[should_panic(expected = "never initialized")]
    fn an_uninitialized_barrier_is_refused() {
        let mut w = 0u64;
        unsafe { arrive_(&raw mut w, 1, 0, 0, S) };
    }

    #[test]
    #[should_panic(expected = "arrivals pending")]
    fn too_many_arrivals_are_refused() {
        let mut w = 0u64;
        unsafe {
            init(&raw mut w, 1);
            arrive_(&raw mut w, 2, 0, 0, S);
        }
    }
}
