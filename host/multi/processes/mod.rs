//! One process per GPU: who this process is in a launched job (its rank, the world size, its
//! GPU), found from the launcher's environment, the rendezvous that joins the ranks and hands
//! rank 0's NCCL unique id to every other rank over TCP, the [`Links`] between the ranks (the
//! collective's [`Transport`](crate::multi::collective::Transport)), the [`World`] a rank
//! joins, and the local launcher ([`launch`], `gridsync launch`).
//!
//! **Discovery** ([`discover`]), in this order: explicit values ([`RankOptions`]; with both the
//! rank and the world size given, the launchers' variables are not read); the torchrun
//! convention (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`); Slurm
//! (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`, with the rendezvous address from
//! `MASTER_ADDR`/`MASTER_PORT`); Open MPI (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`,
//! `OMPI_COMM_WORLD_LOCAL_RANK`, the same address). Missing or inconsistent values are errors
//! that name the variable.
//!
//! The rendezvous address: `--rendezvous`, else `GRIDSYNC_RENDEZVOUS`, else
//! `MASTER_ADDR:MASTER_PORT` — except under torchrun, whose agent keeps a store of its own at
//! `MASTER_PORT` (it sets `TORCHELASTIC_USE_AGENT_STORE=True`), where it is `MASTER_PORT + 1`.
//! Rank 0 listens there and nowhere else, unless `--rendezvous-bind` (`GRIDSYNC_RENDEZVOUS_BIND`)
//! names another address of its host, such as `0.0.0.0` for every interface.
//!
//! **The job's secret** ([`secret`]): `GRIDSYNC_TOKEN`, made anew for each job by `gridsync
//! launch`; under torchrun, Slurm or mpirun, set it to one value on every rank (without it the
//! ranks prove only the job's name: the weaker fallback, [`secret`] says what it allows).
//!
//! **Rendezvous** ([`rendezvous()`], [`Links::open`]): rank 0 challenges each connection, and
//! every rank proves the secret with an HMAC over fresh nonces; rank 0 answers every rank once
//! all have arrived, with a proof of its own that each rank checks before it trusts anything
//! rank 0 sends. Everything is bounded by one timeout
//! ([`DEFAULT_TIMEOUT`] unless given): a rank that never arrives is an error on
//! every rank; a stranger gets an empty refusal; a wrong world size or a rank twice is refused,
//! not mixed in; an address already in use is an error on rank 0.

mod census;
pub(crate) mod deadline;
mod discovery;
pub mod launch;
mod links;
mod rendezvous;
pub mod secret;
pub mod wire;
mod world;

pub use census::Census;
pub use discovery::{
    BIND_VAR, JOB_VAR, RENDEZVOUS_VAR, Rank, RankOptions, discover, discover_from, torchrun,
};
pub use links::Links;
pub use rendezvous::{HELLO_TIMEOUT, MAX_PENDING, Refusals, rendezvous};
pub use secret::{TOKEN_VAR, Token};
pub use world::{JoinOptions, World};

/// The bound of the rendezvous and of every later exchange unless told otherwise, and the
/// length of the id rank 0 hands out: the collective's.
pub use crate::multi::collective::{DEFAULT_TIMEOUT, ID_BYTES};

/// The most ranks a job may have.
pub const MAX_WORLD: u32 = 1 << 16;
/// The most bytes of a job name or a refusal's reason.
const MAX_TEXT: usize = 1024;
/// The most bytes one message between ranks may carry (a combine's partials: 65 536 bins of 8
/// bytes are 512 KiB).
pub const MAX_MESSAGE: usize = 16 << 20;
