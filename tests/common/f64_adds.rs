//! The `double` adds' checks shared by the library's tests (`tests/atomics_f64.rs`) and the
//! command's (`cli/tests/atomics_f64.rs`): a launch shape, and both adds checked with both kinds
//! of input.
#![allow(dead_code)]

use gridsync::Target;
use gridsync::atomics::f64_add::{F64Add, F64AddShape, F64Inputs, check};

/// `blocks × threads` threads, `iters` additions each, `threads_per_address` on each word, no
/// time budget.
pub fn shape(blocks: u32, threads: u32, threads_per_address: u32, iters: u32) -> F64AddShape {
    F64AddShape {
        blocks,
        threads_per_block: threads,
        threads_per_address,
        iters,
        budget_ns: 0,
    }
}

/// Checks both additions with both kinds of input on `target` at `shapes`.
pub fn both_adds_pass(target: &Target, shapes: &[F64AddShape]) {
    let base = crate::common::seed();
    for (k, s) in shapes.iter().enumerate() {
        for inputs in [F64Inputs::Integers, F64Inputs::Random] {
            for kind in F64Add::ALL {
                let seed = base ^ (k as u64) << 8;
                let r = check(target, kind, inputs, s, seed)
                    .unwrap_or_else(|e| panic!("{kind:?} {inputs:?} {s:?}: {e}"));
                assert_eq!(r.addresses, s.addresses());
                assert!(r.adds <= s.ops());
                if s.budget_ns == 0 {
                    assert_eq!(r.adds, s.ops());
                }
                if inputs == F64Inputs::Integers {
                    assert_eq!(r.max_abs_error, 0.0, "{r:?}");
                }
                assert!(r.max_error_over_bound <= 1.0, "{r:?}");
            }
        }
    }
}
