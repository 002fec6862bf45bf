//! The CUDA book's `double` add from `atomicCAS` and the native `atom.add.f64`: exact sums for
//! integer inputs, within the recursive-summation bound of a float64 reference for random ones,
//! on one word and on many — on the simulator (small grids) and on the GPU (the full GPU).
//!
//! The base seed is printed; `GRIDSYNC_TEST_SEED=<seed>` replays a run.

#[path = "common/f64_adds.rs"]
mod adds;
mod common;

use adds::*;

use gridsync::atomics::f64_add::{
    self, F64_VALUES, F64Add, F64AddBuffers, F64AddShape, F64Inputs, MAX_F64_OPS, check,
    error_bound, reference,
};
use gridsync::{Error, Target};
use rand::seq::SliceRandom;

#[test]
fn both_adds_are_exact_on_integers_and_bounded_on_random_values_on_the_simulator() {
    both_adds_pass(
        &Target::Sim,
        &[
            // Every thread of the grid on one word: the most contended case.
            shape(4, 64, 256, 8),
            // A warp per word, a word per thread.
            shape(4, 64, 32, 8),
            shape(4, 64, 1, 8),
            // Odd sizes: a partial last word, iters not a multiple of the kernels' unroll.
            shape(3, 37, 5, 7),
            shape(1, 1, 1, 1),
        ],
    );
}

#[test]
fn the_reference_counts_every_term() {
    // 2 × 4 threads, 2 per word, 3 additions each: 4 words of 6 terms.
    let s = shape(2, 4, 2, 3);
    let values = [1.0, 2.0, 4.0, 8.0, 16.0];
    let r = reference(&s, &values, &[3; 8]).unwrap();
    assert_eq!(r.terms, vec![6; 4]);
    // Word 0: threads 0 and 1 add values[0..3] and values[1..4].
    assert_eq!(r.sums[0], 1.0 + 2.0 + 4.0 + 2.0 + 4.0 + 8.0);
    // Word 3: threads 6 and 7 wrap around the five values.
    assert_eq!(r.sums[3], 2.0 + 4.0 + 8.0 + 4.0 + 8.0 + 16.0);
    assert_eq!(r.abs_sums, r.sums);
    // Thread 1 stopped after one addition, thread 0 did none: word 0 holds values[1] alone.
    let r = reference(&s, &values, &[0, 1, 3, 3, 3, 3, 3, 3]).unwrap();
    assert_eq!((r.sums[0], r.terms[0]), (2.0, 1));
    assert!(reference(&s, &[], &[3; 8]).is_err());
    assert!(
        reference(&s, &values, &[3; 7]).is_err(),
        "a count per thread"
    );
    assert!(
        reference(&s, &values, &[4; 8]).is_err(),
        "at most iters each"
    );
}

#[test]
fn a_time_budget_cuts_the_run_short_and_the_check_covers_what_was_done() {
    // Every thread on one word, far more additions than fit in the budget.
    for budget_ns in [1, 200_000] {
        let s = F64AddShape {
            budget_ns,
            ..shape(4, 64, 256, 100_000)
        };
        for kind in F64Add::ALL {
            let r = check(&Target::Sim, kind, F64Inputs::Integers, &s, 5)
                .unwrap_or_else(|e| panic!("{kind:?}, budget {budget_ns} ns: {e}"));
            assert!(r.adds < s.ops(), "{r:?}");
            assert_eq!(r.max_abs_error, 0.0);
        }
    }
}

#[test]
fn every_summation_order_lies_within_the_bound() {
    // The bound the GPU results are held to, tried on the CPU: random values summed in random
    // orders never leave it, and a result one bound away is rejected by the same comparison.
    let mut rng = common::rng();
    let values = f64_add::values(F64Inputs::Random, 3);
    assert_eq!(values.len(), F64_VALUES);
    let s = shape(1, 1, 1, F64_VALUES as u32);
    let r = reference(&s, &values, &[F64_VALUES as u32]).unwrap();
    let bound = error_bound(r.terms[0], r.abs_sums[0]);
    assert!(bound > 0.0 && bound < 1e-9 * r.abs_sums[0], "{bound}");
    let mut order = values.clone();
    for _ in 0..100 {
        order.shuffle(&mut rng);
        let sum: f64 = order.iter().sum();
        assert!((sum - r.sums[0]).abs() <= bound);
    }
    assert!(error_bound(0, 1.0) > 0.0 && error_bound(10, 1.0) < error_bound(20, 1.0));
}

#[test]
fn integer_inputs_are_integers_and_random_inputs_span_both_signs() {
    let ints = f64_add::values(F64Inputs::Integers, 9);
    assert!(
        ints.iter()
            .all(|v| v.fract() == 0.0 && (1.0..=1000.0).contains(v))
    );
    let random = f64_add::values(F64Inputs::Random, 9);
    assert!(random.iter().any(|v| *v < 0.0) && random.iter().any(|v| *v > 0.0));
    assert!(random.iter().any(|v| v.abs() < 1e-3) && random.iter().any(|v| v.abs() > 1e3));
    assert_eq!(f64_add::values(F64Inputs::Random, 9), random, "seeded");
}

#[test]
fn bad_shapes_and_buffers_are_refused() {
    let sim = Target::Sim;
    let invalid = |r: gridsync::Result<_>| matches!(r, Err(Error::InvalidInput(_)));
    for s in [
        shape(1, 32, 0, 1),
        shape(0, 32, 1, 1),
        shape(1 << 16, 1024, 1, 1 << 10),
    ] {
        assert!(
            invalid(check(&sim, F64Add::Native, F64Inputs::Integers, &s, 1).map(|_| ())),
            "{s:?}"
        );
    }
    assert!(shape(1 << 16, 1024, 1, 1 << 10).ops() > MAX_F64_OPS);
    // Buffers of the wrong sizes never reach the kernel.
    let s = shape(1, 32, 1, 1);
    let bufs = F64AddBuffers::new(&sim, &shape(1, 31, 1, 1), &[1.0]).unwrap();
    assert!(invalid(f64_add::launch(&sim, F64Add::CasLoop, &s, &bufs)));
    assert!(F64AddBuffers::new(&sim, &s, &[]).is_err());
}
