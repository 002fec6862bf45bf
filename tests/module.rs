//! Modules of your own kernels (`gridsync::Module`), exercised with gridsync's own PTX loaded
//! as if it were a user's: the `module => path` launch on the simulator and the GPU, the
//! missing-kernel error, a module used with the wrong target, the co-residency check.

mod common;

use gridsync::runtime::grid::check_coresident_in;
use gridsync::runtime::launch::LaunchMode;
use gridsync::runtime::ptx::{BUILDS, entries};
use gridsync::{Error, LaunchConfig, Module, PtxBuilds, Target, launch, launch_cooperative};

/// gridsync's own builds, under another name.
const OWN: PtxBuilds = PtxBuilds {
    name: "borrowed",
    builds: BUILDS,
};

#[test]
fn entries_are_the_kernel_list() {
    for (arch, ptx) in BUILDS {
        let mut found: Vec<&str> = entries(ptx).collect();
        // Hopper's kernels are in the builds from sm_90 only.
        let (major, minor) = gridsync::runtime::ptx::arch_capability(arch).unwrap();
        let mut listed: Vec<&str> = gpu::Kernel::ALL
            .iter()
            .filter(|k| k.min_arch() <= major * 10 + minor)
            .map(|k| k.name())
            .collect();
        found.sort_unstable();
        listed.sort_unstable();
        assert_eq!(found, listed, "{arch}");
    }
}

/// 10 × 16 threads each add one, plainly or cooperatively, through `module => path`.
fn add_one_atomic_through(target: &Target, module: &Module) {
    let cfg = LaunchConfig::linear(10, 16);
    for cooperative in [false, true] {
        let x = target.zeros::<u32>(1).unwrap();
        // SAFETY: `x` holds the one u32 the kernel touches, atomically.
        unsafe {
            if cooperative {
                launch_cooperative!(target, module => gpu::lessons::race::add_one_atomic, cfg, (x.ptr()))
            } else {
                launch!(target, module => gpu::lessons::race::add_one_atomic, cfg, (x.ptr()))
            }
        }
        .unwrap();
        target.synchronize().unwrap();
        assert_eq!(
            target.download(&x).unwrap(),
            [160],
            "cooperative: {cooperative}"
        );
    }
}

/// A launch of a kernel the module does not have names both.
fn missing_kernel_is_named(target: &Target, module: &Module) {
    let x = target.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(1, 1);
    // SAFETY: nothing is launched: the name is not in the module.
    let r = unsafe {
        target.launch_in(
            module,
            "no_such_kernel",
            cfg,
            (x.ptr(),),
            gpu::lessons::race::add_one_atomic,
            LaunchMode::Plain,
        )
    };
    match r {
        Err(Error::MissingKernel { kernel, module }) => {
            assert_eq!(
                (kernel.as_str(), module.as_str()),
                ("no_such_kernel", "borrowed")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_module_on_the_simulator_runs_the_rust_functions() {
    let target = Target::Sim;
    let module = Module::load(&target, OWN).unwrap();
    assert_eq!((module.name(), module.arch()), ("borrowed", None));
    add_one_atomic_through(&target, &module);
    let name = "add_one_atomic";
    let limit = check_coresident_in(&target, &module, name, &LaunchConfig::linear(2, 32));
    assert!(limit.unwrap() >= 2);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn a_module_on_the_gpu_launches_by_path_and_names_missing_kernels() {
    let target = common::gpu();
    let module = Module::load(&target, OWN).unwrap();
    let Target::Gpu(gpu) = &target else {
        unreachable!()
    };
    assert_eq!(module.arch(), Some(gpu.info().ptx_arch));
    add_one_atomic_through(&target, &module);
    missing_kernel_is_named(&target, &module);
    // Co-residency of a module's kernel: a grid far past the device refused before launch.
    let huge = LaunchConfig::linear(1 << 20, 1024);
    let r = check_coresident_in(&target, &module, "add_one_atomic", &huge);
    assert!(matches!(r, Err(Error::InvalidInput(_))), "{r:?}");
    // A module loaded for the GPU is refused on the simulator, and the reverse.
    let x = Target::Sim.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(1, 1);
    // SAFETY: nothing is launched: the module is refused first.
    let r = unsafe {
        launch!(Target::Sim, module => gpu::lessons::race::add_one_atomic, cfg, (x.ptr()))
    };
    assert!(matches!(r, Err(Error::InvalidInput(_))), "{r:?}");
    let sim_module = Module::load(&Target::Sim, OWN).unwrap();
    let y = target.zeros::<u32>(1).unwrap();
    // SAFETY: as above.
    let r = unsafe {
        launch!(target, sim_module => gpu::lessons::race::add_one_atomic, cfg, (y.ptr()))
    };
    assert!(matches!(r, Err(Error::InvalidInput(_))), "{r:?}");
}
