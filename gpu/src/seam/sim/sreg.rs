//! Special registers: the simulated thread's ids ([`crate::sim::ids`]) and the host's clock.

use crate::sim::Ids;

macro_rules! sim_registers {
    ($($name:ident => |$i:ident| $value:expr;)*) => {$(
        #[inline(always)]
        pub(crate) fn $name() -> u32 {
            let $i: Ids = crate::sim::ids();
            $value
        }
    )*};
}

sim_registers! {
    tid_x => |i| i.thread[0];
    tid_y => |i| i.thread[1];
    tid_z => |i| i.thread[2];
    ctaid_x => |i| i.block[0];
    ctaid_y => |i| i.block[1];
    ctaid_z => |i| i.block[2];
    ntid_x => |i| i.block_dim[0];
    ntid_y => |i| i.block_dim[1];
    ntid_z => |i| i.block_dim[2];
    nctaid_x => |i| i.grid_dim[0];
    nctaid_y => |i| i.grid_dim[1];
    nctaid_z => |i| i.grid_dim[2];
    cluster_ctarank => |i| i.cluster_rank();
    cluster_nctarank => |i| i.cluster_dim.iter().product();
    cluster_ctaid_x => |i| i.cluster_ctaid()[0];
    cluster_ctaid_y => |i| i.cluster_ctaid()[1];
    cluster_ctaid_z => |i| i.cluster_ctaid()[2];
    cluster_nctaid_x => |i| i.cluster_dim[0];
    cluster_nctaid_y => |i| i.cluster_dim[1];
    cluster_nctaid_z => |i| i.cluster_dim[2];
    clusterid_x => |i| i.cluster_id()[0];
    clusterid_y => |i| i.cluster_id()[1];
    clusterid_z => |i| i.cluster_id()[2];
    nclusterid_x => |i| i.cluster_count()[0];
    nclusterid_y => |i| i.cluster_count()[1];
    nclusterid_z => |i| i.cluster_count()[2];
}

/// The simulator's SMs: a block's is its rank in the grid modulo [`SIM_SMS`](crate::index::SIM_SMS).
#[inline(always)]
pub(crate) fn smid() -> u32 {
    let i = crate::sim::ids();
    let block_rank = (i.block[2] * i.grid_dim[1] + i.block[1]) * i.grid_dim[0] + i.block[0];
    block_rank % crate::index::SIM_SMS
}

/// The simulated thread's lane in its warp.
#[inline(always)]
pub(crate) fn laneid() -> u32 {
    crate::sim::lane()
}

/// The bytes of the launch's dynamic shared memory.
#[inline(always)]
pub(crate) fn dynamic_smem_size() -> u32 {
    crate::sim::shared_len()
}

/// The host's clock, in nanoseconds.
#[inline(always)]
pub(crate) fn globaltimer() -> u64 {
    crate::sim::host_clock_ns()
}

/// The host's clock, in nanoseconds (the simulator has no cycle counter).
#[inline(always)]
pub(crate) fn clock64() -> u64 {
    crate::sim::host_clock_ns()
}
