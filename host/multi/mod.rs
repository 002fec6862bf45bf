//! Every GPU of a node: the library's reductions, histograms and counts over a set of devices,
//! the input split into one contiguous slice per device, and the system-scope objects (a
//! counter, a lock, a barrier) that span the GPUs.
//!
//! Two ways to use a set:
//!
//! - **One-shot calls** ([`sum`], [`sum_min_max`], [`min`], [`max`], [`histogram`],
//!   [`count_above`]): each device uploads its slice of host data (through pinned staging,
//!   [`devices::resident::STAGE_BYTES`]) and runs the single-GPU call on it, all devices at once (one
//!   host thread each); the partials — a few bytes per device — are read back and combined on
//!   the host in device order, which is cheaper than setting up an NCCL communicator for one
//!   call.
//! - **Data kept on the devices** ([`Scattered`], from [`DeviceSet::scatter`] or
//!   [`Scattered::copy_from`] a pinned buffer) and prepared plans ([`ReducePlan`],
//!   [`HistogramPlan`], [`CountPlan`]) run any number of times: every device's kernel is queued
//!   at once and the partials are combined by a [`Combiner`] — an NCCL all-reduce on the GPUs
//!   (NCCL loaded at run time) or, where NCCL is not installed, peer copies of the partials
//!   into device 0, read back once and added on the host.
//!
//! Integer results (counts, histograms) and min/max are exactly the single-device results; a
//! float sum adds the devices' `f64` partials in `f64`, which adds at most
//! `(N − 1)·2⁻⁵³·Σ|partialᵢ|` to the single-device bound.
//!
//! [`devices::peer`] holds the system-scope objects, `gridsync multi lock|barrier` runs them.
//!
//! **One process per GPU** (clusters, many nodes): [`processes`] finds this process's rank from
//! the launcher's environment and meets the other ranks over TCP; [`processes::World`] joins
//! the job — its GPU, and a [`Combiner`] that is an NCCL communicator of the ranks
//! (`ncclCommInitRank`) or a host combine over the rendezvous's connections — and the same plans
//! run on each rank's slice; [`processes::launch`] starts ranks on one node (`gridsync launch`).
//!
//! # Three rooms
//!
//! | room | what it holds | imports |
//! |---|---|---|
//! | [`devices`] | the set of GPUs ([`DeviceSet`], [`DeviceList`], [`split`]), data kept on them ([`Scattered`]), peer access, the system-scope objects ([`devices::peer`]) | the runtime |
//! | [`collective`] | how partials combine ([`Op`], [`Partial`](collective::Partial), [`sum_bound`]), the [`Combiner`] (NCCL, peer copies, or the host over a [`Transport`](collective::Transport)), the plans and the one-shot calls | [`devices`] |
//! | [`processes`] | one process per GPU: discovery from the launchers' variables, the wire format, the rendezvous, [`Links`](processes::Links) (which implement the collective's [`Transport`](collective::Transport)), [`World`](processes::World), the launcher | [`collective`], [`devices`] |
//!
//! Nothing in `devices` or `collective` imports `processes`: the collective combines over any
//! [`Transport`](collective::Transport), and the processes bring theirs. The demos that print
//! (`gridsync multi`) are the command line's, not this module's.
//!
//! On the simulator a set of `N` devices is `N` simulators, so that the split, the combine and
//! the cross-device objects are tested without GPUs.
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! use gridsync::multi::{Combiner, DeviceList, DeviceSet, Op, ReducePlan};
//! let set = DeviceSet::open(&DeviceList::All, false)?;
//! let x = vec![1.0f32; 1 << 20];
//! // One call:
//! assert_eq!(gridsync::multi::sum(&set, &x)?, (1 << 20) as f64);
//! // Kept on the devices, summed again and again, combined by NCCL where it is installed:
//! let on_devices = set.scatter(&x)?;
//! let combiner = Combiner::open(&set)?;
//! use gridsync::gpu::lessons::reduce::SumF32InF64;
//! let plan = ReducePlan::<SumF32InF64>::new(&set, &on_devices, Op::Sum)?;
//! assert_eq!(plan.run(&combiner)?, (1 << 20) as f64);
//! # Ok(()) }
//! ```

pub mod collective;
pub mod devices;
pub mod processes;

pub use collective::{
    Combiner, CountPlan, HistogramPlan, NcclComms, Op, ReducePlan, WideHistogramPlan, count_above,
    histogram, histogram_ascii, max, min, sum, sum_bound, sum_min_max,
};
pub use devices::{DeviceList, DeviceSet, SIM_ALL_DEVICES, Scattered, split};
