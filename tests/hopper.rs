//! Hopper's primitives — `mbarrier`s, asynchronous copies, clusters and distributed shared
//! memory — against CPU models, on the simulator and on the GPU (sm_90).

mod common;

use gpu::checks::hopper::{BARRIER_BYTES, CLUSTER_CHECK_FIELDS, errors};
use gpu::sim::SimError;
use gridsync::runtime::wait::wait_bound;
use gridsync::{Error, LaunchConfig, Target, launch};
use rand::Rng;

/// A bound far above any real wait, for the checks that must not time out: 2 s, stretched
/// under a sanitizer. The checks that provoke a timeout pass a short bound, kept as it is.
fn timeout_ns() -> u64 {
    wait_bound(2_000_000_000)
}

/// `grid` blocks of `block` threads in clusters of `cluster` along x, with the 16 bytes of
/// shared memory the cluster checks ask for.
fn cluster_cfg(grid: u32, block: u32, cluster: u32) -> LaunchConfig {
    LaunchConfig::linear(grid, block)
        .with_shared_bytes(16)
        .with_cluster(cluster.into())
}

fn mbarrier_phases(target: &Target, blocks: u32, block: u32, rounds: u32, warp_arrivals: bool) {
    let n = (blocks * block) as usize;
    let out = target.zeros::<u32>(n).unwrap();
    let err = target.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(blocks, block).with_shared_bytes(BARRIER_BYTES + 4 * block);
    // SAFETY: a word of output per thread, the shared memory the kernel asks for.
    unsafe {
        launch!(
            target,
            gpu::checks::hopper::mbarrier_phases,
            cfg,
            (
                out.ptr(),
                rounds,
                warp_arrivals as u32,
                timeout_ns(),
                err.ptr()
            )
        )
        .unwrap()
    };
    assert_eq!(target.download(&err).unwrap(), [0], "a wait timed out");
    let got = target.download(&out).unwrap();
    for (g, have) in got.iter().enumerate() {
        let t = g as u32 % block;
        let right = (t + 1) % block;
        let want = (0..rounds).fold(0u32, |s, r| s.wrapping_add((r + 1) * 1000 + right));
        assert_eq!(
            *have, want,
            "thread {g} of {blocks}×{block}, {rounds} rounds"
        );
    }
}

#[test]
fn mbarrier_phases_sim() {
    for warp_arrivals in [false, true] {
        mbarrier_phases(&Target::Sim, 1, 1, 3, warp_arrivals);
        mbarrier_phases(&Target::Sim, 1, 33, 4, warp_arrivals);
        mbarrier_phases(&Target::Sim, 2, 96, 3, warp_arrivals);
    }
}

/// Copies `len` random bytes through the bulk-copy pipeline and returns the error word.
fn pipeline_copy(
    target: &Target,
    len: usize,
    offset: usize,
    grid: u32,
    block: u32,
    stage_bytes: u32,
    stages: u32,
) -> u32 {
    let mut rng = common::rng();
    // Words, so that the source is 16-byte aligned (and `offset` bytes past it when asked).
    let words = (len + offset).div_ceil(4).max(1);
    let src_words = common::random_u32(&mut rng, words);
    let src = target.upload(&src_words).unwrap();
    let dst = target.zeros::<u8>(len.max(1)).unwrap();
    let err = target.zeros::<u32>(1).unwrap();
    let cfg =
        LaunchConfig::linear(grid, block).with_shared_bytes(BARRIER_BYTES + stages * stage_bytes);
    // SAFETY: `src` holds `offset + len` bytes, `dst` `len`; the shared memory is the kernel's.
    unsafe {
        let from = src.ptr().cast::<u8>().add(offset).cast_const();
        launch!(
            target,
            gpu::checks::hopper::bulk_pipeline_copy,
            cfg,
            (
                from,
                dst.ptr(),
                len as u64,
                stage_bytes,
                stages,
                timeout_ns(),
                err.ptr()
            )
        )
        .unwrap()
    };
    let e = target.download(&err).unwrap()[0];
    if e == 0 {
        let bytes: Vec<u8> = src_words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let got = target.download(&dst).unwrap();
        assert_eq!(
            &got[..len],
            &bytes[offset..offset + len],
            "{len} bytes, {stages} stages of {stage_bytes}, {grid}×{block}"
        );
    }
    e
}

