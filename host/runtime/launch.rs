//! Running a kernel: on the GPU through the driver, or on the simulator — one call for both.
//!
//! The [`launch!`](crate::launch!) macro names the kernel by its path in the device crate,
//! `gpu::lessons::race::add_one`, and passes its arguments as a tuple. The same path gives both the PTX
//! entry-point name (the kernel is `#[no_mangle]`) and the host function the simulator runs; the
//! simulator branch takes the arguments through that function's own signature, so argument
//! types that do not match the kernel fail to compile.
//!
//! A kernel of your own module ([`Module`]) is named by its path after the module:
//! `launch!(target, module => kernels::count, cfg, (args…))`.
//!
//! A launch is [plain or cooperative](LaunchMode):
//! [`launch_cooperative!`](crate::launch_cooperative!) is `launch!` in the cooperative mode.
//! Both go through the one unsafe helper, `launch_on`.

pub use crate::runtime::args::{KernelArgs, KernelParam};
use crate::runtime::args::{KernelRef, SharedArgs};
use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result, check};
use crate::runtime::module::{Functions, Module};
use crate::runtime::stream::Stream;
use cust::sys as cu;
use gpu::LaunchConfig;
use serde::Serialize;

/// How the driver launches a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchMode {
    /// `cuLaunchKernel`: blocks are scheduled as SMs free up; nothing promises that all of them
    /// are resident at once.
    Plain,
    /// `cuLaunchCooperativeKernel` (CUDA's `cudaLaunchCooperativeKernel`): the driver refuses
    /// the launch (`CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`) unless every block can be resident
    /// at once, and then runs them all at once — what a grid barrier needs. The device must
    /// support it ([`DeviceInfo::cooperative_launch`](crate::DeviceInfo::cooperative_launch)).
    Cooperative,
}

/// Where kernels run: a GPU, or the CPU simulator.
#[derive(Debug)]
pub enum Target {
    /// A real GPU.
    Gpu(Gpu),
    /// The CPU simulator ([`gpu::sim`]): every kernel's logic, no GPU needed, small grids only.
    Sim,
}

