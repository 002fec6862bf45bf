//! The endurance run: on simulated devices (every operation, the system-scope one across two
//! devices), its command line, and on a GPU where there is one.

mod common;

use gridsync::multi::DeviceList;
use gridsync_cli::stress::{Op, StressOptions, run};

#[test]
fn a_short_run_on_simulated_devices_checks_every_operation() {
    let opts = StressOptions {
        seconds: 12.0,
        devices: DeviceList::Ordinals(vec![0, 1]),
        workers_per_device: 2,
        simulate: true,
        seed: common::seed(),
        ..StressOptions::default()
    };
    let mut calls = 0;
    let r = run(&opts, |_| calls += 1).unwrap();
    assert!(r.passed(), "{:#?}", r.first_failures);
    assert!(r.operations > 0 && r.failures == 0);
    assert_eq!(r.workers, 5, "two per device and the system-scope thread");
    assert!(
        r.system_scope.is_none(),
        "two devices run the system-scope operation"
    );
    assert!(r.per_op.iter().map(|t| t.done).sum::<u64>() == r.operations);
    // Every operation ran, and the system-scope one across the two devices.
    let ran = |name: &str| r.per_op.iter().any(|t| t.op == name && t.done > 0);
    for op in Op::ALL {
        assert!(ran(op.name()), "{} never ran in {:?}", op.name(), r.per_op);
    }
    assert!(ran("system-scope"), "{:?}", r.per_op);
    assert!(
        r.memory.is_empty(),
        "simulators have no device memory to measure"
    );
    assert!(calls > 0, "progress was reported");
}

#[test]
fn the_cli_runs_reports_and_replays() {
    let r = common::cli_json(&[
        "stress",
        "--simulate",
        "--seconds",
        "2",
        "--ops",
        "reduce,histogram,mutex",
        "--json",
    ]);
    assert_eq!(r["failures"], 0);
    assert!(r["operations"].as_u64().unwrap() > 0);
    for t in r["per_op"].as_array().unwrap() {
        let op = t["op"].as_str().unwrap();
        assert!(["reduce", "histogram", "mutex"].contains(&op), "{op}");
    }
    let o = common::cli_ok(&[
        "stress",
        "--simulate",
        "--ops",
        "neighbor",
        "--replay",
        "42",
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("neighbor: "));
    for bad in [
        &["stress", "--simulate", "--seconds", "0"][..],
        &["stress", "--simulate", "--seconds", "nan"],
        &["stress", "--simulate", "--replay", "1"],
        &["stress", "--simulate", "--ops", "nothing"],
        &["stress", "--simulate", "--workers", "0", "--seconds", "1"],
    ] {
        let o = common::cli(bad);
        assert!(!o.status.success(), "{bad:?} was taken");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{bad:?}: {err}");
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_a_short_run_passes_and_gives_its_memory_back() {
    let opts = StressOptions {
        seconds: 20.0,
        seed: common::seed(),
        ..StressOptions::default()
    };
    let r = run(&opts, |_| {}).unwrap();
    assert!(r.passed(), "{:#?} {:#?}", r.first_failures, r.memory);
    assert_eq!(r.memory.len(), 1);
    for op in Op::ALL {
        assert!(
            r.per_op.iter().any(|t| t.op == op.name() && t.done > 0),
            "{} never ran in {:?}",
            op.name(),
            r.per_op
        );
    }
}
