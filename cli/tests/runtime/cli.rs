//! The command line's vocabulary: `gridsync doctor`, the global options refused where they mean
//! nothing, one word per idea (the old names as aliases), fixed seeds, the exit statuses. (A
//! module of the `runtime` test binary: one binary less to link.)

use super::common::cli;
use serde_json::Value;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(args: &[&str]) -> Value {
    let out = cli(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn doctor_without_a_driver_says_so_what_to_do_and_fails() {
    if super::driver_at_run_time() {
        eprintln!("a driver is here: doctor_on_a_gpu_lists_every_gpu covers it");
        return;
    }
    let out = cli(&["doctor"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("MISSING  NVIDIA driver"), "{text}");
    assert!(text.contains("fix: install the NVIDIA driver"), "{text}");
    assert!(text.contains("gridsync --simulate"), "{text}");
    let out = cli(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(4));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    let driver = &v["checks"][0];
    assert_eq!(driver["name"], "NVIDIA driver");
    assert_eq!(driver["ok"], false);
    assert_eq!(driver["required"], true);
    assert!(driver["fix"].as_str().unwrap().contains("driver"), "{v}");
    assert_eq!(v["gpus"].as_array().unwrap().len(), 0);
    // The toolchain is looked at whatever the driver: the pinned channel is named.
    let channel = include_str!("../../../rust-toolchain.toml");
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"Rust toolchain") || names.contains(&"rustup"),
        "{names:?}"
    );
    for optional in ["ptxas", "NCCL", "mdbook"] {
        let c = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == optional)
            .unwrap_or_else(|| panic!("no {optional} check: {v}"));
        assert_eq!(c["required"], false, "{c}");
        assert!(c["ok"] == true || c["fix"].is_string(), "{c}");
    }
    assert!(channel.contains("nightly"));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn doctor_on_a_gpu_lists_every_gpu() {
    let out = cli(&["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // A GPU machine may lack the toolchain (binaries built elsewhere): then, and only then, the
    // doctor fails, naming it.
    let failed: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["required"] == true && c["ok"] == false)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        failed
            .iter()
            .all(|n| ["rustup", "Rust toolchain", "rust-src"].contains(n)),
        "{failed:?}"
    );
    assert_eq!(
        out.status.code(),
        Some(if failed.is_empty() { 0 } else { 4 })
    );
    assert_eq!(v["ok"], failed.is_empty());
    let gpus = v["gpus"].as_array().unwrap();
    assert!(!gpus.is_empty(), "{v}");
    let g = &gpus[0];
    assert!(g["sms"].as_u64().unwrap() > 0, "{g}");
    assert!(g["ptx_build"].is_string(), "{g}");
    let n = gpus.len();
    assert_eq!(v["pairs"].as_array().unwrap().len(), n * (n - 1) / 2);
    let driver = &v["checks"][0];
    assert_eq!(driver["ok"], true, "{v}");
    assert!(driver["detail"].as_str().unwrap().starts_with("CUDA "));
}

#[test]
fn global_options_are_refused_where_they_mean_nothing() {
    for (args, flag) in [
        (
            &["--simulate", "launch", "-n", "1", "--", "true"][..],
            "--simulate",
        ),
        (&["launch", "--json", "-n", "1", "--", "true"][..], "--json"),
        (&["--device", "1", "new", "/nonexistent/p"][..], "--device"),
        (&["doctor", "--simulate"][..], "--simulate"),
        (&["info", "--simulate"][..], "--simulate"),
        (&["bench", "copy", "--simulate"][..], "--simulate"),
        (&["bench", "multi", "--device", "0"][..], "--device"),
        (
            &["--simulate", "multi", "reduce", "--device", "0"][..],
            "--device",
        ),
    ] {
        let out = cli(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("does not take {flag}")),
            "{args:?}: {err}"
        );
    }
    // Where they mean something they are taken.
    let v = json(&[
        "--simulate",
        "--json",
        "race",
        "--blocks",
        "2",
        "--threads",
        "8",
    ]);
    assert_eq!(v["atomic"], 16);
}

