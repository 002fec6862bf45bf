//! Ranks as real processes (`gridsync launch … multi … --ranks env`) on the simulator and,
//! where there is one, on the GPU: the one-process results, files read by byte range, and
//! every failure an error in bounded time.

use super::*;

/// The JSON array `v`'s whole numbers.
fn u64s(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn ranks_as_processes_give_the_one_process_results() {
    use gridsync::inputs::MULTI_SEED as SEED;
    let len = 1003;
    let x = gridsync::inputs::uniform_f32(len, SEED, -1.0, 1.0);
    let abs: f64 = x.iter().map(|v| v.abs() as f64).sum();
    for n in [1u32, 2, 3, 8] {
        let r = launched(n, true, "reduce", &["--len", "1003", "--repeats", "1"]);
        assert_eq!(r["world"], n);
        assert_eq!(u64s(&r["slices"]).iter().sum::<u64>(), len as u64);
        let (sum, lo, hi) = one_process_reduce(n as usize, &x);
        let got = r["sum"].as_f64().unwrap();
        assert!(
            (got - sum).abs() <= 64.0 * f64::EPSILON * abs,
            "{n} ranks: Σ {got}, one process {sum}"
        );
        assert_eq!(f32_of(&r["min"]), lo, "{n} ranks");
        assert_eq!(f32_of(&r["max"]), hi, "{n} ranks");
        assert!(r["combine"].as_str().unwrap().contains("host combine"));
    }
    // Integers: exactly the CPU's (which the one-process plans give too: tests/multi.rs).
    // `n` ranks' histogram of `len` values, with `bins` (no option: the default).
    let histogram = |n: u32, len: &str, bins: &[&str]| {
        let args = [&["--len", len, "--repeats", "1"], bins].concat();
        bins_of(&launched(n, true, "histogram", &args))
    };
    let bytes = gridsync::histogram::uniform_bytes(5001, SEED);
    let want = gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Byte);
    assert_eq!(histogram(3, "5001", &[]), want);
    let want = gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Ascii);
    assert_eq!(histogram(2, "5001", &["--bins", "128"]), want);
    let words = gridsync::inputs::uniform_u16(3001, SEED);
    let want = gridsync::histogram::wide::histogram_u16_cpu(&words);
    assert_eq!(histogram(2, "3001", &["--bins", "65536"]), want);
    let y = gridsync::inputs::uniform_f32(4099, SEED, 0.0, 1.0);
    let r = launched(3, true, "count-above", &["--len", "4099", "--repeats", "1"]);
    assert_eq!(
        r["count"].as_u64().unwrap(),
        y.iter().filter(|&&v| v > 0.5).count() as u64
    );
    // More ranks than elements: the empty slices give the identity.
    let r = launched(3, true, "reduce", &["--len", "2", "--repeats", "1"]);
    let two = gridsync::inputs::uniform_f32(2, SEED, -1.0, 1.0);
    assert_eq!(f32_of(&r["min"]), two[0].min(two[1]));
}

