//! count-above: every kernel against a CPU count on the simulator (odd sizes, odd launch shapes,
//! misaligned input, values equal to the threshold, NaN), input files — and the GPU at full size
//! (ignored where no NVIDIA driver was found at build time). The command: `cli/tests/`.

mod common;

use gridsync::count_above::{
    self, CountKernel, CountLaunch, CountOptions, config_for, count_above_cpu, lock_bounds,
};
use gridsync::gpu::block_reduce::block_reduce_shared_bytes;
use gridsync::inputs::read_f32_file;
use gridsync::{Error, LaunchConfig, Target};
use rand::Rng;

/// The count the tests trust: a plain loop, independent of the library's CPU reference.
fn expected(data: &[f32], thr: f32) -> u64 {
    data.iter().filter(|&&x| x > thr).count() as u64
}

/// `kernel` over all of `data` with the launch shape `run` uses.
fn count(target: &Target, kernel: CountKernel, data: &[f32], thr: f32) -> u64 {
    let src = target.upload(data).unwrap();
    let cfg = config_for(target, kernel, data.len(), None).unwrap();
    let bounds = lock_bounds(target, data.len() as u64);
    let launch = CountLaunch::new(target, kernel, &src, data.len(), thr, cfg, bounds).unwrap();
    launch.run().unwrap()
}

fn random_data(n: usize) -> Vec<f32> {
    let mut rng = common::rng();
    (0..n).map(|_| rng.random::<f32>()).collect()
}

#[test]
fn every_kernel_counts_like_the_cpu_at_odd_sizes() {
    for n in [0, 1, 31, 33, 1000 + 3] {
        let data = random_data(n);
        for thr in [0.5, 0.1, -1.0, 2.0] {
            let want = expected(&data, thr);
            assert_eq!(count_above_cpu(&data, thr), want, "CPU reference, n = {n}");
            for kernel in CountKernel::ALL {
                let got = count(&Target::Sim, kernel, &data, thr);
                assert_eq!(got, want, "{kernel:?}, n = {n}, threshold {thr}");
            }
        }
    }
}

#[test]
fn values_equal_to_the_threshold_do_not_count() {
    let mut data = vec![0.5f32; 300];
    data.extend([0.75; 37]);
    data.extend([0.25; 20]);
    data.extend([f32::from_bits(0.5f32.to_bits() + 1); 5]); // the next float above 0.5
    for kernel in CountKernel::ALL {
        assert_eq!(count(&Target::Sim, kernel, &data, 0.5), 42, "{kernel:?}");
    }
}

#[test]
fn nan_never_counts() {
    let mut data = random_data(500);
    for (k, v) in data.iter_mut().enumerate() {
        if k % 3 == 0 {
            *v = f32::NAN;
        }
    }
    data.extend([f32::INFINITY, f32::NEG_INFINITY, -f32::NAN]);
    let want = expected(&data, 0.5);
    assert!(want > 0);
    for kernel in CountKernel::ALL {
        assert_eq!(count(&Target::Sim, kernel, &data, 0.5), want, "{kernel:?}");
        assert_eq!(
            count(&Target::Sim, kernel, &data, f32::NAN),
            0,
            "{kernel:?}"
        );
    }
}

#[test]
fn odd_launch_shapes_count_exactly() {
    // Partial warps (48 threads), one thread, a block larger than the input: the warp kernel's
    // ballot and the block reduction must still be exact.
    let data = random_data(1003);
    let want = expected(&data, 0.5);
    let t = Target::Sim;
    let src = t.upload(&data).unwrap();
    for (blocks, threads) in [(3, 48), (1, 1), (2, 1000), (5, 33)] {
        for kernel in CountKernel::ALL {
            let cfg = LaunchConfig::linear(blocks, threads)
                .with_shared_bytes(block_reduce_shared_bytes::<u64>(threads));
            let bounds = lock_bounds(&t, want);
            let launch = CountLaunch::new(&t, kernel, &src, data.len(), 0.5, cfg, bounds).unwrap();
            assert_eq!(
                launch.run().unwrap(),
                want,
                "{kernel:?} at {blocks}×{threads}"
            );
        }
    }
}

