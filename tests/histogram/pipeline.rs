//! The pipeline kernel: a shape without consumers refused through its error word, the ring
//! wrapped many times at any alignment.

use super::*;

#[test]
fn the_pipeline_kernel_refuses_a_shape_without_consumers_through_its_error_word() {
    // Past the host's check, the kernel checks too: one warp has no consumers.
    let t = Target::Sim;
    let src = t.upload(&[7u8; 1000]).unwrap();
    let out = t.zeros::<u64>(256).unwrap();
    let err = t.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(2, 32)
        .with_shared_bytes(HistKernel::Pipeline.shared_bytes(Bins::Byte, 32));
    // SAFETY: `src` holds 1000 bytes, `out` 256 zeroed u64, `err` one zeroed u32; the shared
    // memory is the kernel's for 32 threads.
    unsafe {
        gridsync::launch!(
            t,
            gridsync::gpu::lessons::histogram::histogram_pipeline,
            cfg,
            (
                src.ptr().cast_const(),
                1000u64,
                out.ptr(),
                256u32,
                wait_bound(gridsync::gpu::mbarrier::DEFAULT_TIMEOUT_NS),
                err.ptr()
            )
        )
        .unwrap();
    }
    let word = t.download(&err).unwrap()[0];
    assert_eq!(word, gridsync::gpu::pipeline::error_bits::BAD_LAUNCH);
    assert!(
        t.download(&out).unwrap().iter().all(|&n| n == 0),
        "nothing counted"
    );
    assert!(matches!(
        Error::from_pipeline_word("histogram_pipeline", word),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        Error::from_pipeline_word("histogram_pipeline", 1),
        Err(Error::WaitTimeout(_))
    ));
    assert!(Error::from_pipeline_word("histogram_pipeline", 0).is_ok());
}

#[test]
fn the_pipeline_wraps_its_ring_many_times_at_any_alignment() {
    // One block reads every tile: 13 fills of a 4-stage ring, so every stage is refilled after
    // its consumers released it (the empty barriers' phases 0, 1, 2); two blocks: 7 and 6. The
    // input starts at every offset of a 16-byte boundary: a head, tiles, a short last tile, a tail.
    let stage = gridsync::gpu::lessons::histogram::PIPELINE_STAGE_BYTES as usize;
    let data = random_bytes(12 * stage + 5000 + 16);
    let t = Target::Sim;
    let src = t.upload(&data).unwrap();
    let out = t.zeros::<u64>(256).unwrap();
    let err = t.zeros::<u32>(1).unwrap();
    let cases = [
        (0, 12 * stage + 5000),
        (3, 12 * stage + 4999),
        (15, stage),
        (1, stage + 1),
        (8, 40),
        (5, 0),
        (9, 1),
    ];
    for (offset, len) in cases {
        for (blocks, threads) in [(1, 64), (2, 96)] {
            t.write(&out, &[0; 256]).unwrap();
            let cfg = LaunchConfig::linear(blocks, threads)
                .with_shared_bytes(HistKernel::Pipeline.shared_bytes(Bins::Byte, threads));
            // SAFETY: `offset + len <= data.len()`, so the kernel reads inside `src`; `out`
            // holds 256 zeroed u64, `err` one zeroed u32; the shared memory is the kernel's.
            unsafe {
                let p = src.ptr().add(offset).cast_const();
                gridsync::launch!(
                    t,
                    gridsync::gpu::lessons::histogram::histogram_pipeline,
                    cfg,
                    (
                        p,
                        len as u64,
                        out.ptr(),
                        256u32,
                        wait_bound(gridsync::gpu::mbarrier::DEFAULT_TIMEOUT_NS),
                        err.ptr()
                    )
                )
                .unwrap();
            }
            assert_eq!(t.download(&err).unwrap(), [0], "offset {offset}, len {len}");
            assert_eq!(
                t.download(&out).unwrap(),
                expected(&data[offset..offset + len], Bins::Byte),
                "offset {offset}, len {len}, {blocks}×{threads}"
            );
        }
    }
}
