//! The links after the rendezvous: the host combine in rank order, a rank that dies named
//! by the others, the census after a failed collective.

use super::*;

#[test]
fn links_combine_in_rank_order_and_refuse_what_does_not_match() {
    use gridsync::multi::Op;
    let address = free_address();
    let world = 5;
    let timeout = Duration::from_secs(20);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..world)
            .map(|r| {
                let me = rank(r, world, &address, "j");
                s.spawn(move || {
                    let links = Links::open(&me, timeout)?;
                    // Rank order: rank r's bytes are the (r+1)-th fold.
                    let order = links.all_reduce_bytes(&[r as u8], &|acc, next| {
                        acc[0] = acc[0].wrapping_mul(10).wrapping_add(next[0])
                    })?;
                    links.barrier()?;
                    let sum = links.all_reduce(&[r as u64, 1], Op::Sum)?;
                    let min = links.all_reduce(&[f32::NAN, r as f32 + 0.5], Op::Min)?;
                    let b = links.broadcast((r == 0).then_some(&b"from zero"[..]))?;
                    // Rank 3 brings two values where the others bring one: every rank fails.
                    let n = if r == 3 { 2 } else { 1 };
                    let bad = links.all_reduce(&vec![1u64; n], Op::Sum);
                    Ok::<_, gridsync::Error>((order, sum, min, b, bad.map_err(|e| e.to_string())))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (r, got) in results.into_iter().enumerate() {
        let (order, sum, min, b, bad) = got.unwrap();
        assert_eq!(
            order,
            vec![(1234u32 % 256) as u8],
            "rank {r}: 0, 1, 2, 3, 4 folded in order"
        );
        assert_eq!(sum, vec![10, 5]);
        assert!(min[0].is_nan());
        assert_eq!(min[1], 0.5);
        assert_eq!(b, b"from zero");
        let e = bad.unwrap_err();
        assert!(e.contains("rank 3 brought 16 bytes"), "rank {r}: {e}");
    }
}

#[test]
fn a_rank_that_dies_is_an_error_on_the_others_in_bounded_time() {
    kill_rank_1_mid_run(
        &["--simulate", "multi", "reduce", "--len", "1000"],
        &[],
        &[],
    );
}

/// Two ranks started by hand (no launcher to stop the survivor), `args` then the rank's own
/// (`per_rank[r]`): rank 1 is killed while both run the timed calls; rank 0 must notice, fail
/// by itself within 30 s, and name rank 1 as gone.
fn kill_rank_1_mid_run(args: &[&str], zero: &[&str], one: &[&str]) {
    let address = free_address();
    let start = |rank: &str, own: &[&str]| {
        std::process::Command::new(bin())
            .args(args)
            .args([
                "--repeats",
                "100000",
                "--ranks",
                "env",
                "--rank",
                rank,
                "--world-size",
                "2",
                "--rendezvous",
                &address,
                "--rendezvous-timeout",
                "5",
            ])
            .args(own)
            .env("GRIDSYNC_JOB", "dies")
            .env("GRIDSYNC_TOKEN", SECRET)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut zero = start("0", zero);
    let mut one = start("1", one);
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        zero.try_wait().unwrap().is_none(),
        "rank 0 ended before rank 1 was killed"
    );
    one.kill().unwrap();
    one.wait().unwrap();
    let killed = Instant::now();
    let status = loop {
        if let Some(s) = zero.try_wait().unwrap() {
            break s;
        }
        if killed.elapsed() > Duration::from_secs(30) {
            let _ = zero.kill();
            panic!("rank 0 still running 30 s after rank 1 died");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut zero.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!status.success());
    // Over the links (the host combine) or by the census after NCCL's all-reduce failed.
    assert!(
        [
            "rank 0 reading from rank 1: it left",
            "rank 0 sending to rank 1: it left",
            "rank(s) 1 left the job"
        ]
        .iter()
        .any(|named| err.contains(named)),
        "{err}"
    );
}

#[test]
fn a_census_names_who_left_and_who_is_elsewhere() {
    // A world of 5 after a collective outside the links failed: rank 1 is alive but never
    // asks (first, so that a census reading one rank after another would spend its whole bound
    // there), rank 2 has exited, rank 3 asks a little late, rank 4 asks; ranks 0, 3 and 4 all
    // learn the same within the bound.
    let address = free_address();
    let timeout = Duration::from_secs(20);
    let bound = Duration::from_secs(1);
    let start = Instant::now();
    let censuses: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..5)
            .map(|r| {
                let me = rank(r, 5, &address, "census");
                s.spawn(move || {
                    let links = Links::open(&me, timeout).unwrap();
                    match r {
                        1 => {
                            std::thread::sleep(bound * 4);
                            None
                        }
                        2 => None,
                        3 => {
                            std::thread::sleep(bound / 3);
                            Some(links.census(bound))
                        }
                        _ => Some(links.census(bound)),
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(start.elapsed() < Duration::from_secs(10));
    let want = gridsync::multi::processes::Census {
        left: vec![2],
        elsewhere: vec![1],
    };
    for r in [0, 3, 4] {
        assert_eq!(censuses[r].as_ref(), Some(&want), "rank {r}");
    }
    // Rank 0 gone: the others blame it.
    let address = free_address();
    let got = std::thread::scope(|s| {
        let zero = rank(0, 2, &address, "census");
        let gone = s.spawn(move || drop(Links::open(&zero, timeout).unwrap()));
        let links = Links::open(&rank(1, 2, &address, "census"), timeout).unwrap();
        gone.join().unwrap();
        links.census(bound)
    });
    assert_eq!(got.left, vec![0]);
    // A rank made by hand out of range is refused before anything listens.
    for (r, w) in [(0, 0), (2, 2), (0, u32::MAX)] {
        assert!(Links::open(&rank(r, w, &free_address(), "j"), timeout).is_err());
    }
}

/// On GPUs: a rank lost during the all-reduce (NCCL across two GPUs where there are two, the
/// host combine on one) is named by the survivor within its bounds — killed mid-run, or alive
/// but never calling the collective.
#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_a_lost_rank_is_named_by_the_survivor_in_bounded_time() {
    use gridsync::gpu::lessons::reduce::SumF32InF64;
    use gridsync::multi::processes::{JoinOptions, World};
    use gridsync::multi::{Op, ReducePlan, Scattered};
    let gpus = gridsync::runtime::device::init_driver().unwrap();
    let nccl = gpus >= 2;
    let (zero, one): (&[&str], &[&str]) = if nccl {
        (&["--device", "0"], &["--device", "1"])
    } else {
        (
            &["--device", "0", "--host-combine"],
            &["--device", "0", "--host-combine"],
        )
    };
    kill_rank_1_mid_run(&["multi", "reduce", "--len", "10000000"], zero, one);
    // Rank 1 joins, runs one all-reduce with rank 0, then never calls the next.
    let address = free_address();
    let outcome = std::thread::scope(|s| {
        let ranks: Vec<_> = (0..2u32)
            .map(|r| {
                let me = rank(r, 2, &address, "stalls");
                let opts = JoinOptions {
                    device: Some(if nccl { r } else { 0 }),
                    timeout: Duration::from_secs(5),
                    host_combine: !nccl,
                    ..JoinOptions::default()
                };
                s.spawn(
                    move || -> gridsync::Result<Option<(gridsync::Error, Duration)>> {
                        let world = World::join(me, &opts)?;
                        let x: Vec<f32> = (0..1_000_003).map(|i| (i % 7) as f32).collect();
                        let on_gpu = Scattered::zeros(world.set(), x.len())?;
                        on_gpu.copy_from(world.set(), &x)?;
                        let plan = ReducePlan::<SumF32InF64>::new(world.set(), &on_gpu, Op::Sum)?;
                        plan.run(world.combiner())?;
                        if r == 1 {
                            std::thread::sleep(Duration::from_secs(25));
                            return Ok(None);
                        }
                        let start = Instant::now();
                        let e = plan.run(world.combiner()).unwrap_err();
                        Ok(Some((e, start.elapsed())))
                    },
                )
            })
            .collect();
        let mut got: Vec<_> = ranks.into_iter().map(|h| h.join().unwrap()).collect();
        got.swap_remove(0)
    });
    let (e, took) = outcome.unwrap().unwrap();
    assert!(took < Duration::from_secs(20), "the survivor took {took:?}");
    assert!(
        matches!(e, gridsync::Error::Rank { rank: Some(1), .. }),
        "{} ({e:?})",
        if nccl { "NCCL" } else { "host combine" }
    );
}
