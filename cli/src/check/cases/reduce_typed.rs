//! The typed reductions: sums of `f64`, `i32` and `u64`, minima and maxima, through the
//! library's calls.

use super::LEN;
use crate::check::{Case, Ran};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// The typed reductions (the vectorized kernel of each type).
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "reduce",
            K::ReduceVecSumF64.name(),
            Clean,
            "3001 doubles",
            "Σ f64: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::SumF64)
        ),
        case!(
            "reduce",
            K::ReduceVecSumI32.name(),
            Clean,
            "3001 ints",
            "Σ i32, wrapping: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::SumI32)
        ),
        case!(
            "reduce",
            K::ReduceVecSumU64.name(),
            Clean,
            "3001 u64",
            "Σ u64, wrapping: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::SumU64)
        ),
        case!(
            "reduce",
            K::ReduceVecMinF32.name(),
            Clean,
            "3001 floats",
            "min: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MinF32)
        ),
        case!(
            "reduce",
            K::ReduceVecMaxF32.name(),
            Clean,
            "3001 floats",
            "max: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MaxF32)
        ),
        case!(
            "reduce",
            K::ReduceVecMinI32.name(),
            Clean,
            "3001 ints",
            "min: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MinI32)
        ),
        case!(
            "reduce",
            K::ReduceVecMaxI32.name(),
            Clean,
            "3001 ints",
            "max: 16-byte loads, the last block finishes",
            |t| reduce_typed(t, Typed::MaxI32)
        ),
    ]
}

/// The typed reductions of [`reduce_typed`].
#[derive(Clone, Copy, Debug)]
enum Typed {
    SumF64,
    SumI32,
    SumU64,
    MinF32,
    MaxF32,
    MinI32,
    MaxI32,
}

/// A typed reduction through the library's call (its vectorized kernel), over an input derived
/// from the `f32` one as the demo derives it; exactly the CPU's result (the `f64` sum: nearly).
fn reduce_typed(t: &Target, which: Typed) -> Result<Ran> {
    let f = gridsync::reduce::random_input(LEN, 1, true);
    use gridsync::reduce::Value as V;
    let (got, want) = match which {
        Typed::SumF64 => {
            let d: Vec<f64> = f.iter().map(|&v| v as f64).collect();
            let got = gridsync::reduce::sum_f64(t, &d)?;
            let want = gridsync::reduce::sum_cpu(&d);
            if (got - want).abs() > 1e-12 * d.iter().map(|v| v.abs()).sum::<f64>() {
                return Err(Error::Mismatch(format!("{which:?}: {got}, the CPU {want}")));
            }
            return Ok(Ran::Finished);
        }
        Typed::SumI32 => {
            let d = gridsync::reduce::derived_i32(&f);
            (
                V::Int(gridsync::reduce::sum_i32(t, &d)? as i64),
                V::Int(gridsync::reduce::sum_i32_wrapping(&d) as i64),
            )
        }
        Typed::SumU64 => {
            let d = gridsync::reduce::derived_u64(&f);
            (
                V::Uint(gridsync::reduce::sum_u64(t, &d)?),
                V::Uint(gridsync::reduce::sum_u64_wrapping(&d)),
            )
        }
        Typed::MinF32 => (
            V::Float(gridsync::reduce::min(t, &f)? as f64),
            V::Float(gridsync::reduce::min_cpu(&f).unwrap_or(f32::NAN) as f64),
        ),
        Typed::MaxF32 => (
            V::Float(gridsync::reduce::max(t, &f)? as f64),
            V::Float(gridsync::reduce::max_cpu(&f).unwrap_or(f32::NAN) as f64),
        ),
        Typed::MinI32 => {
            let d = gridsync::reduce::derived_i32(&f);
            (
                V::Int(gridsync::reduce::min_i32(t, &d)? as i64),
                V::Int(gridsync::reduce::min_cpu(&d).unwrap_or(0) as i64),
            )
        }
        Typed::MaxI32 => {
            let d = gridsync::reduce::derived_i32(&f);
            (
                V::Int(gridsync::reduce::max_i32(t, &d)? as i64),
                V::Int(gridsync::reduce::max_cpu(&d).unwrap_or(0) as i64),
            )
        }
    };
    if got != want {
        return Err(Error::Mismatch(format!(
            "{which:?}: {got:?}, the CPU {want:?}"
        )));
    }
    Ok(Ran::Finished)
}
