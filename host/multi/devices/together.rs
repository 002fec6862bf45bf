//! Running one kernel on every device of a set at the same time, on memory they share:
//! peer access between the GPUs, and the launch of a grid per device.

use super::DeviceSet;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use std::time::Instant;

/// Lets every GPU of `set` read and write every other's memory (`cuCtxEnablePeerAccess` both
/// ways for each pair). Nothing to do for one device or simulators (which share the host's
/// memory).
///
/// # Errors
/// [`Error::Unsupported`] for a pair the hardware cannot map (`cuDeviceCanAccessPeer` says no:
/// no NVLink and no common PCIe root, or a virtual machine without peer support); a driver
/// error.
pub fn enable_peer_access(set: &DeviceSet) -> Result<()> {
    enable_peer_access_on(set.targets())
}

/// [`enable_peer_access`] for the targets of a set, or any other list of them.
pub fn enable_peer_access_on(targets: &[Target]) -> Result<()> {
    let gpus: Vec<_> = targets
        .iter()
        .filter_map(|t| match t {
            Target::Gpu(g) => Some(g),
            Target::Sim => None,
        })
        .collect();
    for a in &gpus {
        for b in &gpus {
            a.enable_peer_access(b).map_err(|e| match e {
                Error::Unsupported(why) => Error::Unsupported(format!(
                    "{why}: the system-scope demos need one GPU's memory mapped into the others"
                )),
                e => e,
            })?;
        }
    }
    Ok(())
}

/// Launches `launch(device, target)` on every device at once and waits for all: on GPUs the
/// launches are queued one after another (they are asynchronous) and then waited for; the
/// simulator runs a launch to its end, so each simulated device gets a host thread. Returns
/// the wall time in milliseconds.
pub fn at_once(
    set: &DeviceSet,
    launch: impl Fn(usize, &Target) -> Result<()> + Sync,
) -> Result<f64> {
    at_once_on(set.targets(), launch)
}

/// [`at_once`] on `targets`.
pub fn at_once_on(
    targets: &[Target],
    launch: impl Fn(usize, &Target) -> Result<()> + Sync,
) -> Result<f64> {
    for t in targets {
        t.synchronize()?;
    }
    let start = Instant::now();
    if targets.iter().all(Target::is_sim) {
        let launch = &launch;
        std::thread::scope(|s| {
            // Every thread started is joined, even where a later one could not be started (the
            // grids already running then end at their barrier's bound).
            let handles: Vec<_> = (0..targets.len())
                .map(|d| spawn_in(s, move || launch(d, &Target::Sim)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.and_then(join))
                .collect::<Result<Vec<()>>>()
        })?;
    } else {
        for (d, t) in targets.iter().enumerate() {
            if let Err(e) = launch(d, t) {
                // The grids already launched use the caller's buffers: they end (a barrier
                // waiting for the missing grid times out) before those can be freed.
                settle_on(targets);
                return Err(e);
            }
        }
        let mut first_error = Ok(());
        for t in targets {
            first_error = first_error.and(t.synchronize());
        }
        first_error?;
    }
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

/// Starts `work` on a thread of `scope`; a thread the operating system refuses is an error, not
/// a panic (a long `--devices` list of simulators asks for many).
pub fn spawn_in<'s, 'e, T: Send + 's>(
    scope: &'s std::thread::Scope<'s, 'e>,
    work: impl FnOnce() -> Result<T> + Send + 's,
) -> Result<std::thread::ScopedJoinHandle<'s, Result<T>>> {
    std::thread::Builder::new()
        .spawn_scoped(scope, work)
        .map_err(|e| Error::Sim(gpu::sim::SimError::Spawn(e.to_string())))
}

/// The result of a thread started by [`spawn_in`]; its panic goes on in the caller.
pub fn join<T>(handle: std::thread::ScopedJoinHandle<'_, Result<T>>) -> Result<T> {
    handle
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// Waits for everything queued on every device of `set`, errors ignored: on an error path,
/// before buffers that queued work may still use are freed.
pub(crate) fn settle(set: &DeviceSet) {
    settle_on(set.targets());
}

/// [`settle`] on `targets`.
pub(crate) fn settle_on(targets: &[Target]) {
    for t in targets {
        let _ = t.synchronize();
    }
}
