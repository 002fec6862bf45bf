//! The grid barrier: no block let through early at odd shapes, timeouts instead of hangs,
//! oversubscribed grids refused, and the X→P→X variants against the CPU — on the simulator and
//! on the GPU.

mod common;

use gpu::grid::{Arrival, PollSleep};
use gridsync::barrier::{BarrierOptions, Variant, run, xpx_cpu};
use gridsync::runtime::grid::check_coresident;
use gridsync::runtime::launch::LaunchMode;
use gridsync::{DeviceGridBarrier, Error, LaunchConfig, Target};
use std::time::Duration;

/// `rounds` barriers at `blocks × threads`; every block checks every other block's phase after
/// each one. Returns the errors counted.
fn phases(target: &Target, blocks: u32, threads: u32, rounds: u32, mode: LaunchMode) -> u32 {
    phases_in_groups(target, blocks, threads, rounds, mode, Arrival::Auto)
}

/// [`phases`] with the barrier's blocks arriving as `arrival` says.
fn phases_in_groups(
    target: &Target,
    blocks: u32,
    threads: u32,
    rounds: u32,
    mode: LaunchMode,
    arrival: Arrival,
) -> u32 {
    let mut barrier = DeviceGridBarrier::new(target).unwrap();
    barrier.set_arrival(arrival);
    phases_through(target, &barrier, blocks, threads, rounds, mode)
}

/// [`phases`] through `barrier`, set up as the caller chose.
fn phases_through(
    target: &Target,
    barrier: &DeviceGridBarrier,
    blocks: u32,
    threads: u32,
    rounds: u32,
    mode: LaunchMode,
) -> u32 {
    let slots = target.zeros::<u32>(blocks as usize).unwrap();
    let errors = target.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(blocks, threads);
    // SAFETY: one phase slot per block, one error word, the barrier's live state.
    unsafe {
        gridsync::launch_grid_synced!(
            target,
            barrier,
            gpu::checks::barrier::grid_barrier_phases,
            cfg,
            mode,
            (barrier.ptr(), slots.ptr(), rounds, errors.ptr())
        )
        .unwrap()
    };
    target.synchronize().unwrap();
    barrier.check(target).unwrap();
    let last = target.download(&slots).unwrap();
    assert!(last.iter().all(|&p| p == rounds), "{last:?}");
    target.download(&errors).unwrap()[0]
}

#[test]
fn sleeping_between_polls_still_lets_no_block_through_early_on_the_simulator() {
    let target = Target::Sim;
    let mut barrier = DeviceGridBarrier::new(&target).unwrap();
    barrier.set_poll_sleep(PollSleep::Ns(50));
    barrier.set_arrival(Arrival::Groups(2));
    assert_eq!(
        phases_through(&target, &barrier, 5, 19, 10, LaunchMode::Plain),
        0
    );
}

#[test]
fn no_block_passes_early_at_odd_shapes_on_the_simulator() {
    for (blocks, threads) in [(3, 45), (7, 33), (1, 1), (16, 17)] {
        for groups in [
            Arrival::Auto,
            Arrival::OneLevel,
            Arrival::Groups(2),
            Arrival::Groups(3),
        ] {
            let errors =
                phases_in_groups(&Target::Sim, blocks, threads, 25, LaunchMode::Plain, groups);
            assert_eq!(errors, 0, "{blocks}×{threads} arriving {groups:?}");
        }
    }
}