#[test]
fn misaligned_input_is_counted_exactly_by_the_vector_kernel() {
    let data = random_data(1003 + 3);
    let t = Target::Sim;
    let src = t.upload(&data).unwrap();
    let cnt = t.zeros::<u64>(1).unwrap();
    for offset in 0..4 {
        for len in [0, 1, 2, 3, 5, 8, 1000] {
            let slice = &data[offset..offset + len];
            t.write(&cnt, &[0]).unwrap();
            let cfg =
                LaunchConfig::linear(2, 64).with_shared_bytes(block_reduce_shared_bytes::<u64>(64));
            // SAFETY: `offset + len <= data.len()`, so the kernel reads inside `src`; `cnt` is
            // one u64; the shared memory is what the block reduction needs.
            unsafe {
                let p = src.ptr().add(offset).cast_const();
                gridsync::launch!(
                    t,
                    gridsync::gpu::lessons::count_above::gt_thr_cnt_vec4,
                    cfg,
                    (p, len as u64, 0.5f32, cnt.ptr())
                )
                .unwrap();
            }
            let got = t.download(&cnt).unwrap()[0];
            assert_eq!(got, expected(slice, 0.5), "offset {offset}, len {len}");
        }
    }
}

#[test]
fn the_demo_checks_every_kernel_and_bounds_the_lock_kernel() {
    let data = random_data(1003);
    let opts = CountOptions {
        threshold: 0.5,
        lock_elements: 100,
    };
    let r = count_above::run(&Target::Sim, &data, "test", &opts, |_, _| {}).unwrap();
    assert_eq!(r.expected, expected(&data, 0.5));
    assert_eq!(r.runs.len(), CountKernel::ALL.len());
    assert_eq!(r.lock_elements, 100);
    for k in &r.runs {
        let n = if k.kernel == CountKernel::Mutex {
            100
        } else {
            1003
        };
        assert_eq!(k.elements, n);
        assert_eq!(k.count, expected(&data[..n], 0.5), "{:?}", k.kernel);
        assert!(
            k.launch.ms.is_none() && k.launch.gb_per_s.is_none(),
            "the simulator is not timed"
        );
    }
    let all = CountOptions {
        lock_elements: usize::MAX,
        ..opts
    };
    let r = count_above::run(&Target::Sim, &data, "test", &all, |_, _| {}).unwrap();
    assert_eq!(r.lock_elements, 1003);
}

#[test]
fn input_files_are_read_or_rejected_with_an_error() {
    let values = [0.25f32, 1.5, -3.0, f32::INFINITY];
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for name in ["in.f32", "in.bin", "IN.F32"] {
        assert_eq!(
            read_f32_file(&common::temp_file(name, &raw)).unwrap(),
            values
        );
    }
    let text = common::temp_file("in.txt", b"0.25 1.5\n\n  -3e0\tinf\n");
    assert_eq!(read_f32_file(&text).unwrap(), values);
    let nan = read_f32_file(&common::temp_file("nan.txt", b"nan 1")).unwrap();
    assert!(nan[0].is_nan() && nan[1] == 1.0);
    assert!(
        read_f32_file(&common::temp_file("empty.txt", b""))
            .unwrap()
            .is_empty()
    );

    let missing = std::env::temp_dir().join("gridsync-no-such-dir/none.f32");
    assert!(matches!(read_f32_file(&missing), Err(Error::Io { .. })));
    match read_f32_file(&common::temp_file("bad.txt", b"1 2\n3 x4 5\n")) {
        Err(Error::InvalidInput(why)) => {
            assert!(why.contains("line 2") && why.contains("x4"), "{why}")
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    match read_f32_file(&common::temp_file("odd.f32", &raw[..7])) {
        Err(Error::InvalidInput(why)) => assert!(why.contains("7 bytes"), "{why}"),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_counts_ten_million_with_every_kernel() {
    let gpu = common::gpu();
    let data = count_above::default_input(count_above::DEFAULT_LEN);
    let r = count_above::run(&gpu, &data, "test", &CountOptions::default(), |_, _| {}).unwrap();
    assert_eq!(r.expected, expected(&data, 0.5));
    for k in &r.runs {
        assert!(
            k.launch.ms.is_some_and(|ms| ms > 0.0),
            "{:?} was not timed",
            k.kernel
        );
    }
    // Odd sizes and shapes on real warps.
    for n in [1, 31, 33, 1003] {
        let d = random_data(n);
        for kernel in CountKernel::ALL {
            assert_eq!(
                count(&gpu, kernel, &d, 0.5),
                expected(&d, 0.5),
                "{kernel:?}, n = {n}"
            );
        }
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_counts_a_billion_if_memory_allows() {
    let gpu = common::gpu();
    let Target::Gpu(g) = &gpu else { unreachable!() };
    let n = 1_000_000_000;
    if let Some(why) = gridsync::runtime::memory::does_not_fit(g, 4 * n as u64).unwrap() {
        eprintln!("skipped: {why}");
        return;
    }
    let data = count_above::default_input(n);
    let want = count_above_cpu(&data, 0.5);
    for kernel in [CountKernel::Block, CountKernel::Vec4, CountKernel::Warp] {
        assert_eq!(count(&gpu, kernel, &data, 0.5), want, "{kernel:?}");
    }
}