#[test]
fn bulk_pipeline_copies_every_size_sim() {
    for (len, stages, stage_bytes) in [
        (0, 1, 64),
        (1, 1, 64),
        (15, 2, 64),
        (16, 2, 64),
        (17, 3, 64),
        (1000, 1, 128),
        (4099, 3, 256),
    ] {
        assert_eq!(
            pipeline_copy(&Target::Sim, len, 0, 2, 64, stage_bytes, stages),
            0
        );
    }
    assert_eq!(pipeline_copy(&Target::Sim, 777, 0, 1, 96, 32, 8), 0);
}

#[test]
fn a_misaligned_bulk_copy_is_refused_and_nobody_hangs_sim() {
    let e = pipeline_copy(&Target::Sim, 100, 4, 1, 64, 64, 2);
    assert_eq!(e, errors::MISALIGNED);
}

fn cp_async_transform(target: &Target, len: usize, grid: u32, block: u32) {
    let mut rng = common::rng();
    // Padded to whole 16-byte pieces: the zero-filling copy of the tail is a 16-byte access.
    let input = common::random_u32(&mut rng, len.div_ceil(4).max(1) * 4);
    let src = target.upload(&input).unwrap();
    let dst = target.upload(&vec![0xdead_beef_u32; len.max(1)]).unwrap();
    let err = target.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(grid, block).with_shared_bytes(BARRIER_BYTES + 32 * block);
    // SAFETY: `src` and `dst` hold `len` words; the shared memory is the kernel's.
    unsafe {
        launch!(
            target,
            gpu::checks::hopper::cp_async_transform,
            cfg,
            (
                src.ptr().cast_const(),
                dst.ptr(),
                len as u64,
                timeout_ns(),
                err.ptr()
            )
        )
        .unwrap()
    };
    assert_eq!(target.download(&err).unwrap(), [0], "a wait timed out");
    let got = target.download(&dst).unwrap();
    for i in 0..len {
        assert_eq!(
            got[i],
            input[i].wrapping_mul(3).wrapping_add(1),
            "word {i} of {len}, {grid}×{block}"
        );
    }
    if len == 0 {
        assert_eq!(got[0], 0xdead_beef, "nothing past the end is written");
    }
}

#[test]
fn cp_async_transform_sim() {
    for (len, grid, block) in [
        (0, 1, 32),
        (1, 1, 32),
        (5, 2, 32),
        (127, 1, 32),
        (128, 3, 32),
        (1000, 3, 64),
    ] {
        cp_async_transform(&Target::Sim, len, grid, block);
    }
}

fn bulk_store(target: &Target, blocks: u32, block: u32, words: u32) {
    let dst = target.zeros::<u32>((blocks * words) as usize).unwrap();
    let err = target.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(blocks, block).with_shared_bytes(4 * words);
    // SAFETY: `words` words of output per block, as many of shared memory.
    unsafe {
        launch!(
            target,
            gpu::checks::hopper::bulk_store,
            cfg,
            (dst.ptr(), words, err.ptr())
        )
        .unwrap()
    };
    assert_eq!(target.download(&err).unwrap(), [0]);
    let got = target.download(&dst).unwrap();
    for (k, v) in got.iter().enumerate() {
        let (b, i) = (k as u32 / words, k as u32 % words);
        assert_eq!(*v, b * 1_000_000 + i, "word {k}");
    }
}

#[test]
fn bulk_store_sim() {
    bulk_store(&Target::Sim, 1, 32, 4);
    bulk_store(&Target::Sim, 3, 64, 100);
}

/// Launches [`gpu::checks::hopper::cluster_check`] and returns its rows, or the launch's error
/// for the shapes that must be refused.
fn launch_cluster_check(
    target: &Target,
    grid: u32,
    cluster: u32,
    block: u32,
) -> gridsync::Result<Vec<u32>> {
    let out = target
        .zeros::<u32>(grid as usize * CLUSTER_CHECK_FIELDS)
        .unwrap();
    let cfg = cluster_cfg(grid, block, cluster);
    // SAFETY: a row per block; 16 bytes of shared memory.
    unsafe {
        launch!(
            target,
            gpu::checks::hopper::cluster_check,
            cfg,
            (out.ptr(),)
        )?
    };
    target.download(&out)
}

