//! Thread block cluster launches (sm_90): `cuLaunchKernelEx` with the cluster-dimension
//! attribute, and the occupancy of clustered grids.
//!
//! `cust` 0.3.2 predates clusters (its bindings are CUDA 11's), so the two driver entry points
//! and their structures are declared here, as `cuda.h` (CUDA 12.0 and later) lays them out; the
//! driver shim resolves them at run time like every other `cu*` name.

use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result};
use cust::sys as cu;
use gpu::LaunchConfig;
use std::ffi::c_void;

/// The most blocks in a cluster that every sm_90 GPU runs (`cuda.h`: "the portable cluster size
/// for sm_90 is 8 blocks per cluster"). Larger clusters (up to 16 on an H100) need the kernel's
/// non-portable attribute, which the cluster launch sets when asked for one.
pub const PORTABLE_CLUSTER_BLOCKS: u64 = 8;
/// The most blocks in a cluster on any GPU so far (H100, H200: 16, non-portable).
pub const MAX_CLUSTER_BLOCKS: u64 = 16;

/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`.
const ATTRIBUTE_CLUSTER_DIMENSION: u32 = 4;
/// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`.
const ATTRIBUTE_COOPERATIVE: u32 = 2;
/// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`.
const FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: u32 = 14;

/// `CUlaunchAttribute`: a 4-byte id, 4 bytes of padding, a 64-byte value union (72 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
struct LaunchAttribute {
    id: u32,
    pad: u32,
    value: [u32; 16],
}

impl LaunchAttribute {
    /// Attribute `id`, its value's first words `words` and the rest zero.
    fn new(id: u32, words: &[u32]) -> LaunchAttribute {
        let mut value = [0; 16];
        value[..words.len()].copy_from_slice(words);
        LaunchAttribute { id, pad: 0, value }
    }
}

/// `CUlaunchConfig` (56 bytes): the launch shape, the stream, and the attributes.
#[repr(C)]
struct RawLaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u32,
    stream: cu::CUstream,
    attrs: *mut LaunchAttribute,
    num_attrs: u32,
}

// The driver's own declarations, returning the raw code: a newer driver's code (CUDA 12's
// `CUDA_ERROR_INVALID_CLUSTER_SIZE`, 912) is not in `cust`'s `CUresult` enum.
unsafe extern "C" {
    fn cuLaunchKernelEx(
        config: *const RawLaunchConfig,
        f: cu::CUfunction,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> u32;
    fn cuOccupancyMaxActiveClusters(
        clusters: *mut i32,
        f: cu::CUfunction,
        config: *const RawLaunchConfig,
    ) -> u32;
    // `cust` declares it with its own attribute enum, which lacks the cluster attributes.
    #[allow(clashing_extern_declarations)]
    #[link_name = "cuFuncSetAttribute"]
    fn func_set_attribute(f: cu::CUfunction, attribute: u32, value: i32) -> u32;
}

fn check_raw(code: u32, op: impl FnOnce() -> String) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::Driver { op: op(), code })
    }
}

/// Checks a cluster shape against the grid and the device, before the driver sees it.
///
/// # Errors
/// [`Error::Unsupported`] on a GPU below compute capability 9.0 (naming it);
/// [`Error::InvalidInput`] for an empty cluster, one whose extents do not divide the grid's, or
/// one of more than [`MAX_CLUSTER_BLOCKS`] blocks.
pub fn check_cluster(gpu: &Gpu, name: &str, cfg: &LaunchConfig) -> Result<()> {
    let info = gpu.info();
    let (major, minor) = info.compute_capability;
    if major < 9 {
        return Err(Error::Unsupported(format!(
            "launch of {name} in clusters of {:?}: thread block clusters need compute \
             capability 9.0 (sm_90); GPU {} ({}) is {major}.{minor}",
            cfg.cluster, info.ordinal, info.name
        )));
    }
    let (g, c) = (cfg.grid, cfg.cluster);
    if c.count() == 0 || g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0 {
        return Err(Error::InvalidInput(format!(
            "launch of {name}: the cluster {c:?} must be non-empty and divide the grid {g:?} \
             in every axis"
        )));
    }
    if c.count() > MAX_CLUSTER_BLOCKS {
        return Err(Error::InvalidInput(format!(
            "launch of {name}: a cluster has at most {MAX_CLUSTER_BLOCKS} blocks \
             ({PORTABLE_CLUSTER_BLOCKS} portably); asked for {c:?}"
        )));
    }
    Ok(())
}

/// The attributes a clustered launch of `cfg` may pass: the cluster's shape, then
/// "cooperative" (which [`raw_config`] passes only for a cooperative launch).
fn launch_attributes(cfg: &LaunchConfig) -> [LaunchAttribute; 2] {
    let c = cfg.cluster;
    [
        LaunchAttribute::new(ATTRIBUTE_CLUSTER_DIMENSION, &[c.x, c.y, c.z]),
        LaunchAttribute::new(ATTRIBUTE_COOPERATIVE, &[1]),
    ]
}

/// The driver's launch configuration for `cfg` on `stream`, pointing at `attrs`
/// ([`launch_attributes`] of `cfg`, which must outlive its use): the cluster attribute, and
/// the cooperative one when `cooperative`.
fn raw_config(
    cfg: &LaunchConfig,
    stream: cu::CUstream,
    attrs: &mut [LaunchAttribute; 2],
    cooperative: bool,
) -> RawLaunchConfig {
    RawLaunchConfig {
        grid: [cfg.grid.x, cfg.grid.y, cfg.grid.z],
        block: [cfg.block.x, cfg.block.y, cfg.block.z],
        shared_bytes: cfg.shared_bytes,
        stream,
        attrs: attrs.as_mut_ptr(),
        num_attrs: if cooperative { 2 } else { 1 },
    }
}

