//! Hopper's primitives (sm_90): the checks of `gpu/src/checks/hopper.rs`, and the cluster-aware
//! grid barrier.

use super::hopper_checks::{CLUSTER, Hopper, hopper};
use crate::check::{Case, Ran};
use gpu::LaunchConfig;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::{LaunchMode, Target};

/// The Hopper checks and the cluster grid barrier.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "hopper",
            K::MbarrierPhases.name(),
            Clean,
            "2 × 33, 4 rounds",
            "an mbarrier's phases: write, arrive, wait, read the neighbor's word",
            |t| hopper(t, Hopper::MbarrierPhases)
        ),
        case!(
            "hopper",
            K::BulkPipelineCopy.name(),
            Clean,
            "3 × 72, 1001 bytes, 3 stages",
            "bulk copies through a ring of stages, complete_tx on an mbarrier",
            |t| hopper(t, Hopper::BulkPipelineCopy)
        ),
        case!(
            "hopper",
            K::CpAsyncTransform.name(),
            Clean,
            "3 × 40, 1001 words",
            "cp.async into shared memory, waited for, transformed, stored",
            |t| hopper(t, Hopper::CpAsyncTransform)
        ),
        case!(
            "hopper",
            K::BulkStore.name(),
            Clean,
            "3 × 40, 100 words",
            "shared memory written, fenced to the async proxy, bulk-stored",
            |t| hopper(t, Hopper::BulkStore)
        ),
        case!(
            "hopper",
            K::ClusterCheck.name(),
            Clean,
            "6 × 33, clusters of 3",
            "cluster ranks, and siblings' shared memory read through DSMEM",
            |t| hopper(t, Hopper::ClusterCheck)
        ),
        case!(
            "hopper",
            K::MbarrierRemote.name(),
            Clean,
            "6 × 33, clusters of 3",
            "siblings' remote arrivals complete rank 0's phase",
            |t| hopper(t, Hopper::MbarrierRemote)
        ),
        case!(
            "hopper",
            K::MbarrierWrongParity.name(),
            Stuck,
            "1 × 1",
            "waits for a phase nobody arrives at",
            |t| hopper(t, Hopper::WrongParity)
        ),
        case!(
            "hopper",
            K::ClusterGridBarrierPhases.name(),
            Clean,
            "6 × 33, clusters of 3, 5 rounds",
            "ClusterGridBarrier; each block checks every other's phase after it",
            |t| cluster_grid(t, None)
        ),
        case!(
            "hopper",
            K::ClusterGridBarrierAbsentCluster.name(),
            Stuck,
            "6 × 33, clusters of 3",
            "one cluster never arrives: the others give up at the timeout",
            |t| cluster_grid(t, Some(1))
        ),
    ]
}

/// The cluster-aware grid barrier over 6 blocks of 33 in clusters of 3: 5 rounds of
/// `cluster_grid_barrier_phases`, or with `absent` the cluster of that block never arriving.
fn cluster_grid(t: &Target, absent: Option<u32>) -> Result<Ran> {
    let (grid, rounds) = (2 * CLUSTER, 5u32);
    let barrier = match absent {
        Some(_) => {
            gridsync::DeviceGridBarrier::with_timeout(t, std::time::Duration::from_millis(50))?
        }
        None => gridsync::DeviceGridBarrier::new(t)?,
    };
    let slots = t.zeros::<u32>(grid as usize)?;
    let errs = t.zeros::<u32>(1)?;
    let cfg = LaunchConfig::linear(grid, 33).with_cluster(CLUSTER.into());
    // SAFETY: one phase slot per block, one error word, the barrier's live state.
    unsafe {
        match absent {
            None => gridsync::launch_grid_synced!(
                t,
                &barrier,
                gpu::checks::hopper::cluster_grid_barrier_phases,
                cfg,
                LaunchMode::Plain,
                (barrier.ptr(), slots.ptr(), rounds, errs.ptr())
            )?,
            Some(a) => gridsync::launch_grid_synced!(
                t,
                &barrier,
                gpu::checks::hopper::cluster_grid_barrier_absent_cluster,
                cfg,
                LaunchMode::Plain,
                (barrier.ptr(), a)
            )?,
        }
    };
    t.synchronize()?;
    match barrier.check(t) {
        Err(e @ Error::BarrierTimeout { .. }) if absent.is_some() => {
            return Ok(Ran::Stuck(e.to_string()));
        }
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    if absent.is_none() {
        let last = t.download(&slots)?;
        let errors = t.download(&errs)?[0];
        if errors != 0 || last.iter().any(|&p| p != rounds) {
            return Err(Error::Mismatch(format!(
                "{errors} blocks passed early; phases {last:?}"
            )));
        }
    }
    Ok(Ran::Finished)
}
