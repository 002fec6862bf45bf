//! What the histogram tests trust and share: every kernel and bin range, a plain-loop count
//! independent of the library's CPU reference, and each kernel run over a whole input at the
//! library's launch shape or at one of the test's. Used by the library's tests
//! (`tests/histogram/`) and the command's (`cli/tests/histogram/`).
#![allow(dead_code)]

use gridsync::histogram::{Bins, HistKernel, HistogramLaunch, config_for, histogram_cpu};
use gridsync::{LaunchConfig, Target};
use rand::Rng;

/// Every kernel, the instrument included.
pub const KERNELS: [HistKernel; 7] = [
    HistKernel::Global,
    HistKernel::Shared,
    HistKernel::SharedRows,
    HistKernel::Warp,
    HistKernel::Vec16,
    HistKernel::Lane,
    HistKernel::Pipeline,
];
pub const BINS: [Bins; 2] = [Bins::Ascii, Bins::Byte];

/// The histogram the tests trust: a plain loop, independent of the library's CPU reference.
pub fn expected(data: &[u8], bins: Bins) -> Vec<u64> {
    let mut h = vec![0u64; bins.count() as usize];
    for &b in data {
        if let Some(slot) = h.get_mut(b as usize) {
            *slot += 1;
        }
    }
    h
}

/// `kernel` over all of `data` with the launch shape the library uses.
pub fn count(target: &Target, kernel: HistKernel, data: &[u8], bins: Bins) -> Vec<u64> {
    let src = target.upload(data).unwrap();
    let cfg = config_for(target, kernel, bins, data.len(), None).unwrap();
    let launch = HistogramLaunch::new(target, kernel, &src, data.len(), bins, cfg).unwrap();
    launch.run().unwrap()
}

/// `kernel` over `data` with `blocks` × `threads`.
pub fn count_with(
    t: &Target,
    kernel: HistKernel,
    data: &[u8],
    bins: Bins,
    shape: (u32, u32),
) -> Vec<u64> {
    let src = t.upload(data).unwrap();
    // The pipeline needs whole warps, at least two: its shape is rounded up to that.
    let threads = match kernel {
        HistKernel::Pipeline => shape.1.next_multiple_of(32).max(64),
        _ => shape.1,
    };
    let shared = kernel.shared_bytes(bins, threads);
    let cfg = LaunchConfig::linear(shape.0, threads).with_shared_bytes(shared);
    let launch = HistogramLaunch::new(t, kernel, &src, data.len(), bins, cfg).unwrap();
    launch.run().unwrap()
}

pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut rng = crate::common::rng();
    (0..n).map(|_| rng.random::<u8>()).collect()
}

pub fn every_kernel_counts(t: &Target, data: &[u8], what: &str) {
    for bins in BINS {
        let want = expected(data, bins);
        assert_eq!(histogram_cpu(data, bins), want, "CPU reference, {what}");
        for kernel in KERNELS {
            assert_eq!(
                count(t, kernel, data, bins),
                want,
                "{kernel:?}, {bins:?}, {what}"
            );
        }
    }
}