/// One block never arrives: the others give up at the timeout, the host says so, in both launch
/// modes; the timeout stays what it was, and a reset leaves a fresh state that a correct launch
/// passes.
fn absent_block_times_out(target: &Target, blocks: u32) {
    const TIMEOUT: Duration = Duration::from_millis(50);
    for mode in [LaunchMode::Plain, LaunchMode::Cooperative] {
        let barrier = DeviceGridBarrier::with_timeout(target, TIMEOUT).unwrap();
        assert_eq!(barrier.timeout(), TIMEOUT);
        let cfg = LaunchConfig::linear(blocks, 32);
        let start = std::time::Instant::now();
        // SAFETY: the barrier's live state.
        unsafe {
            gridsync::launch_grid_synced!(
                target,
                &barrier,
                gpu::checks::barrier::grid_barrier_absent_block,
                cfg,
                mode,
                (barrier.ptr(), 1u32)
            )
            .unwrap()
        };
        target.synchronize().unwrap();
        let e = barrier.check(target).unwrap_err();
        assert!(
            matches!(e, Error::BarrierTimeout { blocks: b } if b >= 1 && b < blocks),
            "{mode:?}: {e}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{mode:?}: {:?}",
            start.elapsed()
        );
        assert_eq!(
            barrier.read(target).unwrap().timeout_ns,
            TIMEOUT.as_nanos() as u64
        );
        barrier.reset(target).unwrap();
        assert_eq!(
            barrier.read(target).unwrap(),
            gpu::grid::GridBarrierState::new(TIMEOUT.as_nanos() as u64)
        );
        // The state is reset for the next launch: a correct one passes.
        assert_eq!(phases(target, blocks, 32, 3, mode), 0);
    }
}

#[test]
fn a_block_that_never_arrives_is_a_timeout_not_a_hang_on_the_simulator() {
    absent_block_times_out(&Target::Sim, 5);
}

