//! The atomic throughput kernels and the atomics demo: every configuration counts exactly on
//! the simulator (so a timing can only be of a kernel that does its job) and the configurations
//! that would race are refused. (`gridsync bench atomics` and the demo's JSON: `cli/tests/`.)

mod common;

use gridsync::atomics::throughput::{
    self, BenchOp, Layout, Memory, ThroughputConfig, ThroughputShape, all_configs,
};
use gridsync::gpu::atomic::Scope;
use gridsync::{Error, Target};

#[test]
fn every_configuration_counts_exactly_on_the_simulator() {
    // Iterations on and off the kernels' unroll of four; a block size that is not a whole
    // number of warps.
    for shape in [
        ThroughputShape::new(3, 64, 9),
        ThroughputShape::new(2, 96, 8),
        ThroughputShape::new(4, 50, 3),
    ] {
        for config in all_configs() {
            let r = throughput::check(&Target::Sim, &config, &shape)
                .unwrap_or_else(|e| panic!("{config:?} {shape:?}: {e}"));
            assert_eq!(r.ops, shape.ops());
            assert_eq!(r.cas_success.is_some(), config.op == BenchOp::CasU32);
            if let Some(ok) = r.cas_success {
                assert!(ok > 0.0 && ok <= 1.0, "{config:?}: {ok}");
            }
            if config.layout == Layout::Thread {
                // No contention: every CAS succeeds.
                assert!(
                    r.cas_success.is_none_or(|ok| ok == 1.0),
                    "{config:?}: {r:?}"
                );
            }
        }
    }
}

#[test]
fn the_configurations_are_every_race_free_combination() {
    let configs = all_configs();
    // Per operation: global grid × {device, system}, global {block, warp, thread} × 3 scopes,
    // shared {block, warp, thread} × block.
    assert_eq!(configs.len(), BenchOp::ALL.len() * (2 + 9 + 3));
    assert!(configs.iter().all(ThroughputConfig::is_valid));
    for c in &configs {
        assert!(!(c.scope == Scope::Block && c.layout == Layout::Grid));
        assert!(c.memory == Memory::Global || c.scope == Scope::Block);
    }
    let shape = ThroughputShape::new(1, 32, 1);
    for bad in [
        ThroughputConfig {
            op: BenchOp::AddU32,
            memory: Memory::Global,
            scope: Scope::Block,
            layout: Layout::Grid,
        },
        ThroughputConfig {
            op: BenchOp::CasU32,
            memory: Memory::Shared,
            scope: Scope::Device,
            layout: Layout::Thread,
        },
    ] {
        let r = throughput::check(&Target::Sim, &bad, &shape);
        assert!(matches!(r, Err(Error::InvalidInput(_))), "{bad:?}: {r:?}");
    }
    let ok = configs[0];
    for shape in [
        ThroughputShape::new(1, 32, 0),
        ThroughputShape::new(0, 32, 1),
        ThroughputShape::new(1 << 20, 1024, 1 << 12),
    ] {
        let r = throughput::check(&Target::Sim, &ok, &shape);
        assert!(matches!(r, Err(Error::InvalidInput(_))), "{shape:?}: {r:?}");
    }
}
