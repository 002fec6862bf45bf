//! Pipelines (sm_90): a producer's copies and its consumers, with each of the two waits removed.

use crate::check::{Case, Ran};
use gridsync::pipeline::{PipelineKernel, PipelineOptions};
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// The pipeline kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "pipeline",
            K::PipelineTransform.name(),
            Clean,
            "2 blocks, 8 tiles",
            "consumers wait for the copy, the producer for the reads",
            |t| pipeline(t, PipelineKernel::Transform)
        ),
        case!(
            "pipeline",
            K::PipelineNoFullWait.name(),
            DataRace,
            "2 blocks, 8 tiles",
            "consumers read a stage before its copy lands",
            |t| pipeline(t, PipelineKernel::NoFullWait)
        ),
        case!(
            "pipeline",
            K::PipelineNoEmptyWait.name(),
            Stuck,
            "2 blocks, 8 tiles",
            "the producer refills a stage still being read; here, where copies land at once, \
             its consumers fall two fills behind and wait for a phase that passed",
            |t| pipeline(t, PipelineKernel::NoEmptyWait)
        ),
    ]
}

fn pipeline(t: &Target, kernel: PipelineKernel) -> Result<Ran> {
    let o = PipelineOptions {
        tiles: 8,
        work: 2,
        blocks: Some(2),
        seed: 1,
    };
    let report = gridsync::pipeline::run_kernels(t, &o, &[kernel])?;
    Ok(match report.runs.first() {
        Some(r) if r.timed_out => Ran::Stuck(format!("{}: a wait timed out", r.name)),
        _ => Ran::Finished,
    })
}