/// The last segment of a kernel's path: `"gpu :: race :: add_one"` → `"add_one"`. A `const fn`,
/// so that [`kernel_ref!`](crate::kernel_ref!) works in constants.
pub const fn kernel_name(path: &'static str) -> &'static str {
    let bytes = path.as_bytes();
    let mut start = bytes.len();
    while start > 0 && bytes[start - 1] != b':' {
        start -= 1;
    }
    let mut end = bytes.len();
    while start < end && bytes[start] == b' ' {
        start += 1;
    }
    while end > start && bytes[end - 1] == b' ' {
        end -= 1;
    }
    let (head, _) = bytes.split_at(end);
    let (_, name) = head.split_at(start);
    match core::str::from_utf8(name) {
        Ok(name) => name,
        Err(_) => path,
    }
}

impl Target {
    /// The GPU `ordinal`, or the simulator when `simulate` is set.
    ///
    /// # Errors
    /// What [`Gpu::new`] returns.
    pub fn open(ordinal: u32, simulate: bool) -> Result<Target> {
        if simulate {
            Ok(Target::Sim)
        } else {
            Gpu::new(ordinal).map(Target::Gpu)
        }
    }

    /// `"GPU 0 (NVIDIA H100 …)"` or `"simulator"`.
    pub fn describe(&self) -> String {
        match self {
            Target::Gpu(g) => format!("GPU {} ({})", g.info().ordinal, g.info().name),
            Target::Sim => "simulator (CPU threads)".into(),
        }
    }

    /// Whether this is the simulator.
    pub fn is_sim(&self) -> bool {
        matches!(self, Target::Sim)
    }

    /// Whether `kernel` runs here: always on the simulator; on a GPU when the PTX build loaded
    /// for it holds the kernel — those on Hopper's primitives (`gpu::Kernel::min_arch` 90) need
    /// compute capability 9.0 or later.
    pub fn has_kernel(&self, kernel: gpu::Kernel) -> bool {
        match self {
            Target::Sim => true,
            Target::Gpu(g) => crate::runtime::ptx::arch_capability(g.info().ptx_arch)
                .is_some_and(|(major, minor)| kernel.min_arch() <= major * 10 + minor),
        }
    }

    /// Refuses a GPU without `kernel` ([`Target::has_kernel`]): [`Error::Unsupported`] saying
    /// `needs` (what needs which compute capability) and that this target has less.
    ///
    /// # Errors
    /// [`Error::Unsupported`] where `kernel` does not run here.
    pub fn require_kernel(&self, kernel: gpu::Kernel, needs: &str) -> Result<()> {
        if self.has_kernel(kernel) {
            return Ok(());
        }
        Err(Error::Unsupported(format!(
            "{needs}; {} has less",
            self.describe()
        )))
    }

    /// Launches `kernel` over `cfg` with `args` and, on the GPU, returns once it is queued on the
    /// library's stream (call [`Target::synchronize`] to wait); the simulator returns when the
    /// grid has finished. Use the [`launch!`](crate::launch!) macro, which fills in `name`.
    /// This is [`Target::launch_with`] in [`LaunchMode::Plain`].
    ///
    /// # Safety
    /// The kernel's contract for its arguments holds: every pointer is valid for every access the
    /// kernel makes through it over this grid, and nothing else touches that memory meanwhile
    /// except as the kernel allows.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a launch shape the device cannot run; a driver error; on the
    /// simulator, [`Error::Sim`].
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        name: &'static str,
        cfg: LaunchConfig,
        args: A,
        kernel: A::Fn,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.launch_with(name, cfg, args, kernel, LaunchMode::Plain) }
    }

    /// [`Target::launch`] of a kernel held as a value ([`kernel_ref!`](crate::kernel_ref!)).
    ///
    /// # Safety
    /// As [`Target::launch`].
    ///
    /// # Errors
    /// As [`Target::launch`].
    pub unsafe fn launch_ref<A: KernelArgs>(
        &self,
        kernel: KernelRef<A>,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.launch_with(kernel.name, cfg, args, kernel.function, LaunchMode::Plain) }
    }

    /// [`Target::launch`] in the given [`LaunchMode`]. The simulator runs both modes the same
    /// way: it runs every block of a grid at once anyway. Use
    /// [`launch_cooperative!`](crate::launch_cooperative!) for a cooperative launch by path.
    ///
    /// # Safety
    /// As [`Target::launch`].
    ///
    /// # Errors
    /// As [`Target::launch`]; [`Error::Unsupported`] for a cooperative launch on a GPU without
    /// cooperative launches; a driver error `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE` (720) for a
    /// cooperative grid that cannot be resident at once.
    pub unsafe fn launch_with<A: KernelArgs>(
        &self,
        name: &'static str,
        cfg: LaunchConfig,
        args: A,
        kernel: A::Fn,
        mode: LaunchMode,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.dispatch(None, name, cfg, args, kernel, mode) }
    }

    /// [`Target::launch_with`] for a kernel of your own `module`: on a GPU the kernel `name` of
    /// the module's PTX, on the simulator `kernel` (the same function, built for the host). Use
    /// `launch!(target, module => path, cfg, (args…))` or its
    /// [`launch_cooperative!`](crate::launch_cooperative!) twin, which fill in `name` and `kernel`
    /// from the kernel's path.
    ///
    /// # Safety
    /// As [`Target::launch`].
    ///
    /// # Errors
    /// As [`Target::launch_with`]; [`Error::MissingKernel`] naming the kernel and the module;
    /// [`Error::InvalidInput`] for a module loaded for another target.
    pub unsafe fn launch_in<A: KernelArgs>(
        &self,
        module: &Module,
        name: &'static str,
        cfg: LaunchConfig,
        args: A,
        kernel: A::Fn,
        mode: LaunchMode,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.dispatch(Some(module), name, cfg, args, kernel, mode) }
    }

    /// The launch of a kernel of `module`, or of gridsync's own with `None`.
    ///
    /// # Safety
    /// As [`Target::launch`].
    unsafe fn dispatch<A: KernelArgs>(
        &self,
        module: Option<&Module>,
        name: &'static str,
        cfg: LaunchConfig,
        args: A,
        kernel: A::Fn,
        mode: LaunchMode,
    ) -> Result<()> {
        match self {
            Target::Gpu(gpu) => {
                let functions = match module {
                    Some(m) => m.functions_on(gpu)?,
                    None => gpu.functions(),
                };
                // SAFETY: forwarded to the caller.
                unsafe { launch_on(gpu, functions, gpu.stream(), name, &cfg, args, mode) }
            }
            Target::Sim => {
                if let Some(m) = module {
                    m.check_sim()?;
                }
                let shared = SharedArgs(args);
                gpu::sim::launch(&cfg, || {
                    let args = shared.get();
                    // SAFETY: forwarded to the caller.
                    unsafe { args.call(kernel) }
                })
                .map_err(Error::Sim)
            }
        }
    }

    /// Waits for all launched work (nothing to wait for on the simulator).
    ///
    /// # Errors
    /// A driver error, including a fault of a kernel that ran.
    pub fn synchronize(&self) -> Result<()> {
        match self {
            Target::Gpu(gpu) => gpu.synchronize(),
            Target::Sim => Ok(()),
        }
    }
}

