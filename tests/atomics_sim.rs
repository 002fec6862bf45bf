//! Every atomic operation, type, scope and ordering on the simulator, against the sequential
//! model of `gridsync::atomics`; and the model itself: it must reject wrong results and refuse
//! what CUDA does not have.
//!
//! Operands are fresh each run; the base seed is printed, and `GRIDSYNC_TEST_SEED=<seed>` replays
//! a run. The simulator starts one OS thread per GPU thread, so the grids stay small.

mod common;

use gridsync::atomics::{
    Case, CaseRun, CheckShape, MAX_OPS, MAX_TARGETS, Value, ValueType, all_cases, check,
    launch_case, validate,
};
use gridsync::gpu::atomic::{Order, Scope};
use gridsync::gpu::checks::atomics::AtomicOp;
use gridsync::{Error, Target};

/// The case of `op` on `ty` at `scope` with `order`.
fn case_of(ty: ValueType, op: AtomicOp, scope: Scope, order: Order) -> Case {
    Case {
        ty,
        op,
        scope,
        order,
    }
}

/// Runs every supported case at `shape`, each with its own seed from the base seed, and fails
/// with the list of the cases that did not pass.
fn every_case_passes(shape: CheckShape) {
    common::every_atomic_case_passes(&Target::Sim, shape);
}

#[test]
fn every_case_on_one_contended_address() {
    every_case_passes(CheckShape::new(4, 64, 1));
}

#[test]
fn every_case_on_four_addresses_with_fewer_operations_than_threads() {
    // 111 threads in blocks of an odd size; 100 operations, so the last block is partly idle.
    every_case_passes(CheckShape::new(3, 37, 4).with_n(100));
}

#[test]
fn every_case_with_more_operations_than_threads() {
    // The grid-stride loop: each of the 64 threads does three or four operations.
    every_case_passes(CheckShape::new(2, 32, 3).with_n(211));
}

#[test]
fn every_case_with_one_operation() {
    every_case_passes(CheckShape::new(1, 32, 1).with_n(1));
}

#[test]
fn every_case_with_idle_addresses() {
    // Two operations on four addresses: two are never touched and must keep their values.
    every_case_passes(CheckShape::new(1, 32, 4).with_n(2));
}

#[test]
fn every_case_with_no_operations() {
    every_case_passes(CheckShape::new(1, 32, 2).with_n(0));
}

#[test]
fn no_operations_write_nothing() {
    let case = case_of(ValueType::U32, AtomicOp::Add, Scope::Device, Order::Relaxed);
    let run: CaseRun<u32> =
        launch_case(&Target::Sim, &case, &CheckShape::new(2, 32, 3).with_n(0), 1)
            .expect("an empty run launches");
    assert_eq!(run.finals, run.initial);
    assert!(
        run.olds.iter().all(|&v| v == u32::SENTINEL),
        "{:?}",
        run.olds
    );
}

#[test]
fn all_cases_lists_every_supported_combination_once() {
    let cases = all_cases();
    // (14 u32 + 12 × 3 i32/u64/i64 + 7 × 2 floats) operations × 3 scopes × 4 orderings.
    assert_eq!(cases.len(), 64 * 3 * 4);
    let unique: std::collections::HashSet<Case> = cases.iter().copied().collect();
    assert_eq!(unique.len(), cases.len());
    assert!(cases.iter().all(Case::is_supported));
    for op in AtomicOp::ALL {
        assert!(cases.iter().any(|c| c.op == op), "{op:?} is never checked");
    }
}

#[test]
fn cases_display_type_op_scope_order() {
    let case = case_of(ValueType::U32, AtomicOp::Add, Scope::Device, Order::AcqRel);
    assert_eq!(case.to_string(), "u32 add device acq_rel");
    let case = case_of(
        ValueType::F64,
        AtomicOp::CasLoopAdd,
        Scope::Block,
        Order::Relaxed,
    );
    assert_eq!(case.to_string(), "f64 cas_loop_add block relaxed");
}

