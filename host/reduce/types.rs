//! The typed half of the demo: the vectorized single-pass kernel (e) of every other reduction —
//! Σ `f64`, Σ `i32` and Σ `u64` (wrapping), min/max of `f32` and `i32` — on inputs derived from
//! the demo's `f32` array, each checked against the CPU.

use super::cpu::{max_cpu, min_cpu, relative_error, sum_cpu, sum_i32_wrapping, sum_u64_wrapping};
use super::kernels::DeviceReduction;
use super::single_pass::{SinglePass, SinglePassKernel};
use crate::runtime::buffer::Plain;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::lessons::reduce::{MaxF32, MaxI32, MinF32, MinI32, SumF64, SumI32, SumU64};
use serde::Serialize;

/// A result of any type, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A float (`f32` results converted exactly).
    Float(f64),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    Uint(u64),
}

/// One typed kernel's run.
#[derive(Clone, Debug, Serialize)]
pub struct TypeRun {
    /// Its PTX name.
    pub name: &'static str,
    /// What it computes, on which derived input.
    pub what: &'static str,
    /// Its result.
    pub value: Value,
    /// The CPU's (`f64` compensated sum for `f64`; exact otherwise).
    pub expected: Value,
    /// `|value − expected| / |expected|` for the `f64` sum; 0 for the others, which must equal
    /// the CPU's exactly.
    pub rel_error: f64,
    /// Blocks launched.
    pub blocks: u32,
    /// Event-timed milliseconds of one launch after a warm-up (GPU only).
    pub ms: Option<f64>,
    /// Bytes read / `ms`, GB/s.
    pub gb_per_s: Option<f64>,
}

/// The `i32` input derived from `f32` data: `x · 2³⁰`, saturated to `i32` — so that the book's
/// `1.23` becomes 1 320 702 464 and 10⁸ of them wrap around 2³² many times.
pub fn derived_i32(data: &[f32]) -> Vec<i32> {
    data.iter()
        .map(|&x| (x * (1u32 << 30) as f32) as i32)
        .collect()
}

/// The `u64` input derived from `f32` data: the bit pattern times the golden-ratio constant
/// (wrapping), spread over the whole `u64` range.
pub fn derived_u64(data: &[f32]) -> Vec<u64> {
    data.iter()
        .map(|&x| (x.to_bits() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect()
}

/// Runs `R`'s vectorized kernel over `data`: a warm-up run, then a timed one.
fn once<R: DeviceReduction>(
    target: &Target,
    data: &[R::Item],
    timer: Option<&mut Timer>,
) -> Result<(R::Out, u32, Option<f64>)> {
    let x = target.upload(data)?;
    let pass = SinglePass::<R>::new(target, SinglePassKernel::Vec, data.len(), None)?;
    let warm = pass.run(&x, data.len())?;
    let (out, ms) = pass.run_timed(&x, data.len(), timer)?;
    if !same_bits(&warm, &out) {
        return Err(Error::Mismatch(format!(
            "{} gave two different results on one input",
            R::VEC.name()
        )));
    }
    Ok((out, pass.config().grid.x, ms))
}

fn same_bits<T: Plain>(a: &T, b: &T) -> bool {
    // SAFETY: `T` is plain data (`Plain`), read as the bytes it is made of.
    let bytes = |v: &T| unsafe {
        std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()).to_vec()
    };
    bytes(a) == bytes(b)
}

/// Every typed kernel over inputs derived from `data`; `step` is called after each.
///
/// # Errors
/// [`Error::Mismatch`] if an exact result differs from the CPU's, or a kernel gives two results
/// on one input; a launch or driver error.
pub(super) fn run_types(
    target: &Target,
    data: &[f32],
    mut timer: Option<&mut Timer>,
    mut step: impl FnMut(),
) -> Result<Vec<TypeRun>> {
    let n = data.len();
    let mut runs = Vec::new();
    // `want`: the CPU's result; a float sum is compared by its error, everything else exactly.
    let mut push = |name: &'static str, what, bytes: usize, r: (Value, u32, Option<f64>), want| {
        let (value, blocks, ms) = r;
        let rel_error = match (value, want) {
            (Value::Float(v), Value::Float(w)) if name == SumF64::VEC.name() => {
                relative_error(v, w)
            }
            (Value::Float(v), Value::Float(w)) if v == w || (v.is_nan() && w.is_nan()) => 0.0,
            _ if value == want => 0.0,
            _ => {
                return Err(Error::Mismatch(format!(
                    "{name} gave {value:?}, the CPU {want:?}"
                )));
            }
        };
        runs.push(TypeRun {
            name,
            what,
            value,
            expected: want,
            rel_error,
            blocks,
            ms,
            gb_per_s: ms.map(|ms| bytes as f64 / (ms * 1e-3) / 1e9),
        });
        step();
        Ok(())
    };
    let float = |v: f32| Value::Float(v as f64);
    let exact_f32 = |v: Option<f32>| Value::Float(v.map_or(f64::NAN, f64::from));

    let wide: Vec<f64> = data.iter().map(|&x| x as f64).collect();
    let (s, b, ms) = once::<SumF64>(target, &wide, timer.as_deref_mut())?;
    let what = "Σ f64 (the input widened)";
    push(
        SumF64::VEC.name(),
        what,
        8 * n,
        (Value::Float(s), b, ms),
        Value::Float(sum_cpu(&wide)),
    )?;
    drop(wide);

    let ints = derived_i32(data);
    let (s, b, ms) = once::<SumI32>(target, &ints, timer.as_deref_mut())?;
    let what = "Σ i32, wrapping (x·2³⁰)";
    let want = Value::Int(sum_i32_wrapping(&ints) as i64);
    push(
        SumI32::VEC.name(),
        what,
        4 * n,
        (Value::Int(s as i64), b, ms),
        want,
    )?;
    let (m, b, ms) = once::<MinI32>(target, &ints, timer.as_deref_mut())?;
    let want = Value::Int(min_cpu(&ints).unwrap_or(i32::MAX) as i64);
    push(
        MinI32::VEC.name(),
        "min i32",
        4 * n,
        (Value::Int(m as i64), b, ms),
        want,
    )?;
    let (m, b, ms) = once::<MaxI32>(target, &ints, timer.as_deref_mut())?;
    let want = Value::Int(max_cpu(&ints).unwrap_or(i32::MIN) as i64);
    push(
        MaxI32::VEC.name(),
        "max i32",
        4 * n,
        (Value::Int(m as i64), b, ms),
        want,
    )?;
    drop(ints);

    let words = derived_u64(data);
    let (s, b, ms) = once::<SumU64>(target, &words, timer.as_deref_mut())?;
    let what = "Σ u64, wrapping (bits·φ)";
    let want = Value::Uint(sum_u64_wrapping(&words));
    push(
        SumU64::VEC.name(),
        what,
        8 * n,
        (Value::Uint(s), b, ms),
        want,
    )?;
    drop(words);

    let (m, b, ms) = once::<MinF32>(target, data, timer.as_deref_mut())?;
    let what = "min f32, NaN skipped";
    push(
        MinF32::VEC.name(),
        what,
        4 * n,
        (float(m), b, ms),
        exact_f32(min_cpu(data)),
    )?;
    let (m, b, ms) = once::<MaxF32>(target, data, timer)?;
    let what = "max f32, NaN skipped";
    push(
        MaxF32::VEC.name(),
        what,
        4 * n,
        (float(m), b, ms),
        exact_f32(max_cpu(data)),
    )?;
    Ok(runs)
}

/// How many typed kernels [`run_types`] runs (for progress).
pub(super) const TYPE_RUNS: u32 = 7;
