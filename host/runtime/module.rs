//! Modules of kernels: gridsync's own (loaded by [`Gpu::new`]) and yours, built to PTX by
//! `gridsync-builder` and loaded with [`Module::load`].
//!
//! A module is a set of per-architecture PTX builds ([`PtxBuilds`]); loading picks the newest
//! one the device can run, and looks every kernel (`.entry`) of it up once, so that a launch
//! reads an immutable table. On the simulator a module holds nothing: a launch calls the
//! kernel's Rust function.

use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result, cust_err};
use crate::runtime::launch::Target;
use crate::runtime::ptx;
use cust::sys as cu;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The PTX builds of one device crate, as `gridsync-builder` wrote them:
/// `include_ptx!("kernels")` gives `PtxBuilds { name: "kernels", builds: … }`.
#[derive(Clone, Copy, Debug)]
pub struct PtxBuilds {
    /// The module's name, for messages: the builder's `name` (the device crate's directory).
    pub name: &'static str,
    /// `(architecture, PTX text)`, oldest architecture first.
    pub builds: &'static [(&'static str, &'static str)],
}

/// The [`PtxBuilds`] that `gridsync-builder` made of the device crate `name` in this crate's
/// build script: `Module::load(&target, gridsync::include_ptx!("kernels"))`.
#[macro_export]
macro_rules! include_ptx {
    ($name:literal) => {
        $crate::runtime::module::PtxBuilds {
            name: $name,
            builds: include!(concat!(env!("OUT_DIR"), "/", $name, "_ptx.rs")),
        }
    };
}

/// FNV-1a: kernel names are short and trusted, and the launch path should not pay for SipHash.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

struct RawFunction(cu::CUfunction);
// SAFETY: a CUfunction handle is an opaque, immutable driver object usable from any thread
// whose current context owns it; every launch makes the GPU's context current first.
unsafe impl Send for RawFunction {}
// SAFETY: as above; the table is never written after loading.
unsafe impl Sync for RawFunction {}

/// The kernels of one loaded PTX module, by name. Fields drop in order: the functions before
/// the module that owns them.
pub(crate) struct Functions {
    name: &'static str,
    /// Every build of the module, to tell a kernel that is missing from the loaded build
    /// because it needs a newer GPU from one that does not exist.
    builds: &'static [(&'static str, &'static str)],
    table: HashMap<String, RawFunction, BuildHasherDefault<Fnv>>,
    _module: cust::module::Module,
}

impl Functions {
    /// Loads `ptx` in the current context and looks up every `names` in it.
    pub(crate) fn load<'a>(
        name: &'static str,
        builds: &'static [(&'static str, &'static str)],
        arch: &str,
        ptx: &str,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Functions> {
        let module = cust::module::Module::from_ptx(ptx, &[]).map_err(cust_err(&format!(
            "loading the {arch} PTX of module {name} (cuModuleLoadData)"
        )))?;
        let mut table = HashMap::default();
        for kernel in names {
            let f = module.get_function(kernel).map_err(cust_err(&format!(
                "cuModuleGetFunction({kernel}) in module {name}"
            )))?;
            table.insert(kernel.to_string(), RawFunction(f.to_raw()));
        }
        Ok(Functions {
            name,
            builds,
            table,
            _module: module,
        })
    }

    /// The kernel `kernel`.
    ///
    /// # Errors
    /// [`Error::MissingKernel`] if the module has none of that name.
    pub(crate) fn get(&self, kernel: &str) -> Result<cu::CUfunction> {
        self.table
            .get(kernel)
            .map(|f| f.0)
            .ok_or_else(|| Error::MissingKernel {
                kernel: kernel.to_string(),
                module: self.name.to_string(),
            })
    }

