//! 65 536-bin histograms of 16-bit values: every kernel against the CPU, on the simulator and
//! on the GPU, at awkward sizes and alignments, on uniform, token-like and one-value inputs.

mod common;

use gridsync::histogram::wide::{
    BINS, WideKernel, WideLaunch, check, has_clusters, histogram_u16_cpu, wide_config,
};
use gridsync::histogram::{histogram_u16, histogram_u16_of_buffer};
use gridsync::inputs::{uniform_u16, zipf_u16};
use gridsync::{LaunchConfig, Target, launch};

fn every_kernel(target: &Target, values: &[u16]) {
    let want = histogram_u16_cpu(values);
    let buf = target.upload(values).unwrap();
    for kernel in WideKernel::ALL {
        if kernel.needs_clusters() && !has_clusters(target) {
            continue;
        }
        let cfg = wide_config(target, kernel, values.len()).unwrap();
        let run = WideLaunch::new(target, kernel, &buf, values.len(), cfg).unwrap();
        run.launch().unwrap();
        if let Err(e) = check(kernel, &run.result().unwrap(), &want) {
            panic!(
                "{e} ({} values, {cfg:?}, on the {})",
                values.len(),
                target.describe()
            );
        }
    }
}

#[test]
fn every_kernel_counts_exactly_sim() {
    let mut rng = common::rng();
    let seed = rand::Rng::random::<u64>(&mut rng);
    for len in [0, 1, 7, 8, 9, 1000, 12_345] {
        every_kernel(&Target::Sim, &uniform_u16(len, seed));
    }
    every_kernel(&Target::Sim, &zipf_u16(20_000, seed, 50_257));
    // One value: every count lands on one bin, owned by the cluster's last block.
    every_kernel(&Target::Sim, &vec![u16::MAX; 5_000]);
}

#[test]
fn any_alignment_of_the_input_counts_exactly_sim() {
    let mut rng = common::rng();
    let seed = rand::Rng::random::<u64>(&mut rng);
    let values = uniform_u16(300, seed);
    let buf = Target::Sim.upload(&values).unwrap();
    for skip in 0..8 {
        for len in [0, 5, 17, 300 - skip] {
            let part = &values[skip..skip + len];
            let out = Target::Sim.zeros::<u64>(BINS).unwrap();
            let cfg = LaunchConfig::linear(3, 32);
            // SAFETY: `skip + len` values of `buf`; `BINS` bins.
            unsafe {
                let from = buf.ptr().cast_const().add(skip);
                launch!(
                    Target::Sim,
                    gpu::lessons::histogram::histogram_u16_global,
                    cfg,
                    (from, len as u64, out.ptr())
                )
                .unwrap()
            };
            assert_eq!(
                Target::Sim.download(&out).unwrap(),
                histogram_u16_cpu(part),
                "skip {skip}, {len} values"
            );
        }
    }
}

#[test]
fn the_library_call_matches_the_cpu_sim() {
    let values = zipf_u16(10_000, 3, 1000);
    assert_eq!(
        histogram_u16(&Target::Sim, &values).unwrap(),
        histogram_u16_cpu(&values)
    );
    let buf = Target::Sim.upload(&values).unwrap();
    let first = histogram_u16_of_buffer(&Target::Sim, &buf, 100).unwrap();
    assert_eq!(first, histogram_u16_cpu(&values[..100]));
    assert!(histogram_u16_of_buffer(&Target::Sim, &buf, 10_001).is_err());
}

#[test]
fn a_cluster_size_that_is_not_offered_is_refused() {
    let e = wide_config(&Target::Sim, WideKernel::Cluster(3), 100).unwrap_err();
    assert!(e.to_string().contains("clusters of 3"), "{e}");
}

#[test]
fn token_like_values_fall_off_as_zipf_says() {
    let v = zipf_u16(1_000_000, 9, 50_257);
    let h = histogram_u16_cpu(&v);
    assert!(v.iter().all(|&x| x < 50_257));
    // Zipf with exponent 1: id 0 about twice as common as id 1, ten times id 9.
    let ratio = |a: usize, b: usize| h[a] as f64 / h[b] as f64;
    assert!((1.7..2.3).contains(&ratio(0, 1)), "{}", ratio(0, 1));
    assert!((8.0..12.0).contains(&ratio(0, 9)), "{}", ratio(0, 9));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_kernel_counts_exactly_gpu() {
    let gpu = common::gpu();
    let seed = common::seed();
    for len in [0, 1, 9, 100_003] {
        every_kernel(&gpu, &uniform_u16(len, seed));
    }
    every_kernel(&gpu, &uniform_u16(30_000_001, seed));
    every_kernel(&gpu, &zipf_u16(30_000_000, seed, 50_257));
    every_kernel(&gpu, &vec![12_345; 1 << 20]);
    let values = zipf_u16(1_000_000, seed, 50_257);
    assert_eq!(
        histogram_u16(&gpu, &values).unwrap(),
        histogram_u16_cpu(&values)
    );
}
