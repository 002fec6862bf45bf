//! How long the device may wait: the bounds the host hands to kernels' spins, stretched where
//! everything runs slower than on a bare GPU.
//!
//! Every device-side spin that waits on other threads or blocks is bounded: past its bound a
//! kernel records an error and leaves, and the host returns an error instead of hanging. Under
//! compute-sanitizer a kernel runs 10–100× slower, and a bound chosen as "never in practice"
//! (a second for a pipeline stage to land) trips although nothing is wrong. A sanitizer run
//! checks correctness, not timing, so the host stretches the bounds it hands to kernels:
//!
//! - the scale is [`GRIDSYNC_WAIT_SCALE`](WAIT_SCALE_VAR) where set (1 to [`MAX_WAIT_SCALE`]),
//!   else [`SANITIZER_WAIT_SCALE`] (100) under a sanitizer ([`under_sanitizer`]), else 1;
//! - only bounds of [`STRETCH_FROM_NS`] (1 s) or more stretch. Shorter bounds are deliberate: a
//!   test or a lesson that provokes a timeout (a broken kernel that waits for a phase that
//!   already passed, a lock held for ever) sets them short to see it quickly, and a sanitizer
//!   run should see it too. The same line as the simulator's own
//!   [`stretch_bound`](gpu::sim::stretch_bound).
//!
//! A debugger that stops a kernel's threads does not stop the clock they read (`%globaltimer`):
//! set `GRIDSYNC_WAIT_SCALE` there too.

use crate::runtime::error::{Error, Result};
use std::sync::OnceLock;

/// The environment variable that sets the scale of every wait bound of a second or more.
pub const WAIT_SCALE_VAR: &str = "GRIDSYNC_WAIT_SCALE";
/// The largest scale [`WAIT_SCALE_VAR`] may give: a 1 s bound becomes under three hours.
pub const MAX_WAIT_SCALE: u64 = 10_000;
/// The scale under a sanitizer where [`WAIT_SCALE_VAR`] is not set: compute-sanitizer's tools
/// slow kernels 10–100×.
pub const SANITIZER_WAIT_SCALE: u64 = 100;
/// Bounds from this one up are stretched; shorter ones are a test's or a lesson's deliberate
/// timeout and are kept (the simulator draws the same line).
pub const STRETCH_FROM_NS: u64 = gpu::sim::STRETCH_BOUNDS_FROM_NS;

/// The scale of wait bounds in this process, found once: [`WAIT_SCALE_VAR`] where set and
/// valid, else [`SANITIZER_WAIT_SCALE`] under a sanitizer, else 1. A malformed or out-of-range
/// value is ignored with one warning on stderr naming the variable (a run is not refused for
/// it). Read at the first bound a host call hands to a kernel — after the driver loaded any
/// sanitizer's library, which [`under_sanitizer`] looks for.
pub fn wait_scale() -> u64 {
    static SCALE: OnceLock<u64> = OnceLock::new();
    *SCALE.get_or_init(|| {
        let value = std::env::var_os(WAIT_SCALE_VAR).map(|v| {
            v.to_str()
                .map(str::to_owned)
                .unwrap_or_else(|| "(not UTF-8)".into())
        });
        wait_scale_from(value.as_deref(), under_sanitizer).unwrap_or_else(|e| {
            let scale = detected_scale(under_sanitizer());
            eprintln!("gridsync: {e}; ignored, wait bounds scale by {scale}");
            scale
        })
    })
}

/// The scale [`WAIT_SCALE_VAR`]'s `value` gives (`None` or empty: not set, then
/// [`SANITIZER_WAIT_SCALE`] where `under_sanitizer()` says so, else 1). The pure core of
/// [`wait_scale`].
///
/// # Errors
/// [`Error::InvalidInput`] naming the variable for a value that is not an integer from 1 to
/// [`MAX_WAIT_SCALE`].
pub fn wait_scale_from(value: Option<&str>, under_sanitizer: impl FnOnce() -> bool) -> Result<u64> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(detected_scale(under_sanitizer()));
    };
    match value.parse::<u64>() {
        Ok(scale @ 1..=MAX_WAIT_SCALE) => Ok(scale),
        _ => Err(Error::InvalidInput(format!(
            "{WAIT_SCALE_VAR}={value}: expected an integer from 1 to {MAX_WAIT_SCALE}"
        ))),
    }
}

