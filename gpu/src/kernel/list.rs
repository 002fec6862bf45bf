//! The one list of kernels: every `kernel!` in this crate is named here once.
//!
//! The host looks kernels up in the PTX by these names, and the PTX tests check both ways that
//! this list and the `.entry` points of every PTX build are the same set — the kernels marked
//! `@ sm_90` in the builds from sm_90 only.

macro_rules! kernel_list {
    (@arch) => { 70 };
    (@arch sm_90) => { 90 };
    ($($variant:ident => $name:ident $(@ $arch:ident)?),* $(,)?) => {
        /// Every kernel in the device crate.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                $variant,
            )*
        }

        impl Kernel {
            /// All kernels, in declaration order.
            pub const ALL: &'static [Kernel] = &[$(Kernel::$variant),*];

            /// The kernel's entry-point name in the PTX.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Kernel::$variant => stringify!($name),)*
                }
            }

            /// The oldest architecture whose PTX has the kernel, as `major * 10 + minor`: 70
            /// for most, 90 for those on Hopper's primitives (clusters, `mbarrier`
            /// transaction counts, bulk copies), which only the sm_90 build holds.
            pub const fn min_arch(self) -> u32 {
                match self {
                    $(Kernel::$variant => kernel_list!(@arch $($arch)?),)*
                }
            }
        }
    };
}

