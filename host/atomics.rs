//! Every atomic operation, type, scope and ordering, checked against a sequential model.
//!
//! One [`Case`] is a value type, an [`AtomicOp`], a [`Scope`] and an [`Order`]. [`check`] runs it
//! once: it draws fresh operands from a seed, launches `gpu::atomics_check::atomics_check_<type>`
//! (thread `i` applies the operation to `targets[i % targets]` with `operands[i]` and writes the
//! value it saw into `olds[i]`), and [`validate`]s what came back. An atomic operation is
//! *linearizable*: the threads' operations on one address happened in some order, one at a
//! time. The model checks that such an order exists:
//!
//! | op | operands | what must hold, per target |
//! |---|---|---|
//! | add, sub, CAS-loop add | small positive integers (exact in floats too) | final = initial ± Σ; the olds, sorted, step from the initial value by each thread's operand |
//! | red add | as add | final = initial + Σ; each old is the thread's own operand (red returns nothing) |
//! | exch | distinct | {olds} ∪ {final} = {initial} ∪ {operands} |
//! | CAS (0 → operand) | distinct, nonzero; initial 0 | one thread saw 0; every other saw the winner's operand; final = it |
//! | store, then load | distinct | every old and the final value is a value some thread stored |
//! | min, max | any, negative included | final = min/max of all; each old is one of the inputs, ≥ final (min) / ≤ final (max) |
//! | and, or, xor | random bits, bit 0 clear | final = the fold; an `or` old lies between initial and final bitwise, an `and` old likewise |
//! | inc, dec (`limit`) | — | the olds are, as a multiset, those of the same number of sequential steps |
//!
//! The kernel writes nothing for a combination it does not support, so `olds` is poisoned with a
//! sentinel first and a few slots past `n` guard against a grid-stride loop that overruns.
//!
//! The simulator runs every case, but its atomics are all CPU atomics (system-strong): a scope
//! too narrow for the threads that share an address shows only on a GPU.
//!
//! Block scope: a block-scoped atomic is atomic only among the threads of one block, and thread
//! `i` works on `targets[i % targets]` whatever its block. Block-scope cases therefore run as a
//! single block of the shape's `threads_per_block`, whose grid-stride loop covers all `n`
//! operations: with several blocks on one address they would race under the PTX memory model
//! (a race no run is likely to show, since global atomics are performed in L2 — which is exactly
//! why the check must not rely on it).

use crate::buffer::{Buffer, Plain};
use crate::error::{Error, Result};
use crate::launch::{KernelParam, Target};
use gpu::LaunchConfig;
use gpu::atomic::{Order, Scope};
use gpu::atomics_check::AtomicOp;
use serde::{Serialize, Serializer};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;

/// At most this many contended addresses: the check is about contention, more only dilutes it.
pub const MAX_TARGETS: u32 = 1024;
/// At most this many operations per check: the inputs and the model live in host memory, and
/// this is over a hundred times the largest test grid.
pub const MAX_OPS: u32 = 1 << 22;
/// `olds` slots past `n` that must stay poisoned: one warp's worth, what a grid-stride loop
/// that runs one step too far would write.
const OLDS_GUARD: usize = 32;
/// Largest operand of the addition checks; sums stay exact, and far from overflow.
const ADD_OPERAND_MAX: i64 = 1000;
/// Largest magnitude of an initial value of the addition checks.
const ADD_INITIAL_MAX: i64 = 1000;
/// Largest `limit` of inc/dec: small, so that even a few threads wrap the counter.
const INC_LIMIT_MAX: i64 = 64;

/// The value types the check kernels are built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// `u32` (`unsigned int`): every operation, inc and dec included.
    U32,
    /// `i32` (`int`).
    I32,
    /// `u64` (`unsigned long long`).
    U64,
    /// `i64` (`long long`).
    I64,
    /// `f32` (`float`): add, sub, exch, CAS, store/load, red add, CAS-loop add.
    F32,
    /// `f64` (`double`): as `f32`.
    F64,
}

impl ValueType {
    /// Every type.
    pub const ALL: [ValueType; 6] = [
        ValueType::U32,
        ValueType::I32,
        ValueType::U64,
        ValueType::I64,
        ValueType::F32,
        ValueType::F64,
    ];

