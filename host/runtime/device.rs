//! The GPU: driver initialization, the context, the PTX module, and the device's report.

use crate::runtime::error::{Error, Result, check, cust_err};
use crate::runtime::module::Functions;
use crate::runtime::ptx;
use crate::runtime::stream::Stream;
use cust::device::{Device, DeviceAttribute};
use cust::sys as cu;
use serde::Serialize;
use std::sync::Arc;

/// The name of gridsync's own module, in messages.
const GRIDSYNC_MODULE: &str = "gridsync";

/// What the device is and what it can do.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: u32,
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
    /// The PTX build loaded for it (`sm_90`, …).
    pub ptx_arch: &'static str,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Global memory in bytes.
    pub total_memory_bytes: u64,
    /// SM clock in kHz.
    pub clock_khz: u32,
    /// Memory clock in kHz.
    pub memory_clock_khz: u32,
    /// Memory bus width in bits.
    pub memory_bus_bits: u32,
    /// L2 cache in bytes.
    pub l2_bytes: u32,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Shared memory a block gets without opting in.
    pub shared_bytes_per_block: u32,
    /// Shared memory a block can get after opting in.
    pub shared_bytes_per_block_optin: u32,
    /// Shared memory per SM.
    pub shared_bytes_per_sm: u32,
    /// Whether `cuLaunchCooperativeKernel` is supported (grid-wide barriers).
    pub cooperative_launch: bool,
    /// The driver's CUDA version, e.g. 13000 for 13.0.
    pub driver_version: u32,
}

/// One GPU, ready to run gridsync's kernels: its primary context, the best PTX module for its
/// compute capability, and a non-blocking stream for the library's own work.
pub struct Gpu {
    // Fields drop in order: the module (with its functions) and the stream before the context.
    // Every kernel of `gpu::Kernel` is looked up once, when the module loads, so the launch
    // path reads an immutable table.
    functions: Functions,
    stream: Stream,
    /// Shared with every [`Buffer`](crate::Buffer) allocated here: the context is released
    /// when the last of them is gone, and each frees its memory under it.
    context: Arc<cust::context::Context>,
    info: DeviceInfo,
}

/// Initializes the driver, translating "there is no driver" into [`Error::NoGpu`].
///
/// # Errors
/// [`Error::NoGpu`] when the stub library answers or no device exists; a driver error otherwise.
pub fn init_driver() -> Result<u32> {
    // SAFETY: `cuInit(0)` may be called any number of times from any thread.
    match unsafe { cu::cuInit(0) } {
        cu::CUresult::CUDA_SUCCESS => {}
        cu::CUresult::CUDA_ERROR_STUB_LIBRARY => {
            return Err(Error::NoGpu(
                "no NVIDIA driver on this machine (libcuda.so.1 could not be loaded)".into(),
            ));
        }
        cu::CUresult::CUDA_ERROR_NO_DEVICE => {
            return Err(Error::NoGpu(
                "the NVIDIA driver reports no CUDA device".into(),
            ));
        }
        code => check(code, || "cuInit".into())?,
    }
    let mut count = 0;
    // SAFETY: valid out-pointer, driver initialized.
    check(unsafe { cu::cuDeviceGetCount(&mut count) }, || {
        "cuDeviceGetCount".into()
    })?;
    if count == 0 {
        return Err(Error::NoGpu(
            "the NVIDIA driver reports no CUDA device".into(),
        ));
    }
    Ok(count as u32)
}