kernel_list! {
    AddOne => add_one,
    AddOneAtomic => add_one_atomic,
    AddOneBlockScope => add_one_block_scope,
    GtThrCntMutex => gt_thr_cnt_mutex,
    GtThrCntAtomic => gt_thr_cnt_atomic,
    GtThrCntWarp => gt_thr_cnt_warp,
    GtThrCntBlock => gt_thr_cnt_block,
    GtThrCntVec4 => gt_thr_cnt_vec4,
    DotPartial => dot_partial,
    DotMutex => dot_mutex,
    DotAtomic => dot_atomic,
    DotVec4 => dot_vec4,
    HistogramGlobal => histogram_global,
    HistogramShared => histogram_shared,
    HistogramSharedRows => histogram_shared_rows,
    HistogramSharedUnzeroed => histogram_shared_unzeroed,
    HistogramWarp => histogram_warp,
    HistogramVec16 => histogram_vec16,
    HistogramLane => histogram_lane,
    HistogramPipeline => histogram_pipeline @ sm_90,
    HistogramU16Global => histogram_u16_global,
    HistogramU16Ranges => histogram_u16_ranges,
    HistogramU16Cluster => histogram_u16_cluster @ sm_90,
    Empty => empty,
    AtomicsCheckU32 => atomics_check_u32,
    AtomicsCheckI32 => atomics_check_i32,
    AtomicsCheckU64 => atomics_check_u64,
    AtomicsCheckI64 => atomics_check_i64,
    AtomicsCheckF32 => atomics_check_f32,
    AtomicsCheckF64 => atomics_check_f64,
    AtomicAddF64Cas => atomic_add_f64_cas,
    AtomicAddF64Native => atomic_add_f64_native,
    OrderingCostBlock => ordering_cost_block,
    OrderingCostDevice => ordering_cost_device,
    OrderingCostSystem => ordering_cost_system,
    AtomicBenchAddU32GlobalBlock => atomic_bench_add_u32_global_block,
    AtomicBenchAddU32GlobalDevice => atomic_bench_add_u32_global_device,
    AtomicBenchAddU32GlobalSystem => atomic_bench_add_u32_global_system,
    AtomicBenchAddU32SharedBlock => atomic_bench_add_u32_shared_block,
    AtomicBenchRedAddU32GlobalBlock => atomic_bench_red_add_u32_global_block,
    AtomicBenchRedAddU32GlobalDevice => atomic_bench_red_add_u32_global_device,
    AtomicBenchRedAddU32GlobalSystem => atomic_bench_red_add_u32_global_system,
    AtomicBenchRedAddU32SharedBlock => atomic_bench_red_add_u32_shared_block,
    AtomicBenchAddF32GlobalBlock => atomic_bench_add_f32_global_block,
    AtomicBenchAddF32GlobalDevice => atomic_bench_add_f32_global_device,
    AtomicBenchAddF32GlobalSystem => atomic_bench_add_f32_global_system,
    AtomicBenchAddF32SharedBlock => atomic_bench_add_f32_shared_block,
    AtomicBenchCasU32GlobalBlock => atomic_bench_cas_u32_global_block,
    AtomicBenchCasU32GlobalDevice => atomic_bench_cas_u32_global_device,
    AtomicBenchCasU32GlobalSystem => atomic_bench_cas_u32_global_system,
    AtomicBenchCasU32SharedBlock => atomic_bench_cas_u32_shared_block,
    WarpCheck => warp_check,
    FenceCheck => fence_check,
    TimerCheck => timer_check,
    WaitAtLeast => wait_at_least,
    AddOneMutex => add_one_mutex,
    LockUnfenced => lock_unfenced,
    LockFenced => lock_fenced,
    LockLoop => lock_loop,
    LockWarpLeader => lock_warp_leader,
    LockMutex => lock_mutex,
    LockMutexWith => lock_mutex_with,
    LockTicket => lock_ticket,
    MutexHeldForever => mutex_held_forever,
    PartialReduce => partial_reduce,
    ReduceAtomic => reduce_atomic,
    ReduceAtomicF64 => reduce_atomic_f64,
    ReduceWarp => reduce_warp,
    ReduceLastBlockSumF32 => reduce_last_block_sum_f32,
    ReduceLastBlockSumF32InF64 => reduce_last_block_sum_f32_in_f64,
    ReduceLastBlockSumF32Kahan => reduce_last_block_sum_f32_kahan,
    ReduceVecSumF32 => reduce_vec_sum_f32,
    ReduceVecSumF32InF64 => reduce_vec_sum_f32_in_f64,
    ReduceVecSumF32Kahan => reduce_vec_sum_f32_kahan,
    ReduceVecSumF64 => reduce_vec_sum_f64,
    ReduceVecSumI32 => reduce_vec_sum_i32,
    ReduceVecSumU64 => reduce_vec_sum_u64,
    ReduceVecMinF32 => reduce_vec_min_f32,
    ReduceVecMaxF32 => reduce_vec_max_f32,
    ReduceVecMinI32 => reduce_vec_min_i32,
    ReduceVecMaxI32 => reduce_vec_max_i32,
    ReducePipelineSumF32 => reduce_pipeline_sum_f32 @ sm_90,
    ReducePipelineSumF32InF64 => reduce_pipeline_sum_f32_in_f64 @ sm_90,
    ReducePipelineSumF32Kahan => reduce_pipeline_sum_f32_kahan @ sm_90,
    SingleThreadSum => single_thread_sum,
    DivideBy => divide_by,
    DivideBySum => divide_by_sum,
    XpxStageP => xpx_stage_p,
    XpxStageX => xpx_stage_x,
    XpxNoBarrier => xpx_no_barrier,
    XpxSyncThreads => xpx_sync_threads,
    XpxPlainSpin => xpx_plain_spin,
    XpxArticle => xpx_article,
    XpxCountToN => xpx_count_to_n,
    XpxGridBarrier => xpx_grid_barrier,
    GridBarrierPhases => grid_barrier_phases,
    LitmusRun => litmus_run,
    LockStress => lock_stress,
    BarrierStress => barrier_stress,
    GridBarrierAbsentBlock => grid_barrier_absent_block,
    GridBarrierBare => grid_barrier_bare,
    GridBarrierClusterBare => grid_barrier_cluster_bare @ sm_90,
    ClusterGridBarrierPhases => cluster_grid_barrier_phases @ sm_90,
    ClusterBarrierStress => cluster_barrier_stress @ sm_90,
    ClusterGridBarrierAbsentCluster => cluster_grid_barrier_absent_cluster @ sm_90,
    PeerCount => peer_count,
    PeerLock => peer_lock,
    PeerBarrier => peer_barrier,
    FindNeighborAtomicF32 => find_neighbor_atomic_f32,
    FindNeighborAtomicF64 => find_neighbor_atomic_f64,
    FindNeighborNoAtomicF32 => find_neighbor_no_atomic_f32,
    FindNeighborNoAtomicF64 => find_neighbor_no_atomic_f64,
    FindNeighborWrongF32 => find_neighbor_wrong_f32,
    CellBinF32 => cell_bin_f32,
    CellBinF64 => cell_bin_f64,
    CellScatterF32 => cell_scatter_f32,
    CellScatterF64 => cell_scatter_f64,
    CellCountF32 => cell_count_f32,
    CellCountF64 => cell_count_f64,
    CellFillF32 => cell_fill_f32,
    CellFillF64 => cell_fill_f64,
    CellFillAtomsF32 => cell_fill_atoms_f32,
    CellFillAtomsF64 => cell_fill_atoms_f64,
    CellPaddedF32 => cell_padded_f32,
    CellPaddedF64 => cell_padded_f64,
    ScanLookback => scan_lookback,
    MbarrierPhases => mbarrier_phases @ sm_90,
    BulkPipelineCopy => bulk_pipeline_copy @ sm_90,
    CpAsyncTransform => cp_async_transform @ sm_90,
    BulkStore => bulk_store @ sm_90,
    ClusterCheck => cluster_check @ sm_90,
    MbarrierRemote => mbarrier_remote @ sm_90,
    MbarrierWrongParity => mbarrier_wrong_parity @ sm_90,
    ClusterSyncBare => cluster_sync_bare @ sm_90,
    ClusterSyncRelaxed => cluster_sync_relaxed @ sm_90,
    ClusterSplit => cluster_split @ sm_90,
    ClusterUnsplit => cluster_unsplit @ sm_90,
    RelaySyncThreads => relay_sync_threads @ sm_90,
    RelaySplit => relay_split @ sm_90,
    RelayNoWait => relay_no_wait @ sm_90,
    RelayStuckParity => relay_stuck_parity @ sm_90,
    RelayWaitBeforeArrive => relay_wait_before_arrive @ sm_90,
    PipelineTransform => pipeline_transform @ sm_90,
    PipelineNoFullWait => pipeline_no_full_wait @ sm_90,
    PipelineNoEmptyWait => pipeline_no_empty_wait @ sm_90,
}
