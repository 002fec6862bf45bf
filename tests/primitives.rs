//! Warp, shared-memory, fence and clock primitives against CPU models, on the simulator and on
//! the GPU.

#[path = "primitives/checker.rs"]
mod checker;
mod common;

use gpu::checks::primitives::WARP_CHECK_FIELDS;
use gridsync::primitives::warp::warp_check_row;
use gridsync::{LaunchConfig, Target, launch};

fn check_warp_primitives(target: &Target, blocks: u32, block: u32) {
    let mut rng = common::rng();
    let n = (blocks * block) as usize;
    let input = common::random_u32(&mut rng, n);
    let inp = target.upload(&input).unwrap();
    let out = target
        .upload(&vec![0xdead_beef_u32; n * WARP_CHECK_FIELDS])
        .unwrap();
    let cfg = LaunchConfig::linear(blocks, block).with_shared_bytes(block * 4);
    // SAFETY: one input and one output row per thread, shared memory of one word per thread.
    unsafe {
        launch!(
            target,
            gpu::checks::primitives::warp_check,
            cfg,
            (inp.ptr().cast_const(), out.ptr())
        )
        .unwrap()
    };
    let got = target.download(&out).unwrap();
    for g in 0..n {
        for (f, want) in warp_check_row(&input, block as usize, g).iter().enumerate() {
            if let Some(want) = want {
                let have = got[g * WARP_CHECK_FIELDS + f];
                assert_eq!(
                    have,
                    *want,
                    "thread {g} field {f} ({blocks}×{block} on the {})",
                    target.describe()
                );
            }
        }
    }
}

#[test]
fn warp_primitives_sim_full_warps() {
    check_warp_primitives(&Target::Sim, 3, 64);
}

#[test]
fn warp_primitives_sim_partial_warp() {
    // 48 threads: the second warp has 16 lanes.
    check_warp_primitives(&Target::Sim, 2, 48);
}

#[test]
fn warp_primitives_sim_tiny_block() {
    check_warp_primitives(&Target::Sim, 5, 1);
}

fn check_fences(target: &Target) {
    let data = target.zeros::<u32>(9).unwrap();
    let flag = target.zeros::<u32>(1).unwrap();
    // SAFETY: 9 data words and one flag, written by thread 0 only.
    unsafe {
        launch!(
            target,
            gpu::checks::primitives::fence_check,
            LaunchConfig::linear(2, 32),
            (data.ptr(), flag.ptr())
        )
        .unwrap()
    };
    assert_eq!(
        target.download(&data).unwrap(),
        (1..=9).collect::<Vec<u32>>()
    );
    assert_eq!(target.download(&flag).unwrap(), [1]);
}

#[test]
fn fences_sim() {
    check_fences(&Target::Sim);
}

fn check_timers(target: &Target, sleep_ns: u32) -> [u64; 4] {
    let out = target.zeros::<u64>(4).unwrap();
    // SAFETY: four words written by thread 0.
    unsafe {
        launch!(
            target,
            gpu::checks::primitives::timer_check,
            LaunchConfig::linear(1, 1),
            (out.ptr(), sleep_ns)
        )
        .unwrap()
    };
    let t = target.download(&out).unwrap();
    assert!(t[1] >= t[0], "globaltimer went backwards: {t:?}");
    assert!(t[3] > t[2], "clock64 did not advance: {t:?}");
    [t[0], t[1], t[2], t[3]]
}

#[test]
fn timers_sim() {
    let t = check_timers(&Target::Sim, 200_000);
    assert!(
        t[1] - t[0] >= 200_000,
        "a 200 µs sleep took {} ns",
        t[1] - t[0]
    );
}

#[test]
fn sim_rejects_bad_shapes() {
    let cfg = LaunchConfig::linear(1, 2048);
    let err = gpu::sim::launch(&cfg, || {}).unwrap_err();
    assert!(matches!(err, gpu::sim::SimError::Config(_)), "{err}");
    let err = gpu::sim::launch(&LaunchConfig::linear(100, 1024), || {}).unwrap_err();
    assert!(
        matches!(err, gpu::sim::SimError::TooManyThreads { .. }),
        "{err}"
    );
    let err = gpu::sim::launch(&LaunchConfig::linear(0, 32), || {}).unwrap_err();
    assert!(matches!(err, gpu::sim::SimError::Config(_)), "{err}");
}

#[test]
fn sim_reports_kernel_panics() {
    let err = gpu::sim::launch(&LaunchConfig::linear(2, 8), || {
        if gpu::index::global_id_x() == 5 {
            panic!("thread five fails");
        }
    })
    .unwrap_err();
    // The message, and which GPU thread it came from.
    assert_eq!(
        err,
        gpu::sim::SimError::Panicked(
            "thread five fails (block [0, 0, 0], thread [5, 0, 0])".into()
        )
    );
}

#[test]
fn sim_barrier_releases_when_threads_exit() {
    // Half the block exits before the barrier; as on the GPU, the rest must not wait for it.
    let hits = std::sync::atomic::AtomicU32::new(0);
    gpu::sim::launch(&LaunchConfig::linear(1, 64), || {
        if gpu::index::thread_idx_x().is_multiple_of(2) {
            return;
        }
        gpu::sync::sync_threads();
        hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(hits.into_inner(), 32);
}

#[test]
fn sim_indices_cover_3d_grids() {
    let seen = std::sync::Mutex::new(Vec::new());
    gpu::sim::launch(
        &LaunchConfig {
            grid: (2, 3, 1).into(),
            block: (4, 2, 2).into(),
            shared_bytes: 0,
            cluster: gpu::Dim3::ONE,
        },
        || {
            use gpu::index::*;
            seen.lock().unwrap().push((
                [thread_idx_x(), thread_idx_y(), thread_idx_z()],
                [block_idx_x(), block_idx_y(), block_idx_z()],
                thread_rank_in_block(),
            ));
            assert_eq!([block_dim_x(), block_dim_y(), block_dim_z()], [4, 2, 2]);
            assert_eq!([grid_dim_x(), grid_dim_y(), grid_dim_z()], [2, 3, 1]);
        },
    )
    .unwrap();
    let mut seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 6 * 16);
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen.len(),
        6 * 16,
        "every (thread, block) pair exactly once"
    );
    for (t, _, rank) in &seen {
        assert_eq!(*rank, (t[2] * 2 + t[1]) * 4 + t[0]);
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn warp_primitives_gpu() {
    let gpu = common::gpu();
    check_warp_primitives(&gpu, 132, 256);
    check_warp_primitives(&gpu, 7, 96);
    check_warp_primitives(&gpu, 3, 1024);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn fences_gpu() {
    check_fences(&common::gpu());
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn timers_gpu() {
    let t = check_timers(&common::gpu(), 100_000);
    // nanosleep may wake early, but a 100 µs request is not skipped entirely.
    assert!(
        t[1] - t[0] >= 1_000,
        "a 100 µs nanosleep took {} ns of globaltimer",
        t[1] - t[0]
    );
}