fn detected_scale(under_sanitizer: bool) -> u64 {
    if under_sanitizer {
        SANITIZER_WAIT_SCALE
    } else {
        1
    }
}

/// The bound to hand a kernel for a wait meant to last at most `ns` on a bare GPU: `ns` ×
/// [`wait_scale`] for bounds of [`STRETCH_FROM_NS`] or more (saturating), `ns` itself for
/// shorter, deliberate ones.
pub fn wait_bound(ns: u64) -> u64 {
    scaled_bound(ns, wait_scale())
}

/// [`wait_bound`] at `scale`.
pub fn scaled_bound(ns: u64, scale: u64) -> u64 {
    if ns >= STRETCH_FROM_NS {
        ns.saturating_mul(scale)
    } else {
        ns
    }
}

/// Whether this process runs under NVIDIA's compute-sanitizer: an environment variable of
/// its (`NV_SANITIZER*`, `NV_COMPUTE_SANITIZER*`), its library as the driver's injection
/// (`CUDA_INJECTION64_PATH`), or (Linux) its library mapped into the process.
pub fn under_sanitizer() -> bool {
    let names = std::env::vars_os().map(|(k, _)| k.to_string_lossy().into_owned());
    #[cfg(target_os = "linux")]
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    #[cfg(not(target_os = "linux"))]
    let maps = String::new();
    detect_sanitizer(
        |k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()),
        names,
        &maps,
    )
}

/// The prefixes of the environment variables compute-sanitizer sets in the process it runs.
const SANITIZER_VAR_PREFIXES: [&str; 2] = ["NV_SANITIZER", "NV_COMPUTE_SANITIZER"];
/// The libraries compute-sanitizer has the driver load into the process.
const SANITIZER_LIBRARIES: [&str; 2] = ["libsanitizer-collection.so", "libsanitizer-public.so"];