fn cluster_check(target: &Target, grid: u32, cluster: u32, block: u32) {
    let got = launch_cluster_check(target, grid, cluster, block).unwrap();
    for b in 0..grid {
        let row = &got[b as usize * CLUSTER_CHECK_FIELDS..][..CLUSTER_CHECK_FIELDS];
        let (rank, first) = (b % cluster, b - b % cluster);
        let value = |r: u32| 100 + first + r;
        let sum: u32 = (0..cluster).map(value).sum();
        let want = [
            rank,
            cluster,
            rank + 1000 * cluster,
            b / cluster,
            grid / cluster,
            value((rank + 1) % cluster),
            cluster * block,
            sum - value(rank),
        ];
        assert_eq!(
            row,
            want,
            "block {b} of {grid} in clusters of {cluster} on the {}",
            target.describe()
        );
    }
}

#[test]
fn clusters_see_their_shape_and_each_others_shared_memory_sim() {
    for (grid, cluster, block) in [
        (1, 1, 32),
        (6, 1, 8),
        (6, 2, 8),
        (6, 3, 33),
        (8, 8, 4),
        (16, 16, 2),
    ] {
        cluster_check(&Target::Sim, grid, cluster, block);
    }
}

fn mbarrier_remote(target: &Target, grid: u32, cluster: u32, block: u32) {
    let out = target.zeros::<u32>((grid / cluster) as usize).unwrap();
    let err = target.zeros::<u32>(1).unwrap();
    let cfg = cluster_cfg(grid, block, cluster);
    // SAFETY: a word per cluster; 16 bytes of shared memory.
    unsafe {
        launch!(
            target,
            gpu::checks::hopper::mbarrier_remote,
            cfg,
            (out.ptr(), timeout_ns(), err.ptr())
        )
        .unwrap()
    };
    assert_eq!(target.download(&err).unwrap(), [0], "rank 0 timed out");
    assert!(target.download(&out).unwrap().iter().all(|&v| v == 1));
}

#[test]
fn remote_arrivals_complete_a_siblings_phase_sim() {
    mbarrier_remote(&Target::Sim, 4, 2, 32);
    mbarrier_remote(&Target::Sim, 6, 3, 7);
}

fn wrong_parity(target: &Target) -> u32 {
    let err = target.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(1, 1).with_shared_bytes(16);
    // SAFETY: one thread, one word of output, 16 bytes of shared memory.
    unsafe {
        launch!(
            target,
            gpu::checks::hopper::mbarrier_wrong_parity,
            cfg,
            (50_000_000u64, err.ptr())
        )
        .unwrap()
    };
    target.download(&err).unwrap()[0]
}

/// `rounds` rounds of [`gpu::checks::hopper::cluster_grid_barrier_phases`] over `grid` blocks
/// in clusters of `cluster`: no block reads a slot before its block arrived.
fn cluster_grid_phases(target: &Target, grid: u32, cluster: u32, block: u32, rounds: u32) {
    use gridsync::primitives::barrier::DeviceGridBarrier;
    use gridsync::runtime::launch::LaunchMode;
    let barrier = DeviceGridBarrier::new(target).unwrap();
    let slots = target.zeros::<u32>(grid as usize).unwrap();
    let errs = target.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(grid, block).with_cluster(cluster.into());
    // SAFETY: one phase slot per block, one error word, the barrier's live state.
    unsafe {
        gridsync::launch_grid_synced!(
            target,
            &barrier,
            gpu::checks::hopper::cluster_grid_barrier_phases,
            cfg,
            LaunchMode::Plain,
            (barrier.ptr(), slots.ptr(), rounds, errs.ptr())
        )
        .unwrap()
    };
    target.synchronize().unwrap();
    barrier.check(target).unwrap();
    let last = target.download(&slots).unwrap();
    assert!(last.iter().all(|&p| p == rounds), "{last:?}");
    assert_eq!(
        target.download(&errs).unwrap()[0],
        0,
        "{grid} blocks in clusters of {cluster}"
    );
}

