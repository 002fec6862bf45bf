//! The lock primitives' stress on the simulator's weak memory (the litmus runner's
//! primitives). (The lessons' kernels on the weak memory: `tests/weak.rs`.)

mod common;

use gridsync::Target;

#[test]
fn every_lock_and_barrier_keeps_its_payload_and_the_broken_ones_are_caught() {
    use gridsync_cli::litmus::primitives::{Primitive, PrimitiveOptions, run_all};
    let t = Target::Sim;
    let base = common::seed();
    let mut caught = std::collections::HashMap::new();
    for k in 0..4 {
        let opts = PrimitiveOptions {
            seed: base ^ k,
            ..PrimitiveOptions::for_target(&t)
        };
        assert!(opts.weak);
        let r = run_all(&t, &opts, |_| {}).unwrap();
        assert!(r.passed(), "seed {}: {:?}", base ^ k, r.runs);
        let ran: Vec<Primitive> = r.runs.iter().map(|p| p.primitive).collect();
        let all_but_clusters: Vec<Primitive> = Primitive::ALL
            .into_iter()
            .filter(|&p| p != Primitive::ClusterGridBarrier)
            .collect();
        assert_eq!(ran, all_but_clusters, "the weak memory has no clusters");
        for p in &r.runs {
            let uses = if p.primitive.is_lock() { 320 } else { 30 };
            assert_eq!(p.uses, uses, "{}", p.name);
            *caught.entry(p.primitive).or_insert(0u32) += u32::from(!p.clean());
        }
    }
    for (p, n) in caught {
        if p.broken() {
            assert!(n >= 2, "{} caught with only {n} of 4 seeds", p.name());
        } else {
            assert_eq!(n, 0, "{}", p.name());
        }
    }
}
