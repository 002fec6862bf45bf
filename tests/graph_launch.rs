//! Launch modes, the co-residency check, the host owner of a grid barrier, and CUDA graphs:
//! simulator and input checks everywhere, the driver paths on the GPU.

mod common;

use gridsync::gpu::grid::GENERATION_BIT;
use gridsync::primitives::barrier::DeviceGridBarrier;
use gridsync::runtime::graph::Graph;
use gridsync::runtime::grid::{check_coresident, max_coresident_blocks};
use gridsync::runtime::launch::{LaunchMode, launch_on_stream};
use gridsync::{Error, LaunchConfig, Target, launch_cooperative, launch_grid_synced};
use std::time::Duration;

#[test]
fn launch_modes_serialize_in_snake_case() {
    let json = serde_json::to_string(&[LaunchMode::Plain, LaunchMode::Cooperative]).unwrap();
    assert_eq!(json, r#"["plain","cooperative"]"#);
}

#[test]
fn barrier_timeout_says_how_many_blocks_gave_up() {
    let msg = Error::BarrierTimeout { blocks: 3 }.to_string();
    assert!(
        msg.starts_with("3 block(s) gave up waiting at a grid barrier"),
        "{msg}"
    );
    assert!(msg.contains("never arrived"), "{msg}");
}

#[test]
fn the_simulator_limit_is_its_thread_limit_over_the_block() {
    let name = "grid_barrier_bare";
    let limit = check_coresident(&Target::Sim, name, &LaunchConfig::linear(4, 1024)).unwrap();
    assert_eq!(limit, 4);
    let limit = check_coresident(&Target::Sim, name, &LaunchConfig::linear(2, 64)).unwrap();
    assert_eq!(limit, 64);
    let e = check_coresident(&Target::Sim, name, &LaunchConfig::linear(5, 1024)).unwrap_err();
    let Error::InvalidInput(msg) = &e else {
        panic!("expected InvalidInput, got {e:?}");
    };
    for part in [
        "grid_barrier_bare",
        "5 blocks",
        "at most 4 blocks",
        "4096",
        "never all arrive",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
}

#[test]
fn a_zero_barrier_timeout_is_refused() {
    let e = DeviceGridBarrier::with_timeout(&Target::Sim, Duration::ZERO).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

#[test]
fn the_simulator_runs_a_grid_synced_launch_in_both_modes() {
    let t = Target::Sim;
    let barrier = DeviceGridBarrier::new(&t).unwrap();
    for mode in [LaunchMode::Plain, LaunchMode::Cooperative] {
        // SAFETY: the kernel's only pointer is the barrier's state, alive for the launch (the
        // simulator returns when the grid has finished).
        unsafe {
            launch_grid_synced!(
                &t,
                barrier,
                gridsync::gpu::bench::barrier::grid_barrier_bare,
                LaunchConfig::linear(3, 45),
                mode,
                (barrier.ptr(), 20u32)
            )
        }
        .unwrap();
        barrier.check(&t).unwrap();
        // 20 barriers of 2³¹ each: the low bits are back at 0, the generation bit at 0.
        assert_eq!(barrier.read(&t).unwrap().arrived, 0);
    }
}

#[test]
fn the_simulator_refuses_an_oversized_grid_synced_launch() {
    let t = Target::Sim;
    let barrier = DeviceGridBarrier::new(&t).unwrap();
    // SAFETY: as above; the launch is refused before it runs.
    let e = unsafe {
        launch_grid_synced!(
            &t,
            barrier,
            gridsync::gpu::bench::barrier::grid_barrier_bare,
            LaunchConfig::linear(5, 1024),
            LaunchMode::Plain,
            (barrier.ptr(), 1u32)
        )
    }
    .unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

#[test]
fn launch_cooperative_runs_on_the_simulator() {
    let t = Target::Sim;
    let x = t.zeros::<u32>(1).unwrap();
    // SAFETY: `x` is one `u32`, touched only atomically by the kernel.
    unsafe {
        launch_cooperative!(
            t,
            gridsync::gpu::lessons::race::add_one_atomic,
            LaunchConfig::linear(3, 7),
            (x.ptr(),)
        )
    }
    .unwrap();
    assert_eq!(t.download(&x).unwrap(), [21]);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_cooperative_grid_of_one_block_per_sm_passes_1000_barriers() {
    let t = common::gpu();
    let Target::Gpu(gpu) = &t else { unreachable!() };
    let sms = gpu.info().sm_count;
    let barrier = DeviceGridBarrier::new(&t).unwrap();
    for mode in [LaunchMode::Cooperative, LaunchMode::Plain] {
        // SAFETY: the kernel's only pointer is the barrier's state, alive until `check` has
        // waited for the launch.
        unsafe {
            launch_grid_synced!(
                &t,
                barrier,
                gridsync::gpu::bench::barrier::grid_barrier_bare,
                LaunchConfig::linear(sms, 128),
                mode,
                (barrier.ptr(), 1000u32)
            )
        }
        .unwrap();
        barrier.check(&t).unwrap();
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_grid_one_block_past_the_limit_is_refused_before_launch() {
    let t = common::gpu();
    let Target::Gpu(gpu) = &t else { unreachable!() };
    let name = "grid_barrier_bare";
    let limit = max_coresident_blocks(gpu, name, 128, 0).unwrap();
    assert!(
        limit >= gpu.info().sm_count,
        "{limit} blocks of 128 threads fit"
    );
    assert_eq!(
        check_coresident(&t, name, &LaunchConfig::linear(limit, 128)).unwrap(),
        limit
    );
    let barrier = DeviceGridBarrier::new(&t).unwrap();
    // One barrier leaves the generation bit set; a refused launch must not even reset it.
    // SAFETY: as above.
    unsafe {
        launch_grid_synced!(
            &t,
            barrier,
            gridsync::gpu::bench::barrier::grid_barrier_bare,
            LaunchConfig::linear(limit, 128),
            LaunchMode::Cooperative,
            (barrier.ptr(), 1u32)
        )
    }
    .unwrap();
    barrier.check(&t).unwrap();
    assert_eq!(barrier.read(&t).unwrap().arrived, GENERATION_BIT);
    for mode in [LaunchMode::Plain, LaunchMode::Cooperative] {
        // SAFETY: as above; the launch is refused before it is queued.
        let e = unsafe {
            launch_grid_synced!(
                &t,
                barrier,
                gridsync::gpu::bench::barrier::grid_barrier_bare,
                LaunchConfig::linear(limit + 1, 128),
                mode,
                (barrier.ptr(), 1u32)
            )
        }
        .unwrap_err();
        let Error::InvalidInput(msg) = &e else {
            panic!("{mode:?}: expected InvalidInput, got {e:?}");
        };
        assert!(msg.contains(&format!("at most {limit} blocks")), "{msg}");
        assert!(msg.contains("never all arrive"), "{msg}");
        assert_eq!(
            barrier.read(&t).unwrap().arrived,
            GENERATION_BIT,
            "{mode:?}"
        );
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_graph_of_ten_empty_launches_runs_three_times() {
    let t = common::gpu();
    let Target::Gpu(gpu) = &t else { unreachable!() };
    let empty = gridsync::gpu::Kernel::Empty.name();
    let graph = Graph::capture(gpu, |stream| {
        for _ in 0..10 {
            // SAFETY: `empty` takes no arguments and touches no memory.
            unsafe {
                launch_on_stream(
                    gpu,
                    stream,
                    empty,
                    LaunchConfig::linear(1, 32),
                    (),
                    LaunchMode::Plain,
                )?
            };
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(graph.nodes(), 10);
    for _ in 0..3 {
        graph.launch(gpu.stream()).unwrap();
    }
    gpu.synchronize().unwrap();
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_graph_replays_its_kernels_and_keeps_their_arguments() {
    let t = common::gpu();
    let Target::Gpu(gpu) = &t else { unreachable!() };
    let x = t.zeros::<u32>(1).unwrap();
    let add = gridsync::gpu::Kernel::AddOneAtomic.name();
    let graph = Graph::capture(gpu, |stream| {
        for _ in 0..10 {
            // SAFETY: `x` is one `u32`, touched only atomically, and outlives the graph's
            // launches (they are synchronized below).
            unsafe {
                launch_on_stream(
                    gpu,
                    stream,
                    add,
                    LaunchConfig::linear(2, 32),
                    (x.ptr(),),
                    LaunchMode::Plain,
                )?
            };
        }
        Ok(())
    })
    .unwrap();
    for _ in 0..3 {
        graph.launch(gpu.stream()).unwrap();
    }
    assert_eq!(t.download(&x).unwrap(), [3 * 10 * 64]);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_failed_recording_ends_the_capture_and_returns_its_error() {
    let t = common::gpu();
    let Target::Gpu(gpu) = &t else { unreachable!() };
    let e = Graph::capture(gpu, |_| Err(Error::Mismatch("on purpose".into()))).unwrap_err();
    assert!(matches!(e, Error::Mismatch(_)), "{e}");
    // The library stream was never captured: it still works.
    let x = t.zeros::<u32>(1).unwrap();
    // SAFETY: as above.
    unsafe {
        launch_cooperative!(
            t,
            gridsync::gpu::lessons::race::add_one_atomic,
            LaunchConfig::linear(2, 32),
            (x.ptr(),)
        )
    }
    .unwrap();
    assert_eq!(t.download(&x).unwrap(), [64]);
}
