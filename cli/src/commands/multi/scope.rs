//! `gridsync multi lock|barrier`: the system-scope objects of `gridsync::multi::devices::peer` on
//! every device at once, at system scope and at device scope, and at system scope on the first device alone —
//! what each counted, what it should have, and how fast.

use super::MultiOp;
use gpu::LaunchConfig;
use gpu::atomic::Scope;
use gridsync::multi::DeviceSet;
use gridsync::multi::devices::peer::{self, PeerObject, PeerRun};
use gridsync::{Error, Result, Target};
use serde::Serialize;
use std::time::Duration;

/// The shape of the runs; `None` takes the default for the object and the device.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScopeOptions {
    /// Blocks per device.
    pub blocks: Option<u32>,
    /// Threads per block.
    pub threads: Option<u32>,
    /// Operations per thread (counter, lock) or barrier rounds.
    pub iters: Option<u32>,
}

/// One run of the report, or why it failed.
#[derive(Clone, Debug, Serialize)]
pub struct ScopeRow {
    /// The object.
    pub object: PeerObject,
    /// `system` or `device`.
    pub scope: &'static str,
    /// Devices that took part.
    pub devices: usize,
    /// The device holding the guarded data or the barrier's slots.
    pub data_device: usize,
    /// The run, if it completed.
    pub run: Option<PeerRun>,
    /// Its error otherwise (a lock or barrier that timed out at device scope, say).
    pub error: Option<String>,
}

/// Every run of one `gridsync multi lock|barrier`.
#[derive(Clone, Debug, Serialize)]
pub struct ScopeReport {
    /// The devices.
    pub devices: Vec<String>,
    /// Where the shared words live.
    pub home: String,
    /// The runs.
    pub rows: Vec<ScopeRow>,
}

fn shape(t: &Target, object: PeerObject, o: ScopeOptions) -> (LaunchConfig, u32) {
    let sms = match t {
        Target::Gpu(g) => g.info().sm_count,
        Target::Sim => 0,
    };
    let (blocks, threads, iters) = match (object, sms) {
        (PeerObject::Counter, 0) => (2, 32, 5),
        (PeerObject::Lock, 0) => (2, 32, 3),
        (PeerObject::Barrier, 0) => (2, 32, 25),
        (PeerObject::Counter, n) => (4 * n, 256, 64),
        (PeerObject::Lock, n) => (n, 64, 4),
        (PeerObject::Barrier, n) => (n, 64, 20_000),
    };
    (
        LaunchConfig::linear(o.blocks.unwrap_or(blocks), o.threads.unwrap_or(threads)),
        o.iters.unwrap_or(iters),
    )
}

fn one_run(
    set: &DeviceSet,
    object: PeerObject,
    (scope, data): (Scope, usize),
    o: ScopeOptions,
) -> Result<PeerRun> {
    let (cfg, iters) = shape(&set.targets()[0], object, o);
    match object {
        PeerObject::Counter => peer::count(set, scope, cfg, iters),
        PeerObject::Lock => peer::lock(set, scope, cfg, iters, Duration::from_secs(10), data),
        PeerObject::Barrier => peer::barrier(set, scope, cfg, iters, Duration::from_secs(2), data),
    }
}

/// Runs `op`'s objects — lock: the counter (atomics alone), then the mutex guarding a plain
/// counter; barrier: the barrier — on `all` (system scope, then device scope) and on `one` (the
/// first device alone, system scope), with peer access enabled.
///
/// # Errors
/// [`Error::Unsupported`] where the GPUs cannot map each other's memory; [`Error::Mismatch`]
/// if a system-scope run counted wrong, and a system-scope run's own error (device-scope runs
/// are reported, not failed); a driver error; [`Error::InvalidInput`] for an operation over
/// data.
pub fn run(all: &DeviceSet, one: &DeviceSet, op: MultiOp, o: ScopeOptions) -> Result<ScopeReport> {
    let objects: &[PeerObject] = match op {
        MultiOp::Lock => &[PeerObject::Counter, PeerObject::Lock],
        MultiOp::Barrier => &[PeerObject::Barrier],
        MultiOp::Reduce | MultiOp::Histogram | MultiOp::CountAbove => {
            return Err(super::not_scope(op));
        }
    };
    peer::enable_peer_access(all)?;
    let mut rows = Vec::new();
    for &object in objects {
        // The guarded data (or the barrier's slots) beside the shared word, then on the last
        // device — the layout where a release must wait for a store to cross to another GPU.
        let last = all.len() - 1;
        let homes: &[usize] = match object {
            PeerObject::Counter => &[0],
            _ if last > 0 => &[0, last],
            _ => &[0],
        };
        let mut cases = Vec::new();
        if last > 0 {
            for scope in [Scope::System, Scope::Device] {
                cases.extend(homes.iter().map(|&h| (all, scope, h)));
            }
        }
        cases.push((one, Scope::System, 0));
        for (set, scope, data) in cases {
            let r = one_run(set, object, (scope, data), o);
            if scope == Scope::System {
                // At system scope a wrong count is a broken primitive, and an error is an
                // error; at device scope both are what the demo is there to show.
                let run = r?;
                if run.wrong > 0 {
                    return Err(Error::Mismatch(format!(
                        "{object:?} at system scope on {} device(s): {} of {} wrong",
                        set.len(),
                        run.wrong,
                        run.expected
                    )));
                }
                rows.push(ScopeRow {
                    object,
                    scope: "system",
                    devices: set.len(),
                    data_device: data,
                    run: Some(run),
                    error: None,
                });
                continue;
            }
            // A device-scope run that failed has left the device's state to the timeout: the
            // next run starts from fresh buffers, so nothing carries over.
            rows.push(ScopeRow {
                object,
                scope: "device",
                devices: set.len(),
                data_device: data,
                error: r.as_ref().err().map(ToString::to_string),
                run: r.ok(),
            });
        }
    }
    Ok(ScopeReport {
        devices: all.targets().iter().map(Target::describe).collect(),
        home: format!("{} (device 0 of the set)", all.targets()[0].describe()),
        rows,
    })
}
