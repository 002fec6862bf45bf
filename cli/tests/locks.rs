//! `gridsync locks` (`mutex`) and `gridsync bench mutex`: shapes, a malformed one refused by the
//! parser, the benchmark refusing the simulator. (The locks: `tests/locks.rs`.)

mod common;

use gridsync::locks::Variant;

#[test]
fn cli_mutex_runs_on_the_simulator() {
    let v = common::cli_json(&["--simulate", "--json", "mutex", "--shape", "2x33"]);
    assert_eq!(v["add_one_mutex"], 160);
    assert_eq!(v["runs"].as_array().unwrap().len(), Variant::ALL.len());
    assert!(
        v["held_forever"]["error"]
            .as_str()
            .unwrap()
            .contains("gave up")
    );
    let bad = common::cli(&["--simulate", "mutex", "--shape", "2by3"]);
    assert_eq!(bad.status.code(), Some(2), "clap rejects a malformed shape");
    let bench = common::cli(&["--simulate", "bench", "mutex"]);
    assert_eq!(
        bench.status.code(),
        Some(2),
        "benchmarks need a GPU: a usage error"
    );
}