#[test]
fn ranks_read_their_byte_range_of_a_file() {
    use rand::Rng;
    let mut rng = common::rng();
    let dir = std::env::temp_dir().join(format!("gridsync-ranks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 10_007;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-3.0f32..3.0)).collect();
    let floats = dir.join("x.f32");
    std::fs::write(
        &floats,
        x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    let f = floats.to_str().unwrap();
    // The same file as 16-bit values: 65 536 bins, each rank its range.
    let counts = dir.join("counts.csv");
    let r = launched(
        3,
        true,
        "histogram",
        &[
            "--input",
            f,
            "--repeats",
            "1",
            "--bins",
            "65536",
            "--output",
            counts.to_str().unwrap(),
        ],
    );
    let words: Vec<u16> = x
        .iter()
        .flat_map(|v| {
            let b = v.to_le_bytes();
            [
                u16::from_le_bytes([b[0], b[1]]),
                u16::from_le_bytes([b[2], b[3]]),
            ]
        })
        .collect();
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::wide::histogram_u16_cpu(&words)
    );
    // Rank 0 wrote every bin's count (`bin,count`, a line per bin).
    let csv = std::fs::read_to_string(&counts).unwrap();
    let written: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split_once(',').unwrap().1.parse().unwrap())
        .collect();
    assert_eq!(csv.lines().next(), Some("bin,count"));
    assert_eq!(written, bins_of(&r));
    let r = launched(3, true, "count-above", &["--input", f, "--repeats", "1"]);
    assert_eq!(
        r["count"].as_u64().unwrap(),
        x.iter()
            .filter(|&&v| v > gridsync::count_above::DEFAULT_THRESHOLD)
            .count() as u64
    );
    // Each rank read its slice's bytes, no more: together the file once.
    let read = u64s(&r["bytes_read"]);
    let slices: Vec<u64> = u64s(&r["slices"]).iter().map(|s| 4 * s).collect();
    assert_eq!(read, slices);
    assert_eq!(read.iter().sum::<u64>(), 4 * n as u64);
    let r = launched(3, true, "reduce", &["--input", f, "--repeats", "1"]);
    assert_eq!(
        f32_of(&r["max"]),
        x.iter().copied().fold(f32::NAN, f32::max)
    );
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
    assert!((r["sum"].as_f64().unwrap() - want).abs() <= gridsync::multi::sum_bound(abs, 3));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ranks_count_bytes_of_a_file_and_refuse_files_they_cannot_cut() {
    use rand::Rng;
    let mut rng = common::rng();
    let dir = std::env::temp_dir().join(format!("gridsync-ranks-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes: Vec<u8> = (0..65_537).map(|_| rng.random()).collect();
    let byte_file = dir.join("bytes.bin");
    std::fs::write(&byte_file, &bytes).unwrap();
    let r = launched(
        2,
        true,
        "histogram",
        &["--input", byte_file.to_str().unwrap(), "--repeats", "1"],
    );
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Byte)
    );
    // A text file cannot be cut by bytes; a raw file of a length not a whole number of floats
    // or of 16-bit values is refused (as one process refuses it), not cut short by the byte
    // ranges; all before any rank reads.
    let text = dir.join("x.txt");
    std::fs::write(&text, "1 2 3").unwrap();
    let odd = dir.join("odd.f32");
    std::fs::write(&odd, [0u8; 7]).unwrap();
    let odd16 = dir.join("odd.u16");
    std::fs::write(&odd16, [1u8; 10_001]).unwrap();
    for (file, op, why) in [
        (&text, &["reduce"][..], "text file"),
        (&odd, &["reduce"][..], "whole number of 4-byte"),
        (
            &odd16,
            &["histogram", "--bins", "65536"][..],
            "whole number of 2-byte",
        ),
    ] {
        let b = bin();
        let mut args = vec!["launch", "-n", "2", "--", &b, "--simulate", "multi"];
        args.extend(op);
        args.extend(["--ranks", "env", "--input", file.to_str().unwrap()]);
        let out = gridsync(&args, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failures_of_ranks_are_errors_in_bounded_time() {
    let rank_args = |rank: &str, world: &str, address: &str| -> Vec<String> {
        [
            "--simulate",
            "multi",
            "reduce",
            "--len",
            "100",
            "--repeats",
            "1",
            "--ranks",
            "env",
            "--rank",
            rank,
            "--world-size",
            world,
            "--rendezvous",
            address,
            "--rendezvous-timeout",
            "2",
        ]
        .map(String::from)
        .to_vec()
    };
    let run = |args: Vec<String>| {
        let mut c = std::process::Command::new(bin());
        c.args(args).env("GRIDSYNC_JOB", "t");
        std::thread::spawn(move || within(c, Duration::from_secs(20)))
    };
    let err = |c: std::thread::JoinHandle<std::process::Output>| {
        let o = c.join().unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let start = Instant::now();
    // A rank that never comes: rank 0 says which, after the timeout.
    let e = err(run(rank_args("0", "2", &free_address())));
    assert!(e.contains("rank(s) 1 of 2 never arrived"), "{e}");
    // A rank told another world size is refused, and its rank 0 times out.
    let address = free_address();
    let zero = run(rank_args("0", "2", &address));
    let wrong = run(rank_args("1", "3", &address));
    let e = err(wrong);
    assert!(e.contains("world size 3"), "{e}");
    assert!(err(zero).contains("never arrived"));
    // The port taken: rank 0 says so at once.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let e = err(run(rank_args(
        "0",
        "2",
        &taken.local_addr().unwrap().to_string(),
    )));
    assert!(e.contains("cannot listen"), "{e}");
    // No rank at all in the environment or options.
    let mut c = std::process::Command::new(bin());
    c.args(["--simulate", "multi", "reduce", "--ranks", "env"]);
    for v in [
        "RANK",
        "WORLD_SIZE",
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
    ] {
        c.env_remove(v);
    }
    let o = within(c, Duration::from_secs(20));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no rank found"));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn failures_of_launched_jobs_are_errors_in_bounded_time() {
    // Ranks that disagree on the input stop together, each saying why.
    let b = bin();
    let script =
        format!("exec {b} --simulate multi reduce --ranks env --repeats 1 --len $((100 + RANK))");
    let out = gridsync(
        &["launch", "-n", "3", "--", "sh", "-c", &script],
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(text.contains("different lengths"), "{text}");
    // One rank failing fails the launch at once, naming it, and stops the others.
    let out = gridsync(
        &[
            "launch",
            "-n",
            "3",
            "--",
            "sh",
            "-c",
            "if [ $RANK = 1 ]; then echo bye; exit 3; fi; sleep 60",
        ],
        Duration::from_secs(30),
    );
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success());
    assert!(so.contains("[1] bye"), "{so}");
    assert!(
        se.contains("rank 1 exited with status 3 (of 3 ranks)"),
        "{se}"
    );
    // What a rank left running in the background does not hold the launch: the rank's
    // process group ends with it, failed or not.
    for script in ["sleep 60 & exit 3", "sleep 60 &"] {
        let out = gridsync(
            &["launch", "-n", "2", "--", "sh", "-c", script],
            Duration::from_secs(20),
        );
        assert_eq!(out.status.success(), !script.contains("exit 3"), "{script}");
    }
    // A command that does not exist, no command, no ranks.
    for args in [
        &["launch", "-n", "2", "--", "/nonexistent/gridsync-rank"][..],
        &["launch", "-n", "0", "--", "true"][..],
        &["launch", "-n", "2"][..],
    ] {
        let out = gridsync(args, Duration::from_secs(10));
        assert!(!out.status.success(), "{args:?}");
    }
    // A launch whose ranks all succeed succeeds; the bound stops one that does not end.
    assert!(
        gridsync(
            &["launch", "-n", "4", "--", "true"],
            Duration::from_secs(10)
        )
        .status
        .success()
    );
    let out = gridsync(
        &["launch", "-n", "2", "--timeout", "1", "--", "sleep", "60"],
        Duration::from_secs(10),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("still running after 1.0 s"));
}

/// Two ranks on the GPUs: NCCL with two GPUs, the host combine on one GPU (two ranks on one
/// GPU cannot share an NCCL communicator). Each rank checks its results against the CPU; here
/// they are also the single-process plans' results: integers exactly, sums within the bound.
#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_two_ranks_give_the_single_process_results() {
    use gridsync::inputs::MULTI_SEED as SEED;
    let gpus = gridsync::runtime::device::init_driver().unwrap();
    let mut extra: Vec<&str> = vec!["--repeats", "3"];
    if gpus < 2 {
        extra.extend(["--device", "0", "--host-combine"]);
    }
    let len = 50_000_017usize;
    let len_s = len.to_string();
    let mut args = vec!["--len", len_s.as_str()];
    args.extend(&extra);
    let r = launched(2, false, "count-above", &args);
    let y = gridsync::inputs::uniform_f32(len, SEED, 0.0, 1.0);
    assert_eq!(
        r["count"].as_u64().unwrap(),
        y.iter().filter(|&&v| v > 0.5).count() as u64
    );
    if gpus >= 2 {
        assert!(r["combine"].as_str().unwrap().contains("NCCL"), "{r}");
    }
    let r = launched(2, false, "histogram", &args);
    let bytes = gridsync::histogram::uniform_bytes(len, SEED);
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Byte)
    );
    let mut wide = args.clone();
    wide.extend(["--bins", "65536"]);
    let r = launched(2, false, "histogram", &wide);
    let words = gridsync::inputs::uniform_u16(len, SEED);
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::wide::histogram_u16_cpu(&words)
    );
    let r = launched(2, false, "reduce", &args);
    let x = gridsync::inputs::uniform_f32(len, SEED, -1.0, 1.0);
    let abs: f64 = x.iter().map(|v| v.abs() as f64).sum();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    assert!((r["sum"].as_f64().unwrap() - want).abs() <= gridsync::multi::sum_bound(abs, 3));
    assert_eq!(
        f32_of(&r["min"]),
        x.iter().copied().fold(f32::NAN, f32::min)
    );
    assert_eq!(
        f32_of(&r["max"]),
        x.iter().copied().fold(f32::NAN, f32::max)
    );
}