#[test]
fn launch_counts_with_nproc_and_refuses_multis_word() {
    let out = cli(&["launch", "--ranks", "2", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("-n/--nproc"), "{}", stderr(&out));
    for args in [
        &["launch", "--nproc", "1", "--", "true"][..],
        &["launch", "--nproc-per-node", "1", "--", "true"][..],
        &["launch", "-n", "1", "--", "true"][..],
    ] {
        assert_eq!(cli(args).status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn old_names_are_aliases_of_the_one_word() {
    // Sizes in elements are --len: the 65 536-bin histogram's values, the neighbor list's atoms.
    let a = json(&[
        "--simulate",
        "--json",
        "histogram",
        "--bins",
        "65536",
        "--len",
        "5001",
    ]);
    let b = json(&[
        "--simulate",
        "--json",
        "histogram",
        "--bins",
        "65536",
        "--values",
        "5001",
    ]);
    assert_eq!(a["histogram"], b["histogram"]);
    assert_eq!(a["values"], 5001);
    let a = json(&["--simulate", "--json", "neighbor", "--len", "120"]);
    let b = json(&["--simulate", "--json", "neighbor", "--atoms", "120"]);
    assert_eq!(a["atoms"], 120, "{a}");
    assert_eq!(a["atoms"], b["atoms"]);
    // A launch shape is --blocks/--threads; --shape BxT the alias (several shapes at once).
    let a = json(&[
        "--simulate",
        "--json",
        "locks",
        "--blocks",
        "2",
        "--threads",
        "8",
    ]);
    let b = json(&["--simulate", "--json", "locks", "--shape", "2x8"]);
    let shapes = |v: &Value| -> Vec<String> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["shape"].to_string())
            .collect()
    };
    assert_eq!(shapes(&a), shapes(&b));
    assert!(!shapes(&a).is_empty());
    // --repeats everywhere, --trials its alias, both in --help.
    for bench in ["copy", "launch", "reduce", "histogram", "neighbor", "multi"] {
        let out = cli(&["bench", bench, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("--repeats <N>") && help.contains("--trials"),
            "bench {bench}: {help}"
        );
    }
    // The histogram of multi takes --bytes; reduce refuses it by name.
    let v = json(&[
        "--simulate",
        "--json",
        "multi",
        "histogram",
        "--bytes",
        "3001",
    ]);
    assert_eq!(v["len"], 3001);
    let out = cli(&["--simulate", "multi", "reduce", "--bytes", "3001"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--len"), "{}", stderr(&out));
}

#[test]
fn seeds_are_fixed_and_printed_by_default() {
    let a = json(&["--simulate", "--json", "dot", "--random", "--len", "1001"]);
    let b = json(&["--simulate", "--json", "dot", "--random", "--len", "1001"]);
    assert!(a.to_string().contains("--seed 1"), "{a}");
    assert_eq!(a["cpu"], b["cpu"], "{a}\n{b}");
    let out = cli(&["--simulate", "atomics"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("seed 1"));
}

#[test]
fn multi_reports_the_resident_time_first_and_the_upload_apart() {
    let v = json(&[
        "--simulate",
        "--json",
        "multi",
        "reduce",
        "--len",
        "2001",
        "--repeats",
        "1",
    ]);
    for key in [
        "one_device_ms",
        "all_devices_ms",
        "scaling_efficiency",
        "upload_one_device_ms",
        "upload_all_devices_ms",
        "whole_call_one_device_ms",
        "whole_call_all_devices_ms",
        "whole_call_efficiency",
    ] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {v}");
    }
    assert_eq!(v["result"].as_str().unwrap().split(',').count(), 3, "{v}");
    let out = cli(&[
        "--simulate",
        "multi",
        "count-above",
        "--len",
        "2001",
        "--repeats",
        "1",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let resident = text
        .find("input on the devices")
        .expect("the resident line");
    let upload = text.find("upload of the input").expect("the upload line");
    assert!(resident < upload, "{text}");
}

#[test]
fn barrier_says_what_each_broken_variant_did_in_this_run() {
    let out = cli(&["--simulate", "barrier", "--iterations", "20"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let mut broken = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line.strip_prefix("  - ") else {
            continue;
        };
        broken += 1;
        let name = name.split(':').next().unwrap();
        let here = lines[i + 1];
        assert!(here.starts_with("    here: "), "{text}");
        // The table's rows for this variant: the one with its name and the one below it.
        let row = lines
            .iter()
            .position(|l| l.trim_start().starts_with(name) && l.contains("xpx_"))
            .unwrap_or_else(|| panic!("no row of {name}: {text}"));
        let clean = lines[row].ends_with("none: the CPU's bits")
            && lines[row + 1].ends_with("none: the CPU's bits");
        assert_eq!(here.contains("came out right"), clean, "{name}: {text}");
    }
    assert_eq!(broken, 5, "{text}");
}

#[test]
fn check_finds_every_broken_kernel_and_no_false_positive() {
    let out = cli(&["check", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check --json: {e}: {}", stderr(&out)));
    assert!(out.status.success(), "{v:#}\n{}", stderr(&out));
    let kernels = v["kernels"].as_array().unwrap();
    assert!(kernels.len() >= 25, "{} kernels", kernels.len());
    assert_eq!(
        (&v["missed"], &v["false_positives"], &v["failed"]),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{v:#}"
    );
    let kernel = |name: &str| {
        kernels
            .iter()
            .find(|k| k["kernel"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let kinds = |name: &str| -> Vec<String> {
        kernel(name)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    // The lost update: its load and its store, both lines in the race lesson.
    let add_one = &kernel("add_one")["findings"][0];
    assert_eq!(add_one["kind"], "data race");
    for side in ["first", "second"] {
        let site = add_one[side]["site"].as_str().unwrap();
        assert!(site.contains("lessons/race.rs:"), "{site}");
    }
    assert!(kinds("add_one_atomic").is_empty());
    assert!(kinds("lock_unfenced").contains(&"data race".to_string()));
    assert!(kinds("lock_fenced").is_empty());
    assert_eq!(kinds("add_one_block_scope"), ["scope race"]);
    // Every broken kernel found with the kind it must show, every other kernel clean.
    for k in kernels {
        assert_eq!(k["verdict"], "ok", "{k:#}");
    }
}

#[test]
fn check_names_its_topics_and_runs_one() {
    let out = cli(&["check", "no-such-topic"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("race, locks, barrier"),
        "{}",
        stderr(&out)
    );
    let v = json(&["check", "race", "--json"]);
    let kernels = v["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 3, "{v:#}");
    assert!(kernels.iter().all(|k| k["topic"] == "race"));
    let out = cli(&["check", "--simulate"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let listed = cli(&["check", "--list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.contains("lock_unfenced") && text.contains("data race"),
        "{text}"
    );
}

#[test]
fn check_runs_on_the_weak_memory_and_says_what_it_cannot_run_there() {
    let v = json(&["check", "race", "primitives", "--weak", "5", "--json"]);
    assert_eq!(v["weak_seed"], 5, "{v:#}");
    assert_eq!(
        (&v["missed"], &v["false_positives"], &v["failed"]),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{v:#}"
    );
    let kernels = v["kernels"].as_array().unwrap();
    let timer = kernels
        .iter()
        .find(|k| k["kernel"] == "timer_check")
        .unwrap();
    assert_eq!(timer["verdict"], "not_run", "{timer:#}");
    assert!(
        timer["not_run"].as_str().unwrap().contains("clocks"),
        "{timer:#}"
    );
    assert_eq!(v["not_run"], 1, "{v:#}");
    let block_scope = kernels
        .iter()
        .find(|k| k["kernel"] == "add_one_block_scope")
        .unwrap();
    assert_eq!(block_scope["verdict"], "ok", "{block_scope:#}");
}
