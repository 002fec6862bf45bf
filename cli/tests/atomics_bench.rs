//! `gridsync bench atomics` and `gridsync atomics`: the benchmark refuses the simulator, the
//! demo's JSON parses, and on a GPU the benchmark runs at the full-GPU shape. (The kernels' own
//! tests: `tests/atomics_bench.rs`.)

mod common;

use gridsync::atomics::throughput::{
    self, BenchOp, Layout, Memory, ThroughputConfig, ThroughputShape, all_configs,
};
use gridsync::gpu::atomic::Scope;
use gridsync::{Error, Target};
use gridsync_cli::bench::atomics::{self as bench, AtomicsBenchOptions, ptx_of};

#[test]
fn each_configuration_names_its_instruction() {
    let c = |op, memory, scope, layout| ThroughputConfig {
        op,
        memory,
        scope,
        layout,
    };
    use {BenchOp::*, Layout::*, Memory::*};
    let (block, device, system) = (Scope::Block, Scope::Device, Scope::System);
    for (op, memory, scope, layout, ptx) in [
        (AddU32, Global, device, Grid, "atom.relaxed.gpu.add.u32"),
        (RedAddU32, Global, system, Warp, "red.relaxed.sys.add.u32"),
        (AddF32, Shared, block, Thread, "atom.relaxed.cta.add.f32"),
        (CasU32, Global, block, Block, "atom.relaxed.cta.cas.b32"),
    ] {
        let config = c(op, memory, scope, layout);
        assert_eq!(ptx_of(&config), ptx, "{config:?}");
    }
    let shape = ThroughputShape::new(4, 64, 1);
    for (op, memory, scope, layout, threads) in [
        (AddU32, Global, device, Grid, 256),
        (AddU32, Global, device, Block, 64),
        (AddU32, Shared, block, Warp, 32),
    ] {
        let config = c(op, memory, scope, layout);
        assert_eq!(config.threads_per_address(&shape), threads, "{config:?}");
    }
}

#[test]
fn the_benchmark_refuses_the_simulator() {
    let r = bench::run(&Target::Sim, AtomicsBenchOptions::default(), |_, _| {});
    assert!(matches!(r, Err(Error::Unsupported(_))), "{r:?}");
}

use common::cli;

