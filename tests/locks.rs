//! Locks: every variant of the progression under contention, the guard, the bounded wait and
//! its error, the host-side owner — on the simulator, and on the GPU where there is one. The
//! command: `cli/tests/`.

mod common;

use gpu::lock::{LockError, Mutex, MutexState, TicketLock, TicketState};
use gridsync::locks::{self, SOURCE_SHAPES, Shape, Variant, run_variant};
use gridsync::{DeviceMutex, Error, MutexBounds, Target};
use std::time::Duration;

fn shape(blocks: u32, threads: u32) -> Shape {
    Shape { blocks, threads }
}

/// Every variant at `shape` × `iters` on `target`: exact counts (the unfenced lock may lose
/// updates, never gain them), the lock left free.
fn every_variant_counts_exactly(target: &Target, shape: Shape, iters: u32) {
    // The simulator's OS threads hand a lock over far more slowly than a GPU (a sleeping
    // ticket holder wakes after the OS's timer slack, not nanoseconds): give them time.
    let bounds = MutexBounds {
        timeout: Duration::from_secs(if target.is_sim() { 30 } else { 2 }),
        ..MutexBounds::default()
    };
    for variant in Variant::ALL {
        let r = run_variant(target, variant, shape, iters, bounds)
            .unwrap_or_else(|e| panic!("{variant:?} at {shape}: {e}"));
        assert_eq!(r.expected, shape.count() * iters as u64);
        if variant.may_lose_updates() {
            assert!(r.counter <= r.expected && r.counter > 0, "{r:?}");
        } else {
            assert_eq!(r.counter, r.expected, "{variant:?} at {shape}");
        }
    }
}

#[test]
fn add_one_mutex_counts_160_on_the_simulator() {
    assert_eq!(locks::add_one_mutex(&Target::Sim).unwrap(), 160);
}

#[test]
fn every_lock_is_exclusive_under_contention_on_the_simulator() {
    for s in SOURCE_SHAPES {
        every_variant_counts_exactly(&Target::Sim, s, 3);
    }
    // Partial warps, and several warps per block.
    every_variant_counts_exactly(&Target::Sim, shape(3, 45), 7);
}

/// Runs `body` as the one thread of a simulated launch (the locks read the lane id), and fails
/// the test with its panic if it panics.
fn in_one_thread(body: impl Fn() + Sync) {
    gpu::sim::launch(&gridsync::LaunchConfig::linear(1, 1), body).unwrap();
}

/// Runs `body` with a `Mutex` on `state` as the one thread of a simulated launch; returns the
/// state as the launch left it.
fn with_one_mutex(state: MutexState, body: impl Fn(&Mutex) + Sync) -> MutexState {
    let mut state = Box::new(state);
    let addr = &mut *state as *mut MutexState as usize;
    in_one_thread(|| {
        // SAFETY: the state outlives the launch and is only used through this handle.
        body(&unsafe { Mutex::from_ptr(addr as *mut MutexState) })
    });
    *state
}

#[test]
fn the_guard_releases_on_drop_and_a_failed_try_does_not() {
    with_one_mutex(MutexState::default(), |m| {
        let guard = m.try_lock().expect("a free mutex");
        assert!(m.is_locked());
        // A failed attempt must not release the holder's lock.
        assert!(m.try_lock().is_none());
        assert!(m.is_locked());
        drop(guard);
        assert!(!m.is_locked());
        drop(m.lock().expect("free again"));
        assert!(!m.is_locked());
    });
}

#[test]
fn a_held_mutex_times_out_with_the_error_word_set() {
    let state = with_one_mutex(MutexState::new(20_000_000, 32, 1024), |m| {
        let held = m.lock().expect("free");
        let started = std::time::Instant::now();
        assert_eq!(m.lock().err(), Some(LockError::TimedOut));
        assert!(started.elapsed() >= Duration::from_millis(20));
        // Once one thread gave up, the next does not wait out its own deadline.
        assert_eq!(m.lock().err(), Some(LockError::Abandoned));
        core::mem::forget(held);
    });
    assert_eq!(state.timeouts, 2);
}

#[test]
fn with_runs_the_section_holding_the_lock_and_not_when_it_cannot_take_it() {
    let state = with_one_mutex(MutexState::new(20_000_000, 32, 1024), |m| {
        // The section runs holding the lock, its value comes back, and the lock is free after.
        assert_eq!(m.with(|| m.is_locked()), Ok(true));
        assert!(!m.is_locked());
        assert_eq!(m.with(|| 41 + 1), Ok(42));
        // Held elsewhere: the bounded wait gives up and the section does not run.
        let held = m.lock().expect("free");
        let mut ran = false;
        assert_eq!(m.with(|| ran = true), Err(LockError::TimedOut));
        assert!(!ran && m.is_locked());
        assert_eq!(m.with(|| ran = true), Err(LockError::Abandoned));
        assert!(!ran);
        drop(held);
    });
    assert_eq!(state.timeouts, 2);
}

