//! How much memory a size asks for, and whether the host and the GPU have it — checked before
//! anything is allocated.
//!
//! A size a user gives (`--len`, `--bytes`, a file) becomes a [`Footprint`]: the bytes it needs
//! in host memory and in GPU memory. [`check_fits`] compares it with what the host has available
//! (`MemAvailable`, lowered to a cgroup's limit where one is set) and, on a GPU, with the free
//! device memory, keeping a tenth of each to spare; past that it returns [`Error::TooLarge`]
//! naming the option. Without it, a size too large for the host aborts the process inside the
//! allocator ("memory allocation of … bytes failed"), or the kernel's out-of-memory killer ends
//! it, and neither says which option was too large.
//!
//! On the simulator the device's buffers are host memory too, so both halves count against the
//! host.

use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result, Room, check};
use crate::runtime::launch::Target;

/// Bytes a size needs in host memory and in GPU memory (on the simulator, host memory too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Host bytes: inputs generated or read, results, CPU references.
    pub host: u64,
    /// Device bytes: buffers on the GPU.
    pub device: u64,
}

impl Footprint {
    /// `count` elements, each needing `host_each` bytes on the host and `device_each` on the
    /// device; `None` if the product overflows (no machine holds it).
    pub fn per_element(count: u64, host_each: u64, device_each: u64) -> Option<Footprint> {
        Some(Footprint {
            host: count.checked_mul(host_each)?,
            device: count.checked_mul(device_each)?,
        })
    }
}

/// The share of the available memory a size may take: a tenth stays for everything else.
pub(crate) fn usable(available: u64) -> u64 {
    available / 10 * 9
}

/// Bytes of memory the host can still give this process: `MemAvailable` from `/proc/meminfo`,
/// or less where a cgroup (v2) limit leaves less. `None` where neither can be read (not
/// Linux), in which case sizes are not checked against the host.
pub fn host_available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let available = meminfo.lines().find_map(|line| {
        let kib = line
            .strip_prefix("MemAvailable:")?
            .trim()
            .strip_suffix("kB")?;
        kib.trim().parse::<u64>().ok()?.checked_mul(1024)
    })?;
    Some(match cgroup_room() {
        Some(room) => available.min(room),
        None => available,
    })
}

/// What a cgroup v2 memory limit leaves: `memory.max − memory.current`, or `None` where no
/// limit is set (`max`) or the files are not there.
fn cgroup_room() -> Option<u64> {
    let read = |name: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{name}")).ok();
    let max = read("memory.max")?.trim().parse::<u64>().ok()?;
    let current = read("memory.current")?.trim().parse::<u64>().ok()?;
    Some(max.saturating_sub(current))
}

/// The GPU's free and total memory in bytes (`cuMemGetInfo`).
///
/// # Errors
/// A driver error.
pub fn device_free_bytes(gpu: &Gpu) -> Result<(u64, u64)> {
    gpu.make_current()?;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; the context is current.
    let code = unsafe { cust::sys::cuMemGetInfo_v2(&mut free, &mut total) };
    check(code, || "cuMemGetInfo".into())?;
    Ok((free as u64, total as u64))
}

/// Why `bytes` of buffers will not fit in the GPU's free memory (with a tenth of it to spare),
/// or `None` if they will: how a benchmark decides to skip a size with a note.
///
/// # Errors
/// A driver error.
pub fn does_not_fit(gpu: &Gpu, bytes: u64) -> Result<Option<String>> {
    let (free, total) = device_free_bytes(gpu)?;
    let usable = usable(free);
    Ok((bytes > usable).then(|| {
        format!(
            "needs {:.1} GB, the GPU has {:.1} GB free of {:.1} GB",
            bytes as f64 / 1e9,
            free as f64 / 1e9,
            total as f64 / 1e9
        )
    }))
}

