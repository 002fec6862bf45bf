//! `gridsync doctor`: what this machine has of what gridsync needs, and for each missing piece
//! the command that fixes it.
//!
//! Each check is one [`Check`]: found or not, required or not, what was found, the fix. The
//! driver and a GPU are required to run on a GPU; the pinned toolchain and `rust-src` to build
//! kernels (gridsync itself, a `gridsync new` project); `ptxas`, NCCL and mdbook are optional.
//! The exit status is [`EXIT_CHECK_FAILED`](super::output::EXIT_CHECK_FAILED) when a required
//! piece is missing.

use super::output::{EXIT_CHECK_FAILED, print_json};
use cust::device::{Device, DeviceAttribute};
use gridsync::runtime::device::init_driver;
use gridsync::{Error, Gpu};
use serde::Serialize;
use std::process::Command;

/// The toolchain the device crate is built with, as `rust-toolchain.toml` pins it.
const TOOLCHAIN_FILE: &str = include_str!("../scaffold/template/rust-toolchain.toml");

#[derive(Serialize)]
struct Check {
    /// What was checked, e.g. `"NVIDIA driver"`.
    name: String,
    /// Whether it was found (and works).
    ok: bool,
    /// Whether gridsync needs it: a missing required piece fails the doctor.
    required: bool,
    /// What it is needed for.
    needed_for: &'static str,
    /// What was found, or why it is missing.
    detail: String,
    /// The command (or step) that fixes it, where it is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

/// One GPU as the driver describes it.
#[derive(Serialize)]
struct GpuReport {
    ordinal: u32,
    name: String,
    compute_capability: (u32, u32),
    sms: u32,
    memory_bytes: u64,
    /// Thread block clusters (sm_90 and newer): the most blocks in one, with the
    /// non-portable attribute.
    max_cluster_blocks: Option<u64>,
    /// The PTX build of gridsync's kernels that loads on it (`sm_90`, …).
    ptx_build: Option<String>,
    /// Why none loads, where none does.
    #[serde(skip_serializing_if = "Option::is_none")]
    ptx_error: Option<String>,
}

/// Two GPUs: whether each can map the other's memory, and over what.
#[derive(Serialize)]
struct PairReport {
    a: u32,
    b: u32,
    peer_access: bool,
    /// Atomics on the peer's memory execute natively (NVLink; not over most PCIe links).
    native_atomics: bool,
    /// Whether NVML reports the pair linked by NVLink (`None`: NVML could not say).
    nvlink: Option<bool>,
}

#[derive(Serialize)]
struct Doctor {
    /// Every required check passed.
    ok: bool,
    checks: Vec<Check>,
    gpus: Vec<GpuReport>,
    pairs: Vec<PairReport>,
}

/// Runs every check and prints the report; exits [`EXIT_CHECK_FAILED`] when a required
/// piece is missing.
///
/// # Errors
/// A JSON error.
pub fn command(json: bool) -> gridsync::Result<()> {
    let mut checks = Vec::new();
    let (gpus, pairs) = driver_and_gpus(&mut checks);
    checks.extend(toolchain());
    checks.push(ptxas());
    checks.push(nccl());
    checks.push(mdbook());
    let d = Doctor {
        ok: checks.iter().all(|c| c.ok || !c.required),
        checks,
        gpus,
        pairs,
    };
    if json {
        print_json(&d)?;
    } else {
        print(&d);
    }
    if !d.ok {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(EXIT_CHECK_FAILED);
    }
    Ok(())
}

fn print(d: &Doctor) {
    println!("gridsync doctor: what this machine has of what gridsync needs");
    for c in &d.checks {
        let mark = match (c.ok, c.required) {
            (true, _) => "ok",
            (false, true) => "MISSING",
            (false, false) => "missing",
        };
        println!("  {mark:<8} {:<22} {}", c.name, c.detail);
        if let Some(fix) = &c.fix {
            println!("  {:<8} {:<22} fix: {fix}", "", "");
        }
    }
    if !d.gpus.is_empty() {
        println!();
        for g in &d.gpus {
            let clusters = g.max_cluster_blocks.map_or("no clusters".to_string(), |n| {
                format!("clusters of up to {n} blocks")
            });
            let build = match (&g.ptx_build, &g.ptx_error) {
                (Some(arch), _) => format!("gridsync's {arch} build loads"),
                (None, why) => format!(
                    "gridsync's kernels do not load: {}",
                    why.as_deref().unwrap_or("?")
                ),
            };
            println!(
                "  GPU {}: {}, compute capability {}.{}, {} SMs, {:.1} GiB, {clusters}; {build}",
                g.ordinal,
                g.name,
                g.compute_capability.0,
                g.compute_capability.1,
                g.sms,
                g.memory_bytes as f64 / (1u64 << 30) as f64
            );
        }
    }
    for p in &d.pairs {
        let link = match p.nvlink {
            Some(true) => "NVLink",
            Some(false) => "no NVLink (PCIe or the host)",
            None => "link unknown (no NVML)",
        };
        println!(
            "  GPUs {} and {}: peer access {}, native atomics {}, {link}",
            p.a,
            p.b,
            yes(p.peer_access),
            yes(p.native_atomics)
        );
    }
    println!();
    if d.ok {
        println!("  Everything required is here.");
    } else {
        println!(
            "  Something required is missing (MISSING above). Every topic still runs on the CPU \
             simulator: gridsync --simulate."
        );
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The driver check, and the GPUs and pairs where there is a driver.
fn driver_and_gpus(checks: &mut Vec<Check>) -> (Vec<GpuReport>, Vec<PairReport>) {
    let count = match init_driver() {
        Ok(n) => n,
        Err(e) => {
            let no_driver = matches!(&e, Error::NoGpu(why) if why.contains("driver on this"));
            checks.push(Check {
                name: if no_driver { "NVIDIA driver" } else { "GPU" }.into(),
                ok: false,
                required: true,
                needed_for: "running on a GPU",
                detail: e.to_string(),
                fix: Some(if no_driver {
                    "install the NVIDIA driver (CUDA 12 or newer; on Debian/Ubuntu, e.g. `sudo apt \
                     install nvidia-driver`; see NVIDIA's installation guide) and reboot; \
                     meanwhile every topic runs on the simulator: gridsync --simulate"
                        .into()
                } else {
                    "check `nvidia-smi` and CUDA_VISIBLE_DEVICES; meanwhile every topic runs on \
                     the simulator: gridsync --simulate"
                        .into()
                }),
            });
            return (Vec::new(), Vec::new());
        }
    };
    let version = gridsync::runtime::peer::driver_version().unwrap_or(0);
    let nvml = Nvml::open();
    let kernel_driver = nvml.as_ref().and_then(Nvml::driver_version);
    checks.push(Check {
        name: "NVIDIA driver".into(),
        ok: true,
        required: true,
        needed_for: "running on a GPU",
        detail: format!(
            "CUDA {}.{}{}, {count} GPU(s)",
            version / 1000,
            version % 1000 / 10,
            kernel_driver.map_or(String::new(), |v| format!(" (driver {v})"))
        ),
        fix: None,
    });
    let gpus: Vec<GpuReport> = (0..count).filter_map(gpu_report).collect();
    let old: Vec<String> = gpus
        .iter()
        .filter(|g| g.compute_capability.0 < 7)
        .map(|g| {
            format!(
                "GPU {} ({}.{})",
                g.ordinal, g.compute_capability.0, g.compute_capability.1
            )
        })
        .collect();
    checks.push(Check {
        name: "GPU of sm_70 or newer".into(),
        ok: gpus.len() > old.len(),
        required: true,
        needed_for: "running gridsync's kernels",
        detail: if old.is_empty() {
            format!(
                "{} GPU(s), every one compute capability 7.0 or newer",
                gpus.len()
            )
        } else {
            format!("too old for gridsync's kernels: {}", old.join(", "))
        },
        fix: (gpus.len() == old.len()).then(|| {
            "a GPU of compute capability 7.0 (Volta) or newer; the sm_90 topics (mbarrier, \
             pipeline, clusters) need 9.0 (Hopper)"
                .into()
        }),
    });
    let mut pairs = Vec::new();
    for a in 0..count {
        for b in a + 1..count {
            pairs.push(pair_report(a, b, nvml.as_ref()));
        }
    }
    (gpus, pairs)
}

fn gpu_report(ordinal: u32) -> Option<GpuReport> {
    let device = Device::get_device(ordinal).ok()?;
    let attr = |a| device.get_attribute(a).map_or(0, |v| v as u32);
    let cc = (
        attr(DeviceAttribute::ComputeCapabilityMajor),
        attr(DeviceAttribute::ComputeCapabilityMinor),
    );
    let loaded = Gpu::new(ordinal)
        .map(|g| g.info().ptx_arch.to_string())
        .map_err(|e| e.to_string());
    Some(GpuReport {
        ordinal,
        name: device.name().unwrap_or_else(|_| "?".into()),
        compute_capability: cc,
        sms: attr(DeviceAttribute::MultiprocessorCount),
        memory_bytes: device.total_memory().map_or(0, |b| b as u64),
        max_cluster_blocks: (cc.0 >= 9).then_some(gridsync::runtime::cluster::MAX_CLUSTER_BLOCKS),
        ptx_build: loaded.as_ref().ok().cloned(),
        ptx_error: loaded.err(),
    })
}

fn pair_report(a: u32, b: u32, nvml: Option<&Nvml>) -> PairReport {
    use gridsync::runtime::peer::{can_access_peer, native_peer_atomics};
    PairReport {
        a,
        b,
        peer_access: can_access_peer(a, b).unwrap_or(false),
        native_atomics: native_peer_atomics(a, b).unwrap_or(false),
        nvlink: nvml.and_then(|n| n.nvlink(a, b)),
    }
}

/// The few NVML calls the doctor makes (`libnvidia-ml.so.1`, part of the driver), loaded at run
/// time: four functions do not warrant a binding crate.
struct Nvml {
    lib: libloading::Library,
}

/// `nvmlDevice_t`.
type NvmlDevice = *mut std::ffi::c_void;
/// `NVML_P2P_CAPS_INDEX_NVLINK` of `nvmlGpuP2PCapsIndex_t`.
const NVML_P2P_CAPS_INDEX_NVLINK: i32 = 2;

impl Nvml {
    fn open() -> Option<Nvml> {
        // SAFETY: loading the driver's management library runs its initializers, which are
        // meant to run in any process.
        let lib = unsafe { libloading::Library::new("libnvidia-ml.so.1") }.ok()?;
        // SAFETY: the signature of `nvmlInit_v2` (no arguments, an `nvmlReturn_t`).
        let init: libloading::Symbol<unsafe extern "C" fn() -> i32> =
            unsafe { lib.get(b"nvmlInit_v2\0") }.ok()?;
        // SAFETY: no arguments.
        (unsafe { init() } == 0).then_some(Nvml { lib })
    }

    fn driver_version(&self) -> Option<String> {
        // SAFETY: the signature of `nvmlSystemGetDriverVersion`.
        let f: libloading::Symbol<unsafe extern "C" fn(*mut u8, u32) -> i32> =
            unsafe { self.lib.get(b"nvmlSystemGetDriverVersion\0") }.ok()?;
        let mut buf = [0u8; 96];
        // SAFETY: the buffer and its length.
        if unsafe { f(buf.as_mut_ptr(), buf.len() as u32) } != 0 {
            return None;
        }
        let end = buf.iter().position(|&c| c == 0)?;
        Some(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    /// NVML's handle of the CUDA device `ordinal`, found by its PCI bus id (NVML numbers
    /// devices in PCI order, CUDA fastest first unless CUDA_DEVICE_ORDER says otherwise).
    fn device(&self, ordinal: u32) -> Option<NvmlDevice> {
        let bus =
            std::ffi::CString::new(gridsync::runtime::peer::pci_bus_id(ordinal).ok()?).ok()?;
        // SAFETY: the signature of `nvmlDeviceGetHandleByPciBusId_v2`.
        let f: libloading::Symbol<unsafe extern "C" fn(*const i8, *mut NvmlDevice) -> i32> =
            unsafe { self.lib.get(b"nvmlDeviceGetHandleByPciBusId_v2\0") }.ok()?;
        let mut device = std::ptr::null_mut();
        // SAFETY: a NUL-terminated bus id and a valid out-pointer.
        (unsafe { f(bus.as_ptr(), &mut device) } == 0).then_some(device)
    }

    fn nvlink(&self, a: u32, b: u32) -> Option<bool> {
        let (da, db) = (self.device(a)?, self.device(b)?);
        // SAFETY: the signature of `nvmlDeviceGetP2PStatus`.
        let f: libloading::Symbol<
            unsafe extern "C" fn(NvmlDevice, NvmlDevice, i32, *mut i32) -> i32,
        > = unsafe { self.lib.get(b"nvmlDeviceGetP2PStatus\0") }.ok()?;
        let mut status = -1;
        // SAFETY: two handles NVML gave and a valid out-pointer.
        (unsafe { f(da, db, NVML_P2P_CAPS_INDEX_NVLINK, &mut status) } == 0).then_some(status == 0)
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        // SAFETY: the signature of `nvmlShutdown`; NVML was initialized by `open`.
        if let Ok(f) = unsafe {
            self.lib
                .get::<unsafe extern "C" fn() -> i32>(b"nvmlShutdown\0")
        } {
            // SAFETY: no arguments.
            unsafe { f() };
        }
    }
}

/// The channel `rust-toolchain.toml` pins, e.g. `nightly-2026-05-20`.
pub fn pinned_toolchain() -> &'static str {
    TOOLCHAIN_FILE
        .lines()
        .find_map(|l| {
            let v = l.trim().strip_prefix("channel")?.trim().strip_prefix('=')?;
            Some(v.trim().trim_matches('"'))
        })
        .unwrap_or("nightly")
}

/// Runs `program args` and returns its standard output where it succeeds.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The pinned toolchain and its `rust-src` (the device crate is built with
/// `-Zbuild-std=core`).
fn toolchain() -> Vec<Check> {
    let channel = pinned_toolchain();
    let needed_for = "building kernels (gridsync, a gridsync new project)";
    let Some(list) = output("rustup", &["toolchain", "list"]) else {
        return vec![Check {
            name: "rustup".into(),
            ok: false,
            required: true,
            needed_for,
            detail: "rustup is not on the PATH".into(),
            fix: Some(
                "install rustup: curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh"
                    .into(),
            ),
        }];
    };
    let installed = list.lines().any(|l| l.starts_with(channel));
    let mut checks = vec![Check {
        name: "Rust toolchain".into(),
        ok: installed,
        required: true,
        needed_for,
        detail: if installed {
            format!("{channel} (pinned by rust-toolchain.toml)")
        } else {
            format!("{channel}, pinned by rust-toolchain.toml, is not installed")
        },
        fix: (!installed).then(|| {
            format!("rustup toolchain install {channel} --profile minimal --component rust-src")
        }),
    }];
    if installed {
        let src = output(
            "rustup",
            &["component", "list", "--installed", "--toolchain", channel],
        )
        .is_some_and(|l| l.lines().any(|c| c.trim().starts_with("rust-src")));
        checks.push(Check {
            name: "rust-src".into(),
            ok: src,
            required: true,
            needed_for: "-Zbuild-std=core, the device crate's build",
            detail: if src {
                format!("installed for {channel}")
            } else {
                format!("not installed for {channel}")
            },
            fix: (!src).then(|| format!("rustup component add rust-src --toolchain {channel}")),
        });
    }
    checks
}

/// `ptxas`, where the tests look for it (the build script's search).
fn ptxas() -> Check {
    let found = gridsync_builder::locate_ptxas();
    let missing = found.is_none();
    Check {
        name: "ptxas".into(),
        ok: found.is_some(),
        required: false,
        needed_for: "the tests that assemble every PTX build (else they are ignored)",
        detail: found.map_or(
            "not found (PTXAS, PATH, python3's nvidia.cuda_nvcc)".into(),
            |p| p.display().to_string(),
        ),
        fix: missing.then(|| {
            "python3 -m pip install nvidia-cuda-nvcc-cu12 (or install the CUDA toolkit)".into()
        }),
    }
}

fn nccl() -> Check {
    let installed = gridsync::multi::collective::nccl_installed();
    let version = installed
        .then(gridsync::multi::collective::nccl_version)
        .and_then(|v| v.ok());
    Check {
        name: "NCCL".into(),
        ok: version.is_some(),
        required: false,
        needed_for: "multi's combine over NCCL (else peer copies or the hosts)",
        detail: match (installed, version) {
            (_, Some(v)) => format!("version {}", gridsync::multi::collective::version_text(v)),
            (true, None) => "a libnccl.so was found, but it is not a usable NCCL".into(),
            (false, None) => "no libnccl.so on the library path".into(),
        },
        fix: version.is_none().then(|| {
            "python3 -m pip install nvidia-nccl-cu12, then put its lib/ on LD_LIBRARY_PATH with \
             a libnccl.so link to libnccl.so.2 (or install NVIDIA's libnccl-dev package)"
                .into()
        }),
    }
}

fn mdbook() -> Check {
    let version = output("mdbook", &["--version"]);
    let missing = version.is_none();
    Check {
        name: "mdbook".into(),
        ok: version.is_some(),
        required: false,
        needed_for: "building the book (mdbook build book)",
        detail: version.map_or("not on the PATH".into(), |v| v.trim().to_string()),
        fix: missing.then(|| "cargo install mdbook --locked --version 0.5.4".into()),
    }
}