impl Gpu {
    /// Opens device `ordinal`: retains its primary context, loads the newest PTX build it can
    /// run, and creates a non-blocking stream.
    ///
    /// # Errors
    /// [`Error::NoGpu`] without a driver or device; [`Error::InvalidInput`] for an ordinal past
    /// the device count; [`Error::Unsupported`] below compute capability 7.0 or in a build
    /// without the `ptx` feature; a driver error if the PTX does not load.
    pub fn new(ordinal: u32) -> Result<Gpu> {
        let count = init_driver()?;
        if ordinal >= count {
            return Err(Error::InvalidInput(format!(
                "device {ordinal} does not exist: this machine has {count} CUDA device(s), 0..{count}"
            )));
        }
        let device = Device::get_device(ordinal).map_err(cust_err("cuDeviceGet"))?;
        let attr = |a: DeviceAttribute| -> Result<u32> {
            device
                .get_attribute(a)
                .map(|v| v as u32)
                .map_err(cust_err("cuDeviceGetAttribute"))
        };
        let raw_attr = |a: cu::CUdevice_attribute| -> Result<u32> {
            let mut v = 0;
            // SAFETY: valid out-pointer; `device` is a valid device handle.
            check(
                unsafe { cu::cuDeviceGetAttribute(&mut v, a, device.as_raw()) },
                || format!("cuDeviceGetAttribute({a:?})"),
            )?;
            Ok(v as u32)
        };
        let cc = (
            attr(DeviceAttribute::ComputeCapabilityMajor)?,
            attr(DeviceAttribute::ComputeCapabilityMinor)?,
        );
        if ptx::BUILDS.is_empty() {
            return Err(Error::Unsupported(
                "this gridsync was built without its PTX (the `ptx` feature is off): its kernels \
                 run on the simulator only"
                    .into(),
            ));
        }
        let Some((arch, ptx_text)) = ptx::best_for(cc) else {
            return Err(Error::Unsupported(format!(
                "compute capability {}.{}: gridsync needs 7.0 (Volta) or newer, for independent \
                 thread scheduling, scoped atomics and nanosleep",
                cc.0, cc.1
            )));
        };
        let mut driver_version = 0;
        // SAFETY: valid out-pointer.
        check(
            unsafe { cu::cuDriverGetVersion(&mut driver_version) },
            || "cuDriverGetVersion".into(),
        )?;
        let info = DeviceInfo {
            ordinal,
            name: device.name().map_err(cust_err("cuDeviceGetName"))?,
            compute_capability: cc,
            ptx_arch: arch,
            sm_count: attr(DeviceAttribute::MultiprocessorCount)?,
            total_memory_bytes: device
                .total_memory()
                .map_err(cust_err("cuDeviceTotalMem"))? as u64,
            clock_khz: attr(DeviceAttribute::ClockRate)?,
            memory_clock_khz: attr(DeviceAttribute::MemoryClockRate)?,
            memory_bus_bits: attr(DeviceAttribute::GlobalMemoryBusWidth)?,
            l2_bytes: attr(DeviceAttribute::L2CacheSize)?,
            max_threads_per_block: attr(DeviceAttribute::MaxThreadsPerBlock)?,
            max_threads_per_sm: attr(DeviceAttribute::MaxThreadsPerMultiprocessor)?,
            shared_bytes_per_block: attr(DeviceAttribute::MaxSharedMemoryPerBlock)?,
            shared_bytes_per_block_optin: raw_attr(
                cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            shared_bytes_per_sm: attr(DeviceAttribute::MaxSharedMemoryPerMultiprocessor)?,
            cooperative_launch: raw_attr(
                cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
            )? != 0,
            driver_version: driver_version as u32,
        };
        let context = Arc::new(
            cust::context::Context::new(device).map_err(cust_err("cuDevicePrimaryCtxRetain"))?,
        );
        // The kernels of this build: those of a newer architecture's only (Hopper's) are not in
        // an older build's PTX.
        let built = crate::runtime::ptx::arch_capability(arch).map_or(0, |(m, n)| m * 10 + n);
        let names = gpu::Kernel::ALL
            .iter()
            .filter(|k| k.min_arch() <= built)
            .map(|k| k.name());
        let functions = Functions::load(
            GRIDSYNC_MODULE,
            crate::runtime::ptx::BUILDS,
            arch,
            ptx_text,
            names,
        )?;
        let stream = Stream::new()?;
        Ok(Gpu {
            functions,
            stream,
            context,
            info,
        })
    }

    /// The device's report.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The library's non-blocking stream: every launch and copy of this `Gpu` goes here unless
    /// given another.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Makes this GPU's context current on the calling thread (a `Gpu` may be used from a thread
    /// other than the one that opened it).
    ///
    /// # Errors
    /// A driver error.
    pub fn make_current(&self) -> Result<()> {
        let mut current = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { cu::cuCtxGetCurrent(&mut current) }, || {
            "cuCtxGetCurrent".into()
        })?;
        if current != self.context.as_raw() {
            // SAFETY: the context is alive as long as `self`.
            check(
                unsafe { cu::cuCtxSetCurrent(self.context.as_raw()) },
                || "cuCtxSetCurrent".into(),
            )?;
        }
        Ok(())
    }

    /// The driver's handle of this GPU's context (to enable peer access to it).
    pub(crate) fn raw_context(&self) -> cu::CUcontext {
        self.context.as_raw()
    }

    /// The context, kept alive by whoever holds the `Arc` (a buffer allocated in it).
    pub(crate) fn shared_context(&self) -> Arc<cust::context::Context> {
        Arc::clone(&self.context)
    }

    /// gridsync's own kernels.
    pub(crate) fn functions(&self) -> &Functions {
        &self.functions
    }

    /// Waits for everything queued in this GPU's context, on every stream
    /// (`cuCtxSynchronize`), after making the context current.
    ///
    /// # Errors
    /// A driver error, including a fault of a kernel that ran.
    pub fn synchronize_all(&self) -> Result<()> {
        self.make_current()?;
        // SAFETY: synchronizing the current context has no preconditions.
        check(unsafe { cu::cuCtxSynchronize() }, || {
            "cuCtxSynchronize".into()
        })
    }

    /// Waits for all work on the library's stream.
    ///
    /// # Errors
    /// A driver error, including a fault of a kernel that ran.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize()
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}
