//! `gridsync count-above`: the command on the simulator and on a GPU. (The kernels:
//! `tests/count_above.rs`.)

mod common;

use gridsync::count_above::{self, CountKernel};

/// The count the tests trust: a plain loop, independent of the library's CPU reference.
fn expected(data: &[f32], thr: f32) -> u64 {
    data.iter().filter(|&&x| x > thr).count() as u64
}

use common::cli;

#[test]
fn cli_count_above_on_the_simulator() {
    let v = common::cli_json(&["count-above", "--simulate", "--json", "--len", "2000"]);
    let want = expected(&count_above::default_input(2000), 0.5);
    assert_eq!(v["len"], 2000);
    assert_eq!(v["expected"], want);
    assert_eq!(v["runs"].as_array().unwrap().len(), CountKernel::ALL.len());

    let file = common::temp_file("cli.txt", b"1 2 3\n4 5 nan\n");
    let path = file.to_str().unwrap();
    let v = common::cli_json(&[
        "count-above",
        "--simulate",
        "--json",
        "--input",
        path,
        "--threshold",
        "2.5",
    ]);
    assert_eq!(v["expected"], 3);

    let text = cli(&["count-above", "--simulate", "--len", "500"]);
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("gt_thr_cnt_vec4"));
}

#[test]
fn cli_rejects_bad_input_files_without_panicking() {
    let odd = common::temp_file("cli-odd.bin", &[0; 6]);
    let bad = common::temp_file("cli-bad.txt", b"1 two 3");
    for path in [
        odd.to_str().unwrap(),
        bad.to_str().unwrap(),
        "/nonexistent/x.f32",
    ] {
        let out = cli(&["count-above", "--simulate", "--input", path]);
        assert_eq!(out.status.code(), Some(1), "{path}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("gridsync: ") && !err.contains("panicked"),
            "{err}"
        );
    }
    let out = cli(&["bench", "count-above", "--simulate"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "benchmarks need a GPU: a usage error"
    );
}
