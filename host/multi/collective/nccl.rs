//! NCCL, loaded at run time (through `cudarc`'s binding): one communicator per GPU of a set
//! (`ncclCommInitAll`), or one per rank of a launched job (`ncclCommInitRank`, the unique id
//! handed over a [`Transport`]), and the all-reduce on the devices' streams.
//!
//! A machine without NCCL still runs every other part of gridsync: [`nccl_installed`] says
//! whether it can be loaded, and where it cannot, the [`Combiner`](super::Combiner) falls back.
//! Any other NCCL failure is an error that names the call, never a silent fallback. A
//! collective is waited for with a bound, polling NCCL's asynchronous errors ([`NcclComms`]'
//! timeout): a rank that fails or never joins ends the wait with an error, and the
//! communicators are aborted (the wait for the aborted work is bounded too).

use super::op::{Element, Op, Partial};
use super::transport::{DEFAULT_TIMEOUT, ID_BYTES, Transport};
use crate::multi::devices::DeviceSet;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use cudarc::nccl::{result as nccl, sys as nccl_sys};
use std::ffi::{CStr, c_void};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Whether an NCCL library can be loaded (looked for by the names `cudarc` tries:
/// `libnccl.so` and versioned variants, on the library path).
pub fn nccl_installed() -> bool {
    // SAFETY: only tries to open the library (`dlopen`) and closes it again.
    unsafe { nccl_sys::is_culib_present() }
}

/// One NCCL communicator per device of a set, made together (`ncclCommInitAll`: one process
/// drives every GPU). Destroyed on drop.
#[derive(Debug)]
pub struct NcclComms {
    comms: Vec<nccl_sys::ncclComm_t>,
    /// The devices, in rank order: a combine checks that its set is this one.
    ordinals: Vec<i32>,
    version: i32,
    /// How long a collective may take before the wait gives up and aborts.
    timeout: Duration,
    /// Set when a failed collective aborted the communicators: they are unusable and are
    /// not destroyed again.
    aborted: std::cell::Cell<bool>,
    /// For a communicator of a launched job's ranks: this rank and the world size.
    rank: Option<(u32, u32)>,
    /// For a launched job's ranks: the connections that name the lost rank after a failed
    /// collective ([`Transport::blame`]).
    links: Option<Arc<dyn Transport>>,
}

/// Why NCCL cannot combine `set` at all — not installed, or the devices are simulated — or
/// `None` where it can be tried.
pub(super) fn nccl_unavailable(set: &DeviceSet) -> Option<String> {
    if !nccl_installed() {
        return Some(format!(
            "NCCL is not installed (no {} on the library path; a libnccl.so.2 alone is not \
             looked for: link libnccl.so to it)",
            cudarc::get_lib_name_candidates("nccl")
                .iter()
                .take(2)
                .cloned()
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    if set.targets().iter().any(Target::is_sim) {
        return Some("NCCL combines GPUs, not simulated devices".into());
    }
    None
}

/// An NCCL version code (`major × 10000 + minor × 100 + patch`, NCCL 2.9 and later) as
/// `major.minor.patch`.
pub fn version_text(code: i32) -> String {
    format!("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100)
}

/// The NCCL library's version code (`major × 10000 + minor × 100 + patch`).
///
/// # Errors
/// [`Error::Unsupported`] where the library found is not a usable NCCL; an NCCL error.
pub fn nccl_version() -> Result<i32> {
    // cudarc's loader panics where a library by that name lacks a symbol: the first call into
    // it tells such a library from NCCL.
    std::panic::catch_unwind(nccl::get_nccl_version)
        .map_err(|_| {
            Error::Unsupported(
                "the NCCL library found lacks ncclGetVersion: not a usable NCCL".into(),
            )
        })?
        .map_err(nccl_err("ncclGetVersion"))
}

impl NcclComms {
    /// Communicators for the GPUs of `set`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] on simulators, when no NCCL library can be loaded (naming the
    /// file names looked for), or when the library lacks NCCL's entry points; [`Error::Nccl`]
    /// naming the call and NCCL's code when NCCL fails.
    pub fn new(set: &DeviceSet) -> Result<NcclComms> {
        if let Some(why) = nccl_unavailable(set) {
            return Err(Error::Unsupported(why));
        }
        let ordinals: Vec<i32> = set
            .targets()
            .iter()
            .filter_map(|t| match t {
                Target::Gpu(g) => Some(g.info().ordinal as i32),
                Target::Sim => None,
            })
            .collect();
        let version = nccl_version()?;
        let mut comms = vec![std::ptr::null_mut(); ordinals.len()];
        // SAFETY: `comms` has room for one communicator per ordinal; the ordinals are devices
        // of this machine, each once (a `DeviceList` refuses repeats).
        unsafe {
            nccl::comm_init_all(comms.as_mut_ptr(), ordinals.len() as i32, ordinals.as_ptr())
        }
        .map_err(nccl_err("ncclCommInitAll"))?;
        Ok(NcclComms {
            comms,
            ordinals,
            version,
            timeout: DEFAULT_TIMEOUT,
            aborted: std::cell::Cell::new(false),
            rank: None,
            links: None,
        })
    }

    /// This rank's communicator in a launched job of one GPU per rank (`ncclCommInitRank`):
    /// rank 0 makes the unique id (`ncclGetUniqueId`) and hands it to every rank over `links`;
    /// every rank then joins on its GPU, the one device of `set`. The join is bounded by the
    /// links' timeout: a rank that never joins (it failed before, or its NCCL did) is an error,
    /// not a hang.
    ///
    /// Every rank of the job must call this, or none ([`Combiner::for_ranks`](super::Combiner::for_ranks) agrees on it
    /// first).
    ///
    /// # Errors
    /// [`Error::Unsupported`] where NCCL cannot be had (as [`NcclComms::new`]);
    /// [`Error::InvalidInput`] for a set of other than one GPU; [`Error::Nccl`] naming the call
    /// that failed or ran out of time; a rendezvous error.
    pub fn for_rank(set: &DeviceSet, links: &Arc<dyn Transport>) -> Result<NcclComms> {
        if let Some(why) = nccl_unavailable(set) {
            return Err(Error::Unsupported(why));
        }
        let [Target::Gpu(g)] = set.targets() else {
            return Err(Error::InvalidInput(format!(
                "a rank of a launched job drives one GPU ({} devices given)",
                set.len()
            )));
        };
        let version = nccl_version()?;
        let (rank, world) = links.rank_and_world();
        let id = if rank == 0 {
            let id = nccl::get_uniqueid().map_err(nccl_err("ncclGetUniqueId"))?;
            links.broadcast_id(Some(&id.internal.map(|c| c as u8)))?
        } else {
            links.broadcast_id(None)?
        };
        let mut unique = nccl_sys::ncclUniqueId {
            internal: [0; ID_BYTES],
        };
        for (u, b) in unique.internal.iter_mut().zip(&id) {
            *u = *b as std::ffi::c_char;
        }
        let ordinal = g.info().ordinal as i32;
        // The context's handle crosses to the joining thread: the driver lets any thread make
        // a context current.
        let context = g.context_handle();
        let (tx, rx) = std::sync::mpsc::channel();
        // `ncclCommInitRank` blocks until every rank has joined: on a thread of its own, so that
        // the wait is bounded. A thread still blocked after the bound is left behind, blocked
        // in NCCL, holding nothing of ours but the context's handle: the error is meant to end
        // the job (`gridsync multi --ranks` exits), since a rank that never joined leaves no
        // communicator to retry with.
        std::thread::spawn(move || {
            // SAFETY: the context is the primary context of a device that `set` holds retained
            // while this function waits; after the bound the thread only waits inside NCCL.
            let current = unsafe { context.make_current() };
            let mut comm: nccl_sys::ncclComm_t = std::ptr::null_mut();
            let joined = current.and_then(|()| {
                // SAFETY: `comm` receives one communicator; the id came from rank 0's
                // `ncclGetUniqueId`; `rank < world` (discovery checks it).
                unsafe { nccl::comm_init_rank(&mut comm, world as i32, unique, rank as i32) }
                    .map(drop)
                    .map_err(nccl_err("ncclCommInitRank"))
            });
            let _ = tx.send(joined.map(|()| comm as usize));
        });
        let comm = match rx.recv_timeout(links.timeout()) {
            Ok(joined) => joined? as nccl_sys::ncclComm_t,
            Err(_) => {
                return Err(Error::Nccl {
                    call: "ncclCommInitRank".into(),
                    why: format!(
                        "rank {rank} of {world}: not every rank joined within {:.1} s",
                        links.timeout().as_secs_f64()
                    ),
                });
            }
        };
        Ok(NcclComms {
            comms: vec![comm],
            ordinals: vec![ordinal],
            version,
            // A collective across processes waits for the slowest rank: the job's bound.
            timeout: links.timeout(),
            aborted: std::cell::Cell::new(false),
            rank: Some((rank, world)),
            links: Some(links.clone()),
        })
    }

    /// NCCL's version, as `major·10000 + minor·100 + patch`.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// One line for reports: NCCL's version, and the ranks where these are a launched job's.
    pub fn describe(&self) -> String {
        match self.rank {
            Some((_, world)) => {
                format!("NCCL {} all-reduce over {world} ranks", self.version_text())
            }
            None => format!("NCCL {} all-reduce", self.version_text()),
        }
    }

    /// NCCL's version as people write it, e.g. `2.28.9`.
    pub fn version_text(&self) -> String {
        version_text(self.version)
    }

    /// How long a collective may take before the wait gives up, aborts the communicators and
    /// returns [`Error::Nccl`] (default [`DEFAULT_TIMEOUT`]).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Aborts every communicator, so that no stream waits for ever on a collective some rank
    /// will never join, and refuses later combines.
    fn abort(&self) {
        if self.aborted.replace(true) {
            return;
        }
        for &c in &self.comms {
            // SAFETY: each communicator is aborted once and never used again (`aborted`).
            let _ = unsafe { nccl::comm_abort(c) };
        }
    }

    /// Waits for the collective just queued on every device's stream: polls the streams and
    /// NCCL's asynchronous error of every communicator (`ncclCommGetAsyncError`), until all
    /// streams are done, a rank reports an error, or the timeout passes.
    fn wait(&self, set: &DeviceSet) -> Result<()> {
        let idle = drain(set, self.timeout, |d, device| {
            match async_error(self.comms[d])? {
                Some(code) => Err(Error::Nccl {
                    call: "ncclAllReduce".into(),
                    why: format!("device {device} reported {code}"),
                }),
                None => Ok(()),
            }
        })?;
        if idle {
            return Ok(());
        }
        Err(Error::Nccl {
            call: "ncclAllReduce".into(),
            why: format!(
                "not finished after {:.1} s: a device's stream is stuck, or a rank never joined",
                self.timeout.as_secs_f64()
            ),
        })
    }
}

/// Polls every GPU's stream of `set` until all are idle (`Ok(true)`), `check(index, ordinal)`
/// fails, or `timeout` passes (`Ok(false)`): spinning for the first millisecond, where a
/// combine of a few values ends, then sleeping between looks.
fn drain(
    set: &DeviceSet,
    timeout: Duration,
    mut check_device: impl FnMut(usize, u32) -> Result<()>,
) -> Result<bool> {
    const SPIN: Duration = Duration::from_millis(1);
    const SLEEP: Duration = Duration::from_micros(50);
    let start = Instant::now();
    loop {
        let mut running = false;
        for (d, t) in set.targets().iter().enumerate() {
            let Target::Gpu(g) = t else { continue };
            let device = g.info().ordinal;
            g.make_current()?;
            let done = g.stream().is_done().map_err(|e| match e {
                Error::Driver { op, code } => Error::Driver {
                    op: format!("{op}(device {device})"),
                    code,
                },
                e => e,
            })?;
            if !done {
                running = true;
            }
            check_device(d, device)?;
        }
        if !running {
            return Ok(true);
        }
        let waited = start.elapsed();
        if waited > timeout {
            return Ok(false);
        }
        if waited < SPIN {
            std::thread::yield_now();
        } else {
            std::thread::sleep(SLEEP);
        }
    }
}

/// The asynchronous error `comm` reports, if any (in progress counts as none), in NCCL's words.
fn async_error(comm: nccl_sys::ncclComm_t) -> Result<Option<String>> {
    // NCCL writes a C `int`: read it as one, so that a code newer than the binding's enum is
    // reported rather than misread.
    let mut state: u32 = 0;
    // SAFETY: `comm` is a live communicator; NCCL writes one `ncclResult_t` (an `int`) there.
    unsafe { nccl_sys::ncclCommGetAsyncError(comm, (&mut state as *mut u32).cast()) }
        .result()
        .map_err(nccl_err("ncclCommGetAsyncError"))?;
    const SUCCESS: u32 = nccl_sys::ncclResult_t::ncclSuccess as u32;
    const IN_PROGRESS: u32 = nccl_sys::ncclResult_t::ncclInProgress as u32;
    const KNOWN: u32 = nccl_sys::ncclResult_t::ncclNumResults as u32;
    Ok(match state {
        SUCCESS | IN_PROGRESS => None,
        // SAFETY: a value below `ncclNumResults` is a variant of the `u32` enum.
        code if code < KNOWN => Some(describe(unsafe {
            std::mem::transmute::<u32, nccl_sys::ncclResult_t>(code)
        })),
        code => Some(format!("NCCL code {code}")),
    })
}

/// `ncclSystemError (2): unhandled system error …`: the code and NCCL's own words for it.
fn describe(code: nccl_sys::ncclResult_t) -> String {
    // SAFETY: NCCL returns a static string for every code.
    let words = unsafe { CStr::from_ptr(nccl_sys::ncclGetErrorString(code)) };
    format!("{code:?} ({}): {}", code as u32, words.to_string_lossy())
}

impl Drop for NcclComms {
    fn drop(&mut self) {
        if self.aborted.get() {
            return;
        }
        // A rank's communicator is aborted, not destroyed: destroying waits on the other ranks,
        // and a rank that failed or left would make this one wait for ever at its exit. Every
        // collective of ours has ended (each combine waits for its own), so nothing is lost.
        if self.rank.is_some() {
            self.abort();
            return;
        }
        for &c in &self.comms {
            // SAFETY: each communicator came from `ncclCommInitAll` and is destroyed once; an
            // error cannot be reported from `drop`.
            let _ = unsafe { nccl::comm_destroy(c) };
        }
    }
}

fn nccl_err(call: &'static str) -> impl Fn(nccl::NcclError) -> Error {
    move |e| Error::Nccl {
        call: call.into(),
        why: describe(e.0),
    }
}

/// The all-reduce of `parts` into `results` on every device of `set`, waited for with the
/// communicators' bound; after a failure the communicators are aborted and the lost rank named.
pub(super) fn all_reduce<T: Partial>(
    comms: &NcclComms,
    set: &DeviceSet,
    parts: &[&Buffer<T>],
    results: &[&Buffer<T>],
    op: Op,
) -> Result<Vec<T>> {
    if comms.aborted.get() {
        return Err(Error::Nccl {
            call: "ncclAllReduce".into(),
            why: "the communicators were aborted after an earlier error".into(),
        });
    }
    // Everything a rank needs is checked before the group opens: a collective that some ranks
    // join and others do not would wait for ever.
    let mut streams = Vec::with_capacity(set.len());
    for t in set.targets() {
        match t {
            Target::Gpu(g) => streams.push((
                g.info().ordinal as i32,
                g.stream().as_raw() as nccl_sys::cudaStream_t,
            )),
            Target::Sim => return Err(Error::Unsupported("NCCL combines GPUs only".into())),
        }
    }
    if streams
        .iter()
        .map(|s| s.0)
        .ne(comms.ordinals.iter().copied())
    {
        return Err(Error::InvalidInput(
            "this NCCL combiner was set up for another set of devices".into(),
        ));
    }
    nccl::group_start().map_err(nccl_err("ncclGroupStart"))?;
    let mut queued = Ok(());
    let ranks = parts.iter().zip(results).zip(&comms.comms).zip(&streams);
    for (((p, r), &comm), &(_, stream)) in ranks {
        // SAFETY: `p` and `r` hold `len` values each on the communicator's device (checked
        // above: same set, same lengths); the stream is that device's; the call only queues
        // work, and every stream is synchronized below before the buffers can be freed.
        let q = unsafe {
            nccl::all_reduce(
                p.ptr().cast::<c_void>().cast_const(),
                r.ptr().cast::<c_void>(),
                p.len(),
                nccl_element(T::ELEMENT),
                nccl_op(op),
                comm,
                stream,
            )
        };
        if let Err(e) = q {
            queued = Err(nccl_err("ncclAllReduce")(e));
            break;
        }
    }
    // The group must be closed whatever happened inside it.
    let ended = nccl::group_end()
        .map_err(nccl_err("ncclGroupEnd"))
        .map(drop);
    // Some ranks may have queued a collective the others never will, or a rank may fail while
    // it runs: abort then, so that no stream waits for ever, and refuse later combines.
    if let Err(e) = queued.and(ended).and_then(|()| comms.wait(set)) {
        comms.abort();
        // An aborted collective ends; a stream stuck in other work does not, and waiting for it
        // would hang: the wait after the abort is bounded too, and says so when it runs out.
        let e = match drain(set, comms.timeout, |_, _| Ok(())) {
            Ok(true) => e,
            _ => Error::Nccl {
                call: "ncclCommAbort".into(),
                why: format!(
                    "after {e}: a device's stream is still busy {:.1} s after the abort (its \
                     work is stuck; freeing the buffers it uses will wait for it)",
                    comms.timeout.as_secs_f64()
                ),
            },
        };
        return Err(blame(comms, e));
    }
    // Every rank's collective is over (the wait saw every stream idle).
    set.targets()[0].download(results[0])
}

/// The most a census after a failed collective waits for the other ranks' word.
const CENSUS_BOUND: Duration = Duration::from_secs(10);

/// A launched job's collective failed with `e`: the rank to blame, found by a census over the
/// links ([`Transport::blame`]) and named in an [`Error::Rank`]; `e` as it is where every rank
/// was there (or there are no ranks: one process's devices).
fn blame(comms: &NcclComms, e: Error) -> Error {
    let (Some(links), Some((rank, world))) = (&comms.links, comms.rank) else {
        return e;
    };
    match links.blame(comms.timeout.min(CENSUS_BOUND)) {
        Some(blame) => Error::Rank {
            rank: blame.rank,
            why: format!(
                "rank {rank} of {world}: {e}; the communicator was aborted; {}",
                blame.why
            ),
        },
        None => e,
    }
}

/// NCCL's name for a reduction.
fn nccl_op(op: Op) -> nccl_sys::ncclRedOp_t {
    match op {
        Op::Sum => nccl_sys::ncclRedOp_t::ncclSum,
        Op::Min => nccl_sys::ncclRedOp_t::ncclMin,
        Op::Max => nccl_sys::ncclRedOp_t::ncclMax,
    }
}

/// NCCL's name for an element type.
fn nccl_element(element: Element) -> nccl_sys::ncclDataType_t {
    match element {
        Element::F64 => nccl_sys::ncclDataType_t::ncclFloat64,
        Element::F32 => nccl_sys::ncclDataType_t::ncclFloat32,
        Element::U64 => nccl_sys::ncclDataType_t::ncclUint64,
    }
}
