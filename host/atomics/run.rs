//! Running a check: draw the inputs, launch the check kernel, download what came back, judge it.

use super::cases::{Case, CheckShape, ValueType};
use super::inputs::inputs;
use super::model::{CaseRun, validate};
use super::value::Value;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::LaunchConfig;
use gpu::atomic::Scope;
use serde::Serialize;

/// `olds` slots past `n` that must stay poisoned: one warp's worth, what a grid-stride loop
/// that runs one step too far would write.
const OLDS_GUARD: usize = 32;

/// What one passing check ran.
#[derive(Clone, Debug, Serialize)]
pub struct CaseReport {
    /// Where it ran.
    pub target: String,
    /// The combination.
    pub case: Case,
    /// The launch and the work.
    pub shape: CheckShape,
    /// The seed the operands came from: the same seed gives the same inputs.
    pub seed: u64,
}

/// Runs `case` once without judging it: inputs from `seed`, the launch, and what came back.
/// `T` must be the case's type.
///
/// # Errors
/// [`Error::InvalidInput`] for an unsupported case, a `T` that is not its type or a bad shape,
/// before anything is launched; a launch or copy error.
pub fn launch_case<T: Value>(
    target: &Target,
    case: &Case,
    shape: &CheckShape,
    seed: u64,
) -> Result<CaseRun<T>> {
    case.require_supported()?;
    if T::TYPE != case.ty {
        return Err(Error::InvalidInput(format!(
            "{case}: launched as {}",
            T::TYPE
        )));
    }
    shape.validate()?;
    let mut run = inputs::<T>(case, shape, seed)?;
    let mut operands = run.operands.clone();
    operands.resize(operands.len() + OLDS_GUARD, T::SENTINEL);

    let targets = target.upload(&run.initial)?;
    let operands = target.upload(&operands)?;
    let olds = target.upload(&vec![T::SENTINEL; run.operands.len() + OLDS_GUARD])?;
    // Block scope covers one block only (module docs).
    let blocks = if case.scope == Scope::Block {
        1
    } else {
        shape.blocks
    };
    let cfg = LaunchConfig::linear(blocks, shape.threads_per_block);
    T::launch_check(
        target,
        case,
        cfg,
        (&targets, &operands, &olds),
        shape.n,
        run.limit,
    )?;
    run.finals = target.download(&targets)?;
    run.olds = target.download(&olds)?;
    Ok(run)
}

/// Runs `case` on `target` with operands drawn from `rng_seed`, and validates the result.
///
/// # Errors
/// [`Error::InvalidInput`] for an unsupported case or a bad shape, before anything is launched;
/// a launch or copy error; [`Error::Mismatch`] naming the case, the thread, what it saw and what
/// the model expected, the seed and the shape.
pub fn check(
    target: &Target,
    case: &Case,
    shape: &CheckShape,
    rng_seed: u64,
) -> Result<CaseReport> {
    fn typed<T: Value>(target: &Target, case: &Case, shape: &CheckShape, seed: u64) -> Result<()> {
        validate(&launch_case::<T>(target, case, shape, seed)?)
    }
    let run = match case.ty {
        ValueType::U32 => typed::<u32>,
        ValueType::I32 => typed::<i32>,
        ValueType::U64 => typed::<u64>,
        ValueType::I64 => typed::<i64>,
        ValueType::F32 => typed::<f32>,
        ValueType::F64 => typed::<f64>,
    };
    run(target, case, shape, rng_seed).map_err(|e| match e {
        Error::Mismatch(m) => Error::Mismatch(format!(
            "{m} [seed {rng_seed:#x}, {shape}, on {}]",
            target.describe()
        )),
        e => e,
    })?;
    Ok(CaseReport {
        target: target.describe(),
        case: *case,
        shape: *shape,
        seed: rng_seed,
    })
}
