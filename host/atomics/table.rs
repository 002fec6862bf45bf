//! CUDA's table of atomic functions (the CUDA book, chapter 9.2), each row with its types, the
//! PTX it becomes here, and how many of its checked cases passed on a target.
//!
//! Each CUDA function has three scoped forms — `atomicAdd_block` (block), `atomicAdd` (device),
//! `atomicAdd_system` (system) — and the check runs every one of them, at every ordering, for
//! every type CUDA has it for: a row summarizes those [`Case`]s per scope.

use super::cases::{Case, CheckShape, ValueType, all_cases, scope_name};
use super::run::check;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::atomic::Scope;
use gpu::checks::atomics::AtomicOp;
use serde::Serialize;

/// One CUDA atomic function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CudaFunction {
    /// CUDA's name, device-scoped form: `atomicAdd`.
    pub cuda: &'static str,
    /// What it does, in the book's notation (`old` before, `new` after).
    pub effect: &'static str,
    /// The check's operation for it.
    #[serde(skip)]
    pub op: AtomicOp,
    /// The PTX instruction, with `<sem>.<scope>` where the ordering and scope go.
    pub ptx: &'static str,
    /// Whether the book lists it (the rest are the same hardware reached another way).
    pub in_book: bool,
}

/// The book's eleven functions, then three more ways to reach the same hardware.
pub const FUNCTIONS: [CudaFunction; 14] = [
    f(
        "atomicAdd",
        "new = old + val",
        AtomicOp::Add,
        "atom.<sem>.<scope>.add.{u32,s32,u64,f32,f64}",
        true,
    ),
    f(
        "atomicSub",
        "new = old - val",
        AtomicOp::Sub,
        "atom.<sem>.<scope>.add of -val (no atom.sub)",
        true,
    ),
    f(
        "atomicExch",
        "new = val",
        AtomicOp::Exch,
        "atom.<sem>.<scope>.exch.{b32,b64}",
        true,
    ),
    f(
        "atomicMin",
        "new = min(old, val)",
        AtomicOp::Min,
        "atom.<sem>.<scope>.min.{u32,s32,u64,s64}",
        true,
    ),
    f(
        "atomicMax",
        "new = max(old, val)",
        AtomicOp::Max,
        "atom.<sem>.<scope>.max.{u32,s32,u64,s64}",
        true,
    ),
    f(
        "atomicInc",
        "new = old >= val ? 0 : old + 1",
        AtomicOp::Inc,
        "atom.<sem>.<scope>.inc.u32",
        true,
    ),
    f(
        "atomicDec",
        "new = (old == 0 || old > val) ? val : old - 1",
        AtomicOp::Dec,
        "atom.<sem>.<scope>.dec.u32",
        true,
    ),
    f(
        "atomicCAS",
        "new = old == compare ? val : old",
        AtomicOp::Cas,
        "atom.<sem>.<scope>.cas.{b32,b64}",
        true,
    ),
    f(
        "atomicAnd",
        "new = old & val",
        AtomicOp::And,
        "atom.<sem>.<scope>.and.{b32,b64}",
        true,
    ),
    f(
        "atomicOr",
        "new = old | val",
        AtomicOp::Or,
        "atom.<sem>.<scope>.or.{b32,b64}",
        true,
    ),
    f(
        "atomicXor",
        "new = old ^ val",
        AtomicOp::Xor,
        "atom.<sem>.<scope>.xor.{b32,b64}",
        true,
    ),
    f(
        "atomicAdd, result unused",
        "new = old + val",
        AtomicOp::RedAdd,
        "red.<sem>.<scope>.add.{u32,s32,u64,f32,f64}",
        false,
    ),
    f(
        "atomicAdd from atomicCAS",
        "the book's CAS loop",
        AtomicOp::CasLoopAdd,
        "ld.relaxed.<scope> + loop of atom.<sem>.<scope>.cas",
        false,
    ),
    f(
        "cuda::atomic_ref store + load",
        "store val, load",
        AtomicOp::StoreLoad,
        "st.<sem>.<scope> + ld.acquire.<scope>",
        false,
    ),
];

const fn f(
    cuda: &'static str,
    effect: &'static str,
    op: AtomicOp,
    ptx: &'static str,
    in_book: bool,
) -> CudaFunction {
    CudaFunction {
        cuda,
        effect,
        op,
        ptx,
        in_book,
    }
}

/// The CUDA name of `function` at `scope`: `atomicAdd_block`, `atomicAdd`, `atomicAdd_system`.
pub fn scoped_name(function: &CudaFunction, scope: Scope) -> String {
    match scope {
        Scope::Device => function.cuda.to_string(),
        Scope::Block | Scope::System if function.in_book => {
            format!("{}_{}", function.cuda, scope_name(scope))
        }
        _ => format!("{} ({})", function.cuda, scope_name(scope)),
    }
}

/// Cases passed and run at one scope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// The CUDA name at this scope: `atomicAdd_block`, ….
    pub cuda: String,
    /// Cases that passed.
    pub passed: u32,
    /// Cases run: types × 4 orderings.
    pub cases: u32,
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The function.
    #[serde(flatten)]
    pub function: CudaFunction,
    /// The types CUDA (and the check) has it for.
    pub types: Vec<ValueType>,
    /// Block, device and system scope, in that order.
    pub scopes: Vec<Tally>,
    /// The first failure's message, if any case failed.
    pub first_failure: Option<String>,
}

impl Row {
    /// Cases passed and run at every scope together.
    pub fn totals(&self) -> (u32, u32) {
        self.scopes
            .iter()
            .fold((0, 0), |(p, n), t| (p + t.passed, n + t.cases))
    }
}

/// The table: every function's cases run on `target` at `shape`, case `k` with seed
/// `seed ^ k·φ` (as the tests derive theirs). `progress` is called with (done, total) cases.
///
/// # Errors
/// What [`check`] returns for a case, except [`Error::Mismatch`], which is counted as a failed
/// case (its message kept in [`Row::first_failure`]) rather than stopping the table.
pub fn table(
    target: &Target,
    shape: &CheckShape,
    seed: u64,
    mut progress: impl FnMut(u32, u32),
) -> Result<Vec<Row>> {
    let cases = all_cases();
    let total = cases.len() as u32;
    let mut rows: Vec<Row> = FUNCTIONS
        .iter()
        .map(|function| Row {
            function: *function,
            types: ValueType::ALL
                .into_iter()
                .filter(|ty| ty.supports(function.op))
                .collect(),
            scopes: Scope::ALL
                .iter()
                .map(|&scope| Tally {
                    cuda: scoped_name(function, scope),
                    ..Tally::default()
                })
                .collect(),
            first_failure: None,
        })
        .collect();
    for (k, case) in cases.iter().enumerate() {
        let case_seed = seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let outcome = check(target, case, shape, case_seed);
        let row = row_of(&mut rows, case)?;
        let tally = &mut row.scopes[case.scope as usize];
        tally.cases += 1;
        match outcome {
            Ok(_) => tally.passed += 1,
            Err(Error::Mismatch(why)) => {
                row.first_failure.get_or_insert(why);
            }
            Err(e) => return Err(e),
        }
        progress(k as u32 + 1, total);
    }
    Ok(rows)
}

fn row_of<'a>(rows: &'a mut [Row], case: &Case) -> Result<&'a mut Row> {
    rows.iter_mut()
        .find(|r| r.function.op == case.op)
        .ok_or_else(|| Error::InvalidInput(format!("{case}: no CUDA function in the table")))
}
