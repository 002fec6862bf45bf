//! Helpers shared by the integration tests.
#![allow(dead_code)]

use gridsync::Target;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The base seed: `GRIDSYNC_TEST_SEED`, else the clock. Printed so that a failure can be
/// replayed.
pub fn seed() -> u64 {
    let seed = std::env::var("GRIDSYNC_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.map(|d| d.as_nanos() as u64).unwrap_or(1)
        });
    eprintln!("GRIDSYNC_TEST_SEED={seed}");
    seed
}

/// A generator seeded with [`seed`].
pub fn rng() -> SmallRng {
    SmallRng::seed_from_u64(seed())
}

/// `n` random words.
pub fn random_u32(rng: &mut SmallRng, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.random()).collect()
}

/// The GPU; GPU tests are compiled with `ignore` where no driver was found at build time, so
/// reaching this without one is a real failure.
pub fn gpu() -> Target {
    Target::open(0, false).expect("a GPU test ran, so a GPU must be present")
}

/// The SM count of `target`, which must be the GPU.
pub fn sm_count(target: &Target) -> u32 {
    let Target::Gpu(gpu) = target else {
        panic!("{} is not a GPU", target.describe())
    };
    gpu.info().sm_count
}

/// `rounds` grid barriers of [`gridsync::gpu::bench::barrier::grid_barrier_bare`] through
/// `barrier`, launched in `mode`; the launch's error if it is refused.
pub fn grid_barrier_bare(
    t: &Target,
    barrier: &gridsync::DeviceGridBarrier,
    cfg: gridsync::LaunchConfig,
    mode: gridsync::runtime::launch::LaunchMode,
    rounds: u32,
) -> gridsync::Result<()> {
    // SAFETY: the kernel's only pointer is the barrier's state, alive until `check` has waited
    // for the launch (on the simulator, until the grid has finished).
    unsafe {
        gridsync::launch_grid_synced!(
            t,
            barrier,
            gridsync::gpu::bench::barrier::grid_barrier_bare,
            cfg,
            mode,
            (barrier.ptr(), rounds)
        )
    }
}

/// Runs every supported atomic case at `shape` on `target`, each with its own seed derived from
/// the base seed, and fails with the list of the cases that did not pass.
pub fn every_atomic_case_passes(target: &Target, shape: gridsync::atomics::CheckShape) {
    use gridsync::atomics::{all_cases, check};
    let base = seed();
    let cases = all_cases();
    let failures: Vec<String> = cases
        .iter()
        .enumerate()
        .filter_map(|(k, case)| {
            let seed = base ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            check(target, case, &shape, seed)
                .err()
                .map(|e| format!("  {case}: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed at {shape} on the {} (GRIDSYNC_TEST_SEED={base}):\n{}",
        failures.len(),
        cases.len(),
        target.describe(),
        failures.join("\n")
    );
}

/// `cmd`'s output, with stdin empty; kills it and fails the test if it runs past `limit` (a hang
/// fails, it does not stop the test run).
pub fn within(cmd: std::process::Command, limit: std::time::Duration) -> std::process::Output {
    within_meanwhile(cmd, limit, |_| {})
}

/// [`within`], with `meanwhile` given the process's pid once it started (to signal it, say).
pub fn within_meanwhile(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
    meanwhile: impl FnOnce(u32),
) -> std::process::Output {
    use std::io::Read;
    use std::process::Stdio;
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut p: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = p.read_to_end(&mut v);
            v
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    meanwhile(child.id());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran past {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The PTX text of kernel `name` in `ptx`: from its `.entry` to the next one.
pub fn kernel_body<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no kernel {name}"));
    let rest = &ptx[start..];
    let end = rest[1..]
        .find(".entry ")
        .map(|e| e + 1)
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Held by the GPU tests of one test binary whose grids fill every SM and must be resident at
/// once (persistent kernels ending rounds at a grid barrier): two such grids running together
/// would each wait for SMs the other holds until a barrier's bound ends one. Tests of a binary
/// run on several threads; these take turns.
pub fn whole_gpu() -> std::sync::MutexGuard<'static, ()> {
    static WHOLE_GPU: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that panicked while holding it left nothing on the GPU to wait for.
    WHOLE_GPU.lock().unwrap_or_else(|e| e.into_inner())
}

/// A file named `name` holding `bytes`, in a temporary directory of this test process's own.
pub fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gridsync-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}
