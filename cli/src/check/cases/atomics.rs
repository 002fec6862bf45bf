//! The atomics checks: every operation of each value type on contended targets.

use super::{BLOCKS, THREADS};
use crate::check::{Case, Ran};
use gpu::atomic::{Order, Scope};
use gpu::checks::atomics::AtomicOp;
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// One atomics check kernel per value type.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "atomics",
            K::AtomicsCheckU32.name(),
            Clean,
            "3 × 40, 7 targets",
            "every u32 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, gridsync::atomics::ValueType::U32)
        ),
        case!(
            "atomics",
            K::AtomicsCheckI32.name(),
            Clean,
            "3 × 40, 7 targets",
            "every i32 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, gridsync::atomics::ValueType::I32)
        ),
        case!(
            "atomics",
            K::AtomicsCheckU64.name(),
            Clean,
            "3 × 40, 7 targets",
            "every u64 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, gridsync::atomics::ValueType::U64)
        ),
        case!(
            "atomics",
            K::AtomicsCheckI64.name(),
            Clean,
            "3 × 40, 7 targets",
            "every i64 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, gridsync::atomics::ValueType::I64)
        ),
        case!(
            "atomics",
            K::AtomicsCheckF32.name(),
            Clean,
            "3 × 40, 7 targets",
            "every f32 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, gridsync::atomics::ValueType::F32)
        ),
        case!(
            "atomics",
            K::AtomicsCheckF64.name(),
            Clean,
            "3 × 40, 7 targets",
            "every f64 atomic on shared operands: concurrent, but atomic",
            |t| atomics(t, gridsync::atomics::ValueType::F64)
        ),
    ]
}

/// Every operation the check kernel of `ty` has, each at a scope and an ordering of its own
/// (cycling through them), over 7 contended targets: the model of `gridsync atomics` judges
/// the values.
fn atomics(t: &Target, ty: gridsync::atomics::ValueType) -> Result<Ran> {
    let shape = gridsync::atomics::CheckShape::new(BLOCKS, THREADS, 7);
    let ops = AtomicOp::ALL.into_iter().filter(|op| ty.supports(*op));
    for (i, op) in ops.enumerate() {
        let case = gridsync::atomics::Case {
            ty,
            op,
            scope: Scope::ALL[i % Scope::ALL.len()],
            order: Order::ALL[i % Order::ALL.len()],
        };
        gridsync::atomics::check(t, &case, &shape, 1)?;
    }
    Ok(Ran::Finished)
}