/// [`under_sanitizer`]'s pure core: `var` looks one environment variable up, `names` are the
/// names of all of them, `maps` is the text of `/proc/self/maps` (empty where there is none).
pub fn detect_sanitizer(
    var: impl Fn(&str) -> Option<String>,
    mut names: impl Iterator<Item = String>,
    maps: &str,
) -> bool {
    names.any(|n| SANITIZER_VAR_PREFIXES.iter().any(|p| n.starts_with(p)))
        || var("CUDA_INJECTION64_PATH")
            .is_some_and(|p| p.to_ascii_lowercase().contains("sanitizer"))
        || maps
            .lines()
            .any(|line| SANITIZER_LIBRARIES.iter().any(|lib| line.contains(lib)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    fn names(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn a_valid_scale_is_taken_as_given() {
        let never = || -> bool { panic!("detection is not consulted when the variable is set") };
        assert_eq!(wait_scale_from(Some("1"), never).unwrap(), 1);
        assert_eq!(wait_scale_from(Some("7"), never).unwrap(), 7);
        assert_eq!(wait_scale_from(Some(" 250 "), never).unwrap(), 250);
        assert_eq!(
            wait_scale_from(Some("10000"), never).unwrap(),
            MAX_WAIT_SCALE
        );
        // Set, it wins over detection: 1 undoes the sanitizer's stretch.
        assert_eq!(wait_scale_from(Some("1"), || true).unwrap(), 1);
    }

    #[test]
    fn malformed_zero_and_huge_scales_are_errors_naming_the_variable() {
        for bad in [
            "0",
            "10001",
            "18446744073709551616",
            "-3",
            "2.5",
            "1e3",
            "x100",
            "(not UTF-8)",
        ] {
            let e = wait_scale_from(Some(bad), || false).unwrap_err();
            assert!(matches!(e, Error::InvalidInput(_)), "{bad}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(WAIT_SCALE_VAR), "{msg}");
            assert!(msg.contains("1 to 10000"), "{msg}");
        }
    }

    #[test]
    fn unset_or_empty_falls_back_to_detection() {
        assert_eq!(wait_scale_from(None, || false).unwrap(), 1);
        assert_eq!(
            wait_scale_from(None, || true).unwrap(),
            SANITIZER_WAIT_SCALE
        );
        assert_eq!(
            wait_scale_from(Some(""), || true).unwrap(),
            SANITIZER_WAIT_SCALE
        );
        assert_eq!(wait_scale_from(Some("  "), || false).unwrap(), 1);
    }

    #[test]
    fn only_bounds_of_a_second_or_more_stretch() {
        assert_eq!(scaled_bound(1_000_000_000, 100), 100_000_000_000);
        assert_eq!(scaled_bound(2_000_000_000, 3), 6_000_000_000);
        // Deliberately short bounds (a test's or a lesson's provoked timeout) stay.
        assert_eq!(scaled_bound(999_999_999, 100), 999_999_999);
        assert_eq!(scaled_bound(10_000_000, 100), 10_000_000);
        assert_eq!(scaled_bound(0, 100), 0);
        // Scale 1 changes nothing; a huge bound saturates instead of wrapping.
        assert_eq!(scaled_bound(5_000_000_000, 1), 5_000_000_000);
        assert_eq!(scaled_bound(u64::MAX / 2, MAX_WAIT_SCALE), u64::MAX);
        assert_eq!(STRETCH_FROM_NS, 1_000_000_000);
    }

    #[test]
    fn wait_bound_uses_the_process_scale() {
        let scale = wait_scale();
        assert!((1..=MAX_WAIT_SCALE).contains(&scale));
        assert_eq!(wait_bound(1_000_000_000), 1_000_000_000 * scale);
        assert_eq!(wait_bound(50_000_000), 50_000_000);
    }

    #[test]
    fn nothing_of_a_sanitizer_detects_nothing() {
        let maps = "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/gridsync\n\
                    7f0c-7f0d r-xp 00000000 08:02 1 /usr/lib/x86_64-linux-gnu/libcuda.so.1\n";
        assert!(!detect_sanitizer(
            none,
            names(&["PATH", "HOME", "SANITIZER", "XNV_SANITIZER", "NV_SANITIZE"]),
            maps
        ));
        assert!(!detect_sanitizer(none, names(&[]), ""));
    }

    #[test]
    fn a_sanitizer_variable_is_detected() {
        for name in [
            "NV_SANITIZER_INJECTION_PORT_RANGE_BEGIN",
            "NV_SANITIZER",
            "NV_COMPUTE_SANITIZER_LOCAL_CONNECTION_OVERRIDE",
        ] {
            assert!(detect_sanitizer(none, names(&["PATH", name]), ""), "{name}");
        }
    }

    #[test]
    fn the_sanitizer_as_the_drivers_injection_is_detected() {
        let injection = |path: &'static str| {
            move |k: &str| (k == "CUDA_INJECTION64_PATH").then(|| path.to_string())
        };
        let path = "/usr/local/cuda/compute-sanitizer/libsanitizer-collection.so";
        assert!(detect_sanitizer(
            injection(path),
            names(&["CUDA_INJECTION64_PATH"]),
            ""
        ));
        assert!(detect_sanitizer(
            injection("/opt/Sanitizer/x.so"),
            names(&[]),
            ""
        ));
        // Another tool's injection (a profiler) is not a sanitizer.
        let nsys = "/opt/nvidia/nsight-systems/target-linux-x64/libToolsInjection64.so";
        assert!(!detect_sanitizer(injection(nsys), names(&[]), ""));
    }

    #[test]
    fn the_sanitizers_library_in_the_maps_is_detected() {
        for lib in ["libsanitizer-collection.so", "libsanitizer-public.so"] {
            let maps = format!(
                "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/gridsync\n\
                 7f0c2000-7f0c9000 r-xp 00000000 08:02 99 /usr/local/cuda/compute-sanitizer/{lib}\n"
            );
            assert!(detect_sanitizer(none, names(&["PATH"]), &maps), "{lib}");
        }
    }
}
