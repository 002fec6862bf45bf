//! The `gridsync` binary: the race demo's JSON, bad input refused, the tour, a start without a
//! driver or an environment, the benchmarks' refusals and sizes. (The runtime: `tests/runtime.rs`.)

#[path = "runtime/cli.rs"]
mod cli;
mod common;

use gridsync::runtime::copy;
use gridsync::{Error, Target};
use gridsync_cli::bench;

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
fn cli_race_on_the_simulator_prints_json() {
    let v = common::cli_json(&["race", "--simulate", "--json"]);
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
    let v = common::cli_json(&["--json"]);
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
    let v = common::cli_json(&["--json"]);
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
fn benchmarks_run_on_the_gpu() {
    let gpu = common::gpu();
    let opts = bench::launch::LaunchBenchOptions {
        launches_per_trial: 100,
        trials: 5,
    };
    let b = bench::launch::run(&gpu, opts, |_, _| {}).unwrap();
    assert!(b.host_us_per_launch.median > 0.0 && b.event_timed_kernel_us.median > 0.0);
    let c = copy::run(&gpu, 64 << 20, 3, |_, _| {}).unwrap();
    // A rate was measured and follows from the bytes and the median (read + written).
    assert_eq!(c.ms.samples, 3);
    assert!(c.ms.median.is_finite() && c.ms.median > 0.0, "{c:?}");
    let rate = 2.0 * c.bytes as f64 / (c.ms.median * 1e6);
    assert!((c.gb_per_s - rate).abs() <= 1e-9 * rate, "{c:?}");
    assert!(copy::run(&gpu, 0, 3, |_, _| {}).is_err());
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
    // Arrays and streams past any count: refused by the size check, not an overflow.
    assert_refused(&["streams", "--simulate", "--arrays", huge], "--arrays");
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
