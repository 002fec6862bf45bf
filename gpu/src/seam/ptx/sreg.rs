//! Special registers: `mov.u32 r, %tid.x;` and its kind, one function per register.

macro_rules! nvptx_registers {
    ($($name:ident => $intrinsic:ident, $reg:literal;)*) => {$(
        #[doc = concat!("`", $reg, "`.")]
        #[inline(always)]
        pub(crate) fn $name() -> u32 {
            // SAFETY: reading a special register has no preconditions.
            unsafe { core::arch::nvptx::$intrinsic() as u32 }
        }
    )*};
}

nvptx_registers! {
    tid_x => _thread_idx_x, "%tid.x";
    tid_y => _thread_idx_y, "%tid.y";
    tid_z => _thread_idx_z, "%tid.z";
    ctaid_x => _block_idx_x, "%ctaid.x";
    ctaid_y => _block_idx_y, "%ctaid.y";
    ctaid_z => _block_idx_z, "%ctaid.z";
    ntid_x => _block_dim_x, "%ntid.x";
    ntid_y => _block_dim_y, "%ntid.y";
    ntid_z => _block_dim_z, "%ntid.z";
    nctaid_x => _grid_dim_x, "%nctaid.x";
    nctaid_y => _grid_dim_y, "%nctaid.y";
    nctaid_z => _grid_dim_z, "%nctaid.z";
}

/// `mov.u32 r, %smid;`
#[inline(always)]
pub(crate) fn smid() -> u32 {
    let id: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        core::arch::asm!("mov.u32 {id}, %smid;", id = out(reg32) id, options(nomem, nostack))
    };
    id
}

/// `mov.u32 r, %laneid;`
#[inline(always)]
pub(crate) fn laneid() -> u32 {
    let l: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        core::arch::asm!("mov.u32 {0}, %laneid;", out(reg32) l, options(nostack, pure, nomem))
    };
    l
}

/// `mov.u32 r, %dynamic_smem_size;`
#[inline(always)]
pub(crate) fn dynamic_smem_size() -> u32 {
    let n: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        core::arch::asm!("mov.u32 {0}, %dynamic_smem_size;", out(reg32) n, options(nostack, pure, nomem));
    }
    n
}

/// `mov.u64 r, %globaltimer;`
#[inline(always)]
pub(crate) fn globaltimer() -> u64 {
    let t: u64;
    // SAFETY: reading a special register has no preconditions. Not `pure`: every read must
    // happen, or a wait loop would never see time pass.
    unsafe {
        core::arch::asm!("mov.u64 {0}, %globaltimer;", out(reg64) t, options(nostack));
    }
    t
}

/// `mov.u64 r, %clock64;`
#[inline(always)]
pub(crate) fn clock64() -> u64 {
    let t: u64;
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        core::arch::asm!("mov.u64 {0}, %clock64;", out(reg64) t, options(nostack));
    }
    t
}

macro_rules! cluster_registers {
    ($($name:ident => $reg:literal;)*) => {$(
        #[doc = concat!("`mov.u32 r, ", $reg, ";` (sm_90).")]
        #[cfg(target_feature = "sm_90")]
        #[inline(always)]
        pub(crate) fn $name() -> u32 {
            let v: u32;
            // SAFETY: reading a special register has no preconditions.
            unsafe {
                core::arch::asm!(
                    concat!("mov.u32 {0}, ", $reg, ";"),
                    out(reg32) v,
                    options(nostack, pure, nomem)
                );
            }
            v
        }
    )*};
}

cluster_registers! {
    cluster_ctarank => "%cluster_ctarank";
    cluster_nctarank => "%cluster_nctarank";
    cluster_ctaid_x => "%cluster_ctaid.x";
    cluster_ctaid_y => "%cluster_ctaid.y";
    cluster_ctaid_z => "%cluster_ctaid.z";
    cluster_nctaid_x => "%cluster_nctaid.x";
    cluster_nctaid_y => "%cluster_nctaid.y";
    cluster_nctaid_z => "%cluster_nctaid.z";
    clusterid_x => "%clusterid.x";
    clusterid_y => "%clusterid.y";
    clusterid_z => "%clusterid.z";
    nclusterid_x => "%nclusterid.x";
    nclusterid_y => "%nclusterid.y";
    nclusterid_z => "%nclusterid.z";
}
