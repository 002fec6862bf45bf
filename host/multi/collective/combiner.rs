//! Combining the devices' partial results where they are: an NCCL all-reduce across the GPUs,
//! or — where NCCL is not installed — peer copies of the partials into device 0's memory, or,
//! for one rank of a launched job without NCCL, the host combine over the job's [`Transport`].
//!
//! Every path gives the same numbers: integer sums and min/max exactly, and `f64` sums of `N`
//! partials to within `(N − 1)·2⁻⁵³·Σ|partialᵢ|` (NCCL's ring may add them in another order than
//! device order).

use super::nccl::{NcclComms, all_reduce, nccl_unavailable, nccl_version};
use super::op::{Op, Partial};
use super::transport::{Transport, host_all_reduce};
use crate::multi::devices::{DeviceSet, settle};
use crate::runtime::buffer::Buffer;
use crate::runtime::enqueue;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use std::sync::Arc;

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
    /// This process is one rank of a launched job, without NCCL on every rank (or asked to
    /// do without): the partials are read back and combined by the host — this process's
    /// devices in device order, then the ranks' over the [`Transport`] by rank 0 in rank order — and
    /// the result is handed to every rank. `why` says why NCCL was not used.
    Ranks {
        /// The job's connections.
        links: Arc<dyn Transport>,
        /// Why not NCCL.
        why: String,
    },
}

impl Combiner {
    /// NCCL where it is installed, else peer copies (with the reason).
    ///
    /// # Errors
    /// NCCL installed but failing ([`Error::Nccl`], e.g. `ncclCommInitAll`): an error, not a
    /// fallback, so that a broken NCCL set-up is seen; a driver error.
    pub fn open(set: &DeviceSet) -> Result<Combiner> {
        Combiner::from_attempt(NcclComms::new(set))
    }

    /// The combiner an attempt at NCCL gives: NCCL's communicators; peer copies where NCCL
    /// cannot be had at all ([`Error::Unsupported`]: not installed, simulated devices); every
    /// other error as it is.
    ///
    /// # Errors
    /// The attempt's error, unless it is [`Error::Unsupported`].
    pub fn from_attempt(attempt: Result<NcclComms>) -> Result<Combiner> {
        match attempt {
            Ok(c) => Ok(Combiner::Nccl(c)),
            Err(Error::Unsupported(why)) => Ok(Combiner::PeerCopies { why }),
            Err(e) => Err(e),
        }
    }

    /// The combiner of one rank of a launched job, whose devices are `set` (one GPU, or one
    /// simulator): every rank says whether it can use NCCL (installed, a GPU, not `host_only`),
    /// and the ranks agree — NCCL's all-reduce ([`NcclComms::for_rank`]) only where every rank
    /// can, else the host combine over `links` ([`Combiner::Ranks`]). Every rank of the job must
    /// call this at the same point.
    ///
    /// # Errors
    /// A rank gone or silent past the links' timeout; NCCL installed everywhere but failing
    /// ([`Error::Nccl`]).
    pub fn for_ranks(
        set: &DeviceSet,
        links: Arc<dyn Transport>,
        host_only: bool,
    ) -> Result<Combiner> {
        let mine = if host_only {
            Some("the host combine asked for".to_string())
        } else {
            nccl_unavailable(set).or_else(|| nccl_version().err().map(|e| e.to_string()))
        };
        let able = host_all_reduce(&*links, &[u64::from(mine.is_none())], Op::Min)?;
        if able.first() == Some(&1) {
            return Ok(Combiner::Nccl(NcclComms::for_rank(set, &links)?));
        }
        let why = match mine {
            Some(why) => format!("this rank: {why}"),
            None => "another rank has no NCCL".into(),
        };
        Ok(Combiner::Ranks { links, why })
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
            Combiner::Nccl(c) => c.describe(),
            Combiner::PeerCopies { why } => format!("peer copies to device 0 ({why})"),
            Combiner::Ranks { links, why } => format!(
                "host combine over {} ranks, in rank order ({why})",
                links.rank_and_world().1
            ),
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
            Combiner::Ranks { links, .. } => {
                host_all_reduce(&**links, &gather(set, parts, op)?, op)
            }
        }
    }
}

/// Peer copies of every part into one buffer on device 0, combined by the host in device
/// order. On the simulator the parts are host memory already.
fn gather<T: Partial>(set: &DeviceSet, parts: &[&Buffer<T>], op: Op) -> Result<Vec<T>> {
    let rows = gather_rows(set, parts);
    if rows.is_err() {
        // Copies already queued into device 0's buffer must end before it is freed.
        settle(set);
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
            for (d, (t, p)) in set.targets().iter().zip(parts).enumerate() {
                let Target::Gpu(g) = t else { continue };
                // The part's producer ran on its own device's stream.
                t.synchronize()?;
                // Row `d` of `all`, on device 0's stream: `download` waits for it.
                enqueue::peer_to_peer((g0, g0.stream()), &all, d * len, g, p)?;
            }
            t0.download(&all)?
                .chunks_exact(len)
                .map(<[T]>::to_vec)
                .collect()
        }
    };
    Ok(rows)
}