    /// The Rust name: `u32`, …, `f64`.
    pub const fn name(self) -> &'static str {
        match self {
            ValueType::U32 => "u32",
            ValueType::I32 => "i32",
            ValueType::U64 => "u64",
            ValueType::I64 => "i64",
            ValueType::F32 => "f32",
            ValueType::F64 => "f64",
        }
    }

    /// Whether CUDA (and the check kernel) has `op` for this type.
    pub const fn supports(self, op: AtomicOp) -> bool {
        use AtomicOp::*;
        let int = !matches!(self, ValueType::F32 | ValueType::F64);
        match op {
            Add | Sub | Exch | Cas | StoreLoad | RedAdd | CasLoopAdd => true,
            Min | Max | And | Or | Xor => int,
            Inc | Dec => matches!(self, ValueType::U32),
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The operation's name in a [`Case`]: `add`, `store_load`, `cas_loop_add`, ….
pub const fn op_name(op: AtomicOp) -> &'static str {
    use AtomicOp::*;
    match op {
        Add => "add",
        Sub => "sub",
        Exch => "exch",
        Cas => "cas",
        StoreLoad => "store_load",
        RedAdd => "red_add",
        CasLoopAdd => "cas_loop_add",
        Min => "min",
        Max => "max",
        And => "and",
        Or => "or",
        Xor => "xor",
        Inc => "inc",
        Dec => "dec",
    }
}

/// The scope's name in a [`Case`]: `block`, `device` or `system`.
pub const fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Block => "block",
        Scope::Device => "device",
        Scope::System => "system",
    }
}

/// One combination to check; displays as `u32 add device acq_rel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Case {
    /// The value type.
    pub ty: ValueType,
    /// The operation.
    pub op: AtomicOp,
    /// Its scope.
    pub scope: Scope,
    /// Its ordering (store/load and red add use the store half: release or relaxed).
    pub order: Order,
}

impl Case {
    /// Whether the check kernel supports this combination.
    pub const fn is_supported(&self) -> bool {
        self.ty.supports(self.op)
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {}",
            self.ty,
            op_name(self.op),
            scope_name(self.scope),
            self.order.ptx()
        )
    }
}

impl Serialize for Case {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Every supported (type, op, scope, order): 64 (type, op) pairs × 3 scopes × 4 orderings.
pub fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for ty in ValueType::ALL {
        for op in AtomicOp::ALL.into_iter().filter(|op| ty.supports(*op)) {
            for scope in Scope::ALL {
                for order in Order::ALL {
                    cases.push(Case {
                        ty,
                        op,
                        scope,
                        order,
                    });
                }
            }
        }
    }
    cases
}

/// The launch and the work of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CheckShape {
    /// Blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Operations (`n`); the kernel grid-strides, so any `n` fits any grid, 0 included.
    pub n: u32,
    /// Contended addresses, 1 to [`MAX_TARGETS`]; thread `i` works on `i % targets`.
    pub targets: u32,
}

impl CheckShape {
    /// `blocks × threads_per_block` threads, one operation each, on `targets` addresses.
    pub const fn new(blocks: u32, threads_per_block: u32, targets: u32) -> CheckShape {
        CheckShape {
            blocks,
            threads_per_block,
            n: blocks.saturating_mul(threads_per_block),
            targets,
        }
    }

    /// The same grid doing `n` operations.
    pub const fn with_n(self, n: u32) -> CheckShape {
        CheckShape { n, ..self }
    }

    fn validate(&self) -> Result<()> {
        if self.targets == 0 || self.targets > MAX_TARGETS {
            return Err(Error::InvalidInput(format!(
                "{self}: targets must be 1 to {MAX_TARGETS}"
            )));
        }
        if self.n > MAX_OPS {
            return Err(Error::InvalidInput(format!(
                "{self}: at most {MAX_OPS} operations"
            )));
        }
        Ok(())
    }
}

impl fmt::Display for CheckShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (b, t, n, k) = (self.blocks, self.threads_per_block, self.n, self.targets);
        write!(
            f,
            "{b}×{t} threads, n = {n}, {k} target{}",
            if k == 1 { "" } else { "s" }
        )
    }
}

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