/// The cluster of block `absent` never arrives: the others give up at the timeout, and the host
/// says so.
fn cluster_grid_absent(target: &Target, grid: u32, cluster: u32, absent: u32) {
    use gridsync::primitives::barrier::DeviceGridBarrier;
    use gridsync::runtime::launch::LaunchMode;
    let barrier =
        DeviceGridBarrier::with_timeout(target, std::time::Duration::from_millis(50)).unwrap();
    let cfg = LaunchConfig::linear(grid, 32).with_cluster(cluster.into());
    // SAFETY: the barrier's live state.
    unsafe {
        gridsync::launch_grid_synced!(
            target,
            &barrier,
            gpu::checks::hopper::cluster_grid_barrier_absent_cluster,
            cfg,
            LaunchMode::Plain,
            (barrier.ptr(), absent)
        )
        .unwrap()
    };
    target.synchronize().unwrap();
    let e = barrier.check(target).unwrap_err();
    let others = grid - cluster;
    assert!(
        matches!(e, Error::BarrierTimeout { blocks } if blocks >= 1 && blocks <= others),
        "{e}"
    );
}

#[test]
fn the_cluster_aware_grid_barrier_lets_no_block_through_early_sim() {
    for (grid, cluster, block, rounds) in [
        (8, 2, 32, 6),
        (6, 3, 7, 5),
        (16, 8, 16, 4),
        (4, 1, 32, 5),
        (16, 16, 8, 3),
    ] {
        cluster_grid_phases(&Target::Sim, grid, cluster, block, rounds);
    }
    cluster_grid_absent(&Target::Sim, 6, 2, 3);
}

#[test]
fn waiting_on_the_wrong_parity_times_out_instead_of_hanging_sim() {
    assert_eq!(wrong_parity(&Target::Sim), errors::TIMED_OUT);
}

#[test]
fn the_simulator_refuses_clusters_that_do_not_tile_the_grid() {
    let err =
        gpu::sim::launch(&LaunchConfig::linear(5, 1).with_cluster(2.into()), || {}).unwrap_err();
    assert!(
        matches!(err, SimError::Config(ref why) if why.contains("divide")),
        "{err}"
    );
    let err =
        gpu::sim::launch(&LaunchConfig::linear(32, 1).with_cluster(32.into()), || {}).unwrap_err();
    assert!(
        matches!(err, SimError::Config(ref why) if why.contains("at most 16")),
        "{err}"
    );
}

#[test]
fn a_cluster_wait_without_an_arrival_is_reported() {
    let cfg = LaunchConfig::linear(2, 2).with_cluster(2.into());
    let err = gpu::sim::launch(&cfg, gpu::cluster::cluster_wait).unwrap_err();
    assert!(
        matches!(err, SimError::Panicked(ref why) if why.contains("without a barrier.cluster.arrive")),
        "{err}"
    );
}

#[test]
fn threads_that_exit_stop_counting_at_the_cluster_barrier() {
    // Rank 1's threads exit without arriving: they stop counting, as on the GPU, so the
    // others pass.
    let cfg = LaunchConfig::linear(2, 2).with_cluster(2.into());
    gpu::sim::launch(&cfg, || {
        if gpu::cluster::cluster_block_rank() == 0 {
            gpu::cluster::cluster_sync();
        }
    })
    .unwrap();
}

