//! Every kernel against the CPU on the simulator: odd sizes, bytes of 128 and above, one
//! repeated byte, odd launch shapes, misaligned input, lane counters folded before they
//! overflow.

use super::*;

#[test]
fn every_kernel_counts_like_the_cpu_at_odd_sizes() {
    for n in [0, 1, 127, 100_003] {
        every_kernel_counts(&Target::Sim, &random_bytes(n), &format!("{n} random bytes"));
    }
}

#[test]
fn bytes_of_128_and_above_are_skipped_by_the_ascii_histogram_only() {
    let all: Vec<u8> = (0..=255u8).cycle().take(256 * 7 + 13).collect();
    let high: Vec<u8> = (128..=255u8).cycle().take(1001).collect();
    for kernel in KERNELS {
        assert_eq!(
            count(&Target::Sim, kernel, &high, Bins::Ascii),
            vec![0; 128],
            "{kernel:?}"
        );
        let byte = count(&Target::Sim, kernel, &high, Bins::Byte);
        assert_eq!(byte.iter().sum::<u64>(), 1001, "{kernel:?}");
        let ascii = count(&Target::Sim, kernel, &all, Bins::Ascii);
        assert_eq!(ascii, expected(&all, Bins::Ascii), "{kernel:?}");
        assert!(ascii.iter().all(|&n| n == 7 || n == 8), "{kernel:?}");
    }
}

#[test]
fn one_repeated_byte_is_counted_exactly() {
    // Maximum contention: every thread on one bin.
    for byte in [b'e', b' ', 0, 127, 128, 255] {
        let data = vec![byte; 100_003];
        every_kernel_counts(&Target::Sim, &data, &format!("100003 × {byte}"));
    }
}

#[test]
fn odd_launch_shapes_count_exactly() {
    // One thread, partial warps, more threads than bytes.
    let data = random_bytes(10_007);
    let t = Target::Sim;
    for (blocks, threads) in [(1, 1), (3, 48), (2, 96), (5, 33), (7, 64)] {
        for bins in BINS {
            let want = expected(&data, bins);
            for kernel in KERNELS {
                let got = count_with(&t, kernel, &data, bins, (blocks, threads));
                assert_eq!(got, want, "{kernel:?} at {blocks}×{threads}, {bins:?}");
            }
        }
    }
}

#[test]
fn misaligned_input_is_counted_exactly_by_the_vector_kernels() {
    let data = random_bytes(1100);
    let t = Target::Sim;
    let src = t.upload(&data).unwrap();
    let out = t.zeros::<u64>(256).unwrap();
    for kernel in [HistKernel::Vec16, HistKernel::Lane] {
        for offset in 0..17 {
            for len in [0, 1, 15, 16, 17, 100, 1000] {
                t.write(&out, &[0; 256]).unwrap();
                let cfg = LaunchConfig::linear(2, 64)
                    .with_shared_bytes(kernel.shared_bytes(Bins::Byte, 64));
                // SAFETY: `offset + len <= data.len()`, so the kernel reads inside `src`; `out`
                // holds 256 zeroed u64; the shared memory is the kernel's.
                unsafe {
                    let p = src.ptr().add(offset).cast_const();
                    let args = (p, len as u64, out.ptr(), 256u32);
                    match kernel {
                        HistKernel::Vec16 => gridsync::launch!(
                            t,
                            gridsync::gpu::lessons::histogram::histogram_vec16,
                            cfg,
                            (args.0, args.1, args.2, args.3)
                        ),
                        _ => gridsync::launch!(
                            t,
                            gridsync::gpu::lessons::histogram::histogram_lane,
                            cfg,
                            (args.0, args.1, args.2, args.3)
                        ),
                    }
                    .unwrap();
                }
                let want = expected(&data[offset..offset + len], Bins::Byte);
                assert_eq!(
                    t.download(&out).unwrap(),
                    want,
                    "{kernel:?}, offset {offset}, len {len}"
                );
            }
        }
    }
}

#[test]
fn lane_counters_are_folded_before_they_overflow() {
    // One thread of one block reads everything: 16-bit counters must be folded every
    // LANE_FLUSH_LOADS loads (four rounds here), and one byte repeated fills one counter fastest.
    let t = Target::Sim;
    for data in [
        vec![b'e'; 250_001],
        vec![200u8; 70_000],
        random_bytes(200_003),
    ] {
        for bins in BINS {
            let got = count_with(&t, HistKernel::Lane, &data, bins, (1, 1));
            assert_eq!(got, expected(&data, bins), "{} bytes, {bins:?}", data.len());
        }
    }
    let data = vec![b' '; 140_000]; // two lanes of 70 000 spaces each
    assert_eq!(
        count_with(&t, HistKernel::Lane, &data, Bins::Ascii, (1, 2)),
        expected(&data, Bins::Ascii)
    );
}
