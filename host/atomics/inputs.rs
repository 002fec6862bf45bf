//! The inputs of one check: initial targets, operands and the inc/dec `limit`, drawn from a seed
//! so that the same seed replays the same run.

use super::cases::{Case, CheckShape};
use super::model::CaseRun;
use super::value::Value;
use crate::runtime::error::{Error, Result};
use gpu::checks::atomics::AtomicOp;
use std::collections::HashSet;

/// Largest operand of the addition checks; sums stay exact, and far from overflow.
const ADD_OPERAND_MAX: i64 = 1000;
/// Largest magnitude of an initial value of the addition checks.
const ADD_INITIAL_MAX: i64 = 1000;
/// Largest `limit` of inc/dec: small, so that even a few threads wrap the counter.
const INC_LIMIT_MAX: i64 = 64;

/// SplitMix64 (Steele, Lea and Flood): a tiny, fast, well-mixed generator, enough for operands.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (Lemire's multiply-shift; the bias is below 2⁻⁶⁰ here).
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
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
pub(super) fn inputs<T: Value>(case: &Case, shape: &CheckShape, seed: u64) -> Result<CaseRun<T>> {
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
