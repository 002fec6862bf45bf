//! The cross-device operation of the endurance run: on a set of two or more devices, a counter,
//! a `Mutex<SystemScope>` and a `MultiGridBarrier` in device 0's memory, used by a grid on every
//! device at once at system scope (`gridsync::multi::devices::peer`), each checked exact.

use super::ops::Draw;
use gpu::LaunchConfig;
use gpu::atomic::Scope;
use gridsync::multi::DeviceSet;
use gridsync::multi::devices::peer;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use std::time::Duration;

/// The operation's name in the report.
pub(crate) const NAME: &str = "system-scope";

/// How long a lock or the barrier may wait before it gives up.
const TIMEOUT: Duration = Duration::from_secs(10);

/// One of the three objects, drawn from `seed`, on a small random grid per device.
pub(crate) fn run(set: &DeviceSet, seed: u64) -> Result<String> {
    let mut d = Draw::new(seed);
    let sim = set.targets().iter().any(Target::is_sim);
    let blocks = d.range(1, if sim { 2 } else { 8 }) as u32;
    let threads = [32, 64, 128][d.range(0, 2) as usize];
    let cfg = LaunchConfig::linear(blocks, threads);
    let last = set.len() - 1;
    let run = match d.range(0, 2) {
        0 => peer::count(set, Scope::System, cfg, d.range(1, 64) as u32)?,
        1 => peer::lock(set, Scope::System, cfg, d.range(1, 4) as u32, TIMEOUT, last)?,
        _ => peer::barrier(
            set,
            Scope::System,
            cfg,
            d.range(1, 200) as u32,
            TIMEOUT,
            last,
        )?,
    };
    if run.wrong > 0 {
        return Err(Error::Mismatch(format!(
            "{:?} at system scope over {} devices, {blocks}×{threads}: {} of {} wrong",
            run.object, run.devices, run.wrong, run.expected
        )));
    }
    Ok(format!("{:?}, {blocks}×{threads}", run.object))
}