#[test]
fn a_random_split_of_arrivals_and_waits_completes_every_phase_sim() {
    // Threads arrive, do a random amount of independent work, then wait: the split barrier
    // never lets a thread pass a phase some thread of the cluster has not arrived at.
    let mut rng = common::rng();
    let delays: Vec<u32> = (0..64).map(|_| rng.random_range(0..200)).collect();
    let counter = std::sync::atomic::AtomicU32::new(0);
    let cfg = LaunchConfig::linear(4, 16).with_cluster(4.into());
    gpu::sim::launch(&cfg, || {
        let g = gpu::index::global_id_x();
        for phase in 0..3u32 {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            gpu::cluster::cluster_arrive();
            std::thread::sleep(std::time::Duration::from_micros(delays[g] as u64));
            gpu::cluster::cluster_wait();
            let seen = counter.load(std::sync::atomic::Ordering::Relaxed);
            assert!(
                seen >= 64 * (phase + 1),
                "a thread passed phase {phase} after {seen} arrivals"
            );
            gpu::cluster::cluster_arrive();
            gpu::cluster::cluster_wait();
        }
    })
    .unwrap();
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn hopper_primitives_gpu() {
    let gpu = common::gpu();
    let Target::Gpu(g) = &gpu else { unreachable!() };
    if g.info().compute_capability.0 < 9 {
        // Refused with the compute capability named, never a launch failure.
        let e = launch_cluster_check(&gpu, 2, 2, 32).unwrap_err();
        assert!(
            matches!(e, Error::Unsupported(ref why) if why.contains("9.0")),
            "{e}"
        );
        return;
    }
    for warp_arrivals in [false, true] {
        mbarrier_phases(&gpu, 132, 256, 50, warp_arrivals);
        mbarrier_phases(&gpu, 7, 33, 9, warp_arrivals);
    }
    for (len, grid, stages, stage_bytes) in [
        (0, 1, 1, 1024),
        (17, 1, 2, 1024),
        (1 << 20, 132, 4, 8192),
        (12_345_679, 264, 3, 16384),
    ] {
        assert_eq!(
            pipeline_copy(&gpu, len, 0, grid, 160, stage_bytes, stages),
            0
        );
    }
    assert_eq!(
        pipeline_copy(&gpu, 4096, 8, 4, 64, 1024, 2),
        errors::MISALIGNED
    );
    for (len, grid, block) in [(0, 1, 32), (5, 2, 32), (1_000_003, 132, 256)] {
        cp_async_transform(&gpu, len, grid, block);
    }
    bulk_store(&gpu, 132, 128, 4096);
    for (grid, cluster, block) in [
        (132, 1, 64),
        (132, 2, 128),
        (129, 3, 96),
        (128, 8, 256),
        (128, 16, 64),
    ] {
        cluster_check(&gpu, grid, cluster, block);
    }
    let cfg = cluster_cfg(8, 256, 8);
    let clusters = g.max_active_clusters("cluster_check", &cfg).unwrap();
    let sms = g.info().sm_count;
    assert!(
        clusters >= 1 && clusters * 8 <= 32 * sms,
        "{clusters} clusters of 8 on {sms} SMs"
    );
    eprintln!("max active clusters of 8 × 256 threads: {clusters} ({sms} SMs)");
    mbarrier_remote(&gpu, 132, 2, 128);
    mbarrier_remote(&gpu, 64, 8, 256);
    assert_eq!(wrong_parity(&gpu), errors::TIMED_OUT);
    for (grid, cluster, block) in [
        (132, 2, 128),
        (129, 3, 96),
        (128, 8, 128),
        (128, 16, 64),
        (132, 1, 256),
    ] {
        cluster_grid_phases(&gpu, grid, cluster, block, 200);
    }
    // The largest co-resident clustered grid, and one cluster more refused before launching.
    let probe = LaunchConfig::linear(8, 128).with_cluster(8.into());
    let most = g
        .max_active_clusters("cluster_grid_barrier_phases", &probe)
        .unwrap();
    cluster_grid_phases(&gpu, 8 * most, 8, 128, 100);
    cluster_grid_absent(&gpu, 64, 4, 13);
    {
        use gridsync::primitives::barrier::DeviceGridBarrier;
        let barrier = DeviceGridBarrier::new(&gpu).unwrap();
        let cfg = LaunchConfig::linear(8 * (most + 1), 128).with_cluster(8.into());
        // SAFETY: refused before launching.
        let e = unsafe {
            gridsync::launch_grid_synced!(
                &gpu,
                &barrier,
                gpu::checks::hopper::cluster_grid_barrier_absent_cluster,
                cfg,
                gridsync::runtime::launch::LaunchMode::Plain,
                (barrier.ptr(), 0u32)
            )
        }
        .unwrap_err();
        assert!(
            matches!(e, Error::InvalidInput(ref why) if why.contains("cuOccupancyMaxActiveClusters")),
            "{e}"
        );
    }
    // A cluster that does not tile the grid is refused before the driver sees it.
    let e = launch_cluster_check(&gpu, 5, 2, 32).unwrap_err();
    assert!(
        matches!(e, Error::InvalidInput(ref why) if why.contains("divide")),
        "{e}"
    );
}
