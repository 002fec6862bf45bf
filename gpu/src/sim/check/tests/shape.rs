//! Thread identities and scope inclusion.

use super::*;
use crate::{Dim3, LaunchConfig};

#[test]
fn each_scope_includes_the_threads_of_its_instance() {
    // Two devices of four blocks of 2 threads; clusters {0, 1} and {2, 3}.
    let shape = Shape::new(4, 2)
        .with_clusters(vec![0, 0, 1, 1])
        .unwrap()
        .with_devices(2);
    let me = tid(1, 0);
    let cases = [
        (tid(1, 1), [true, true, true, true]),
        (tid(0, 1), [false, true, true, true]),
        (tid(2, 0), [false, false, true, true]),
        (
            ThreadId {
                device: 1,
                block: 1,
                thread: 0,
            },
            [false, false, false, true],
        ),
    ];
    for (other, included) in cases {
        for (scope, inc) in ThreadScope::ALL.into_iter().zip(included) {
            assert_eq!(shape.includes(scope, me, other), inc, "{scope:?} {other}");
            assert_eq!(shape.includes(scope, other, me), inc, "{scope:?} {other}");
        }
    }
}

#[test]
fn slots_number_every_thread_of_every_device_once() {
    let shape = Shape::new(3, 5).with_devices(2);
    let mut seen = vec![false; shape.threads() as usize];
    for device in 0..2 {
        for block in 0..3 {
            for thread in 0..5 {
                let id = ThreadId {
                    device,
                    block,
                    thread,
                };
                let slot = shape.slot(id).unwrap();
                assert!(!std::mem::replace(&mut seen[slot as usize], true));
                assert_eq!(shape.thread_of(slot), id);
            }
        }
    }
    assert!(seen.iter().all(|&s| s));
    assert_eq!(shape.slot(tid(3, 0)), None);
    assert_eq!(shape.slot(tid(0, 5)), None);
}

#[test]
fn a_launch_configs_clusters_are_the_simulators() {
    // A 4 × 2 grid in clusters of 2 × 1: blocks (0,0) and (1,0) share a cluster, (0,0) and (0,1)
    // do not.
    let cfg = LaunchConfig {
        grid: Dim3 { x: 4, y: 2, z: 1 },
        block: Dim3::x(32),
        shared_bytes: 0,
        cluster: Dim3 { x: 2, y: 1, z: 1 },
    };
    let shape = Shape::from_config(&cfg).unwrap();
    assert_eq!(shape.threads(), 256);
    let cluster = |b| shape.instance(tid(b, 0), ThreadScope::Cluster).index;
    assert_eq!(cluster(0), cluster(1));
    assert_ne!(cluster(0), cluster(4));
    assert_ne!(cluster(1), cluster(2));
}

#[test]
fn shapes_the_checker_cannot_follow_are_refused() {
    let checker = Checker::new(Options::default());
    assert!(matches!(
        checker.launch(Shape::new(5, 1024)),
        Err(crate::sim::SimError::TooManyThreads { threads: 5120, .. })
    ));
    assert!(checker.launch(Shape::new(0, 32)).is_err());
    assert!(Shape::new(2, 32).with_clusters(vec![0]).is_err());
    let l = checker.launch(Shape::new(2, 32)).unwrap();
    assert!(l.thread(tid(2, 0)).is_err());
}
