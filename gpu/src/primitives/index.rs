//! Thread, block and grid indices — CUDA's `threadIdx`, `blockIdx`, `blockDim`, `gridDim` — and
//! grid-stride iteration.
//!
//! On the device each function reads one PTX special register (`%tid.x`, `%ctaid.x`,
//! `%ntid.x`, `%nctaid.x`, …). In the simulator it reads the simulated thread's ids.

macro_rules! special_registers {
    ($($(#[$doc:meta])* $name:ident => $sreg:ident;)*) => {
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name() -> u32 {
                crate::seam::sreg::$sreg()
            }
        )*
    };
}

special_registers! {
    /// `threadIdx.x`: this thread's index in its block, x.
    thread_idx_x => tid_x;
    /// `threadIdx.y`.
    thread_idx_y => tid_y;
    /// `threadIdx.z`.
    thread_idx_z => tid_z;
    /// `blockIdx.x`: this block's index in the grid, x.
    block_idx_x => ctaid_x;
    /// `blockIdx.y`.
    block_idx_y => ctaid_y;
    /// `blockIdx.z`.
    block_idx_z => ctaid_z;
    /// `blockDim.x`: threads per block, x.
    block_dim_x => ntid_x;
    /// `blockDim.y`.
    block_dim_y => ntid_y;
    /// `blockDim.z`.
    block_dim_z => ntid_z;
    /// `gridDim.x`: blocks per grid, x.
    grid_dim_x => nctaid_x;
    /// `gridDim.y`.
    grid_dim_y => nctaid_y;
    /// `gridDim.z`.
    grid_dim_z => nctaid_z;
}

/// `blockIdx.x * blockDim.x + threadIdx.x`: this thread's index in a 1-D grid, as `usize` so that
/// grids of more than 2³² threads index correctly.
#[inline(always)]
pub fn global_id_x() -> usize {
    block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
}

/// `blockDim.x * gridDim.x`: the number of threads in a 1-D grid (Numba's `cuda.gridsize(1)`).
#[inline(always)]
pub fn threads_per_grid_x() -> usize {
    block_dim_x() as usize * grid_dim_x() as usize
}

/// Threads in this block, all three dimensions multiplied.
#[inline(always)]
pub fn threads_per_block() -> u32 {
    block_dim_x() * block_dim_y() * block_dim_z()
}

/// This thread's linear index in its block (`x` fastest), as CUDA numbers threads into warps.
#[inline(always)]
pub fn thread_rank_in_block() -> u32 {
    (thread_idx_z() * block_dim_y() + thread_idx_y()) * block_dim_x() + thread_idx_x()
}

/// Blocks in the grid, all three dimensions multiplied.
#[inline(always)]
pub fn blocks_per_grid() -> u32 {
    grid_dim_x() * grid_dim_y() * grid_dim_z()
}

/// This block's linear index in the grid (`x` fastest).
#[inline(always)]
pub fn block_rank_in_grid() -> u32 {
    (block_idx_z() * grid_dim_y() + block_idx_y()) * grid_dim_x() + block_idx_x()
}

/// The indices `global_id_x(), global_id_x() + threads_per_grid_x(), …` below `n`: a
/// grid-stride loop, so that any grid covers any `n` and consecutive threads touch consecutive
/// elements (coalesced).
#[inline(always)]
pub fn grid_stride(n: usize) -> core::iter::StepBy<core::ops::Range<usize>> {
    (global_id_x().min(n)..n).step_by(threads_per_grid_x())
}

/// The simulator's number of SMs: block `b` runs on SM `b mod SIM_SMS`, so that kernels that
/// group blocks by SM see groups there too.
pub const SIM_SMS: u32 = 4;

/// `%smid`: the SM this thread's block runs on, in `0..sm_id_bound()`.
///
/// Not `blockIdx`: the hardware decides where each block goes, and two blocks of one launch may
/// share an SM — which is how a litmus test places its threads on one SM or on different ones.
/// A block stays on its SM while it runs. PTX: `mov.u32 %r, %smid;`. In the simulator, block
/// `b` is on SM `b mod` [`SIM_SMS`].
#[inline(always)]
pub fn sm_id() -> u32 {
    crate::seam::sreg::smid()
}
