//! The host runtime and the race demo: simulator, no-GPU behavior, and the GPU. The command
//! and the benchmarks: `cli/tests/`.

mod common;

use gridsync::{Error, Gpu, LaunchConfig, Target, Timer, race};

#[test]
fn race_on_the_simulator_counts_exactly_with_atomics() {
    let r = race::run(&Target::Sim).unwrap();
    assert_eq!((r.blocks, r.threads_per_block, r.expected), (10, 16, 160));
    assert_eq!(r.atomic, 160);
    assert!(r.racy >= 1 && r.racy <= 160, "the racy count is {}", r.racy);
}

#[test]
fn race_shapes_are_validated() {
    assert!(matches!(
        race::run_shape(&Target::Sim, 0, 16),
        Err(Error::Sim(_))
    ));
    assert!(matches!(
        race::run_shape(&Target::Sim, u32::MAX, 2),
        Err(Error::InvalidInput(_))
    ));
    let r = race::run_shape(&Target::Sim, 3, 33).unwrap();
    assert_eq!(r.atomic, 99);
}

#[test]
fn buffers_round_trip_and_check_lengths() {
    let t = Target::Sim;
    let mut rng = common::rng();
    for n in [0, 1, 7, 1000] {
        let data = common::random_u32(&mut rng, n);
        let b = t.upload(&data).unwrap();
        assert_eq!(t.download(&b).unwrap(), data);
    }
    let b = t.zeros::<f64>(3).unwrap();
    assert!(matches!(t.write(&b, &[1.0]), Err(Error::InvalidInput(_))));
    assert!(matches!(
        t.zeros::<u64>(usize::MAX / 4),
        Err(Error::InvalidInput(_))
    ));
}

/// Whether the dynamic loader gave this process a real driver (a binary built without one
/// may run where one is installed).
fn driver_at_run_time() -> bool {
    !matches!(
        gridsync::runtime::device::init_driver(),
        Err(Error::NoGpu(_))
    )
}

#[test]
#[cfg_attr(
    not(gridsync_no_driver),
    ignore = "a driver is installed: this checks the driverless path"
)]
fn without_a_driver_opening_a_gpu_says_so() {
    if driver_at_run_time() {
        assert!(
            Gpu::new(0).is_ok(),
            "a driver is loaded, so device 0 must open"
        );
        return;
    }
    match Gpu::new(0) {
        Err(Error::NoGpu(why)) => assert!(why.contains("no NVIDIA driver"), "{why}"),
        other => panic!("expected NoGpu, got {other:?}"),
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_reports_itself() {
    let Target::Gpu(gpu) = common::gpu() else {
        unreachable!()
    };
    let i = gpu.info();
    assert!(i.compute_capability >= (7, 0));
    assert!(i.sm_count > 0 && i.total_memory_bytes > 0 && i.max_threads_per_block >= 1024);
    assert!(matches!(Gpu::new(999), Err(Error::InvalidInput(_))));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn race_on_the_gpu() {
    let gpu = common::gpu();
    let r = race::run(&gpu).unwrap();
    assert_eq!(r.atomic, 160);
    assert!(
        r.racy < 160,
        "the racy kernel lost no update on the GPU: {r:?}"
    );
    let r = race::run_shape(&gpu, 132, 256).unwrap();
    assert_eq!(r.atomic, 132 * 256);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_launch_shapes_are_validated() {
    let gpu = common::gpu();
    let x = gpu.zeros::<u32>(1).unwrap();
    for cfg in [
        LaunchConfig::linear(1, 2048),
        LaunchConfig::linear(0, 32),
        LaunchConfig::linear(1, 32).with_shared_bytes(1 << 30),
    ] {
        // SAFETY: `x` is one valid word; the launch is refused before it starts.
        let r =
            unsafe { gridsync::launch!(gpu, gpu::lessons::race::add_one_atomic, cfg, (x.ptr())) };
        assert!(matches!(r, Err(Error::InvalidInput(_))), "{cfg:?}: {r:?}");
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn timer_errors_before_it_has_a_result() {
    let target = common::gpu();
    let Target::Gpu(gpu) = &target else {
        unreachable!()
    };
    let mut t = Timer::new().unwrap();
    assert!(matches!(t.elapsed_ms(), Err(Error::TimerNotReady)));
    assert!(matches!(t.wait_ms(), Err(Error::TimerNotReady)));
    assert!(matches!(t.stop(gpu.stream()), Err(Error::InvalidInput(_))));
    // Keep the stream busy for at least 200 ms (each launch waits on the global timer), so the
    // stop event is still pending when it is read without waiting.
    let launches = 100;
    let words = target.zeros::<u64>(2 * launches).unwrap();
    t.start(gpu.stream()).unwrap();
    for k in 0..launches {
        // SAFETY: `words` has two words per launch; launch `k` writes its own two.
        unsafe {
            gridsync::launch!(
                target,
                gpu::checks::primitives::wait_at_least,
                LaunchConfig::linear(1, 1),
                (words.ptr().wrapping_add(2 * k), 2_000_000u64)
            )
            .unwrap()
        };
    }
    t.stop(gpu.stream()).unwrap();
    assert!(matches!(t.elapsed_ms(), Err(Error::TimerNotReady)));
    let ms = t.wait_ms().unwrap();
    // The events enclose every launch: the timer reads at least what the kernels measured on
    // the global timer themselves (less a microsecond or two per launch for the resolution of
    // both clocks).
    let inside: u64 = target
        .download(&words)
        .unwrap()
        .chunks(2)
        .map(|w| w[1] - w[0])
        .sum();
    let inside_ms = inside as f64 / 1e6;
    assert!(inside_ms >= 200.0, "{inside_ms} ms measured inside");
    assert!(
        ms.is_finite() && ms as f64 + 0.2 >= inside_ms,
        "timer {ms} ms, kernels {inside_ms} ms"
    );
    assert!((t.elapsed_ms().unwrap() - ms).abs() < 1e-6);
    {
        let _g = t.guard(gpu.stream()).unwrap();
    }
    assert!(t.wait_ms().unwrap() >= 0.0);
}