#[test]
fn a_grid_larger_than_the_simulator_runs_at_once_is_refused() {
    let ok = check_coresident(
        &Target::Sim,
        "grid_barrier_bare",
        &LaunchConfig::linear(4, 1024),
    );
    assert!(ok.is_ok(), "{ok:?}");
    let e = check_coresident(
        &Target::Sim,
        "grid_barrier_bare",
        &LaunchConfig::linear(5, 1024),
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    // The experiment refuses it before running anything.
    let o = BarrierOptions {
        blocks: 64,
        threads: 128,
        ..BarrierOptions::default()
    };
    let e = run(&Target::Sim, &o, |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("never all arrive"), "{e}");
}

/// Every correct variant gives the CPU's bits (`run` returns `Mismatch` otherwise); checks the
/// report's shape too.
fn xpx_variants_are_right(target: &Target, o: &BarrierOptions) {
    let r = run(target, o, |_, _| {}).unwrap();
    let want = xpx_cpu(&gridsync::barrier::initial_x(o.len, o.seed), o.iterations);
    assert!(r.cpu_rel_error_f64 < 1e-3, "{}", r.cpu_rel_error_f64);
    for v in &r.runs {
        if v.must_be_correct {
            assert!(v.matches_cpu && v.wrong.is_empty(), "{v:?}");
            assert!(v.launch_error.is_none(), "{v:?}");
        }
        let covered: usize = v.wrong.iter().map(|w| w.len).sum();
        assert_eq!(covered, v.wrong_elements);
        assert!(v.wrong.iter().all(|w| w.start + w.len <= want.len()));
    }
    let ran: Vec<Variant> = r.runs.iter().map(|v| v.variant).collect();
    for v in [
        Variant::ManyLaunches,
        Variant::GridBarrier,
        Variant::Article,
    ] {
        assert!(ran.contains(&v), "{ran:?}");
    }
}

/// The experiment at `blocks × threads` over `len` elements for `iterations`, the rest default.
fn shaped(blocks: u32, threads: u32, len: usize, iterations: u32) -> BarrierOptions {
    BarrierOptions {
        blocks,
        threads,
        len,
        iterations,
        ..BarrierOptions::default()
    }
}

#[test]
fn xpx_correct_variants_match_the_cpu_on_the_simulator() {
    for (blocks, threads, len, iterations) in [
        (2, 64, 128, 10), // the article's, fewer iterations
        (3, 45, 100, 4),  // W below the thread count
        (2, 33, 257, 3),  // W above it: grid-stride
        (1, 1, 1, 2),
    ] {
        let o = shaped(blocks, threads, len, iterations);
        xpx_variants_are_right(&Target::Sim, &o);
    }
}

#[test]
fn bad_experiments_are_errors() {
    for (blocks, threads, len, iterations) in [
        (0, 64, 128, 1),
        (2, 0, 128, 1),
        (2, 64, 0, 1),
        (2, 64, 128, 0),
    ] {
        let o = shaped(blocks, threads, len, iterations);
        let e = run(&Target::Sim, &o, |_, _| {}).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_no_block_passes_early_at_every_grid() {
    let target = common::gpu();
    let sms = common::sm_count(&target);
    let limit = check_coresident(
        &target,
        "grid_barrier_phases",
        &LaunchConfig::linear(1, 128),
    )
    .unwrap();
    for (blocks, threads) in [(3, 45), (7, 33), (sms, 128), (limit, 128)] {
        for mode in [LaunchMode::Plain, LaunchMode::Cooperative] {
            for groups in [
                Arrival::Auto,
                Arrival::OneLevel,
                Arrival::Groups(5),
                Arrival::Groups(16),
            ] {
                let errors = phases_in_groups(&target, blocks, threads, 500, mode, groups);
                assert_eq!(errors, 0, "{blocks}×{threads} {mode:?} arriving {groups:?}");
            }
        }
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_oversubscribed_grids_are_refused_before_launch() {
    let target = common::gpu();
    let limit =
        check_coresident(&target, "grid_barrier_bare", &LaunchConfig::linear(1, 128)).unwrap();
    let barrier = DeviceGridBarrier::new(&target).unwrap();
    for mode in [LaunchMode::Plain, LaunchMode::Cooperative] {
        // Refused before it happens.
        let cfg = LaunchConfig::linear(limit + 1, 128);
        let e = common::grid_barrier_bare(&target, &barrier, cfg, mode, 1).unwrap_err();
        assert!(e.to_string().contains("never all arrive"), "{e}");
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_a_block_that_never_arrives_is_a_timeout() {
    absent_block_times_out(&common::gpu(), 8);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_xpx_correct_variants_are_bit_identical_to_the_cpu() {
    let target = common::gpu();
    let sms = common::sm_count(&target);
    for (blocks, threads, len) in [(2, 64, 128), (sms, 128, 128), (7, 33, 1000)] {
        let o = BarrierOptions {
            blocks,
            threads,
            len,
            repeats: 2,
            ..BarrierOptions::default()
        };
        xpx_variants_are_right(&target, &o);
    }
    // The plain-load spin is compiled into one load: its blocks do not wait, and give up
    // (at 2 blocks both may arrive before either looks, so a full GPU's worth).
    let o = BarrierOptions {
        blocks: sms,
        threads: 128,
        variants: vec![Variant::PlainSpin],
        ..BarrierOptions::default()
    };
    let r = run(&target, &o, |_, _| {}).unwrap();
    assert!(r.runs[0].launch_error.is_some(), "{:?}", r.runs[0]);
}

#[test]
fn a_barrier_after_a_failed_one_fails_at_once_on_the_simulator() {
    use gpu::grid::{BarrierError, GridBarrier};
    use std::sync::atomic::{AtomicU32, Ordering};
    let target = Target::Sim;
    let barrier = DeviceGridBarrier::with_timeout(&target, Duration::from_millis(50)).unwrap();
    barrier.reset(&target).unwrap();
    let state = barrier.ptr() as usize;
    let (timed_out_then_abandoned, other) = (AtomicU32::new(0), AtomicU32::new(0));
    let cfg = LaunchConfig::linear(3, 8);
    gpu::sim::launch(&cfg, || {
        if gpu::index::block_rank_in_grid() == 2 {
            return; // never arrives
        }
        // SAFETY: the barrier's live, reset state; one handle per thread.
        let mut b = unsafe { GridBarrier::from_ptr(state as *mut _) };
        let first = b.sync();
        let second = b.sync();
        if first.is_err() && second == Err(BarrierError::Abandoned) {
            timed_out_then_abandoned.fetch_add(1, Ordering::Relaxed);
        } else {
            other.fetch_add(1, Ordering::Relaxed);
        }
    })
    .unwrap();
    assert_eq!(timed_out_then_abandoned.load(Ordering::Relaxed), 16);
    assert_eq!(other.load(Ordering::Relaxed), 0);
    assert!(matches!(
        barrier.check(&target),
        Err(Error::BarrierTimeout { .. })
    ));
}

#[test]
fn a_launch_that_finds_the_generation_flipped_still_waits_on_the_simulator() {
    // Three barriers (an odd number) leave the generation bit set; a second launch on the same
    // state, not reset, must start from the bit it finds rather than assume zero.
    let target = Target::Sim;
    let barrier = DeviceGridBarrier::new(&target).unwrap();
    let cfg = LaunchConfig::linear(4, 16);
    common::grid_barrier_bare(&target, &barrier, cfg, LaunchMode::Plain, 3).unwrap();
    assert_eq!(barrier.read(&target).unwrap().arrived, 1 << 31);
    let slots = target.zeros::<u32>(4).unwrap();
    let errors = target.zeros::<u32>(1).unwrap();
    // SAFETY: one phase slot per block, one error word, the barrier's live state (not reset).
    unsafe {
        gridsync::launch!(
            target,
            gpu::checks::barrier::grid_barrier_phases,
            cfg,
            (barrier.ptr(), slots.ptr(), 3u32, errors.ptr())
        )
        .unwrap()
    };
    barrier.check(&target).unwrap();
    assert_eq!(target.download(&errors).unwrap()[0], 0);
    // Six more barriers: the bit is back where the launch found it, the count at zero.
    assert_eq!(barrier.read(&target).unwrap().arrived, 1 << 31);
}

#[test]
fn a_length_or_a_count_past_the_limit_is_refused() {
    for o in [
        BarrierOptions {
            len: gridsync::barrier::MAX_LEN + 1,
            ..BarrierOptions::default()
        },
        BarrierOptions {
            iterations: u32::MAX,
            ..BarrierOptions::default()
        },
        BarrierOptions {
            repeats: u32::MAX,
            ..BarrierOptions::default()
        },
    ] {
        let e = run(&Target::Sim, &o, |_, _| {}).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    }
}

#[test]
fn arrival_and_poll_sleep_round_trip_through_the_states_words() {
    use gpu::grid::{
        DEFAULT_GROUP_BLOCKS, DEFAULT_POLL_SLEEP_NS, MAX_GROUPS, POLL_SLEEP_FROM_BLOCKS,
        TWO_LEVEL_FROM_BLOCKS,
    };
    for a in [
        Arrival::Auto,
        Arrival::OneLevel,
        Arrival::Groups(2),
        Arrival::Groups(64),
    ] {
        assert_eq!(Arrival::from_word(a.to_word()), a);
    }
    // A group of one block or none is one level.
    assert_eq!(Arrival::Groups(1).to_word(), Arrival::OneLevel.to_word());
    assert_eq!(Arrival::Groups(0).to_word(), Arrival::OneLevel.to_word());
    let auto = Arrival::Auto;
    assert_eq!(auto.group_size(TWO_LEVEL_FROM_BLOCKS - 1), None);
    assert_eq!(
        auto.group_size(TWO_LEVEL_FROM_BLOCKS),
        Some(DEFAULT_GROUP_BLOCKS)
    );
    let too_many = DEFAULT_GROUP_BLOCKS * (MAX_GROUPS as u32 + 1);
    assert_eq!(
        auto.group_size(too_many),
        None,
        "more than MAX_GROUPS groups"
    );
    assert_eq!(Arrival::OneLevel.group_size(5000), None);
    assert_eq!(Arrival::Groups(5).group_size(16), Some(5));
    assert_eq!(
        Arrival::Groups(16).group_size(16),
        None,
        "one group is one level"
    );
    for p in [PollSleep::Auto, PollSleep::Ns(0), PollSleep::Ns(100)] {
        assert_eq!(PollSleep::from_word(p.to_word()), p);
    }
    assert_eq!(PollSleep::Ns(u32::MAX).to_word(), u32::MAX - 1);
    assert_eq!(PollSleep::Auto.ns(POLL_SLEEP_FROM_BLOCKS - 1), 0);
    assert_eq!(
        PollSleep::Auto.ns(POLL_SLEEP_FROM_BLOCKS),
        DEFAULT_POLL_SLEEP_NS
    );
    assert_eq!(PollSleep::Ns(7).ns(5000), 7);
}
