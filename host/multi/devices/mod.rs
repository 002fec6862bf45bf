//! The devices of a node: the set of GPUs a process drives (each opened once, its own context,
//! stream and module), the input cut into one slice per device, data kept on the devices
//! ([`Scattered`]), peer access between the GPUs, and the system-scope objects that span them
//! ([`peer`]).
//!
//! This room imports neither the collective nor the processes: a set of devices is what both
//! of them stand on.

pub mod peer;
pub mod resident;
mod together;

pub use resident::Scattered;
pub(crate) use resident::upload_staged;
pub(crate) use together::settle;
pub use together::{at_once, at_once_on, enable_peer_access_on, join, spawn_in};

use crate::runtime::device::init_driver;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use std::ops::Range;
use std::str::FromStr;

/// Simulated devices that `--devices all` means on the simulator.
pub const SIM_ALL_DEVICES: usize = 2;

/// Which devices: all of the machine's, or a list of ordinals (`--devices all|0,1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceList {
    /// Every CUDA device (on the simulator, [`SIM_ALL_DEVICES`]).
    All,
    /// These ordinals, each once.
    Ordinals(Vec<u32>),
}

impl FromStr for DeviceList {
    type Err = Error;

    /// `all`, or ordinals separated by commas (`0,1`), each once.
    fn from_str(s: &str) -> Result<DeviceList> {
        if s.trim().eq_ignore_ascii_case("all") {
            return Ok(DeviceList::All);
        }
        let mut list = Vec::new();
        for t in s.split(',') {
            let d: u32 = t.trim().parse().map_err(|_| {
                Error::InvalidInput(format!(
                    "--devices {s}: '{t}' is not a device ordinal (use all, or e.g. 0,1)"
                ))
            })?;
            list.push(d);
        }
        if let Some(d) = first_repeat(&list) {
            return Err(Error::InvalidInput(format!(
                "--devices {s}: device {d} is named twice"
            )));
        }
        Ok(DeviceList::Ordinals(list))
    }
}

/// The first ordinal that `list` names again.
fn first_repeat(list: &[u32]) -> Option<u32> {
    list.iter()
        .enumerate()
        .find(|&(k, d)| list[..k].contains(d))
        .map(|(_, &d)| d)
}

/// A set of devices, each opened once (its own context, stream and module).
#[derive(Debug)]
pub struct DeviceSet {
    targets: Vec<Target>,
    /// Host threads the staged uploads share ([`DeviceSet::set_copiers`]); `None`: the
    /// host's cores.
    copiers: Option<usize>,
}

impl DeviceSet {
    /// Opens the devices of `list`, or as many simulators with `simulate`.
    ///
    /// # Errors
    /// [`Error::NoGpu`] without a driver (unless `simulate`); [`Error::InvalidInput`] for an
    /// ordinal the machine does not have or one named twice; a driver error.
    pub fn open(list: &DeviceList, simulate: bool) -> Result<DeviceSet> {
        let ordinals: Vec<u32> = match (list, simulate) {
            (DeviceList::Ordinals(v), _) => v.clone(),
            (DeviceList::All, true) => (0..SIM_ALL_DEVICES as u32).collect(),
            (DeviceList::All, false) => (0..init_driver()?).collect(),
        };
        if ordinals.is_empty() {
            return Err(Error::InvalidInput("no devices to run on".into()));
        }
        // One device as two members of a set would be driven by two threads at once and be
        // two ranks of one NCCL communicator (which NCCL does not support).
        if let Some(d) = first_repeat(&ordinals) {
            return Err(Error::InvalidInput(format!("device {d} is named twice")));
        }
        let targets = ordinals
            .iter()
            .map(|&d| Target::open(d, simulate))
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceSet {
            targets,
            copiers: None,
        })
    }

    /// `n` simulated devices (at least one).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for none.
    pub fn simulated(n: usize) -> Result<DeviceSet> {
        if n == 0 {
            return Err(Error::InvalidInput("a device set needs a device".into()));
        }
        Ok(DeviceSet {
            targets: (0..n).map(|_| Target::Sim).collect(),
            copiers: None,
        })
    }

    /// Sets how many host threads, in all, fill the staging buffers of the uploads
    /// ([`DeviceSet::scatter`], the one-shot calls): shared among the devices, at least one and
    /// at most [`MAX_COPIERS`](resident::MAX_COPIERS) per device. By default the host's cores.
    /// From pageable memory the host's memory bandwidth is the bound, which this lets one
    /// measure (`gridsync multi --copiers N`).
    pub fn set_copiers(&mut self, total: usize) {
        self.copiers = Some(total);
    }

    /// The first device of the set opened again on its own (a simulator, or the GPU of the same
    /// ordinal: its own handle on the same context), with the set's copiers: the one-device
    /// side of a comparison with the whole set.
    ///
    /// # Errors
    /// A driver error.
    pub fn first_alone(&self) -> Result<DeviceSet> {
        let first = match &self.targets[0] {
            Target::Sim => Target::Sim,
            Target::Gpu(g) => Target::open(g.info().ordinal, false)?,
        };
        Ok(DeviceSet {
            targets: vec![first],
            copiers: self.copiers,
        })
    }

    /// The devices, in order.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// How many devices.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Never: a set has at least one device.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Each device's ordinal (`None` for a simulator), in order.
    pub fn ordinals(&self) -> Vec<Option<u32>> {
        self.targets
            .iter()
            .map(|t| match t {
                Target::Gpu(g) => Some(g.info().ordinal),
                Target::Sim => None,
            })
            .collect()
    }

    /// The devices, for messages.
    pub fn describe(&self) -> String {
        let names: Vec<String> = self.targets.iter().map(Target::describe).collect();
        names.join(", ")
    }

    /// Runs `work(device, target, slice)` for each device on its slice of `0..len`
    /// ([`split`]) — one host thread per GPU, all at once; simulators one after another — and
    /// returns the
    /// results in device order.
    ///
    /// # Errors
    /// The first device's error, in device order.
    pub fn map_slices<R: Send>(
        &self,
        len: usize,
        work: impl Fn(usize, &Target, Range<usize>) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        let slices = split(len, self.len());
        // Simulated devices share the host's cores, and each already runs a grid of OS threads:
        // one after another is faster than all at once.
        if self.targets.iter().all(Target::is_sim) {
            return self
                .targets
                .iter()
                .zip(slices)
                .enumerate()
                .map(|(d, (t, r))| work(d, t, r))
                .collect();
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = self
                .targets
                .iter()
                .zip(slices)
                .enumerate()
                .map(|(d, (t, r))| {
                    let work = &work;
                    let device = OneThread(t);
                    // `into_inner` moves the whole wrapper into the thread (a closure naming
                    // `device.0` would capture only the reference).
                    together::spawn_in(s, move || work(d, device.into_inner(), r))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.and_then(together::join))
                .collect()
        })
    }
}

