//! Combining the devices' partial results where they are: an NCCL all-reduce across the GPUs,
//! or — where NCCL is not installed — peer copies of the partials into device 0's memory.
//!
//! NCCL is loaded at run time (through `cudarc`'s binding), so a machine without it still runs
//! every other part of gridsync: [`Combiner::open`] tries NCCL and, if it cannot be had, says
//! why and falls back. Both paths give the same numbers: integer sums and min/max exactly, and
//! `f64` sums of `N` partials to within `(N − 1)·2⁻⁵³·Σ|partialᵢ|` (NCCL's ring may add them in
//! another order than device order).

use super::DeviceSet;
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result, check};
use crate::runtime::launch::Target;
use cudarc::nccl::{result as nccl, sys as nccl_sys};
use cust::sys as cu;
use std::ffi::c_void;

/// How partials combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Added.
    Sum,
    /// The smallest.
    Min,
    /// The largest.
    Max,
}

impl Op {
    fn nccl(self) -> nccl_sys::ncclRedOp_t {
        match self {
            Op::Sum => nccl_sys::ncclRedOp_t::ncclSum,
            Op::Min => nccl_sys::ncclRedOp_t::ncclMin,
            Op::Max => nccl_sys::ncclRedOp_t::ncclMax,
        }
    }
}

/// A partial result NCCL can reduce, and the host can combine the same way.
pub trait Partial: Plain {
    /// NCCL's name for the type.
    const NCCL: nccl_sys::ncclDataType_t;
    /// `a` and `b` combined by `op` (min/max skip a NaN, as the kernels do).
    fn combine(a: Self, b: Self, op: Op) -> Self;
    /// What a device with no elements contributes: 0 for a sum; for min and max of floats a
    /// NaN — "no number", as the kernels' own min/max say it, so that an input with no number
    /// gives NaN on any number of devices as on one — and of integers the largest or the
    /// smallest value. A NaN is skipped by the host's combine (`f32::min`) and by NCCL's
    /// float min/max (`fminf`/`fmaxf`; a test on the GPUs checks it).
    fn identity(op: Op) -> Self;
}

macro_rules! partial {
    ($t:ty, $nccl:ident, $min:expr, $max:expr, $top:expr, $bottom:expr) => {
        impl Partial for $t {
            const NCCL: nccl_sys::ncclDataType_t = nccl_sys::ncclDataType_t::$nccl;
            fn combine(a: $t, b: $t, op: Op) -> $t {
                match op {
                    Op::Sum => a + b,
                    Op::Min => $min(a, b),
                    Op::Max => $max(a, b),
                }
            }
            fn identity(op: Op) -> $t {
                match op {
                    Op::Sum => 0 as $t,
                    Op::Min => $top,
                    Op::Max => $bottom,
                }
            }
        }
    };
}
partial!(f64, ncclFloat64, f64::min, f64::max, f64::NAN, f64::NAN);
partial!(f32, ncclFloat32, f32::min, f32::max, f32::NAN, f32::NAN);
partial!(u64, ncclUint64, Ord::min, Ord::max, u64::MAX, 0);

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
    /// Set when a failed collective aborted the communicators: they are unusable and are
    /// not destroyed again.
    aborted: std::cell::Cell<bool>,
}

impl NcclComms {
    /// Communicators for the GPUs of `set`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] on simulators, or when no NCCL library can be loaded (naming
    /// the file names looked for); a driver or NCCL error.
    pub fn new(set: &DeviceSet) -> Result<NcclComms> {
        if !nccl_installed() {
            return Err(Error::Unsupported(format!(
                "NCCL is not installed (no {} on the library path; a libnccl.so.2 alone is not \
                 looked for: link libnccl.so to it)",
                cudarc::get_lib_name_candidates("nccl")
                    .iter()
                    .take(2)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" or ")
            )));
        }
        let mut ordinals = Vec::new();
        for t in set.targets() {
            match t {
                Target::Gpu(g) => ordinals.push(g.info().ordinal as i32),
                Target::Sim => {
                    return Err(Error::Unsupported(
                        "NCCL combines GPUs, not simulated devices".into(),
                    ));
                }
            }
        }
        let version = nccl::get_nccl_version().map_err(nccl_err("ncclGetVersion"))?;
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
            aborted: std::cell::Cell::new(false),
        })
    }

    /// NCCL's version, as `major·10000 + minor·100 + patch`.
    pub fn version(&self) -> i32 {
        self.version
    }
}

