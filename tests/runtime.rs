//! The host runtime and the race demo: simulator, no-GPU behavior, CLI, and the GPU.

#[path = "runtime/cli.rs"]
mod cli;
mod common;

use gridsync::{Error, Gpu, LaunchConfig, Target, Timer, bench, race};

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

#[test]
fn benchmarks_refuse_the_simulator() {
    let e = bench::launch::run(&Target::Sim, Default::default(), |_, _| {}).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
}

#[test]
fn stats_take_the_median() {
    let s = bench::Stats::of(&[5.0, 1.0, f64::NAN, 3.0]).unwrap();
    assert_eq!((s.median, s.min, s.max, s.samples), (3.0, 1.0, 5.0, 3));
    assert_eq!(bench::Stats::of(&[4.0, 2.0]).unwrap().median, 3.0);
    assert!(bench::Stats::of(&[]).is_err());
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
fn cli_race_on_the_simulator_prints_json() {
    let out = common::cli(&["race", "--simulate", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["atomic"], 160);
    assert_eq!(v["expected"], 160);
}

#[test]
fn cli_rejects_bad_input_with_an_error_not_a_panic() {
    let out = common::cli(&[
        "race",
        "--simulate",
        "--blocks",
        "1000",
        "--threads",
        "1000",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("gridsync: ") && !err.contains("panicked"),
        "{err}"
    );
    // A benchmark on the simulator is refused as a usage error, before anything runs.
    let out = common::cli(&["bench", "copy", "--simulate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
#[cfg_attr(
    not(gridsync_no_driver),
    ignore = "a driver is installed: this checks the driverless path"
)]
fn cli_tour_without_a_gpu_runs_the_simulator() {
    let out = common::cli(&["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if driver_at_run_time() {
        assert!(v["gpu"]["compute_capability"].is_array(), "{v}");
    } else {
        let why = v["no_gpu_reason"].as_str().unwrap();
        assert!(why.contains("no NVIDIA driver"), "{why}");
    }
    assert_tour_covers_every_topic(&v);
}

/// The tour's stops: every topic of the reading order, each checked.
const TOUR_TOPICS: [&str; 14] = [
    "race",
    "atomics",
    "locks",
    "count-above",
    "dot",
    "reduce",
    "histogram",
    "streams",
    "barrier",
    "mbarrier",
    "pipeline",
    "neighbor",
    "multi",
    "litmus",
];

fn assert_tour_covers_every_topic(v: &serde_json::Value) {
    let stops = v["stops"].as_array().unwrap();
    let topics: Vec<&str> = stops.iter().map(|s| s["topic"].as_str().unwrap()).collect();
    assert_eq!(topics, TOUR_TOPICS);
    for s in stops {
        assert_eq!(s["ok"], true, "{s}");
        assert!(!s["result"].as_str().unwrap().is_empty(), "{s}");
        assert!(
            s["deeper"].as_str().unwrap().starts_with("gridsync "),
            "{s}"
        );
    }
    let race = &stops[0]["result"];
    assert!(
        race.as_str().unwrap().contains("atomic x[0] = 160 of 160"),
        "{race}"
    );
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_tour_checks_and_times_every_topic() {
    let out = common::cli(&["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["gpu"]["sm_count"].as_u64().unwrap() > 0, "{v}");
    assert_tour_covers_every_topic(&v);
    // Every topic with kernels timed by events names its fastest; the race and the atomics
    // model checks are not timed, the streams and the devices of `multi` only by the wall clock,
    // and the litmus tests count outcomes, not time.
    for s in v["stops"].as_array().unwrap() {
        let timed = !matches!(
            s["topic"].as_str().unwrap(),
            "race" | "atomics" | "streams" | "multi" | "litmus"
        );
        assert_eq!(s["fastest"].is_array(), timed, "{s}");
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

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn benchmarks_run_on_the_gpu() {
    let gpu = common::gpu();
    let opts = bench::launch::LaunchBenchOptions {
        launches_per_trial: 100,
        trials: 5,
    };
    let b = bench::launch::run(&gpu, opts, |_, _| {}).unwrap();
    assert!(b.host_us_per_launch.median > 0.0 && b.event_timed_kernel_us.median > 0.0);
    let c = bench::copy::run(&gpu, 64 << 20, 3, |_, _| {}).unwrap();
    // A rate was measured and follows from the bytes and the median (read + written).
    assert_eq!(c.ms.samples, 3);
    assert!(c.ms.median.is_finite() && c.ms.median > 0.0, "{c:?}");
    let rate = 2.0 * c.bytes as f64 / (c.ms.median * 1e6);
    assert!((c.gb_per_s - rate).abs() <= 1e-9 * rate, "{c:?}");
    assert!(bench::copy::run(&gpu, 0, 3, |_, _| {}).is_err());
}

/// Runs the binary with `args`, expects a clean refusal that names `option`: exit 1, one
/// `gridsync: … too large …` line, no panic, no abort.
fn assert_refused(args: &[&str], option: &str) {
    let out = common::cli(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(
        err.starts_with("gridsync: ") && err.contains("too large") && err.contains(option),
        "{args:?}: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

/// A sparse file of 1 TiB: it takes no disk, and reading it would take 1 TiB of memory.
fn huge_file(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("gridsync-{}-{name}", std::process::id()));
    std::fs::File::create(&path)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    path
}

#[test]
fn every_size_is_checked_before_it_is_allocated() {
    let huge = "99999999999999";
    let overflow = "18446744073709551615";
    assert_refused(
        &["reduce", "--simulate", "--len", "99999999999"],
        "--len 99999999999",
    );
    assert_refused(&["reduce", "--simulate", "--len", overflow], overflow);
    assert_refused(&["count-above", "--simulate", "--len", huge], "--len");
    assert_refused(&["dot", "--simulate", "--len", huge], "--len");
    assert_refused(&["histogram", "--simulate", "--bytes", huge], "--bytes");
    let text = std::env::temp_dir().join("gridsync-never-written.txt");
    let text = text.to_str().unwrap();
    assert_refused(
        &["histogram", "--write-text", text, "--bytes", huge],
        "--bytes",
    );
    assert!(!std::path::Path::new(text).exists());
    assert_refused(&["streams", "--simulate", "--len", huge], "--len");
    assert_refused(
        &[
            "streams",
            "--simulate",
            "--arrays",
            "100000",
            "--len",
            "1000000000",
        ],
        "--arrays 100000",
    );
    for (command, name) in [
        ("reduce", "huge.f32"),
        ("count-above", "huge.bin"),
        ("histogram", "huge.txt"),
    ] {
        let path = huge_file(name);
        let p = path.to_str().unwrap();
        assert_refused(&[command, "--simulate", "--input", p], p);
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_every_benchmark_size_is_checked_before_it_is_allocated() {
    let huge = "99999999999999";
    assert_refused(&["bench", "copy", "--bytes", huge], "--bytes");
    for topic in ["count-above", "dot", "reduce"] {
        assert_refused(&["bench", topic, "--len", huge], "--len");
        assert_refused(&["bench", topic, "--copy-bytes", huge], "--copy-bytes");
    }
    // The old name still works, as an alias; the message names the new one.
    assert_refused(&["bench", "histogram", "--large-bytes", huge], "--bytes");
    assert_refused(&["bench", "transfer", "--bytes", huge], "--bytes");
    // On the GPU too, a demo's size past the device's memory is refused by name.
    assert_refused(&["reduce", "--len", "40000000000"], "--len 40000000000");
}

#[test]
fn the_binary_starts_without_a_driver_or_an_environment() {
    // No LD_LIBRARY_PATH (cargo puts the link-time stub there): the binary loads the driver
    // itself at run time, or finds none and says so.
    let bin = common::bin();
    let out = std::process::Command::new(&bin)
        .args(["race", "--simulate", "--json"])
        .env_clear()
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["atomic"], 160);
    let out = std::process::Command::new(&bin)
        .arg("info")
        .env_clear()
        .output()
        .unwrap();
    if driver_at_run_time() {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("no GPU"), "{err}");
    }
}
