//! Launch modes, the co-residency check, the host owner of a grid barrier, and CUDA graphs:
//! simulator and input checks everywhere, the driver paths on the GPU.

mod common;

use gridsync::gpu::grid::GENERATION_BIT;
use gridsync::primitives::barrier::DeviceGridBarrier;
use gridsync::runtime::graph::Graph;
use gridsync::runtime::grid::{check_coresident, max_coresident_blocks};
use gridsync::runtime::launch::{KernelArgs, LaunchMode, launch_on_stream};
use gridsync::{Error, Gpu, LaunchConfig, Target, launch_cooperative};
use std::time::Duration;

/// [`gridsync::gpu::lessons::race::add_one_atomic`] over `blocks` × `block` threads, launched
/// cooperatively on a zeroed counter: the count.
fn cooperative_add_one(t: &Target, blocks: u32, block: u32) -> u32 {
    let x = t.zeros::<u32>(1).unwrap();
    // SAFETY: `x` is one `u32`, touched only atomically by the kernel.
    unsafe {
        launch_cooperative!(
            t,
            gridsync::gpu::lessons::race::add_one_atomic,
            LaunchConfig::linear(blocks, block),
            (x.ptr(),)
        )
    }
    .unwrap();
    t.download(&x).unwrap()[0]
}

/// A graph of ten plain launches of the kernel `name` over `blocks` blocks of 32, each with
/// `args`.
///
/// # Safety
///
/// As [`launch_on_stream`]: `args` must stay valid for every replay of the graph.
unsafe fn ten_launches(gpu: &Gpu, name: &'static str, blocks: u32, args: impl KernelArgs) -> Graph {
    Graph::capture(gpu, |stream| {
        for _ in 0..10 {
            // SAFETY: forwarded to the caller.
            unsafe {
                launch_on_stream(
                    gpu,
                    stream,
                    name,
                    LaunchConfig::linear(blocks, 32),
                    args,
                    LaunchMode::Plain,
                )?
            };
        }
        Ok(())
    })
    .unwrap()
}

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
        common::grid_barrier_bare(&t, &barrier, LaunchConfig::linear(3, 45), mode, 20).unwrap();
        barrier.check(&t).unwrap();
        // 20 barriers of 2³¹ each: the low bits are back at 0, the generation bit at 0.
        assert_eq!(barrier.read(&t).unwrap().arrived, 0);
    }
}

#[test]
fn the_simulator_refuses_an_oversized_grid_synced_launch() {
    let t = Target::Sim;
    let barrier = DeviceGridBarrier::new(&t).unwrap();
    let cfg = LaunchConfig::linear(5, 1024);
    let e = common::grid_barrier_bare(&t, &barrier, cfg, LaunchMode::Plain, 1).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

#[test]
fn launch_cooperative_runs_on_the_simulator() {
    assert_eq!(cooperative_add_one(&Target::Sim, 3, 7), 21);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_cooperative_grid_of_one_block_per_sm_passes_1000_barriers() {
    let t = common::gpu();
    let sms = common::sm_count(&t);
    let barrier = DeviceGridBarrier::new(&t).unwrap();
    for mode in [LaunchMode::Cooperative, LaunchMode::Plain] {
        common::grid_barrier_bare(&t, &barrier, LaunchConfig::linear(sms, 128), mode, 1000)
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
    let cfg = LaunchConfig::linear(limit, 128);
    common::grid_barrier_bare(&t, &barrier, cfg, LaunchMode::Cooperative, 1).unwrap();
    barrier.check(&t).unwrap();
    assert_eq!(barrier.read(&t).unwrap().arrived, GENERATION_BIT);
    for mode in [LaunchMode::Plain, LaunchMode::Cooperative] {
        // Refused before it is queued.
        let cfg = LaunchConfig::linear(limit + 1, 128);
        let e = common::grid_barrier_bare(&t, &barrier, cfg, mode, 1).unwrap_err();
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
    // SAFETY: `empty` takes no arguments and touches no memory.
    let graph = unsafe { ten_launches(gpu, empty, 1, ()) };
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
    // SAFETY: `x` is one `u32`, touched only atomically, and outlives the graph's launches
    // (they are synchronized below).
    let graph = unsafe { ten_launches(gpu, add, 2, (x.ptr(),)) };
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
    assert_eq!(cooperative_add_one(&t, 2, 32), 64);
}