/// The inputs and outputs of one run of a case: what [`validate`] judges.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRun<T> {
    /// The combination.
    pub case: Case,
    /// The `limit` of inc/dec (0 for the other operations).
    pub limit: u32,
    /// The targets before the launch, one per address.
    pub initial: Vec<T>,
    /// One per operation (`n` in all).
    pub operands: Vec<T>,
    /// The targets after the launch.
    pub finals: Vec<T>,
    /// What each thread saw; slots past `operands.len()` are a guard that must still hold
    /// [`Value::SENTINEL`].
    pub olds: Vec<T>,
}

mod sealed {
    use super::*;

    /// The typed launch, kept out of the public trait.
    pub trait Launch: Sized {
        fn launch_check(
            target: &Target,
            case: &Case,
            cfg: LaunchConfig,
            buffers: (&Buffer<Self>, &Buffer<Self>, &Buffer<Self>),
            n: u32,
            limit: u32,
        ) -> Result<()>
        where
            Self: Plain;
    }
}

/// The six value types, as the model sees them. Sealed.
pub trait Value: Plain + KernelParam + fmt::Debug + sealed::Launch {
    /// Which [`ValueType`] this is.
    const TYPE: ValueType;
    /// What `olds` is poisoned with: odd for integers, a NaN for floats. No drawn input lets a
    /// thread see it, so a slot still holding it was not written.
    const SENTINEL: Self;
    /// The largest integer this type's additions stay exact and in range up to.
    const EXACT_MAX: i64;
    /// Whether it has negative values.
    const SIGNED: bool;
    /// Whether it is a float (random values are then integers up to [`Value::EXACT_MAX`]).
    const FLOAT: bool;
    /// The integer `v`, which must be exact in this type.
    fn from_i64(v: i64) -> Self;
    /// The value whose bit pattern is the low bits of `b`.
    fn from_bits(b: u64) -> Self;
    /// The bit pattern, zero-extended.
    fn bits(self) -> u64;
    /// `self + o` as the atomic add computes it (wrapping for integers).
    fn plus(self, o: Self) -> Self;
    /// `self - o`, likewise.
    fn minus(self, o: Self) -> Self;
    /// A total order (IEEE `totalOrder` for floats).
    fn order(&self, o: &Self) -> Ordering;
}

macro_rules! values {
    ($($t:ident: $variant:ident, $kernel:ident, bits $unsigned:ty, exact $exact:expr,
       sentinel $sentinel:expr, signed $signed:literal, order $cmp:ident,
       |$x:ident| $to_bits:expr, |$b:ident| $from_bits:expr, |$p:ident, $q:ident| $plus:expr, $minus:expr;)*) => {$(
        impl sealed::Launch for $t {
            fn launch_check(
                target: &Target,
                case: &Case,
                cfg: LaunchConfig,
                (targets, operands, olds): (&Buffer<$t>, &Buffer<$t>, &Buffer<$t>),
                n: u32,
                limit: u32,
            ) -> Result<()> {
                if targets.is_empty() || operands.len() < n as usize || olds.len() < n as usize {
                    return Err(Error::InvalidInput(format!("{case}: buffers too small for n = {n}")));
                }
                // SAFETY: the kernel touches `targets[..targets.len()]`, `operands[..n]` and
                // `olds[..n]`, all allocated (checked above): the targets only atomically, the
                // rest only from the thread that owns the index. The buffers outlive the launch
                // (the caller downloads, which synchronizes, before dropping them).
                unsafe {
                    crate::launch!(target, gpu::atomics_check::$kernel, cfg, (
                        case.op as u32, case.scope as u32, case.order as u32,
                        targets.ptr(), targets.len() as u32, operands.ptr().cast_const(),
                        olds.ptr(), n, limit,
                    ))
                }
            }
        }

        impl Value for $t {
            const TYPE: ValueType = ValueType::$variant;
            const SENTINEL: $t = $sentinel;
            const EXACT_MAX: i64 = $exact;
            const SIGNED: bool = $signed;
            const FLOAT: bool = matches!(ValueType::$variant, ValueType::F32 | ValueType::F64);
            fn from_i64(v: i64) -> $t {
                v as $t
            }
            fn from_bits(b: u64) -> $t {
                let $b = b as $unsigned;
                $from_bits
            }
            fn bits(self) -> u64 {
                let $x = self;
                $to_bits as u64
            }
            fn plus(self, $q: $t) -> $t {
                let $p = self;
                $plus
            }
            fn minus(self, $q: $t) -> $t {
                let $p = self;
                $minus
            }
            fn order(&self, o: &$t) -> Ordering {
                <$t>::$cmp(self, o)
            }
        }
    )*};
}

