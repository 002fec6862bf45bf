//! `gridsync dot`: the command. (The kernels: `tests/dot.rs`.)

mod common;

use gridsync::dot::{self};

/// The dot the tests trust: float64, sequential, and `Σ|a·b|`.
fn exact(a: &[f32], b: &[f32]) -> (f64, f64) {
    a.iter().zip(b).fold((0.0, 0.0), |(s, m), (&x, &y)| {
        let p = x as f64 * y as f64;
        (s + p, m + p.abs())
    })
}

use common::cli;

#[test]
fn cli_dot_on_the_simulator() {
    let v = common::cli_json(&["dot", "--simulate", "--json"]);
    assert_eq!(v["len"], dot::SIM_DEFAULT_LEN);
    for run in v["runs"].as_array().unwrap() {
        let got = run["result"].as_f64().unwrap();
        assert!((got - 1.0).abs() < 1e-5, "{run}");
    }
    let v = common::cli_json(&["dot", "--simulate", "--json", "--len", "777", "--seed", "5"]);
    let (a, b) = dot::random_data(777, 5);
    assert!((v["cpu"]["dot"].as_f64().unwrap() - exact(&a, &b).0).abs() < 1e-9);
    let out = cli(&["dot", "--simulate", "--random", "--len", "100"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("dot_mutex"));
    assert_eq!(cli(&["bench", "dot", "--simulate"]).status.code(), Some(2));
}