impl Drop for NcclComms {
    fn drop(&mut self) {
        if self.aborted.get() {
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
    move |e| Error::Unsupported(format!("{call} failed: {:?}", e.0))
}

/// How a set combines its partials.
#[derive(Debug)]
pub enum Combiner {
    /// An NCCL all-reduce on the devices' streams.
    Nccl(NcclComms),
    /// Peer copies of the partials into device 0's memory, combined by the host in device
    /// order; `why` says why NCCL was not used.
    PeerCopies {
        /// Why not NCCL.
        why: String,
    },
}

impl Combiner {
    /// NCCL if it can be had, else peer copies (with the reason).
    pub fn open(set: &DeviceSet) -> Combiner {
        match NcclComms::new(set) {
            Ok(c) => Combiner::Nccl(c),
            Err(e) => Combiner::PeerCopies { why: e.to_string() },
        }
    }

    /// Peer copies, on request.
    pub fn peer_copies() -> Combiner {
        Combiner::PeerCopies {
            why: "peer copies asked for".into(),
        }
    }

    /// One line for reports: the path, and why where it is the fallback.
    pub fn describe(&self) -> String {
        match self {
            Combiner::Nccl(c) => format!("NCCL {} all-reduce", c.version()),
            Combiner::PeerCopies { why } => format!("peer copies to device 0 ({why})"),
        }
    }

    /// Combines `parts` (one buffer of `len` values per device, in device order, each on its
    /// device) element by element with `op`, and returns the result. With NCCL, `results`
    /// (one buffer of `len` per device, on that device) receive the result on every device
    /// — an all-reduce out of place, so the parts stay as they were and a combine can be
    /// repeated; peer copies leave `results` alone.
    ///
    /// Waits for the work queued on every device's stream before it.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a part or result per device missing or of another length,
    /// or a set other than the one NCCL was set up for; an NCCL or driver error (after which,
    /// for NCCL, the communicators are aborted and this combiner fails from then on).
    pub fn combine<T: Partial>(
        &self,
        set: &DeviceSet,
        parts: &[&Buffer<T>],
        results: &[&Buffer<T>],
        op: Op,
    ) -> Result<Vec<T>> {
        let len = parts.first().map_or(0, |p| p.len());
        if parts.len() != set.len()
            || results.len() != set.len()
            || parts.iter().chain(results).any(|p| p.len() != len)
        {
            return Err(Error::InvalidInput(format!(
                "{} partial and {} result buffers for {} devices (each needs the same length)",
                parts.len(),
                results.len(),
                set.len()
            )));
        }
        if len == 0 {
            return Ok(Vec::new());
        }
        match self {
            Combiner::Nccl(c) => all_reduce(c, set, parts, results, op),
            Combiner::PeerCopies { .. } => gather(set, parts, op),
        }
    }
}

fn all_reduce<T: Partial>(
    comms: &NcclComms,
    set: &DeviceSet,
    parts: &[&Buffer<T>],
    results: &[&Buffer<T>],
    op: Op,
) -> Result<Vec<T>> {
    if comms.aborted.get() {
        return Err(Error::Unsupported(
            "the NCCL communicators were aborted after an error".into(),
        ));
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
                T::NCCL,
                op.nccl(),
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
    if let Err(e) = queued.and(ended) {
        // Some ranks may have queued a collective the others never will: abort, so that no
        // stream waits for ever, and refuse later combines.
        comms.aborted.set(true);
        for &c in &comms.comms {
            // SAFETY: each communicator is aborted once and never used again (`aborted`).
            let _ = unsafe { nccl::comm_abort(c) };
        }
        super::together::settle(set);
        return Err(e);
    }
    let out = set.targets()[0].download(results[0]);
    // Every rank's collective is over before the buffers can be freed.
    super::together::settle(set);
    out
}

/// Peer copies of every part into one buffer on device 0, combined by the host in device
/// order. On the simulator the parts are host memory already.
fn gather<T: Partial>(set: &DeviceSet, parts: &[&Buffer<T>], op: Op) -> Result<Vec<T>> {
    let rows = gather_rows(set, parts);
    if rows.is_err() {
        // Copies already queued into device 0's buffer must end before it is freed.
        super::together::settle(set);
    }
    let rows = rows?;
    let mut out = rows[0].clone();
    for row in &rows[1..] {
        for (o, &v) in out.iter_mut().zip(row) {
            *o = T::combine(*o, v, op);
        }
    }
    Ok(out)
}

/// Every part, in device order, read back through device 0.
fn gather_rows<T: Partial>(set: &DeviceSet, parts: &[&Buffer<T>]) -> Result<Vec<Vec<T>>> {
    let t0 = &set.targets()[0];
    let len = parts[0].len();
    let rows: Vec<Vec<T>> = match t0 {
        Target::Sim => parts
            .iter()
            .zip(set.targets())
            .map(|(p, t)| t.download(p))
            .collect::<Result<_>>()?,
        Target::Gpu(g0) => {
            let all = t0.zeros::<T>(len * parts.len())?;
            let bytes = len * size_of::<T>();
            for (d, (t, p)) in set.targets().iter().zip(parts).enumerate() {
                let Target::Gpu(g) = t else { continue };
                // The part's producer ran on its own device's stream.
                t.synchronize()?;
                g0.make_current()?;
                let dst = all.ptr() as u64 + (d * bytes) as u64;
                // SAFETY: `p` holds `bytes` bytes on device `d`, `all` holds `parts.len()`
                // rows of `bytes` on device 0; both contexts are alive; device 0's stream is
                // synchronized (by `download`) before `all` is read or freed.
                let code = unsafe {
                    cu::cuMemcpyPeerAsync(
                        dst,
                        g0.raw_context(),
                        p.ptr() as u64,
                        g.raw_context(),
                        bytes,
                        g0.stream().as_raw(),
                    )
                };
                check(code, || format!("cuMemcpyPeerAsync(device {d} → device 0)"))?;
            }
            t0.download(&all)?
                .chunks_exact(len)
                .map(<[T]>::to_vec)
                .collect()
        }
    };
    Ok(rows)
}