values! {
    u32: U32, atomics_check_u32, bits u32, exact u32::MAX as i64, sentinel 0xDEAD_BEEF,
        signed false, order cmp, |x| x, |b| b, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    i32: I32, atomics_check_i32, bits u32, exact i32::MAX as i64, sentinel 0xDEAD_BEEF_u32 as i32,
        signed true, order cmp, |x| x as u32, |b| b as i32, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    u64: U64, atomics_check_u64, bits u64, exact i64::MAX, sentinel 0xDEAD_BEEF_DEAD_BEEF,
        signed false, order cmp, |x| x, |b| b, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    i64: I64, atomics_check_i64, bits u64, exact i64::MAX, sentinel 0xDEAD_BEEF_DEAD_BEEF_u64 as i64,
        signed true, order cmp, |x| x as u64, |b| b as i64, |p, q| p.wrapping_add(q), p.wrapping_sub(q);
    // Floats: integers up to 2^24 (2^53) are exact, so sums of them are too.
    f32: F32, atomics_check_f32, bits u32, exact 1 << 24, sentinel f32::from_bits(0x7FC0_BEEF),
        signed true, order total_cmp, |x| x.to_bits(), |b| f32::from_bits(b), |p, q| p + q, p - q;
    f64: F64, atomics_check_f64, bits u64, exact 1 << 53, sentinel f64::from_bits(0x7FF8_DEAD_BEEF_0000),
        signed true, order total_cmp, |x| x.to_bits(), |b| f64::from_bits(b), |p, q| p + q, p - q;
}

/// SplitMix64 (Steele, Lea and Flood): a tiny, fast, well-mixed generator, enough for operands.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (Lemire's multiply-shift; the bias is below 2⁻⁶⁰ here).
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.abs_diff(lo) + 1;
        lo.wrapping_add(((self.next_u64() as u128 * span as u128) >> 64) as i64)
    }

    /// Any value but the sentinel: the full range of an integer type, or an exact integer of a
    /// float type.
    fn value<T: Value>(&mut self) -> T {
        loop {
            let v = if T::FLOAT {
                T::from_i64(self.range(-T::EXACT_MAX, T::EXACT_MAX))
            } else {
                T::from_bits(self.next_u64())
            };
            if v.bits() != T::SENTINEL.bits() {
                return v;
            }
        }
    }

    /// `count` distinct values, none of them in `exclude`.
    fn distinct<T: Value>(&mut self, count: usize, exclude: &[T]) -> Vec<T> {
        let mut seen: HashSet<u64> = exclude.iter().map(|v| v.bits()).collect();
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let v = self.value::<T>();
            if seen.insert(v.bits()) {
                out.push(v);
            }
        }
        out
    }
}

