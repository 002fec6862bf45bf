//! Split-phase barriers (sm_90): the relay between two warps, and its broken waits.

use crate::check::{Case, Ran};
use gridsync::mbarrier::{MbarrierOptions, RelayKernel};
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// The relay kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "mbarrier",
            K::RelaySyncThreads.name(),
            Clean,
            "2 × 64, 6 rounds",
            "write, sync_threads, read",
            |t| relay(t, RelayKernel::SyncThreads)
        ),
        case!(
            "mbarrier",
            K::RelaySplit.name(),
            Clean,
            "2 × 64, 6 rounds",
            "write, arrive, work, wait, read",
            |t| relay(t, RelayKernel::Split)
        ),
        case!(
            "mbarrier",
            K::RelayNoWait.name(),
            DataRace,
            "2 × 64, 6 rounds",
            "reads the partner's slot before waiting",
            |t| relay(t, RelayKernel::NoWait)
        ),
        case!(
            "mbarrier",
            K::RelayStuckParity.name(),
            StaleParity,
            "2 × 64, 6 rounds",
            "waits by a parity it never moves on: a later wait passes on the phase it already \
             waited for, and reads come early",
            |t| relay(t, RelayKernel::StuckParity)
        ),
        case!(
            "mbarrier",
            K::RelayWaitBeforeArrive.name(),
            Stuck,
            "2 × 64, 6 rounds",
            "waits for a phase its own arrival completes",
            |t| relay(t, RelayKernel::WaitBeforeArrive)
        ),
    ]
}

fn relay(t: &Target, kernel: RelayKernel) -> Result<Ran> {
    let o = MbarrierOptions {
        rounds: 6,
        work: 4,
        blocks: Some(2),
    };
    // The stuck parity shows only while its early waits pass; about one launch in 60 on the
    // simulator gets stuck before any wait passes early. Three launches make a miss one run in
    // about 200 000.
    let launches = if kernel == RelayKernel::StuckParity {
        3
    } else {
        1
    };
    let report = gridsync::mbarrier::run_kernels(t, &o, &vec![kernel; launches])?;
    Ok(match report.runs.iter().find(|r| r.timed_out) {
        Some(r) => Ran::Stuck(format!("{}: a wait timed out", r.name)),
        None => Ran::Finished,
    })
}
