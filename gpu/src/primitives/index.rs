//! Thread, block and grid indices — CUDA's `threadIdx`, `blockIdx`, `blockDim`, `gridDim` — and
//! grid-stride iteration.
//!
//! On the device each function reads one PTX special register (`%tid.x`, `%ctaid.x`,
//! `%ntid.x`, `%nctaid.x`, …). In the simulator it reads the simulated thread's ids.

macro_rules! special_registers {
    ($($(#[$doc:meta])* $name:ident => $nvptx:ident, $field:ident . $axis:tt;)*) => {
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name() -> u32 {
                #[cfg(target_arch = "nvptx64")]
                {
                    // SAFETY: reading a special register has no preconditions.
                    unsafe { core::arch::nvptx::$nvptx() as u32 }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    crate::sim::ids().$field[$axis]
                }
            }
        )*
    };
}

special_registers! {
    /// `threadIdx.x`: this thread's index in its block, x.
    thread_idx_x => _thread_idx_x, thread.0;
    /// `threadIdx.y`.
    thread_idx_y => _thread_idx_y, thread.1;
    /// `threadIdx.z`.
    thread_idx_z => _thread_idx_z, thread.2;
    /// `blockIdx.x`: this block's index in the grid, x.
    block_idx_x => _block_idx_x, block.0;
    /// `blockIdx.y`.
    block_idx_y => _block_idx_y, block.1;
    /// `blockIdx.z`.
    block_idx_z => _block_idx_z, block.2;
    /// `blockDim.x`: threads per block, x.
    block_dim_x => _block_dim_x, block_dim.0;
    /// `blockDim.y`.
    block_dim_y => _block_dim_y, block_dim.1;
    /// `blockDim.z`.
    block_dim_z => _block_dim_z, block_dim.2;
    /// `gridDim.x`: blocks per grid, x.
    grid_dim_x => _grid_dim_x, grid_dim.0;
    /// `gridDim.y`.
    grid_dim_y => _grid_dim_y, grid_dim.1;
    /// `gridDim.z`.
    grid_dim_z => _grid_dim_z, grid_dim.2;
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
    #[cfg(target_arch = "nvptx64")]
    {
        let id: u32;
        // SAFETY: reading a special register has no preconditions.
        unsafe {
            core::arch::asm!("mov.u32 {id}, %smid;", id = out(reg32) id, options(nomem, nostack))
        };
        id
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        block_rank_in_grid() % SIM_SMS
    }
}