#[test]
fn cli_atomics_on_the_simulator_prints_json() {
    let v = common::cli_json(&["--simulate", "--json", "atomics", "--seed", "11"]);
    assert_eq!(v["seed"], 11);
    let table = v["table"].as_array().unwrap();
    assert_eq!(table.len(), 14);
    let names: Vec<&str> = table.iter().filter_map(|r| r["cuda"].as_str()).collect();
    for name in [
        "atomicAdd",
        "atomicSub",
        "atomicExch",
        "atomicMin",
        "atomicMax",
        "atomicInc",
        "atomicDec",
        "atomicCAS",
        "atomicAnd",
        "atomicOr",
        "atomicXor",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let mut cases = 0;
    for row in table {
        let scopes = row["scopes"].as_array().unwrap();
        assert_eq!(scopes.len(), 3);
        for s in scopes {
            assert_eq!(s["passed"], s["cases"], "{row}");
            cases += s["cases"].as_u64().unwrap();
        }
        assert!(row["first_failure"].is_null(), "{row}");
    }
    assert_eq!(cases, 768);
    assert_eq!(table[0]["scopes"][0]["cuda"], "atomicAdd_block");
    assert_eq!(table[0]["scopes"][2]["cuda"], "atomicAdd_system");
    let f = &v["f64_add"];
    assert_eq!(f["checks"].as_array().unwrap().len(), 12);
    assert!(f["throughput"].as_array().unwrap().is_empty());
    assert!(f["throughput_skipped"].is_string());
}

#[test]
fn cli_bench_atomics_refuses_the_simulator() {
    // Refused as a usage error before anything runs (the library refuses it too: the test
    // above).
    let out = cli(&["--simulate", "bench", "atomics"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not take --simulate"), "{err}");
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_configuration_counts_exactly_at_a_full_gpu() {
    let target = common::gpu();
    let Target::Gpu(gpu) = &target else {
        unreachable!()
    };
    let blocks = bench::full_gpu_blocks(gpu, 256, None).unwrap();
    for config in all_configs() {
        let shape = ThroughputShape::new(blocks, 256, 16);
        throughput::check(&target, &config, &shape)
            .unwrap_or_else(|e| panic!("{config:?} {shape:?}: {e}"));
    }
    // f32 adds of 1.0 stall at 2^24, in any order: 2^25 adds on one word.
    let f32_grid = ThroughputConfig {
        op: BenchOp::AddF32,
        memory: Memory::Global,
        scope: Scope::Device,
        layout: Layout::Grid,
    };
    let iters = ((1u64 << 25) / (blocks as u64 * 256)) as u32 + 1;
    throughput::check(
        &target,
        &f32_grid,
        &ThroughputShape::new(blocks, 256, iters),
    )
    .unwrap();
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn the_benchmark_runs_at_the_full_gpu_shape() {
    let target = common::gpu();
    let Target::Gpu(gpu) = &target else {
        unreachable!()
    };
    let opts = AtomicsBenchOptions {
        iters: 8,
        trials: 10,
        ..Default::default()
    };
    let b = bench::run(&target, opts, |_, _| {}).unwrap();
    let info = gpu.info();
    assert_eq!(
        b.shape.blocks,
        info.sm_count * (info.max_threads_per_sm / 256)
    );
    assert_eq!(b.rows.len(), all_configs().len());
    for r in &b.rows {
        assert_eq!(r.ms.samples, 10);
        assert!(r.ops_per_s > 0.0 && r.ops_per_s.is_finite(), "{r:?}");
    }
    // Every operation has system/device and device/block on every spread layout.
    for op in BenchOp::ALL {
        for layout in [Layout::Block, Layout::Warp, Layout::Thread] {
            let r = b
                .ratios
                .iter()
                .find(|r| r.op == op && r.layout == layout)
                .unwrap();
            assert!(r.system_over_device.is_some() && r.device_over_block.is_some());
            assert!(r.shared_over_global.is_some());
        }
    }
    let v = common::cli_json(&[
        "--json", "bench", "atomics", "--iters", "4", "--trials", "10",
    ]);
    assert_eq!(v["rows"].as_array().unwrap().len(), all_configs().len());
    assert_eq!(v["rows"][0]["scope"], "device");
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn cli_atomics_on_the_gpu_prints_json_with_throughput() {
    let v = common::cli_json(&[
        "--json",
        "atomics",
        "--iters",
        "8",
        "--budget-ms",
        "10",
        "--trials",
        "10",
    ]);
    for row in v["table"].as_array().unwrap() {
        for s in row["scopes"].as_array().unwrap() {
            assert_eq!(s["passed"], s["cases"], "{row}");
        }
    }
    let t = v["f64_add"]["throughput"].as_array().unwrap();
    assert_eq!(t.len(), 6);
    assert!(
        t.iter()
            .all(|r| r["adds_per_s"]["median"].as_f64().unwrap() > 0.0)
    );
}

#[test]
fn bench_scopes_refuses_the_simulator() {
    let e = gridsync_cli::bench::scopes::run(&gridsync::Target::Sim, 4, 2, |_, _| {}).unwrap_err();
    assert!(matches!(e, gridsync::Error::Unsupported(_)), "{e}");
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn bench_scopes_measures_every_operation_at_every_scope() {
    let b = gridsync_cli::bench::scopes::run(&common::gpu(), 8, 3, |_, _| {}).unwrap();
    assert_eq!(b.cells.len(), 12);
    assert!(b.cells.iter().all(|c| c.g_ops_per_s > 0.0));
    // Every scope's cell measured; how they compare is the benchmark's to say.
    let r = b.ratio("store + fence.sc", "block", "system").unwrap();
    assert!(
        r.is_finite() && r > 0.0,
        "block/system fence throughput {r}"
    );
}