/// Lets `f` run in clusters of more than [`PORTABLE_CLUSTER_BLOCKS`] blocks when `cfg` asks
/// for one.
fn allow_cluster_size(f: cu::CUfunction, name: &str, cfg: &LaunchConfig) -> Result<()> {
    if cfg.cluster.count() <= PORTABLE_CLUSTER_BLOCKS {
        return Ok(());
    }
    // SAFETY: `f` is a live function of the current context.
    let code =
        unsafe { func_set_attribute(f, FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) };
    check_raw(code, || {
        format!("cuFuncSetAttribute({name}, non-portable cluster size)")
    })
}

/// Launches `f` in clusters: `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`
/// (and `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` when `cooperative`). The caller has checked the shape
/// ([`check_cluster`]), made the context current and raised the kernel's shared-memory limit.
///
/// # Safety
/// `f` and `stream` are live in the current context; `params` holds one pointer per kernel
/// parameter, in order, each to a value of the parameter's type; the kernel's contract for the
/// pointers it dereferences holds.
pub(crate) unsafe fn launch_clustered(
    f: cu::CUfunction,
    name: &str,
    cfg: &LaunchConfig,
    stream: cu::CUstream,
    params: *mut *mut c_void,
    cooperative: bool,
) -> Result<()> {
    allow_cluster_size(f, name, cfg)?;
    let mut attrs = launch_attributes(cfg);
    let config = raw_config(cfg, stream, &mut attrs, cooperative);
    // SAFETY: `config` and its attributes live across the call; the rest is the caller's.
    let code = unsafe { cuLaunchKernelEx(&config, f, params, std::ptr::null_mut()) };
    check_raw(code, || {
        format!("cuLaunchKernelEx({name}, clusters of {:?})", cfg.cluster)
    })
}

impl Gpu {
    /// How many clusters of `cfg`'s shape (block, shared memory, cluster; the grid is
    /// ignored) of gridsync's kernel `kernel` can be resident on this GPU at once: the
    /// co-residency bound of a clustered grid whose blocks wait for each other.
    ///
    /// CUDA: `cudaOccupancyMaxActiveClusters`.
    ///
    /// # Errors
    /// What [`check_cluster`] refuses (a GPU below 9.0 among them); [`Error::MissingKernel`];
    /// a driver error.
    pub fn max_active_clusters(&self, kernel: &str, cfg: &LaunchConfig) -> Result<u32> {
        let probe = LaunchConfig {
            grid: cfg.cluster,
            ..*cfg
        };
        check_cluster(self, kernel, &probe)?;
        self.make_current()?;
        let f = self.functions().get_on(kernel, self)?;
        // SAFETY: `f` is a live function of this GPU's context, current above.
        unsafe {
            crate::runtime::launch::allow_shared_bytes(self, f, kernel, cfg.shared_bytes)?;
            max_active_clusters(f, kernel, cfg)
        }
    }
}

/// [`Gpu::max_active_clusters`] of a function.
///
/// # Safety
/// `f` is a live function of the current context.
unsafe fn max_active_clusters(f: cu::CUfunction, name: &str, cfg: &LaunchConfig) -> Result<u32> {
    allow_cluster_size(f, name, cfg)?;
    let mut attrs = launch_attributes(cfg);
    let config = raw_config(cfg, std::ptr::null_mut(), &mut attrs, false);
    let mut clusters = 0i32;
    // SAFETY: valid out-pointer and configuration; `f` is the caller's.
    let code = unsafe { cuOccupancyMaxActiveClusters(&mut clusters, f, &config) };
    check_raw(code, || {
        format!(
            "cuOccupancyMaxActiveClusters({name}, clusters of {:?})",
            cfg.cluster
        )
    })?;
    Ok(clusters.max(0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_structures_have_cuda_h_layout() {
        assert_eq!(std::mem::size_of::<LaunchAttribute>(), 72);
        assert_eq!(std::mem::size_of::<RawLaunchConfig>(), 56);
        assert_eq!(std::mem::offset_of!(RawLaunchConfig, stream), 32);
        assert_eq!(std::mem::offset_of!(RawLaunchConfig, attrs), 40);
        assert_eq!(std::mem::offset_of!(RawLaunchConfig, num_attrs), 48);
        assert_eq!(std::mem::offset_of!(LaunchAttribute, value), 8);
    }

    #[test]
    fn the_cluster_attribute_carries_the_shape() {
        let cfg = LaunchConfig::linear(12, 64)
            .with_shared_bytes(1024)
            .with_cluster((3, 1, 1).into());
        let mut attrs = launch_attributes(&cfg);
        let raw = raw_config(&cfg, std::ptr::null_mut(), &mut attrs, false);
        assert_eq!(raw.num_attrs, 1);
        assert_eq!(
            (raw.grid, raw.block, raw.shared_bytes),
            ([12, 1, 1], [64, 1, 1], 1024)
        );
        assert_eq!(attrs[0].id, ATTRIBUTE_CLUSTER_DIMENSION);
        assert_eq!(attrs[0].value[..3], [3, 1, 1]);
        let raw = raw_config(&cfg, std::ptr::null_mut(), &mut attrs, true);
        assert_eq!(raw.num_attrs, 2);
        assert_eq!((attrs[1].id, attrs[1].value[0]), (ATTRIBUTE_COOPERATIVE, 1));
    }
}