    /// [`Functions::get`], where a kernel missing from the build loaded for `gpu` but present
    /// in a build for a newer architecture is [`Error::Unsupported`], naming the architecture
    /// it needs and the GPU's compute capability.
    ///
    /// # Errors
    /// As above, and [`Error::MissingKernel`] for a kernel no build has.
    pub(crate) fn get_on(&self, kernel: &str, gpu: &Gpu) -> Result<cu::CUfunction> {
        self.get(kernel).map_err(|missing| {
            let needs = self
                .builds
                .iter()
                .find(|(_, text)| ptx::entries(text).any(|e| e == kernel));
            match needs {
                Some((arch, _)) => {
                    let info = gpu.info();
                    let (major, minor) = info.compute_capability;
                    Error::Unsupported(format!(
                        "kernel {kernel} of module {} exists only in builds from {arch}; GPU {} \
                         ({}) is compute capability {major}.{minor}",
                        self.name, info.ordinal, info.name
                    ))
                }
                None => missing,
            }
        })
    }
}

/// A module of your kernels, loaded for a [`Target`]: on a GPU the newest PTX build the device
/// can run, with every kernel looked up once; on the simulator, nothing (a launch calls the
/// kernel's Rust function). Launch its kernels with
/// `launch!(target, module => kernels::my_kernel, cfg, (args…))`.
pub struct Module {
    name: &'static str,
    /// `None` on the simulator.
    loaded: Option<Loaded>,
}

/// Fields drop in order: the module before the context it lives in.
struct Loaded {
    functions: Functions,
    arch: &'static str,
    ordinal: u32,
    /// Held, not read: the module's context (the device's primary context, retained once more)
    /// lives as long as the module, whatever happens to the `Gpu`.
    _context: cust::context::Context,
}

impl Module {
    /// Loads `ptx` for `target`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when no build is for an architecture at or below the device's
    /// compute capability; a driver error if the PTX does not load (a build for a newer PTX
    /// ISA than the driver knows, for instance).
    pub fn load(target: &Target, ptx: PtxBuilds) -> Result<Module> {
        let gpu = match target {
            Target::Sim => {
                return Ok(Module {
                    name: ptx.name,
                    loaded: None,
                });
            }
            Target::Gpu(gpu) => gpu,
        };
        let cc = gpu.info().compute_capability;
        let Some((arch, text)) = ptx::best_in(ptx.builds, cc) else {
            let arches: Vec<&str> = ptx.builds.iter().map(|(a, _)| *a).collect();
            return Err(Error::Unsupported(format!(
                "module {}: no PTX build for compute capability {}.{} (builds: {})",
                ptx.name,
                cc.0,
                cc.1,
                arches.join(", ")
            )));
        };
        let ordinal = gpu.info().ordinal;
        let device = cust::device::Device::get_device(ordinal).map_err(cust_err("cuDeviceGet"))?;
        let context =
            cust::context::Context::new(device).map_err(cust_err("cuDevicePrimaryCtxRetain"))?;
        gpu.make_current()?;
        let functions = Functions::load(ptx.name, ptx.builds, arch, text, ptx::entries(text))?;
        Ok(Module {
            name: ptx.name,
            loaded: Some(Loaded {
                functions,
                arch,
                ordinal,
                _context: context,
            }),
        })
    }

    /// The module's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The PTX build loaded (`sm_90`, …), `None` on the simulator.
    pub fn arch(&self) -> Option<&'static str> {
        self.loaded.as_ref().map(|l| l.arch)
    }

    /// The module's kernels on `gpu`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a module loaded for the simulator or another GPU.
    pub(crate) fn functions_on(&self, gpu: &Gpu) -> Result<&Functions> {
        let ordinal = gpu.info().ordinal;
        match &self.loaded {
            Some(l) if l.ordinal == ordinal => Ok(&l.functions),
            Some(l) => Err(Error::InvalidInput(format!(
                "module {} was loaded on GPU {}, not GPU {ordinal}",
                self.name, l.ordinal
            ))),
            None => Err(Error::InvalidInput(format!(
                "module {} was loaded for the simulator, not GPU {ordinal}",
                self.name
            ))),
        }
    }

    /// Checks that the module was loaded for the simulator.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a module loaded on a GPU.
    pub(crate) fn check_sim(&self) -> Result<()> {
        match &self.loaded {
            None => Ok(()),
            Some(l) => Err(Error::InvalidInput(format!(
                "module {} was loaded on GPU {}, not for the simulator",
                self.name, l.ordinal
            ))),
        }
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.name)
            .field("arch", &self.arch())
            .finish_non_exhaustive()
    }
}
