//! `gridsync barrier`: the command on the simulator and its report. (The barrier itself:
//! `tests/barrier.rs`.)

mod common;

#[test]
fn cli_barrier_on_the_simulator() {
    let v = common::cli_json(&["barrier", "--simulate", "--json", "--iterations", "5"]);
    let runs = v["runs"].as_array().unwrap();
    assert!(
        runs.iter()
            .any(|r| r["variant"] == "grid_barrier" && r["matches_cpu"] == true)
    );
    let out = common::cli(&[
        "barrier",
        "--simulate",
        "--blocks",
        "100",
        "--threads",
        "1024",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("never all arrive") && !err.contains("panicked"),
        "{err}"
    );
}
