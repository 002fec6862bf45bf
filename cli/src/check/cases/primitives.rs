//! The warp, shared-memory, fence and clock primitives: the checks of
//! `gpu/src/checks/primitives.rs`, launched and judged as `tests/primitives.rs` and
//! `tests/runtime.rs` do.

use super::{BLOCKS, THREADS};
use crate::check::{Case, Ran};
use gpu::LaunchConfig;
use gpu::checks::primitives::{self as p, WARP_CHECK_FIELDS};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// What `timer_check` sleeps, and the least `wait_at_least` waits: 100 µs, from which the
/// simulator's `nanosleep` really sleeps (below it only yields).
const SLEEP_NS: u32 = 100_000;

/// The primitives' check kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "primitives",
            K::WarpCheck.name(),
            Clean,
            "3 × 40",
            "shuffles, a ballot, sync_warp; the block's values shared through sync_threads",
            |t| warp(t)
        ),
        case!(
            "primitives",
            K::FenceCheck.name(),
            Clean,
            "3 × 40",
            "one thread: a store after each kind of fence, then a release store of the flag",
            |t| fences(t)
        ),
        case!(
            "primitives",
            K::TimerCheck.name(),
            Clean,
            "3 × 40, 100 µs",
            "one thread reads the global timer and clock64 around a nanosleep",
            |t| timers(t)
        )
        .not_run_on_weak("it compares clocks, which the weak memory's turns stretch"),
        case!(
            "primitives",
            K::WaitAtLeast.name(),
            Clean,
            "3 × 40, 100 µs",
            "one thread sleeps until the global timer has moved 100 µs",
            |t| wait(t)
        ),
    ]
}

/// `warp_check` over random words, each thread's row against the CPU's model of it.
fn warp(t: &Target) -> Result<Ran> {
    let n = (BLOCKS * THREADS) as usize;
    let input: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i >> 3))
        .collect();
    let inp = t.upload(&input)?;
    let out = t.upload(&vec![0xdead_beef_u32; n * WARP_CHECK_FIELDS])?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS).with_shared_bytes(4 * THREADS);
    // SAFETY: one input and one output row per thread, one word of shared memory per thread.
    unsafe { gridsync::launch!(t, p::warp_check, cfg, (inp.ptr().cast_const(), out.ptr()))? };
    let got = t.download(&out)?;
    for g in 0..n {
        let row = &got[g * WARP_CHECK_FIELDS..][..WARP_CHECK_FIELDS];
        for (f, want) in gridsync::primitives::warp::warp_check_row(&input, THREADS as usize, g)
            .iter()
            .enumerate()
        {
            if want.is_some_and(|w| w != row[f]) {
                return Err(Error::Mismatch(format!(
                    "warp_check: thread {g}, field {f}: {}, not {want:?}",
                    row[f]
                )));
            }
        }
    }
    Ok(Ran::Finished)
}

/// `fence_check`: the nine stores and the flag, all written.
fn fences(t: &Target) -> Result<Ran> {
    let data = t.zeros::<u32>(9)?;
    let flag = t.zeros::<u32>(1)?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    // SAFETY: 9 data words and one flag, written by thread 0 only.
    unsafe { gridsync::launch!(t, p::fence_check, cfg, (data.ptr(), flag.ptr()))? };
    let (data, flag) = (t.download(&data)?, t.download(&flag)?[0]);
    if data != (1..=9).collect::<Vec<u32>>() || flag != 1 {
        return Err(Error::Mismatch(format!(
            "fence_check: {data:?}, flag {flag}"
        )));
    }
    Ok(Ran::Finished)
}

/// `timer_check`: the global timer moved by at least the sleep, the clock forward.
fn timers(t: &Target) -> Result<Ran> {
    let out = t.zeros::<u64>(4)?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    // SAFETY: four words, written by thread 0 only.
    unsafe { gridsync::launch!(t, p::timer_check, cfg, (out.ptr(), SLEEP_NS))? };
    let w = t.download(&out)?;
    if w[1] < w[0] + u64::from(SLEEP_NS) || w[3] <= w[2] {
        return Err(Error::Mismatch(format!(
            "timer_check: timer {} → {}, clock {} → {}",
            w[0], w[1], w[2], w[3]
        )));
    }
    Ok(Ran::Finished)
}

/// `wait_at_least`: its two readings of the global timer at least the wait apart.
fn wait(t: &Target) -> Result<Ran> {
    let out = t.zeros::<u64>(2)?;
    let cfg = LaunchConfig::linear(BLOCKS, THREADS);
    // SAFETY: two words, written by thread 0 only.
    unsafe { gridsync::launch!(t, p::wait_at_least, cfg, (out.ptr(), u64::from(SLEEP_NS)))? };
    let w = t.download(&out)?;
    if w[1] < w[0] + u64::from(SLEEP_NS) {
        return Err(Error::Mismatch(format!(
            "wait_at_least: {} ns, not {SLEEP_NS}",
            w[1] - w[0]
        )));
    }
    Ok(Ran::Finished)
}
