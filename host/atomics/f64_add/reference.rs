//! The float64 reference of a run, the bound a float sum in any order keeps to, and the check.

use super::{F64Add, F64AddBuffers, F64AddShape, F64Inputs, UNIT_ROUNDOFF, launch, values};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use serde::Serialize;

/// The float64 reference of one run, per word.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The compensated (Neumaier) sum: within an ulp or so of the exact sum.
    pub sums: Vec<f64>,
    /// Terms added to each word.
    pub terms: Vec<u64>,
    /// Σ|xᵢ| of each word.
    pub abs_sums: Vec<f64>,
}

/// What `shape` with `values` adds into each word when thread `t` does `counts[t]` additions
/// (the first `counts[t]` of its sequence `values[(t + k) % values.len()]`).
///
/// # Errors
/// [`Error::InvalidInput`] for a shape [`F64AddShape::validate_checkable`] refuses, no values,
/// or counts that are not one per thread, each at most `iters`.
pub fn reference(shape: &F64AddShape, values: &[f64], counts: &[u32]) -> Result<Reference> {
    shape.validate_checkable()?;
    if values.is_empty() {
        return Err(Error::InvalidInput("no values to add".into()));
    }
    if counts.len() as u64 != shape.threads() || counts.iter().any(|&c| c > shape.iters) {
        return Err(Error::InvalidInput(format!(
            "{shape:?}: {} counts, expected one per thread, each at most iters",
            counts.len()
        )));
    }
    let words = shape.addresses();
    let (mut sum, mut comp) = (vec![0.0f64; words], vec![0.0f64; words]);
    let mut abs_sums = vec![0.0f64; words];
    let mut terms = vec![0u64; words];
    let n = values.len() as u64;
    for (t, &count) in counts.iter().enumerate() {
        let t = t as u64;
        let w = (t / shape.threads_per_address as u64) as usize;
        for k in 0..count as u64 {
            let x = values[((t + k) % n) as usize];
            // Neumaier's compensated summation: the rounding error of each step, kept aside.
            let s = sum[w] + x;
            comp[w] += if sum[w].abs() >= x.abs() {
                (sum[w] - s) + x
            } else {
                (x - s) + sum[w]
            };
            sum[w] = s;
            abs_sums[w] += x.abs();
            terms[w] += 1;
        }
    }
    let sums = sum.iter().zip(&comp).map(|(s, c)| s + c).collect();
    Ok(Reference {
        sums,
        terms,
        abs_sums,
    })
}

/// The most a sum of `terms` values with `Σ|xᵢ| = abs_sum`, added in any order in f64, may differ
/// from the exact sum: `γ(terms) · abs_sum`, with `γ(m) = m·u / (1 − m·u)` (Higham, eq. 4.4),
/// plus the reference's own rounding (one `u · abs_sum`).
pub fn error_bound(terms: u64, abs_sum: f64) -> f64 {
    let mu = terms as f64 * UNIT_ROUNDOFF;
    (mu / (1.0 - mu) + UNIT_ROUNDOFF) * abs_sum
}

/// What one checked run showed.
#[derive(Clone, Debug, Serialize)]
pub struct F64AddCheck {
    /// Where it ran.
    pub target: String,
    /// Which addition.
    pub kind: F64Add,
    /// The values added.
    pub inputs: F64Inputs,
    /// The grid and layout.
    pub shape: F64AddShape,
    /// The seed of the values.
    pub seed: u64,
    /// Words added into.
    pub addresses: usize,
    /// Additions done (all of `shape.ops()` unless a budget cut them short).
    pub adds: u64,
    /// The largest |sum − reference| over the words.
    pub max_abs_error: f64,
    /// The largest |sum − reference| / [`error_bound`] (≤ 1 passes; 0 for integer inputs).
    pub max_error_over_bound: f64,
}

/// Runs `kind` once on `shape` with `inputs` drawn from `seed`, and compares every word with the
/// reference of the additions the threads report they did: bit for bit for integer inputs,
/// within [`error_bound`] for random ones.
///
/// # Errors
/// [`Error::InvalidInput`] for a shape [`F64AddShape::validate_checkable`] refuses; a launch or
/// copy error; [`Error::Mismatch`] naming the word, the sum, the reference and the bound, or
/// counts that cannot be (more than `iters`, or fewer with no budget).
pub fn check(
    target: &Target,
    kind: F64Add,
    inputs: F64Inputs,
    shape: &F64AddShape,
    seed: u64,
) -> Result<F64AddCheck> {
    shape.validate_checkable()?;
    let host_values = values(inputs, seed);
    let bufs = F64AddBuffers::new(target, shape, &host_values)?;
    launch(target, kind, shape, &bufs)?;
    let got = target.download(&bufs.sums)?;
    let counts = target.download(&bufs.counts)?;
    let want = reference(shape, &host_values, &counts).map_err(|e| match e {
        Error::InvalidInput(why) => Error::Mismatch(format!(
            "f64 add ({}) on {}: the kernel's counts are off: {why}",
            kind.name(),
            target.describe()
        )),
        e => e,
    })?;
    if shape.budget_ns == 0 && counts.iter().any(|&c| c != shape.iters) {
        return Err(Error::Mismatch(format!(
            "f64 add ({}), {shape:?}, on {}: with no budget every thread must do all {} additions",
            kind.name(),
            target.describe(),
            shape.iters
        )));
    }
    let (mut max_abs_error, mut max_error_over_bound) = (0.0f64, 0.0f64);
    for (w, &sum) in got.iter().enumerate() {
        let (reference, terms) = (want.sums[w], want.terms[w]);
        let error = (sum - reference).abs();
        let bound = match inputs {
            F64Inputs::Integers => 0.0,
            F64Inputs::Random => error_bound(terms, want.abs_sums[w]),
        };
        // A NaN sum or reference fails too.
        if error.is_nan() || error > bound {
            return Err(Error::Mismatch(format!(
                "f64 add ({}), {inputs:?} inputs, {shape:?}, seed {seed:#x}, on {}: word {w} \
                 ({terms} terms) holds {sum:e}, the reference is {reference:e}: off by {error:e}, \
                 the bound is {bound:e}",
                kind.name(),
                target.describe()
            )));
        }
        max_abs_error = max_abs_error.max(error);
        if bound > 0.0 {
            max_error_over_bound = max_error_over_bound.max(error / bound);
        }
    }
    Ok(F64AddCheck {
        target: target.describe(),
        kind,
        inputs,
        shape: *shape,
        seed,
        addresses: got.len(),
        adds: counts.iter().map(|&c| c as u64).sum(),
        max_abs_error,
        max_error_over_bound,
    })
}