/// The inputs of one run: initial targets, operands and `limit`, from `seed`.
fn inputs<T: Value>(case: &Case, shape: &CheckShape, seed: u64) -> Result<CaseRun<T>> {
    use AtomicOp::*;
    let mut rng = SplitMix64(seed);
    let (n, k) = (shape.n as usize, shape.targets as usize);
    let mut limit = 0;
    let (initial, operands): (Vec<T>, Vec<T>) = match case.op {
        Add | Sub | RedAdd | CasLoopAdd => {
            // Every partial sum of a target stays within `EXACT_MAX`: exact even in f32.
            let per_target = n.div_ceil(k).max(1) as i64;
            let max = ((T::EXACT_MAX - ADD_INITIAL_MAX) / per_target).min(ADD_OPERAND_MAX);
            if max < 1 {
                return Err(Error::InvalidInput(format!(
                    "{case}: {n} additions on {k} target(s) cannot all be exact in {}",
                    T::TYPE
                )));
            }
            let operands: Vec<T> = (0..n).map(|_| T::from_i64(rng.range(1, max))).collect();
            let low = if T::SIGNED { -ADD_INITIAL_MAX } else { 0 };
            let initial = (0..k)
                .map(|t| {
                    let start = rng.range(low, ADD_INITIAL_MAX);
                    if case.op == Sub && !T::SIGNED {
                        // Unsigned: start above the total so that no difference wraps.
                        let sum: i64 = (t..n).step_by(k).map(|i| operands[i].bits() as i64).sum();
                        T::from_i64(start + sum)
                    } else {
                        T::from_i64(start)
                    }
                })
                .collect();
            (initial, operands)
        }
        Exch | StoreLoad => {
            let mut values = rng.distinct::<T>(k + n, &[]);
            let operands = values.split_off(k);
            (values, operands)
        }
        Cas => (
            vec![T::from_i64(0); k],
            rng.distinct::<T>(n, &[T::from_i64(0)]),
        ),
        Min | Max => (
            (0..k).map(|_| rng.value()).collect(),
            (0..n).map(|_| rng.value()).collect(),
        ),
        // Mostly ones for and, mostly zeros for or (each bit 1/8 the other way): random bits
        // would drive every target to all-zeros (all-ones) within a few operations. Bit 0 stays
        // clear everywhere, so no old can be the sentinel (which is odd).
        And | Or | Xor => {
            let mut bits = |op| {
                let sparse = rng.next_u64() & rng.next_u64() & rng.next_u64();
                let v = match op {
                    And => !sparse,
                    Or => sparse,
                    _ => rng.next_u64(),
                };
                T::from_bits(v & !1)
            };
            let initial = (0..k).map(|_| bits(Xor)).collect();
            let operands = (0..n).map(|_| bits(case.op)).collect();
            (initial, operands)
        }
        Inc | Dec => {
            limit = rng.range(0, INC_LIMIT_MAX) as u32;
            // Up to 2 above the limit: CUDA's `old > limit` branch of dec.
            let initial = (0..k)
                .map(|_| T::from_i64(rng.range(0, i64::from(limit) + 2)))
                .collect();
            // The kernel passes `limit`, not the operand.
            (initial, vec![T::from_i64(0); n])
        }
    };
    Ok(CaseRun {
        case: *case,
        limit,
        initial,
        operands,
        finals: Vec::new(),
        olds: Vec::new(),
    })
}

fn check_supported(case: &Case) -> Result<()> {
    if case.is_supported() {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "{case}: CUDA has no {} for {}",
            op_name(case.op),
            case.ty
        )))
    }
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
    check_supported(case)?;
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

/// Judges one run against the sequential model (the table in the [module docs](self)).
///
/// The inputs must be of the kind [`launch_case`] draws for the operation: positive operands
/// for the additions, an initial 0 and nonzero operands for CAS, and none that could make a
/// thread's old value the [`Value::SENTINEL`] (which means "never written").
///
/// # Errors
/// [`Error::InvalidInput`] for an unsupported case, inconsistent lengths or inputs the model
/// does not cover; [`Error::Mismatch`] naming the case, the target, the thread, what it saw and
/// what was expected.
pub fn validate<T: Value>(run: &CaseRun<T>) -> Result<()> {
    let CaseRun {
        case,
        initial,
        operands,
        finals,
        olds,
        ..
    } = run;
    check_supported(case)?;
    let (n, k) = (operands.len(), initial.len());
    if T::TYPE != case.ty || k == 0 || finals.len() != k || olds.len() < n {
        return Err(Error::InvalidInput(format!(
            "{case}: a run of {} with {k} initial value(s), {} final(s), {n} operand(s) and {} old(s)",
            T::TYPE,
            finals.len(),
            olds.len()
        )));
    }
    let zero = |v: &T| v.bits() == 0;
    if case.op == AtomicOp::Cas && (!initial.iter().all(zero) || operands.iter().any(zero)) {
        return Err(Error::InvalidInput(format!(
            "{case}: the CAS model needs initial values 0, operands nonzero"
        )));
    }
    let mismatch = |what: String| Error::Mismatch(format!("{case}: {what}"));
    let poisoned = |i: &usize| olds[*i].bits() == T::SENTINEL.bits();
    if let Some(i) = (0..n).find(poisoned) {
        let t = i % k;
        return Err(mismatch(format!(
            "target {t}: thread {i} wrote nothing (its old is still the sentinel {:?})",
            T::SENTINEL
        )));
    }
    if let Some(i) = (n..olds.len()).find(|i| !poisoned(i)) {
        return Err(mismatch(format!(
            "olds[{i}], past n = {n}, was written: {:?}",
            olds[i]
        )));
    }
    for t in 0..k {
        let threads: Vec<usize> = (t..n).step_by(k).collect();
        let (init, last) = (initial[t], finals[t]);
        let result = if threads.is_empty() {
            same(last, init, || {
                "no thread touched it, yet its value changed".into()
            })
        } else {
            check_target(run, init, last, &threads)
        };
        result.map_err(|why| mismatch(format!("target {t} (initial {init:?}): {why}")))?;
    }
    Ok(())
}

