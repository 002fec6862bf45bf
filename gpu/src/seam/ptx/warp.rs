//! Warp-level instructions.

/// `activemask.b32 m;`
#[inline(always)]
pub(crate) fn activemask() -> u32 {
    let m: u32;
    // SAFETY: `activemask` has no preconditions.
    unsafe { core::arch::asm!("activemask.b32 {0};", out(reg32) m, options(nostack)) };
    m
}

/// The lanes that run a warp-wide step together with this one: on the GPU, the active mask
/// (`lane` is what the simulator needs).
#[inline(always)]
pub(crate) fn converged_mask(lane: u32) -> u32 {
    let _ = lane;
    activemask()
}

/// Whether this thread is lane 0 of its warp and `rank` is 0 — the test of a block's thread 0
/// (`rank` its rank in the block), written so that ptxas sees the lane test.
///
/// In one asm block: as two Rust comparisons LLVM folds `lane == 0 && rank == 0` into
/// `(lane | rank) == 0`, and ptxas, no longer seeing that one lane of the warp takes the
/// branch, wraps each atomic behind it in a warp aggregation (a vote, a population count, a
/// shuffle of the value returned) — on a grid barrier's critical path.
#[inline(always)]
pub(crate) fn leads_block(rank: u32) -> bool {
    let lead: u32;
    // SAFETY: reads the lane id and compares; no memory, no preconditions.
    unsafe {
        core::arch::asm!(
            "{{",
            ".reg .pred %lane0, %lead;",
            ".reg .b32 %lane;",
            "mov.u32 %lane, %laneid;",
            "setp.eq.u32 %lane0, %lane, 0;",
            "setp.eq.and.u32 %lead, {rank}, 0, %lane0;",
            "selp.u32 {lead}, 1, 0, %lead;",
            "}}",
            rank = in(reg32) rank,
            lead = out(reg32) lead,
            options(pure, nomem, nostack),
        )
    };
    lead != 0
}

/// `bar.warp.sync mask;`
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn bar_warp_sync(mask: u32) {
    // SAFETY: the caller's contract.
    unsafe { core::arch::asm!("bar.warp.sync {0};", in(reg32) mask, options(nostack)) };
}

/// `vote.sync.ballot.b32 b, p, mask;`
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn vote_sync_ballot_b32(mask: u32, predicate: bool) -> u32 {
    let b: u32;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {1}, 0; vote.sync.ballot.b32 {0}, p, {2}; }}",
            out(reg32) b, in(reg32) predicate as u32, in(reg32) mask, options(nostack)
        )
    };
    b
}

// The `c` operand packs the segment mask (0: whole warp) and the clamp lane: 31 for
// idx/down/bfly, 0 for up, as CUDA's width-32 shuffles use.
macro_rules! shuffles {
    ($($name:ident => $mode:literal, $c:literal;)*) => {$(
        #[doc = concat!("`shfl.sync.", $mode, ".b32 r, v, b, ", $c, ", mask;`")]
        ///
        /// # Safety
        /// Every lane in `mask` executes it.
        #[inline(always)]
        pub(crate) unsafe fn $name(mask: u32, v: u32, b: u32) -> u32 {
            let r: u32;
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    concat!("shfl.sync.", $mode, ".b32 {0}, {1}, {2}, ", $c, ", {3};"),
                    out(reg32) r, in(reg32) v, in(reg32) b, in(reg32) mask, options(nostack)
                )
            }
            r
        }
    )*};
}

shuffles! {
    shfl_sync_idx_b32 => "idx", "31";
    shfl_sync_up_b32 => "up", "0";
    shfl_sync_down_b32 => "down", "31";
    shfl_sync_bfly_b32 => "bfly", "31";
}