/// Checks that `need`, asked for by `option` (as the user wrote it, e.g. `"--len 1000000"`),
/// fits in the host's available memory and, on a GPU, in its free memory, with a tenth of each
/// to spare. `need` is `None` where computing it overflowed.
///
/// # Errors
/// [`Error::TooLarge`] naming the option, the bytes needed and the bytes available; a driver
/// error from asking the GPU.
pub fn check_fits(target: &Target, option: &str, need: Option<Footprint>) -> Result<()> {
    let Some(need) = need else {
        return Err(too_large(option, u64::MAX, Room::HostMemory, 0));
    };
    let host_need = match target {
        Target::Sim => need.host.saturating_add(need.device),
        Target::Gpu(_) => need.host,
    };
    check_host(option, host_need)?;
    if let Target::Gpu(gpu) = target {
        let (free, _) = device_free_bytes(gpu)?;
        if need.device > usable(free) {
            return Err(too_large(option, need.device, Room::GpuMemory, free));
        }
    }
    Ok(())
}

/// Checks `count` elements asked for by `option` (`"--len"`), each needing `each` bytes: the
/// message names the option with its value.
///
/// # Errors
/// As [`check_fits`].
pub fn check_elements(target: &Target, option: &str, count: usize, each: Footprint) -> Result<()> {
    let need = Footprint::per_element(count as u64, each.host, each.device);
    check_fits(target, &format!("{option} {count}"), need)
}

/// Checks that the file at `path` can be read into host memory when reading it takes
/// `per_byte` bytes for each byte of the file (the file's bytes and what is parsed from them).
///
/// # Errors
/// [`Error::Io`] if the file's size cannot be read; [`Error::TooLarge`] naming the file.
pub fn check_file(path: &std::path::Path, per_byte: u64) -> Result<()> {
    let len = file_len(path)?;
    let what = format!("{} ({len} bytes)", path.display());
    check_host(&what, len.saturating_mul(per_byte))
}

/// The size of the file at `path`, in bytes.
///
/// # Errors
/// [`Error::Io`] naming the file if its size cannot be read.
pub fn file_len(path: &std::path::Path) -> Result<u64> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(meta.len())
}

/// Checks that `bytes` of host memory, asked for by `option`, fit in what the host has
/// available, with a tenth to spare (for work that opens no GPU, such as writing a file).
///
/// # Errors
/// [`Error::TooLarge`] naming the option.
pub fn check_host(option: &str, bytes: u64) -> Result<()> {
    match host_available_bytes() {
        Some(available) if bytes > usable(available) => {
            Err(too_large(option, bytes, Room::HostMemory, available))
        }
        // Where the host does not say, only sizes no address space holds are refused.
        None if bytes > isize::MAX as u64 => Err(too_large(option, bytes, Room::HostMemory, 0)),
        _ => Ok(()),
    }
}

fn too_large(option: &str, needed: u64, room: Room, available: u64) -> Error {
    Error::TooLarge {
        option: option.to_string(),
        needed,
        room,
        available,
    }
}

/// `bytes` for messages: `"1.5 GB"`, `"312 MB"`, `"16 kB"`, `"12 bytes"`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.0} kB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.0} MB", b / 1e6),
        1_000_000_000..1_000_000_000_000 => format!("{:.1} GB", b / 1e9),
        _ => format!("{:.1} TB", b / 1e12),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprints_overflow_to_none() {
        assert_eq!(
            Footprint::per_element(10, 4, 8),
            Some(Footprint {
                host: 40,
                device: 80
            })
        );
        assert_eq!(Footprint::per_element(u64::MAX / 2, 4, 0), None);
    }

    #[test]
    fn a_size_past_the_host_is_refused_by_name() {
        let e = check_fits(
            &Target::Sim,
            "--len 99999999999999",
            Footprint::per_element(99_999_999_999_999, 4, 4),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("--len 99999999999999"), "{text}");
        assert!(matches!(e, Error::TooLarge { .. }));
        let e = check_fits(&Target::Sim, "--len 18446744073709551615", None).unwrap_err();
        assert!(e.to_string().contains("--len 18446744073709551615"));
        check_fits(
            &Target::Sim,
            "--len 1000",
            Footprint::per_element(1000, 4, 4),
        )
        .unwrap();
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_host_reports_its_memory() {
        let available = host_available_bytes().expect("MemAvailable in /proc/meminfo");
        assert!(available > 1 << 20, "{available}");
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(human_bytes(12), "12 bytes");
        assert_eq!(human_bytes(16_000), "16 kB");
        assert_eq!(human_bytes(1_500_000_000), "1.5 GB");
        assert_eq!(human_bytes(400_000_000_000_000), "400.0 TB");
    }
}