/// `Ok` if `got` is bitwise `want`, else "`context`: got …, expected …".
fn same<T: Value>(got: T, want: T, context: impl FnOnce() -> String) -> Result<(), String> {
    if got.bits() == want.bits() {
        Ok(())
    } else {
        Err(format!(
            "{}: got {}, expected {want:?}",
            context(),
            show(got)
        ))
    }
}

/// The value, marked when it is the sentinel (the kernel never wrote that slot).
fn show<T: Value>(v: T) -> String {
    if v.bits() == T::SENTINEL.bits() {
        format!("{v:?} (the sentinel: never written)")
    } else {
        format!("{v:?}")
    }
}

/// The model for one target that `threads` (at least one) worked on; `last` is its final value.
fn check_target<T: Value>(
    run: &CaseRun<T>,
    init: T,
    last: T,
    threads: &[usize],
) -> Result<(), String> {
    use AtomicOp::*;
    let CaseRun {
        case,
        limit,
        operands,
        olds,
        ..
    } = run;
    let bits = |v: T| v.bits();
    let fold = |f: &dyn Fn(T, T) -> T| threads.iter().fold(init, |acc, &i| f(acc, operands[i]));
    let final_is = |want: T| same(last, want, || "final value".into());
    match case.op {
        Add | Sub | CasLoopAdd => {
            let sub = case.op == Sub;
            final_is(fold(if sub { &T::minus } else { &T::plus }))
                .map_err(|e| format!("{e} (a lost update?)"))?;
            // With positive operands the olds are monotone in the order the operations took
            // effect, so sorting them recovers that order; each must then be its predecessor
            // plus the predecessor's operand.
            let mut order = threads.to_vec();
            order.sort_by(|&a, &b| {
                if sub {
                    olds[b].order(&olds[a])
                } else {
                    olds[a].order(&olds[b])
                }
            });
            let mut expected = init;
            for &i in &order {
                same(olds[i], expected, || {
                    format!("thread {i}, in the order the olds imply")
                })?;
                expected = if sub {
                    expected.minus(operands[i])
                } else {
                    expected.plus(operands[i])
                };
            }
            Ok(())
        }
        RedAdd => {
            for &i in threads {
                same(olds[i], operands[i], || {
                    format!("thread {i} (red returns nothing: its operand)")
                })?;
            }
            final_is(fold(&T::plus))
        }
        Exch => same_multiset::<T>(
            threads
                .iter()
                .map(|&i| bits(olds[i]))
                .chain([bits(last)])
                .collect(),
            threads
                .iter()
                .map(|&i| bits(operands[i]))
                .chain([bits(init)])
                .collect(),
            "the olds and the final value",
            "the initial value and the operands",
        ),
        Cas => {
            let winners: Vec<usize> = threads
                .iter()
                .copied()
                .filter(|&i| bits(olds[i]) == 0)
                .collect();
            let [winner] = winners[..] else {
                return Err(format!(
                    "threads {winners:?} saw 0 (won the CAS); exactly one must"
                ));
            };
            for &i in threads.iter().filter(|&&i| i != winner) {
                same(olds[i], operands[winner], || {
                    format!("thread {i} (winner: thread {winner})")
                })?;
            }
            final_is(operands[winner])
        }
        StoreLoad => {
            let stored: HashSet<u64> = threads.iter().map(|&i| bits(operands[i])).collect();
            let known = |v: T, who: String| {
                if stored.contains(&bits(v)) {
                    Ok(())
                } else {
                    Err(format!("{who} {}, which no thread stored", show(v)))
                }
            };
            for &i in threads {
                known(olds[i], format!("thread {i} loaded"))?;
            }
            known(last, "the final value is".into())
        }
        Min | Max => {
            // The direction an old may not lie in from the final value.
            let beyond = if case.op == Min {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            final_is(fold(&|a, b| if b.order(&a) == beyond { b } else { a }))?;
            let inputs: HashSet<u64> = threads
                .iter()
                .map(|&i| bits(operands[i]))
                .chain([bits(init)])
                .collect();
            for &i in threads {
                let old = olds[i];
                if !inputs.contains(&bits(old)) {
                    return Err(format!(
                        "thread {i} saw {}, neither the initial value nor an operand",
                        show(old)
                    ));
                }
                if old.order(&last) == beyond {
                    return Err(format!(
                        "thread {i} saw {old:?}, beyond the final value {last:?}"
                    ));
                }
            }
            Ok(())
        }
        And | Or | Xor => {
            let f: fn(T, T) -> T = match case.op {
                And => |a, b| T::from_bits(a.bits() & b.bits()),
                Or => |a, b| T::from_bits(a.bits() | b.bits()),
                _ => |a, b| T::from_bits(a.bits() ^ b.bits()),
            };
            final_is(fold(&f))?;
            // Or only sets bits and and only clears them, so every old lies between the
            // initial and the final value, bitwise. Xor's olds have no such bound.
            let (below, above) = match case.op {
                Or => (bits(init), bits(last)),
                And => (bits(last), bits(init)),
                _ => return Ok(()),
            };
            for &i in threads {
                let old = bits(olds[i]);
                if old & below != below || old & !above != 0 {
                    return Err(format!(
                        "thread {i} saw {}, not between {:?} and {:?} bitwise",
                        show(olds[i]),
                        T::from_bits(below),
                        T::from_bits(above)
                    ));
                }
            }
            Ok(())
        }
        Inc | Dec => {
            // CUDA's atomicInc / atomicDec; every thread applies the same step, so the olds
            // are those of a sequential run whatever the order.
            let limit = *limit as u64;
            let step = |v: u64| match case.op {
                Inc if v >= limit => 0,
                Inc => v + 1,
                _ if v == 0 || v > limit => limit,
                _ => v - 1,
            };
            let mut v = bits(init);
            let mut want = Vec::with_capacity(threads.len());
            for _ in threads {
                want.push(v);
                v = step(v);
            }
            final_is(T::from_bits(v))?;
            same_multiset::<T>(
                threads.iter().map(|&i| bits(olds[i])).collect(),
                want,
                "the olds",
                &format!(
                    "{} sequential steps from the initial value (limit {limit})",
                    threads.len()
                ),
            )
        }
    }
}

/// `Ok` if `got` and `want` (bit patterns of `T`) hold the same values as often, else which
/// value differs.
fn same_multiset<T: Value>(
    mut got: Vec<u64>,
    mut want: Vec<u64>,
    got_name: &str,
    want_name: &str,
) -> Result<(), String> {
    got.sort_unstable();
    want.sort_unstable();
    // Both have one entry per thread (plus the same one more), so equal sorted means equal.
    let Some(k) = got.iter().zip(&want).position(|(a, b)| a != b) else {
        return Ok(());
    };
    let v = got[k].min(want[k]);
    let count = |xs: &[u64]| xs.iter().filter(|&&x| x == v).count();
    Err(format!(
        "{got_name} hold {} {} times, {want_name} {} times",
        show(T::from_bits(v)),
        count(&got),
        count(&want)
    ))
}