#[test]
fn unsupported_combinations_are_refused_before_launch() {
    let mut refused = 0;
    for ty in ValueType::ALL {
        for op in AtomicOp::ALL.into_iter().filter(|op| !ty.supports(*op)) {
            for scope in Scope::ALL {
                let case = case_of(ty, op, scope, Order::Relaxed);
                // A launch would come back as a sentinel `Mismatch`; the refusal comes first.
                let result = check(&Target::Sim, &case, &CheckShape::new(1, 32, 1), 7);
                assert!(
                    matches!(result, Err(Error::InvalidInput(_))),
                    "{case}: {result:?}"
                );
                refused += 1;
            }
        }
    }
    // Min, max, and, or, xor, inc, dec on floats; inc, dec on i32, u64, i64.
    assert_eq!(refused, (7 * 2 + 2 * 3) * 3);
    for (ty, op) in [
        (ValueType::F32, AtomicOp::Min),
        (ValueType::I32, AtomicOp::Inc),
        (ValueType::F64, AtomicOp::Xor),
    ] {
        assert!(!ty.supports(op));
    }
}

#[test]
fn bad_shapes_and_types_are_refused() {
    fn invalid<T>(r: gridsync::Result<T>) -> bool {
        matches!(r, Err(Error::InvalidInput(_)))
    }
    let case = case_of(
        ValueType::U32,
        AtomicOp::Exch,
        Scope::Device,
        Order::Relaxed,
    );
    let sim = Target::Sim;
    assert!(invalid(check(&sim, &case, &CheckShape::new(1, 32, 0), 1)));
    assert!(invalid(check(
        &sim,
        &case,
        &CheckShape::new(1, 32, MAX_TARGETS + 1),
        1
    )));
    assert!(invalid(check(
        &sim,
        &case,
        &CheckShape::new(1, 32, 1).with_n(MAX_OPS + 1),
        1
    )));
    assert!(invalid(launch_case::<u64>(
        &sim,
        &case,
        &CheckShape::new(1, 32, 1),
        1
    )));
    // A grid the simulator cannot run is its error, not a panic.
    let too_big = check(&sim, &case, &CheckShape::new(5, 1024, 1).with_n(8), 1);
    assert!(matches!(too_big, Err(Error::Sim(_))), "{too_big:?}");
    // A run whose lengths do not fit together.
    let run = CaseRun::<u32> {
        case,
        limit: 0,
        initial: vec![1],
        operands: vec![2, 3],
        finals: vec![],
        olds: vec![1, 2],
    };
    assert!(invalid(validate(&run)));
}

#[test]
fn the_same_seed_draws_the_same_inputs() {
    let case = case_of(ValueType::I64, AtomicOp::Min, Scope::System, Order::AcqRel);
    let shape = CheckShape::new(1, 64, 2);
    let a: CaseRun<i64> = launch_case(&Target::Sim, &case, &shape, 42).unwrap();
    let b: CaseRun<i64> = launch_case(&Target::Sim, &case, &shape, 42).unwrap();
    let c: CaseRun<i64> = launch_case(&Target::Sim, &case, &shape, 43).unwrap();
    assert_eq!((&a.initial, &a.operands), (&b.initial, &b.operands));
    assert_ne!(a.operands, c.operands);
    assert!(
        a.operands.iter().any(|&v| v < 0),
        "signed types get negative operands"
    );
}

/// A hand-made run of `u32 add` on one address: the threads saw 5, 6 and 8.
fn add_run(olds: [u32; 3], last: u32) -> CaseRun<u32> {
    CaseRun {
        case: case_of(ValueType::U32, AtomicOp::Add, Scope::Device, Order::Relaxed),
        limit: 0,
        initial: vec![5],
        operands: vec![1, 2, 3],
        finals: vec![last],
        olds: olds.to_vec(),
    }
}

