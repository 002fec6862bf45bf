//! The CLI on the simulator, and bad input refused without a panic.

use super::*;

#[test]
fn cli_histogram_on_the_simulator() {
    let v = ok_json(&[
        "histogram",
        "--simulate",
        "--json",
        "--bytes",
        "5000",
        "--bins",
        "256",
    ]);
    let want = expected(&english_text(5000, DEFAULT_TEXT_SEED), Bins::Byte);
    assert_eq!(v["len"], 5000);
    assert_eq!(v["bins"], 256);
    assert_eq!(
        serde_json::from_value::<Vec<u64>>(v["histogram"].clone()).unwrap(),
        want
    );
    assert_eq!(v["runs"].as_array().unwrap().len(), HistKernel::ALL.len());

    let svg = temp_path("letters.svg");
    let file = temp_path("in.txt");
    std::fs::write(&file, b"Hello, World! \xe2\x80\x99 hello").unwrap();
    let out = common::cli_ok(&[
        "histogram",
        "--simulate",
        "--input",
        file.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("histogram_lane") && text.contains("3 bytes have no bin"),
        "{text}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    parse_svg(&svg);
    assert_eq!(svg.matches("class=\"bar\"").count(), 52);

    let written = temp_path("text.txt");
    common::cli_ok(&[
        "histogram",
        "--write-text",
        written.to_str().unwrap(),
        "--bytes",
        "12345",
        "--seed",
        "9",
    ]);
    assert_eq!(std::fs::read(&written).unwrap(), english_text(12345, 9));
}

#[test]
fn cli_rejects_bad_input_without_panicking() {
    for args in [
        &["histogram", "--simulate", "--input", "/nonexistent/x.txt"][..],
        &["histogram", "--simulate", "--bins", "100"],
        &["histogram", "--simulate", "--blocks", "0"],
        &["histogram", "--simulate", "--sweep"],
        &[
            "histogram",
            "--simulate",
            "--bytes",
            "100",
            "--plot",
            "/tmp/letters.png",
        ],
    ] {
        let out = common::cli(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("gridsync: ") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}
