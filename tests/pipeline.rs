//! The producer/consumer pipeline lesson: the correct pipeline transforms every word like the
//! CPU, at odd shapes, on the simulator and on the GPU; the broken ones are bounded (they end,
//! with their wrong words and timeouts counted, never hang).

mod common;

use gridsync::Target;
use gridsync::pipeline::{PipelineKernel, PipelineOptions, run};

fn check(target: &Target, opts: &PipelineOptions) {
    let r = run(target, opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.runs.len(), PipelineKernel::ALL.len());
    let words = opts.tiles as u64 * 1024 - 3;
    for k in &r.runs {
        assert_eq!(k.words, words, "{}", k.name);
        assert!(k.wrong_words <= k.words, "{}", k.name);
        if k.kernel.correct() {
            assert_eq!((k.wrong_words, k.timed_out), (0, false), "{}", k.name);
            assert_eq!(k.ms.is_some(), !target.is_sim(), "{}", k.name);
        } else {
            assert!(
                k.ms.is_none(),
                "{}: only the correct kernel is timed",
                k.name
            );
        }
    }
    assert_eq!(r.copy_gb_per_s.is_some(), !target.is_sim());
}

#[test]
fn the_lesson_runs_on_the_simulator_at_odd_shapes() {
    let t = Target::Sim;
    check(&t, &PipelineOptions::for_target(&t));
    for (tiles, blocks, work) in [(1, 1, 0), (5, 2, 3), (7, 3, 1), (2, 5, 0)] {
        let opts = PipelineOptions {
            tiles,
            work,
            blocks: Some(blocks),
            seed: tiles as u64,
        };
        check(&t, &opts);
    }
}

#[test]
fn zero_tiles_or_blocks_too_much_work_and_too_many_tiles_are_refused() {
    for (tiles, blocks) in [(0, Some(2)), (4, Some(0))] {
        let opts = PipelineOptions {
            tiles,
            work: 1,
            blocks,
            seed: 1,
        };
        let e = run(&Target::Sim, &opts).unwrap_err();
        assert!(e.to_string().contains("positive"), "{e}");
    }
    let endless = PipelineOptions {
        tiles: 1,
        work: gridsync::pipeline::MAX_WORK + 1,
        blocks: None,
        seed: 1,
    };
    let e = run(&Target::Sim, &endless).unwrap_err();
    assert!(e.to_string().contains("--work"), "{e}");
    let huge = PipelineOptions {
        tiles: u32::MAX,
        work: 1,
        blocks: None,
        seed: 1,
    };
    assert!(matches!(
        run(&Target::Sim, &huge),
        Err(gridsync::Error::TooLarge { .. })
    ));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn the_lesson_runs_on_the_gpu() {
    let gpu = common::gpu();
    check(&gpu, &PipelineOptions::for_target(&gpu));
    let odd = PipelineOptions {
        tiles: 1001,
        work: 0,
        blocks: Some(7),
        seed: 3,
    };
    check(&gpu, &odd);
}