/// Checks a launch shape against the device's limits, so that a bad shape is an
/// [`Error::InvalidInput`] that says why rather than a bare driver code.
pub(crate) fn check_shape(gpu: &Gpu, name: &str, cfg: &LaunchConfig) -> Result<()> {
    let info = gpu.info();
    let block = cfg.block.count();
    let bad = |why: String| {
        Err(Error::InvalidInput(format!(
            "launch of {name} with {cfg:?}: {why}"
        )))
    };
    if cfg.grid.count() == 0 || block == 0 {
        return bad("the grid and the block must both be non-empty".into());
    }
    if block > info.max_threads_per_block as u64 || cfg.block.z > 64 {
        return bad(format!(
            "a block has at most {} threads (z at most 64)",
            info.max_threads_per_block
        ));
    }
    if cfg.grid.y > 65_535 || cfg.grid.z > 65_535 || cfg.grid.x > i32::MAX as u32 {
        return bad("grid.x is at most 2^31-1, grid.y and grid.z at most 65535".into());
    }
    if cfg.shared_bytes > info.shared_bytes_per_block_optin {
        return bad(format!(
            "at most {} bytes of shared memory per block",
            info.shared_bytes_per_block_optin
        ));
    }
    Ok(())
}

/// Lets `f` take `bytes` of dynamic shared memory: past 48 KiB a kernel must opt in
/// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`) — before a launch, and before an occupancy
/// query, which otherwise answers for a kernel that cannot launch at all.
///
/// # Safety
/// `f` is a live function of the current context.
pub(crate) unsafe fn allow_shared_bytes(
    gpu: &Gpu,
    f: cu::CUfunction,
    name: &str,
    bytes: u32,
) -> Result<()> {
    if bytes <= gpu.info().shared_bytes_per_block {
        return Ok(());
    }
    let attr = cu::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    // SAFETY: the caller's.
    let code = unsafe { cu::cuFuncSetAttribute(f, attr, bytes as i32) };
    check(code, || {
        format!("cuFuncSetAttribute({name}, max dynamic shared memory)")
    })
}

