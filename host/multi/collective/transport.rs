//! What the collective needs of the connections between a launched job's ranks: a
//! [`Transport`]. The processes' links ([`Links`](crate::multi::processes::Links)) implement it;
//! the collective depends on the trait alone, so it never imports the processes that carry it.

use super::op::{Op, Partial};
use crate::runtime::error::{Error, Result};
use std::time::Duration;

/// The default bound of every wait of a collective: an NCCL all-reduce, and in a launched job
/// the rendezvous, NCCL's set-up and each exchange between the ranks. Generous, because a
/// collective starts only once the work queued before it on every device (every rank) is done.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Bytes of the id rank 0 hands out (NCCL's `ncclUniqueId` is 128).
pub const ID_BYTES: usize = 128;

/// The rank to blame after a failed collective, as a census of the ranks found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blame {
    /// The rank that left or failed, where one can be named.
    pub rank: Option<u32>,
    /// Who was lost and who was elsewhere, for the message.
    pub why: String,
}

/// The connections of a launched job's ranks, as the collective uses them: rank 0's id handed
/// to every rank, the host-side all-reduce, and a census after a failure. Every call is
/// bounded by [`Transport::timeout`]: a rank that dies or stops answering is an error on the
/// others, not a hang.
pub trait Transport: std::fmt::Debug + Send + Sync {
    /// This rank and the number of ranks in the job.
    fn rank_and_world(&self) -> (u32, u32);

    /// The bound on each exchange, and on a collective of the ranks.
    fn timeout(&self) -> Duration;

    /// Rank 0's id of [`ID_BYTES`] (rank 0 passes `Some`, the others `None`), on every rank.
    ///
    /// # Errors
    /// A rank gone or silent past the timeout; an id of another length.
    fn broadcast_id(&self, id: Option<&[u8]>) -> Result<Vec<u8>>;

    /// Every rank's `mine` (all of one length), folded by rank 0 in rank order —
    /// `fold(acc, next)` from rank 0's bytes on — and the result handed back to every rank.
    ///
    /// # Errors
    /// A rank gone or silent past the timeout; bytes of another length from some rank.
    fn all_reduce_bytes(&self, mine: &[u8], fold: &dyn Fn(&mut [u8], &[u8])) -> Result<Vec<u8>>;

    /// After a failed collective: the rank to blame, asking every rank for at most `bound`;
    /// `None` where every rank was there.
    fn blame(&self, bound: Duration) -> Option<Blame>;
}

/// Every rank's `mine` (all of one length) combined element by element with `op`, in rank
/// order, on every rank, over `transport`: the host-side stand-in for NCCL's all-reduce (min and
/// max skip a NaN, as the kernels do).
///
/// # Errors
/// As [`Transport::all_reduce_bytes`].
pub fn host_all_reduce<T: Partial>(
    transport: &(impl Transport + ?Sized),
    mine: &[T],
    op: Op,
) -> Result<Vec<T>> {
    let size = size_of::<T>();
    let bytes: Vec<u8> = mine
        .iter()
        .flat_map(|v| {
            // SAFETY: `T: Plain` has no padding: all of its bytes are initialized.
            unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size) }
                .iter()
                .copied()
        })
        .collect();
    let value = |b: &[u8]| {
        // SAFETY: `b` holds `size` bytes, and every bit pattern is a valid `T` (`Plain`).
        unsafe { b.as_ptr().cast::<T>().read_unaligned() }
    };
    let fold = |acc: &mut [u8], next: &[u8]| {
        for (a, n) in acc.chunks_exact_mut(size).zip(next.chunks_exact(size)) {
            let v = T::combine(value(a), value(n), op);
            // SAFETY: as above: `Plain` values are their bytes.
            let b = unsafe { std::slice::from_raw_parts((&v as *const T).cast::<u8>(), size) };
            a.copy_from_slice(b);
        }
    };
    let out = transport.all_reduce_bytes(&bytes, &fold)?;
    if out.len() != bytes.len() {
        return Err(Error::InvalidInput(format!(
            "a combine of {} bytes answered with {}",
            bytes.len(),
            out.len()
        )));
    }
    Ok(out.chunks_exact(size).map(value).collect())
}
