//! One rank of a launched job: its GPU, its connections to the other ranks and its combiner —
//! then the same plans as a [`DeviceSet`] of one process
//! ([`ReducePlan`](crate::multi::ReducePlan), [`HistogramPlan`](crate::multi::HistogramPlan),
//! [`CountPlan`](crate::multi::CountPlan)) over this rank's slice, combined across the ranks.
//!
//! Each rank holds (or reads, or makes) only its slice of the input: elements
//! [`split`]`(len, world)[rank]`, so the slices of the ranks in rank order are the input, as the
//! slices of a one-process set's devices are.
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! use gridsync::multi::processes::{JoinOptions, RankOptions, World, discover};
//! use gridsync::multi::{Op, ReducePlan, Scattered};
//! use gridsync::gpu::lessons::reduce::SumF32InF64;
//! // Under torchrun, srun, mpirun or `gridsync launch`: who am I, which GPU, the communicator.
//! let rank = discover(&RankOptions::default())?;
//! let world = World::join(rank, &JoinOptions::default())?;
//! // My slice of a 10⁹-element input, on my GPU.
//! let mine = world.slice(1_000_000_000);
//! let x: Vec<f32> = mine.clone().map(|i| (i % 7) as f32).collect();
//! let on_gpu = Scattered::zeros(world.set(), x.len())?;
//! on_gpu.copy_from(world.set(), &x)?;
//! // The one-process plan, combined across the ranks: every rank gets the whole sum.
//! let plan = ReducePlan::<SumF32InF64>::new(world.set(), &on_gpu, Op::Sum)?;
//! let total = plan.run(world.combiner())?;
//! # let _ = total; Ok(()) }
//! ```

use super::{DEFAULT_TIMEOUT, Links, Rank};
use crate::multi::collective::{Combiner, Op};
use crate::multi::devices::{DeviceList, DeviceSet, split};
use crate::runtime::error::{Error, Result};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// How a rank joins its job ([`World::join`]).
#[derive(Clone, Debug)]
pub struct JoinOptions {
    /// This rank's GPU; `None`: the local rank's.
    pub device: Option<u32>,
    /// A simulator instead of a GPU.
    pub simulate: bool,
    /// The bound on the rendezvous, NCCL's set-up, and every later exchange and collective.
    pub timeout: Duration,
    /// Combine on the hosts over the links even where every rank has NCCL.
    pub host_combine: bool,
}

impl Default for JoinOptions {
    /// The local rank's GPU, a 60 s bound ([`DEFAULT_TIMEOUT`]), NCCL where every
    /// rank has it.
    fn default() -> JoinOptions {
        JoinOptions {
            device: None,
            simulate: false,
            timeout: DEFAULT_TIMEOUT,
            host_combine: false,
        }
    }
}

/// One rank of a launched job, joined: its device, its links to the other ranks, its combiner.
#[derive(Debug)]
pub struct World {
    rank: Rank,
    // Dropped in this order: the communicator before the device whose context it uses.
    combiner: Combiner,
    links: Arc<Links>,
    set: DeviceSet,
}

impl World {
    /// Joins `rank`'s job: the rendezvous (bounded by `opts.timeout`, which then bounds every
    /// exchange and NCCL's set-up), then this rank's device — GPU `opts.device`, else the local
    /// rank's; a simulator with `opts.simulate` — then the combiner every rank agrees on (NCCL
    /// where every rank has it and `opts.host_combine` is off, else the host combine over the
    /// links).
    ///
    /// Every rank checks that every rank opened its device: a rank whose GPU is missing makes
    /// every rank fail at once, each saying which rank.
    ///
    /// # Errors
    /// The rendezvous's errors; a device that cannot be opened (on the rank, naming it; on the
    /// others, naming that rank); an NCCL error.
    pub fn join(rank: Rank, opts: &JoinOptions) -> Result<World> {
        let JoinOptions {
            device,
            simulate,
            timeout,
            host_combine,
        } = *opts;
        let links = Arc::new(Links::open(&rank, timeout)?);
        let ordinal = device.unwrap_or(rank.local_rank);
        let opened = DeviceSet::open(&DeviceList::Ordinals(vec![ordinal]), simulate).map_err(|e| {
            let which = match device {
                Some(_) => format!("--device {ordinal}"),
                None => format!("GPU {ordinal} (its local rank)"),
            };
            Error::InvalidInput(format!(
                "rank {} cannot open {which}: {e} — give each rank a GPU of its node (--device, \
                 or as many ranks per node as GPUs)",
                rank.rank
            ))
        });
        let failed = if opened.is_ok() {
            u64::MAX
        } else {
            u64::from(rank.rank)
        };
        let first_failed = links.all_reduce(&[failed], Op::Min)?;
        let set = match (opened, first_failed.first()) {
            (Err(e), _) => return Err(e),
            (Ok(_), Some(&r)) if r != u64::MAX => {
                return Err(Error::InvalidInput(format!(
                    "rank {r} could not open its device (its own output says why); rank {} stops \
                     with it",
                    rank.rank
                )));
            }
            (Ok(set), _) => set,
        };
        let combiner = Combiner::for_ranks(&set, links.clone(), host_combine)?;
        Ok(World {
            rank,
            set,
            links,
            combiner,
        })
    }

    /// This rank.
    pub fn rank(&self) -> &Rank {
        &self.rank
    }

    /// This rank's device, as a set of one: what the plans take.
    pub fn set(&self) -> &DeviceSet {
        &self.set
    }

    /// The connections to the other ranks (broadcasts, host-side combines, barriers).
    pub fn links(&self) -> &Links {
        &self.links
    }

    /// How partials combine across the ranks: what the plans' `run` takes.
    pub fn combiner(&self) -> &Combiner {
        &self.combiner
    }

    /// This rank's slice of `0..len`: `split(len, world)[rank]`.
    pub fn slice(&self, len: usize) -> Range<usize> {
        slice_of(len, &self.rank)
    }

    /// Every rank's `value`, in rank order, on every rank (a combine of one-hot rows: for
    /// reports, not for data).
    ///
    /// # Errors
    /// As [`Links::all_reduce`].
    pub fn gather(&self, value: f64) -> Result<Vec<f64>> {
        let mut row = vec![0.0; self.rank.world as usize];
        row[self.rank.rank as usize] = value;
        self.links.all_reduce(&row, Op::Sum)
    }
}

fn slice_of(len: usize, rank: &Rank) -> Range<usize> {
    split(len, rank.world as usize)[rank.rank as usize].clone()
}
