//! `gridsync multi`: the command over simulated devices, a device named twice refused. (The
//! library's multi-device calls: `tests/multi.rs`.)

mod common;

#[test]
fn the_cli_checks_every_operation_on_simulated_devices() {
    for op in ["reduce", "histogram", "count-above"] {
        let o = common::cli(&[
            "multi",
            op,
            "--simulate",
            "--devices",
            "0,1,2",
            "--len",
            "2007",
            "--repeats",
            "1",
            "--copiers",
            "3",
            "--json",
        ]);
        assert!(
            o.status.success(),
            "{op}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["slices"], serde_json::json!([669, 669, 669]), "{op}");
    }
    let o = common::cli_env(
        &["multi", "reduce", "--simulate", "--len", "10"],
        &[("GRIDSYNC_COPIERS", "many")],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("GRIDSYNC_COPIERS many"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = common::cli(&["multi", "reduce", "--simulate", "--devices", "0,0"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "clap refuses a device named twice"
    );
}
