//! `gridsync reduce`: the command on the simulator and on a GPU. (The kernels and the library's
//! calls: `tests/reduce.rs`.)

mod common;

use gridsync::Error;
use gridsync::reduce::{self, Step, sum_cpu};

#[test]
fn unreadable_files_are_errors() {
    let missing = std::path::Path::new("/nonexistent/gridsync-reduce.f32");
    assert!(matches!(
        gridsync::inputs::read_f32_file(missing),
        Err(Error::Io { .. })
    ));
    let out = common::cli(&["reduce", "--simulate", "--input", "/nonexistent/x.f32"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("gridsync: ") && !err.contains("panicked"),
        "{err}"
    );
    let out = common::cli(&["reduce", "--simulate", "--accumulate", "f16"]);
    assert_eq!(out.status.code(), Some(2), "clap rejects the value");
    let out = common::cli(&["bench", "reduce", "--simulate"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "benchmarks need a GPU: a usage error"
    );
}

#[test]
fn cli_reduce_on_the_simulator() {
    // One repeat: the bits of repeated runs are the single-pass test's to compare.
    let v = common::cli_json(&[
        "reduce",
        "--simulate",
        "--json",
        "--len",
        "3000",
        "--repeats",
        "1",
    ]);
    assert_eq!(v["len"], 3000);
    assert_eq!(v["runs"].as_array().unwrap().len(), Step::ALL.len());
    assert_eq!(v["accumulate"], "f32");
    let want = 3000.0 * 1.23f32 as f64;
    assert!((v["expected"].as_f64().unwrap() - want).abs() < 1e-9 * want);

    let args = [
        "reduce",
        "--simulate",
        "--json",
        "--len",
        "500",
        "--signed",
        "--seed",
        "7",
        "--repeats",
        "1",
    ];
    let v = common::cli_json(&[&args[..], &["--accumulate", "kahan"]].concat());
    assert_eq!(v["accumulate"], "kahan");
    let data = reduce::random_input(500, 7, true);
    assert_eq!(v["expected"].as_f64().unwrap(), sum_cpu(&data));

    let dir = std::env::temp_dir().join(format!("gridsync-reduce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("in.txt");
    std::fs::write(&file, "1 2 3\n4 -5 nan\n").unwrap();
    let v = common::cli_json(&[
        "reduce",
        "--simulate",
        "--json",
        "--repeats",
        "1",
        "--input",
        file.to_str().unwrap(),
    ]);
    assert_eq!(v["len"], 6);

    let text = common::cli(&["reduce", "--simulate", "--len", "700", "--repeats", "1"]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("reduce_vec_sum_f32") && text.contains("deterministic"),
        "{text}"
    );
}

// ---- GPU ----