#[test]
fn the_model_judges_a_hand_made_run() {
    let mismatch = |r: gridsync::Result<()>| matches!(r, Err(Error::Mismatch(_)));
    // Thread 0 (+1) saw 5, thread 1 (+2) saw 6, thread 2 (+3) saw 8: 5 → 6 → 8 → 11.
    validate(&add_run([5, 6, 8], 11)).expect("a linearizable run");
    // In another order: thread 2 first (5 → 8), then thread 0 (8 → 9), then thread 1 (9 → 11).
    validate(&add_run([8, 9, 5], 11)).expect("a linearizable run in another order");
    // A lost update: threads 0 and 1 both read 5.
    assert!(mismatch(validate(&add_run([5, 5, 7], 10))));
    // The right final value, but no order of the three additions gives these olds.
    assert!(mismatch(validate(&add_run([5, 7, 8], 11))));
    // Right olds, wrong final value.
    assert!(mismatch(validate(&add_run([5, 6, 8], 12))));
    // A slot past n was written.
    let mut run = add_run([5, 6, 8], 11);
    run.olds.push(0);
    assert!(mismatch(validate(&run)));
    run.olds[3] = u32::SENTINEL;
    validate(&run).expect("an untouched guard slot");
}

/// Ways to spoil a good run, each one the model must notice.
#[derive(Clone, Copy, Debug)]
enum Corruption {
    /// Thread 5's old value is the sentinel: the kernel skipped it.
    Skipped,
    /// Target 1's final value is off by one bit.
    FinalOff,
    /// A guard slot past `n` was written.
    Overran,
    /// Threads 1 and 3 (both on target 1) swap what they saw.
    Swapped,
    /// Thread 4 saw what thread 2 (same target) saw: a duplicate, one value lost.
    Duplicated,
}

impl Corruption {
    fn apply<T: Value>(self, run: &mut CaseRun<T>) {
        match self {
            Corruption::Skipped => run.olds[5] = T::SENTINEL,
            Corruption::FinalOff => run.finals[1] = T::from_bits(run.finals[1].bits() ^ 1),
            Corruption::Overran => run.olds[run.operands.len()] = T::from_i64(0),
            Corruption::Swapped => run.olds.swap(1, 3),
            Corruption::Duplicated => run.olds[4] = run.olds[2],
        }
    }
}

/// What every model notices.
const ANY: [Corruption; 3] = [
    Corruption::Skipped,
    Corruption::FinalOff,
    Corruption::Overran,
];

/// Runs `op` on `T` on the simulator (fixed seed, so that the test is deterministic), checks
/// that the good run passes, then that each corruption of it is rejected.
fn rejects<T: Value>(op: AtomicOp, corruptions: &[Corruption]) {
    let case = case_of(T::TYPE, op, Scope::Device, Order::AcqRel);
    let good = launch_case::<T>(&Target::Sim, &case, &CheckShape::new(2, 32, 2), 0x5EED)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    validate(&good).unwrap_or_else(|e| panic!("{case}, uncorrupted: {e}"));
    for corruption in corruptions {
        let mut bad = good.clone();
        corruption.apply(&mut bad);
        let result = validate(&bad);
        assert!(
            matches!(result, Err(Error::Mismatch(_))),
            "{case}, {corruption:?}: {result:?}"
        );
    }
}

#[test]
fn the_model_rejects_corrupted_runs() {
    use AtomicOp::*;
    use Corruption::*;
    for op in [Add, Sub, CasLoopAdd] {
        rejects::<u32>(op, &ANY);
        rejects::<f32>(op, &ANY);
        // Same values, wrong threads: only the linearization check sees it.
        rejects::<i64>(op, &[Swapped, Duplicated]);
    }
    rejects::<f64>(RedAdd, &ANY);
    for op in [Exch, Cas, StoreLoad] {
        rejects::<i32>(op, &ANY);
        rejects::<f64>(op, &ANY);
    }
    rejects::<u64>(Exch, &[Duplicated]);
    for op in [Min, Max, And, Or, Xor] {
        rejects::<i32>(op, &ANY);
        rejects::<u64>(op, &ANY);
    }
    for op in [Inc, Dec] {
        rejects::<u32>(op, &ANY);
    }
}

#[test]
fn a_mismatch_names_the_case_and_the_thread() {
    let case = case_of(ValueType::U32, AtomicOp::Add, Scope::Block, Order::Relaxed);
    let mut run: CaseRun<u32> =
        launch_case(&Target::Sim, &case, &CheckShape::new(1, 32, 1), 9).unwrap();
    run.olds[7] = u32::SENTINEL;
    let message = validate(&run).unwrap_err().to_string();
    assert!(message.contains("u32 add block relaxed"), "{message}");
    assert!(message.contains("thread 7 wrote nothing"), "{message}");
}
