//! The split-phase barrier lesson: the correct relays read no stale slot, the deadlock is
//! turned into a timeout, on the simulator and on the GPU.

mod common;

use gridsync::Target;
use gridsync::mbarrier::{MbarrierOptions, RelayKernel, run};

fn check(target: &Target, opts: &MbarrierOptions) {
    let r = run(target, opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.runs.len(), RelayKernel::ALL.len());
    for k in &r.runs {
        assert_eq!(
            k.reads,
            r.blocks as u64 * r.threads_per_block as u64 * r.rounds as u64
        );
        assert!(k.stale_reads <= k.reads, "{}", k.name);
        if k.kernel.correct() {
            assert_eq!((k.stale_reads, k.timed_out), (0, false), "{}", k.name);
            assert_eq!(k.ms.is_some(), !target.is_sim(), "{}", k.name);
        }
    }
    let deadlock = r
        .runs
        .iter()
        .find(|k| k.kernel == RelayKernel::WaitBeforeArrive)
        .unwrap();
    assert!(deadlock.timed_out && deadlock.stale_reads == 0);
}

#[test]
fn the_lesson_runs_on_the_simulator() {
    check(&Target::Sim, &MbarrierOptions::for_target(&Target::Sim));
    // One block of the simulator's 64 threads, one round, no work.
    check(
        &Target::Sim,
        &MbarrierOptions {
            rounds: 1,
            work: 0,
            blocks: Some(1),
        },
    );
}

#[test]
fn zero_rounds_are_refused() {
    let e = run(
        &Target::Sim,
        &MbarrierOptions {
            rounds: 0,
            work: 1,
            blocks: None,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("positive"), "{e}");
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn the_lesson_runs_on_the_gpu() {
    let gpu = common::gpu();
    check(&gpu, &MbarrierOptions::for_target(&gpu));
    check(
        &gpu,
        &MbarrierOptions {
            rounds: 3,
            work: 0,
            blocks: Some(7),
        },
    );
}
