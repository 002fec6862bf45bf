//! Normalizing on streams: a sum, then every element divided by it.

use super::LEN;
use crate::check::{Case, Ran};
use gridsync::normalize::Pipeline;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// The normalize pipelines.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "streams",
            "single_thread_sum, divide_by",
            Clean,
            "3001 floats",
            "partial_reduce, one thread adds the partials, every element divided",
            |t| normalize(t, Pipeline::Source)
        ),
        case!(
            "streams",
            K::DivideBySum.name(),
            Clean,
            "3001 floats",
            "after the single-pass sum in f64: a division with 16-byte loads",
            |t| normalize(t, Pipeline::SinglePass)
        ),
    ]
}

fn normalize(t: &Target, pipeline: Pipeline) -> Result<Ran> {
    let data = gridsync::reduce::random_input(LEN, 1, false);
    let mut got = data.clone();
    gridsync::normalize::normalize_with(t, &mut got, pipeline)?;
    let (_, want) = gridsync::normalize::normalize_cpu(&data)
        .ok_or_else(|| Error::Mismatch("the input's sum cannot divide".into()))?;
    // The source's sum is in f32, added by one thread: a few ulps of the f64 one.
    let tolerance = 1e-5;
    match got
        .iter()
        .zip(&want)
        .position(|(g, w)| ((g - w) / w).abs() > tolerance)
    {
        None => Ok(Ran::Finished),
        Some(i) => Err(Error::Mismatch(format!(
            "{pipeline:?}: element {i} is {}, the CPU {}",
            got[i], want[i]
        ))),
    }
}
