//! The collective: how the partial results of the devices (and of a launched job's ranks)
//! combine into one.
//!
//! - [`Op`] and [`Partial`]: the one set of operations, and the values that NCCL and the host
//!   combine the same way; [`sum_bound`], the one error bound of a float sum over several
//!   devices or ranks.
//! - [`Combiner`]: NCCL's all-reduce on the GPUs ([`NcclComms`]), peer copies into device 0,
//!   or the host combine over a [`Transport`] — the trait that the processes' links implement,
//!   so this room depends on the trait and never on the processes.
//! - The plans ([`ReducePlan`], [`HistogramPlan`], [`WideHistogramPlan`], [`CountPlan`]) over
//!   data kept on the devices, and the one-shot calls ([`sum`], [`sum_min_max`], [`min`],
//!   [`max`], [`histogram`], [`histogram_ascii`], [`count_above`]) over host data.

mod calls;
mod combiner;
mod nccl;
mod op;
mod plans;
mod transport;

pub use calls::{count_above, histogram, histogram_ascii, max, min, sum, sum_min_max};
pub use combiner::Combiner;
pub use nccl::{NcclComms, nccl_installed, nccl_version, version_text};
pub use op::{Op, Partial, sum_bound};
pub use plans::{CountPlan, HistogramPlan, ReducePlan, WideHistogramPlan};
pub use transport::{Blame, DEFAULT_TIMEOUT, ID_BYTES, Transport, host_all_reduce};