/// A device handed to the one thread that uses it during [`DeviceSet::map_slices`].
struct OneThread<'a>(&'a Target);

impl<'a> OneThread<'a> {
    fn into_inner(self) -> &'a Target {
        self.0
    }
}

// SAFETY: a `Target` is not `Sync` because its stream and context are raw driver handles, which
// the driver lets any thread use once the context is current on it. `map_slices` gives each
// device to exactly one thread for the whole scope (no two threads touch one device), and every
// gridsync call that reaches the driver makes the device's context current on the calling
// thread first (`Gpu::make_current`), so the first upload in the thread does it, and the
// buffers dropped at the end of the thread are freed there, under the same context.
unsafe impl Send for OneThread<'_> {}

/// `0..len` cut into `parts` contiguous slices, in order, whose lengths differ by at most one
/// (some empty when `parts > len`).
pub fn split(len: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let at = |k: usize| (len as u128 * k as u128 / parts as u128) as usize;
    (0..parts).map(|k| at(k)..at(k + 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_input_in_order_and_differ_by_at_most_one() {
        for len in [0, 1, 2, 7, 1000, 1003] {
            for parts in 1..=9 {
                let s = split(len, parts);
                assert_eq!(s.len(), parts);
                assert_eq!(s[0].start, 0);
                assert_eq!(s[parts - 1].end, len);
                for w in s.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let (lo, hi) = (
                    s.iter().map(|r| r.len()).min().unwrap(),
                    s.iter().map(|r| r.len()).max().unwrap(),
                );
                assert!(hi - lo <= 1, "{len} in {parts}: {s:?}");
            }
        }
        assert_eq!(split(usize::MAX, 3)[2].end, usize::MAX);
    }

    #[test]
    fn copiers_are_the_callers_total_shared_and_bounded() {
        let mut set = DeviceSet::simulated(2).unwrap();
        assert!((1..=resident::MAX_COPIERS).contains(&set.copiers()));
        set.set_copiers(6);
        assert_eq!(set.copiers(), 3);
        set.set_copiers(0);
        assert_eq!(set.copiers(), 1);
        set.set_copiers(1000);
        assert_eq!(set.copiers(), resident::MAX_COPIERS);
    }

    #[test]
    fn device_lists_parse_and_refuse_nonsense() {
        assert_eq!("all".parse::<DeviceList>().unwrap(), DeviceList::All);
        assert_eq!(
            "0, 1".parse::<DeviceList>().unwrap(),
            DeviceList::Ordinals(vec![0, 1])
        );
        assert!("0,0".parse::<DeviceList>().is_err());
        assert!("1,0,1".parse::<DeviceList>().is_err());
        // A list built in code is checked when it is opened.
        let twice = DeviceSet::open(&DeviceList::Ordinals(vec![0, 1, 0]), true);
        assert!(matches!(twice, Err(Error::InvalidInput(m)) if m.contains("device 0")));
        assert!("x".parse::<DeviceList>().is_err());
        assert!("".parse::<DeviceList>().is_err());
    }
}