#[test]
fn ticket_lock_serves_in_order_and_times_out() {
    let mut state = Box::new(TicketState::new(20_000_000, 16));
    let addr = &mut *state as *mut TicketState as usize;
    in_one_thread(|| {
        // SAFETY: as above.
        let t = unsafe { TicketLock::from_ptr(addr as *mut TicketState) };
        for _ in 0..3 {
            drop(t.lock().expect("uncontended"));
        }
        let held = t.lock().expect("uncontended");
        assert_eq!(t.lock().err(), Some(LockError::TimedOut));
        core::mem::forget(held);
    });
    let s = *state;
    assert_eq!((s.next, s.serving, s.timeouts), (5, 3, 1));
}

#[test]
fn a_lock_held_forever_fails_the_host_call_instead_of_hanging() {
    let timeout = Duration::from_millis(50);
    let (e, took) = locks::held_forever(&Target::Sim, shape(2, 16), timeout).unwrap();
    match e {
        Error::LockTimeout { lock, threads } => {
            assert_eq!(lock, "mutex");
            assert_eq!(threads, 31, "every waiter gives up");
        }
        other => panic!("expected LockTimeout, got {other}"),
    }
    assert!(
        took >= timeout && took < Duration::from_secs(20),
        "{took:?}"
    );
}

#[test]
fn one_device_mutex_serves_many_launches_and_is_checked_after_each() {
    let t = Target::Sim;
    let m = DeviceMutex::new(&t).unwrap();
    let counter = t.zeros::<u32>(1).unwrap();
    let cfg = gridsync::LaunchConfig::linear(3, 32);
    for round in 1..=3u32 {
        // SAFETY: `counter` and the mutex state outlive the launch.
        unsafe {
            gridsync::launch!(
                t,
                gpu::lessons::locks::lock_mutex,
                cfg,
                (counter.ptr(), m.ptr(), 2)
            )
            .unwrap()
        };
        m.check(&t).unwrap();
        assert_eq!(t.download(&counter).unwrap()[0], round * 192);
    }
    // A lock left held is reported, and `reset` repairs it.
    let mut s = m.read(&t).unwrap();
    s.word = gpu::lock::LOCKED;
    let held = DeviceMutex::with_state(&t, s).unwrap();
    assert!(matches!(held.check(&t), Err(Error::LockHeld("mutex"))));
}

#[test]
fn bad_lock_parameters_are_errors() {
    let t = Target::Sim;
    let bad = |b: MutexBounds| DeviceMutex::with_bounds(&t, b).err();
    let zero = MutexBounds {
        timeout: Duration::ZERO,
        ..Default::default()
    };
    let inverted = MutexBounds {
        backoff_min_ns: 500,
        backoff_max_ns: 100,
        ..Default::default()
    };
    let huge = MutexBounds {
        backoff_max_ns: 5_000_000,
        ..Default::default()
    };
    for b in [zero, inverted, huge] {
        assert!(matches!(bad(b), Some(Error::InvalidInput(_))), "{b:?}");
    }
    let b = MutexBounds::default();
    let run = |v, s, i| run_variant(&t, v, s, i, b).err();
    assert!(matches!(
        run(Variant::Mutex, shape(2, 2), 0),
        Some(Error::InvalidInput(_))
    ));
    assert!(matches!(
        run(Variant::Fenced, shape(1024, 1024), 1),
        Some(Error::InvalidInput(_))
    ));
    assert!(matches!(
        run(Variant::Mutex, shape(65536, 1024), 65536),
        Some(Error::InvalidInput(_))
    ));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_lock_is_exclusive_on_the_gpu() {
    let gpu = common::gpu();
    assert_eq!(locks::add_one_mutex(&gpu).unwrap(), 160);
    for s in SOURCE_SHAPES {
        every_variant_counts_exactly(&gpu, s, 16);
    }
    every_variant_counts_exactly(&gpu, shape(3, 45), 9);
    // Every thread of the GPU on one lock (the source locks at one round, within their cap).
    every_variant_counts_exactly(&gpu, locks::full_gpu_shape(&gpu), 1);
    for v in [
        Variant::WarpLeader,
        Variant::Mutex,
        Variant::MutexWith,
        Variant::Ticket,
    ] {
        let s = locks::full_gpu_shape(&gpu);
        let r = run_variant(&gpu, v, shape(s.blocks * 4, 256), 4, MutexBounds::default())
            .unwrap_or_else(|e| panic!("{v:?}: {e}"));
        assert_eq!(r.counter, r.expected, "{v:?}");
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_lock_held_forever_times_out_on_the_gpu() {
    let gpu = common::gpu();
    let timeout = Duration::from_millis(100);
    let full = locks::full_gpu_shape(&gpu);
    let (e, took) = locks::held_forever(&gpu, full, timeout).unwrap();
    match e {
        Error::LockTimeout { threads, .. } => assert_eq!(threads as u64, full.count() - 1),
        other => panic!("expected LockTimeout, got {other}"),
    }
    assert!(took >= timeout && took < Duration::from_secs(5), "{took:?}");
}
