//! The locks: the lesson's variants, the Numba tutorial's, the library's under stress, and a
//! lock nobody releases.

use super::stress::stress;
use super::{BLOCKS, THREADS};
use crate::check::{Case, Ran};
use crate::litmus::primitives::Primitive;
use gridsync::MutexBounds;
use gridsync::locks::{Shape as LockShape, Variant as LockVariant};
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// The locks, the broken ones with their finding.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "locks",
            K::LockUnfenced.name(),
            DataRace,
            "3 × 40, 2 each",
            "relaxed CAS and exch: nothing orders the critical section",
            |t| lock(t, LockVariant::Unfenced)
        ),
        case!(
            "locks",
            K::LockFenced.name(),
            Clean,
            "3 × 40, 2 each",
            "threadfence after the CAS and before the exch",
            |t| lock(t, LockVariant::Fenced)
        ),
        case!(
            "locks",
            K::LockLoop.name(),
            Clean,
            "3 × 40, 2 each",
            "lock, section and unlock in one loop body",
            |t| lock(t, LockVariant::Loop)
        ),
        case!(
            "locks",
            K::LockWarpLeader.name(),
            Clean,
            "3 × 40, 2 each",
            "a leader lane locks; the lanes pass the section along with sync_warp",
            |t| lock(t, LockVariant::WarpLeader)
        ),
        case!(
            "locks",
            K::LockMutex.name(),
            Clean,
            "3 × 40, 2 each",
            "the library's Mutex: acquire CAS, release store",
            |t| lock(t, LockVariant::Mutex)
        ),
        case!(
            "locks",
            K::LockMutexWith.name(),
            Clean,
            "3 × 40, 2 each",
            "Mutex::with: the critical section as a closure",
            |t| lock(t, LockVariant::MutexWith)
        ),
        case!(
            "locks",
            K::LockTicket.name(),
            Clean,
            "3 × 40, 2 each",
            "the library's ticket lock",
            |t| lock(t, LockVariant::Ticket)
        ),
        case!(
            "locks",
            K::AddOneMutex.name(),
            Clean,
            "10 × 16",
            "the Numba tutorial's fenced lock",
            |t| {
                gridsync::locks::add_one_mutex(t)?;
                Ok(Ran::Finished)
            }
        ),
        case!(
            "locks",
            "lock_stress: Mutex<DeviceScope>",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "random locks, each guarding two plain payload words",
            |t| stress(t, Primitive::Mutex)
        ),
        case!(
            "locks",
            "lock_stress: Mutex<SystemScope>",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "random locks, each guarding two plain payload words",
            |t| stress(t, Primitive::MutexSystem)
        ),
        case!(
            "locks",
            "lock_stress: TicketLock",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "random ticket locks, each guarding two plain payload words",
            |t| stress(t, Primitive::Ticket)
        ),
        case!(
            "locks",
            "lock_stress: spin + threadfence",
            Clean,
            "3 × 40, 4 locks, 2 each",
            "the tutorial's spin lock, fenced on both sides",
            |t| stress(t, Primitive::SpinFenced)
        ),
        case!(
            "locks",
            "lock_stress: spin, no fence",
            DataRace,
            "3 × 40, 4 locks, 2 each",
            "the same spin without its fences: nothing orders the payload",
            |t| stress(t, Primitive::SpinUnfenced)
        ),
        case!(
            "locks",
            K::MutexHeldForever.name(),
            Stuck,
            "3 × 40",
            "every thread waits for a Mutex nobody releases",
            |t| held_forever(t)
        ),
    ]
}

fn lock(t: &Target, variant: LockVariant) -> Result<Ran> {
    let shape = LockShape {
        blocks: BLOCKS,
        threads: THREADS,
    };
    gridsync::locks::run_variant(t, variant, shape, 2, MutexBounds::default())?;
    Ok(Ran::Finished)
}

/// `mutex_held_forever` with a short timeout: the lock's bounded wait gives up.
fn held_forever(t: &Target) -> Result<Ran> {
    let shape = LockShape {
        blocks: BLOCKS,
        threads: THREADS,
    };
    let (e, _) = gridsync::locks::held_forever(t, shape, std::time::Duration::from_millis(50))?;
    Ok(Ran::Stuck(e.to_string()))
}
