//! The verdict of a run: no forbidden outcome, and enough instances in every combination. A
//! combination that ran nothing, or next to nothing, checked nothing — and a run that checked
//! nothing does not pass.

use super::LitmusResult;
use super::catalogue::{Placement, Test, Variant};
use serde::{Deserialize, Serialize};

/// The least share of the instances asked for (`--iterations`) that every combination must run
/// for the run to pass: a tenth.
///
/// The time bound (`--seconds`) is shared among the combinations, so one may stop before it has
/// run all it was asked for; that is reported (`short`) and is no failure. Below a tenth it
/// is: the combination was asked to look `iterations` times and looked less than a tenth as
/// often — a time bound far too small, a placement the device cannot form (no instance at
/// all), a launch that kept failing — and a 0 in its cell would read as "not seen" where it
/// means "not looked". A tenth leaves room for the combinations' speeds, which differ by a few
/// times within a run (one-thread tests, four-thread tests, the placement across GPUs).
pub const COVERAGE_FLOOR: f64 = 0.1;

/// The instances below which a combination asked for `iterations` fell short: a tenth
/// ([`COVERAGE_FLOOR`]), rounded up, and at least 1.
pub fn coverage_floor(iterations: u64) -> u64 {
    ((iterations as f64 * COVERAGE_FLOOR).ceil() as u64).max(1)
}

/// A combination that ran fewer instances than the [`coverage_floor`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shortfall {
    /// The test.
    pub test: Test,
    /// Its name (`MP`, `2+2W`, …).
    pub name: String,
    /// The variant.
    pub variant: Variant,
    /// The placement (`None` on the simulator, and for one-thread tests).
    pub placement: Option<Placement>,
    /// Instances (GPU) or runs (simulator) it ran.
    pub instances: u64,
}

impl Shortfall {
    /// The shortfall of `r`, if it ran fewer than `floor` instances.
    pub fn of(r: &LitmusResult, floor: u64) -> Option<Shortfall> {
        (r.instances < floor).then(|| Shortfall {
            test: r.test,
            name: r.name.clone(),
            variant: r.variant,
            placement: r.placement,
            instances: r.instances,
        })
    }
}

/// What a run's report says, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    /// No forbidden outcome, and every combination ran at least its [`coverage_floor`].
    Passed,
    /// A forbidden outcome was seen: a bug in the test, or a finding about the hardware.
    /// (Where some combination also fell short, this one is the verdict.)
    ForbiddenSeen,
    /// No forbidden outcome, but some combination ran fewer instances than its
    /// [`coverage_floor`]: the run did not look enough to pass.
    TooFewInstances,
}

impl RunVerdict {
    /// The verdict of `forbidden` outcomes seen and the combinations that `fell_short`.
    pub fn of(forbidden: u64, fell_short: &[Shortfall]) -> RunVerdict {
        if forbidden > 0 {
            RunVerdict::ForbiddenSeen
        } else if !fell_short.is_empty() {
            RunVerdict::TooFewInstances
        } else {
            RunVerdict::Passed
        }
    }
}