/// Launches the kernel `name` of the device crate on `stream` of `gpu`, in `mode`, and returns
/// once it is queued. For work on a stream other than the library's (a [`Graph`] capture,
/// overlapping streams); [`Target::launch_with`] is the same on the library's stream. `args`
/// must match the kernel's parameters in number, order and type: unlike
/// [`launch!`](crate::launch!), nothing checks them against the kernel's signature here.
///
/// # Safety
/// As [`Target::launch`], and `args` are exactly the kernel's parameters.
///
/// # Errors
/// As [`Target::launch_with`] on a GPU.
///
/// [`Graph`]: crate::runtime::graph::Graph
pub unsafe fn launch_on_stream<A: KernelArgs>(
    gpu: &Gpu,
    stream: &Stream,
    name: &'static str,
    cfg: LaunchConfig,
    args: A,
    mode: LaunchMode,
) -> Result<()> {
    // SAFETY: forwarded to the caller.
    unsafe { launch_on(gpu, gpu.functions(), stream, name, &cfg, args, mode) }
}

/// The one place the host launches a kernel on the GPU: the kernel `name` of `functions` (a
/// module loaded on `gpu`).
///
/// # Safety
/// As [`Target::launch`].
pub(crate) unsafe fn launch_on<A: KernelArgs>(
    gpu: &Gpu,
    functions: &Functions,
    stream: &Stream,
    name: &'static str,
    cfg: &LaunchConfig,
    args: A,
    mode: LaunchMode,
) -> Result<()> {
    check_shape(gpu, name, cfg)?;
    if cfg.is_clustered() {
        crate::runtime::cluster::check_cluster(gpu, name, cfg)?;
    }
    if mode == LaunchMode::Cooperative && !gpu.info().cooperative_launch {
        return Err(Error::Unsupported(format!(
            "cooperative launch of {name}: {} does not support cooperative launches",
            gpu.info().name
        )));
    }
    gpu.make_current()?;
    let f = functions.get_on(name, gpu)?;
    // SAFETY: `f` is a live function of the current context.
    unsafe { allow_shared_bytes(gpu, f, name, cfg.shared_bytes) }?;
    let (g, b) = (cfg.grid, cfg.block);
    let stream = stream.as_raw();
    args.with_params(|params| {
        let params = params.as_mut_ptr();
        if cfg.is_clustered() {
            // SAFETY: as below; the shape was checked above.
            return unsafe {
                crate::runtime::cluster::launch_clustered(
                    f,
                    name,
                    cfg,
                    stream,
                    params,
                    mode == LaunchMode::Cooperative,
                )
            };
        }
        // SAFETY: `f` and the stream are live; `params` holds one pointer per kernel parameter,
        // in order, each to a value of the parameter's type (the tuple's types are the kernel's,
        // checked by the simulator branch of `launch!`); the caller vouches for the pointers the
        // kernel will dereference. The cooperative call takes the same array (and no `extra`).
        let (code, op) = unsafe {
            match mode {
                LaunchMode::Plain => (
                    cu::cuLaunchKernel(
                        f,
                        g.x,
                        g.y,
                        g.z,
                        b.x,
                        b.y,
                        b.z,
                        cfg.shared_bytes,
                        stream,
                        params,
                        std::ptr::null_mut(),
                    ),
                    "cuLaunchKernel",
                ),
                LaunchMode::Cooperative => (
                    cu::cuLaunchCooperativeKernel(
                        f,
                        g.x,
                        g.y,
                        g.z,
                        b.x,
                        b.y,
                        b.z,
                        cfg.shared_bytes,
                        stream,
                        params,
                    ),
                    "cuLaunchCooperativeKernel",
                ),
            }
        };
        check(code, || format!("{op}({name})"))
    })
}

#[cfg(test)]
mod tests {
    use super::kernel_name;

    #[test]
    fn a_kernel_is_named_by_the_last_segment_of_its_path() {
        assert_eq!(kernel_name("gpu :: race :: add_one"), "add_one");
        assert_eq!(kernel_name("kernels::count"), "count");
        assert_eq!(kernel_name("count"), "count");
        const NAME: &str = kernel_name("a :: b_c");
        assert_eq!(NAME, "b_c");
    }
}
