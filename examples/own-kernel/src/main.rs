//! Runs the kernels of `kernels/` on GPU 0 — or, with `--simulate` or without a GPU, on
//! gridsync's simulator — and checks them against the CPU; the cluster kernel where there are
//! clusters (sm_90, and the simulator). Exits non-zero on any error or mismatch.

use gridsync::{DeviceMutex, Error, LaunchConfig, Module, Result, Target, include_ptx, launch};
use kernels::{CLUSTER_COUNT_SHARED_BYTES, COUNT_SHARED_BYTES, is_multiple};
use std::process::ExitCode;

/// Words of input: enough for every thread of the grid to take the lock several times.
const LEN: usize = 10_000;
const DIVISOR: u32 = 3;
/// Threads per block: four warps.
const THREADS: u32 = 128;
/// Blocks per cluster of the cluster kernel (the grid is a multiple of it).
const CLUSTER: u32 = 2;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", env!("CARGO_PKG_NAME"));
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let simulate = std::env::args().skip(1).any(|a| a == "--simulate");
    let target = match Target::open(0, simulate) {
        Err(Error::NoGpu(why)) => {
            eprintln!("{why}: running on the simulator");
            Target::Sim
        }
        other => other?,
    };
    println!("running on the {}", target.describe());
    check_kernels(&target, LEN)
}

/// Runs every kernel of `kernels/` on `target` over `n` words and checks each against the CPU.
fn check_kernels(target: &Target, n: usize) -> Result<()> {
    let module = Module::load(target, include_ptx!("kernels"))?;

    // Pseudo-random words (Knuth's multiplicative hash), the same on every run.
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 8)
        .collect();
    let expected: Vec<u32> = data
        .iter()
        .copied()
        .filter(|&x| is_multiple(x, DIVISOR))
        .collect();
    let src = target.upload(&data)?;
    let (count, out, out_len) = (target.zeros::<u32>(1)?, target.zeros(n)?, target.zeros(1)?);
    let mutex = DeviceMutex::new(target)?;
    let blocks = if target.is_sim() { 4 } else { 32 };
    let cfg = LaunchConfig::linear(blocks, THREADS);
    let (len, src) = (n as u64, src.ptr().cast_const());
    // SAFETY: `src` holds n words, `count` and `out_len` one each, `out` n (room for every
    // word); `mutex` is a live mutex state; nothing else uses these buffers meanwhile.
    unsafe {
        let shared = cfg.with_shared_bytes(COUNT_SHARED_BYTES);
        launch!(target, module => kernels::count_multiples, shared,
            (src, len, DIVISOR, count.ptr()))?;
        launch!(target, module => kernels::append_multiples, cfg,
            (src, len, DIVISOR, out.ptr(), out_len.ptr(), mutex.ptr()))?;
    }
    target.synchronize()?;
    mutex.check(target)?;

    let counted = target.download(&count)?[0] as usize;
    let appended = target.download(&out_len)?[0] as usize;
    // The append order is the lock's order; the set of words must be the CPU's.
    let mut list = target.download(&out)?;
    list.truncate(appended);
    list.sort_unstable();
    let mut want = expected.clone();
    want.sort_unstable();
    println!(
        "count_multiples:  {counted} multiples of {DIVISOR} in {n} words (CPU: {})",
        expected.len()
    );
    println!(
        "append_multiples: {appended} words appended under the mutex (CPU: {})",
        expected.len()
    );
    if counted != expected.len() {
        return Err(Error::Mismatch(format!(
            "count {counted}, CPU {}",
            expected.len()
        )));
    }
    if list != want {
        return Err(Error::Mismatch(
            "the appended words differ from the CPU's".into(),
        ));
    }
    let has_clusters = match target {
        Target::Gpu(gpu) => gpu.info().compute_capability.0 >= 9,
        Target::Sim => true,
    };
    if has_clusters {
        let clustered = target.zeros::<u32>(1)?;
        let cfg = cfg
            .with_shared_bytes(CLUSTER_COUNT_SHARED_BYTES)
            .with_cluster(CLUSTER.into());
        // SAFETY: as above; `clustered` holds one word.
        unsafe {
            launch!(target, module => kernels::count_multiples_cluster, cfg,
                (src, len, DIVISOR, clustered.ptr()))?;
        }
        let n = target.download(&clustered)?[0] as usize;
        println!(
            "count_multiples_cluster: {n} multiples in clusters of {CLUSTER} blocks (CPU: {})",
            expected.len()
        );
        if n != expected.len() {
            return Err(Error::Mismatch(format!(
                "cluster count {n}, CPU {}",
                expected.len()
            )));
        }
    } else {
        println!("count_multiples_cluster: skipped, thread block clusters need sm_90");
    }
    println!("all match the CPU");
    Ok(())
}

// ANCHOR: checker_tests
#[cfg(test)]
mod tests {
    use super::*;
    use gridsync::check::{FindingKind, Options, assert_race_free, checked};
    use gridsync::gpu::mem::Ptr;

    /// Every kernel of `kernels/` on the simulator under gridsync's checker: right answers, and
    /// no data race, scope race or stuck wait in any of them. (A finding fails the test with
    /// the two lines of the race.) Over fewer words than `cargo run`: every access is checked,
    /// and the appends' hand-offs of the lock, slower so, stay well inside its bound.
    #[test]
    fn the_kernels_are_right_and_race_free() {
        assert_race_free(|| check_kernels(&Target::Sim, 2_000)).unwrap();
    }

    /// What the checker says of a race planted in `count_multiples`' way of counting: each
    /// thread adds to the counter with a plain load and store instead of an atomic. On a GPU
    /// the count would come out short some of the time; here the test fails every time, with
    /// the lines of the load and the store.
    #[test]
    fn a_planted_race_is_found_with_both_lines() {
        let counter = Target::Sim.zeros::<u32>(1).unwrap();
        let p = counter.ptr() as usize;
        let cfg = LaunchConfig::linear(2, 32);
        let (ran, report) = checked(Options::DEFAULT, || {
            gridsync::gpu::sim::launch(&cfg, || {
                let c = Ptr::new(p as *mut u32);
                // SAFETY: `p` is the one live word of `counter`; the race on it is planted.
                unsafe { c.store(c.load() + 1) };
            })
        });
        ran.unwrap();
        let race = report.of_kind(FindingKind::DataRace).next();
        let race = race.unwrap_or_else(|| panic!("no data race found: {report}"));
        assert!(race.first.site.file().ends_with("main.rs"), "{report}");
        assert!(race.second.site.file().ends_with("main.rs"), "{report}");
    }
}
// ANCHOR_END: checker_tests
