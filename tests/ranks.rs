//! One process per GPU.
//!
//! The rendezvous: ranks on the loopback address (threads here; each rank only talks TCP, so
//! threads stand for processes) receive rank 0's id; a rank that never arrives, a wrong world
//! size, another job's rank and an address in use are errors, each within the timeout.
//!
//! Then real processes (`gridsync launch -n N -- gridsync multi … --ranks env`) on the
//! simulator: 1, 2, 3 and 8 ranks give the results of one process's plans over as many
//! simulated devices, from a generated input and from files read by byte range; and every
//! failure — a missing rank, a wrong world size, a port in use, ranks that disagree on the
//! input, a rank that fails — is an error in bounded time. On a GPU machine, two ranks on the
//! GPUs (NCCL where there are two) give the single-process results.

mod common;

use gridsync::multi::ranks::{ID_BYTES, Links, Rank, Token, rendezvous};
use std::time::{Duration, Instant};

/// A loopback address with a port free a moment ago.
fn free_address() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

fn rank(rank: u32, world: u32, address: &str, job: &str) -> Rank {
    Rank {
        rank,
        world,
        local_rank: rank,
        address: address.to_string(),
        job: job.to_string(),
        source: "options",
        bind: None,
        token: Some(secret(SECRET)),
    }
}

/// The tests' job secret.
const SECRET: &str = "a secret of the tests, 32 bytes";

fn secret(s: &str) -> Token {
    Token::new(s).unwrap()
}

/// Runs ranks `ranks` of a world of `world` at `address`, each on a thread; rank 0 brings `id`.
fn run(ranks: &[Rank], id: &[u8], timeout: Duration) -> Vec<gridsync::Result<Vec<u8>>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .iter()
            .map(|r| {
                let id = (r.rank == 0).then_some(id);
                s.spawn(move || rendezvous(r, id, timeout))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn every_rank_gets_rank_0s_id() {
    let id: Vec<u8> = (0..ID_BYTES as u32).map(|i| (i * 7 + 3) as u8).collect();
    for world in [1, 2, 3, 8] {
        let address = free_address();
        let ranks: Vec<Rank> = (0..world)
            .map(|r| rank(r, world, &address, "job"))
            .collect();
        for (r, got) in run(&ranks, &id, Duration::from_secs(20))
            .into_iter()
            .enumerate()
        {
            assert_eq!(got.unwrap(), id, "world {world}, rank {r}");
        }
    }
}

#[test]
fn a_missing_rank_is_an_error_on_every_rank_in_time() {
    let address = free_address();
    let id = vec![1u8; ID_BYTES];
    // A world of 3 where rank 2 never comes.
    let ranks = [rank(0, 3, &address, "j"), rank(1, 3, &address, "j")];
    let start = Instant::now();
    let got = run(&ranks, &id, Duration::from_secs(2));
    assert!(start.elapsed() < Duration::from_secs(15));
    for g in &got {
        let e = g.as_ref().unwrap_err().to_string();
        assert!(e.contains("never arrived"), "{e}");
    }
    // Nobody listening: the other ranks time out too.
    let lonely = [rank(1, 2, &free_address(), "j")];
    let e = run(&lonely, &id, Duration::from_secs(1))[0]
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(e.contains("could not reach rank 0"), "{e}");
}

#[test]
fn wrong_world_sizes_other_jobs_and_twins_are_refused() {
    let id = vec![9u8; ID_BYTES];
    for (stranger, why) in [
        (rank(1, 3, "", "job"), "world size 3"),
        (rank(1, 2, "", "other"), "proof did not match"),
        (
            Rank {
                token: Some(secret("another secret of 32 bytes......")),
                ..rank(1, 2, "", "job")
            },
            "proof did not match",
        ),
        (
            Rank {
                token: None,
                ..rank(1, 2, "", "job")
            },
            "proof did not match",
        ),
    ] {
        let address = free_address();
        let stranger = Rank {
            address: address.clone(),
            ..stranger
        };
        let timeout = Duration::from_secs(10);
        let real = rank(1, 2, &address, "job");
        std::thread::scope(|s| {
            let zero = rank(0, 2, &address, "job");
            let id = &id;
            let rank0 = s.spawn(move || rendezvous(&zero, Some(id), timeout));
            // The stranger first: refused, not mixed in; rank 0 waits on for its real rank 1.
            let e = rendezvous(&stranger, None, timeout)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{e}");
            assert_eq!(&rendezvous(&real, None, timeout).unwrap(), id);
            assert_eq!(&rank0.join().unwrap().unwrap(), id);
        });
    }
    // A rank out of range is refused where it starts (a `Rank` made by hand) — and by rank 0,
    // told why, when a peer that proves the secret claims it.
    let address = free_address();
    let e = rendezvous(&rank(5, 2, &address, "job"), None, Duration::from_secs(2)).unwrap_err();
    assert!(e.to_string().contains("each below it"), "{e}");
    std::thread::scope(|s| {
        let zero = rank(0, 2, &address, "job");
        let id = &id;
        let rank0 = s.spawn(move || rendezvous(&zero, Some(id), Duration::from_secs(10)));
        let mut c = knock(&address);
        let challenge = challenge_of(&mut c);
        c.write_all(&proven_hello(&challenge, 5, 2, "job")).unwrap();
        let reply = rest_of(&mut c);
        assert_eq!(
            reply,
            wire::message(wire::REFUSED, b"rank 5 is not one of 1..2")
        );
        let real = rank(1, 2, &address, "job");
        assert_eq!(
            &rendezvous(&real, None, Duration::from_secs(10)).unwrap(),
            id
        );
        assert_eq!(&rank0.join().unwrap().unwrap(), id);
    });
    // A rank twice: the second is refused.
    let address = free_address();
    let timeout = Duration::from_secs(10);
    let (zero, one) = (rank(0, 3, &address, "j"), rank(1, 3, &address, "j"));
    std::thread::scope(|s| {
        let id = &id;
        let rank0 = s.spawn(move || rendezvous(&zero, Some(id), timeout));
        let first = s.spawn(|| rendezvous(&one, None, timeout));
        // The twin goes after the first has had time to arrive; whichever comes second is
        // refused at once.
        std::thread::sleep(Duration::from_millis(300));
        let twin = s.spawn(|| rendezvous(&one, None, timeout));
        // Rank 2 comes only once one of the two was refused, so that rank 0 is still waiting.
        while !twin.is_finished() && !first.is_finished() {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            &rendezvous(&rank(2, 3, &address, "j"), None, timeout).unwrap(),
            id
        );
        let both = [first.join().unwrap(), twin.join().unwrap()];
        let refused: Vec<String> = both
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].contains("arrived twice"), "{}", refused[0]);
        assert!(both.iter().any(|r| r.as_ref().is_ok_and(|got| got == id)));
        assert_eq!(&rank0.join().unwrap().unwrap(), id);
    });
}

#[test]
fn an_address_in_use_is_an_error_on_rank_0() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let got = run(
        &[rank(0, 2, &address, "j")],
        &[0; ID_BYTES],
        Duration::from_secs(2),
    );
    let e = got[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("cannot listen"), "{e}");
    // An id of the wrong size is refused before anything listens.
    let got = run(
        &[rank(0, 2, &free_address(), "j")],
        &[0; 3],
        Duration::from_secs(2),
    );
    assert!(got[0].is_err());
}

// ---- Strangers at the rendezvous ----

use gridsync::multi::ranks::secret::{self, NONCE_BYTES, Side, Terms};
use gridsync::multi::ranks::wire;
use std::io::{Read, Write};
use std::net::TcpStream;

/// A connection to `address`, retried until rank 0 listens (bounded).
fn knock(address: &str) -> TcpStream {
    let start = Instant::now();
    loop {
        if let Ok(s) = TcpStream::connect(address) {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "rank 0 never listened"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Rank 0's challenge on a fresh connection.
fn challenge_of(s: &mut TcpStream) -> [u8; NONCE_BYTES] {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let m = wire::read_message(s, 0).unwrap();
    assert_eq!(m.code, wire::CHALLENGE);
    m.body.try_into().unwrap()
}

/// Everything `s` receives until it closes (bounded).
fn rest_of(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    got
}

/// The bytes of a hello that proves the tests' secret, as rank `rank` of `world` of `job`,
/// answering `challenge`.
fn proven_hello(challenge: &[u8; NONCE_BYTES], rank: u32, world: u32, job: &str) -> Vec<u8> {
    let nonce = [rank as u8; NONCE_BYTES];
    let terms = Terms {
        challenge,
        nonce: &nonce,
        rank,
        world,
        job,
    };
    wire::hello(&wire::Hello {
        rank,
        world,
        nonce,
        proof: secret::prove(Some(&super_secret()), Side::Rank, &terms),
    })
}

#[test]
fn a_stranger_learns_nothing_and_the_job_goes_on() {
    let address = free_address();
    let id = vec![5u8; ID_BYTES];
    let job = "the-job-name";
    let timeout = Duration::from_secs(20);
    std::thread::scope(|s| {
        let zero = rank(0, 2, &address, job);
        let id = &id;
        let rank0 = s.spawn(move || -> gridsync::Result<_> {
            let links = Links::open(&zero, timeout)?;
            Ok((links.broadcast_id(Some(id))?, links.refusals().clone()))
        });
        // A stranger that says hello as rank 1 with a made-up proof: one empty refusal, and
        // nothing of the job (its name, its world size) in what comes back.
        let mut c = knock(&address);
        let challenge = challenge_of(&mut c);
        let hello = wire::Hello {
            rank: 1,
            world: 2,
            nonce: [7; NONCE_BYTES],
            proof: [9; 32],
        };
        c.write_all(&wire::hello(&hello)).unwrap();
        let reply = rest_of(&mut c);
        assert_eq!(reply, wire::message(wire::REFUSED, b""));
        assert!(!String::from_utf8_lossy(&reply).contains(job));
        // One that proves the job's name but not its secret (no token): refused the same way.
        let e = rendezvous(
            &Rank {
                token: None,
                ..rank(1, 2, &address, job)
            },
            None,
            timeout,
        )
        .unwrap_err();
        assert!(
            matches!(e, gridsync::Error::Rank { rank: Some(0), .. }),
            "{e:?}"
        );
        assert!(!e.to_string().contains(job));
        // A stranger's proof replayed on another connection: a new challenge, so refused.
        let mut c2 = knock(&address);
        let other = challenge_of(&mut c2);
        assert_ne!(challenge, other);
        let mut replay = hello.clone();
        replay.proof = secret::prove(
            Some(&super_secret()),
            Side::Rank,
            &Terms {
                challenge: &challenge,
                nonce: &hello.nonce,
                rank: 1,
                world: 2,
                job,
            },
        );
        c2.write_all(&wire::hello(&replay)).unwrap();
        assert_eq!(rest_of(&mut c2), wire::message(wire::REFUSED, b""));
        // The real rank 1 still gets the id, and rank 0 kept the reasons.
        assert_eq!(
            &rendezvous(&rank(1, 2, &address, job), None, timeout).unwrap(),
            id
        );
        let (got, refusals) = rank0.join().unwrap().unwrap();
        assert_eq!(&got, id);
        assert_eq!(refusals.count, 3, "{refusals:?}");
        assert!(
            refusals
                .reasons
                .iter()
                .all(|r| r.contains("does not prove")),
            "{refusals:?}"
        );
    });
}

fn super_secret() -> Token {
    secret(SECRET)
}

#[test]
fn a_rank_0_that_cannot_prove_the_secret_is_not_trusted() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let fake = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        c.write_all(&wire::message(wire::CHALLENGE, &[3; NONCE_BYTES]))
            .unwrap();
        let mut hello = [0; wire::HELLO_BYTES];
        c.read_exact(&mut hello).unwrap();
        // Accepts with a made-up proof, then hands out an id of its own.
        c.write_all(&wire::message(wire::OK, &[0; 32])).unwrap();
        let _ = c.write_all(&wire::message(wire::DATA, &[6; ID_BYTES]));
        std::thread::sleep(Duration::from_millis(500));
    });
    let e = rendezvous(&rank(1, 2, &address, "j"), None, Duration::from_secs(10)).unwrap_err();
    assert!(e.to_string().contains("did not prove"), "{e}");
    assert!(matches!(e, gridsync::Error::Rank { rank: Some(0), .. }));
    fake.join().unwrap();
}

#[test]
fn idle_connections_do_not_hold_up_the_rendezvous() {
    // 100 connections that never say a word: served beside the real ranks, each under its own
    // short deadline, not one after another (which took 100 × 5 s).
    let address = free_address();
    let id = vec![8u8; ID_BYTES];
    let start = Instant::now();
    std::thread::scope(|s| {
        let zero = rank(0, 3, &address, "j");
        let id = &id;
        let rank0 = s.spawn(move || rendezvous(&zero, Some(id), Duration::from_secs(30)));
        let idle: Vec<TcpStream> = (0..100).map(|_| knock(&address)).collect();
        let ones: Vec<_> = (1..3)
            .map(|r| {
                let me = rank(r, 3, &address, "j");
                s.spawn(move || rendezvous(&me, None, Duration::from_secs(30)))
            })
            .collect();
        for one in ones {
            assert_eq!(&one.join().unwrap().unwrap(), id);
        }
        assert_eq!(&rank0.join().unwrap().unwrap(), id);
        drop(idle);
    });
    assert!(
        start.elapsed() < Duration::from_secs(12),
        "the job took {:?} beside 100 idle connections",
        start.elapsed()
    );
}

#[test]
fn a_peer_sending_a_byte_at_a_time_is_cut_at_its_deadline() {
    let address = free_address();
    let id = vec![4u8; ID_BYTES];
    std::thread::scope(|s| {
        // At the rendezvous: a hello dripped a byte every 100 ms (7.6 s in all) is cut at the
        // hello's 1 s bound, and the real rank joins meanwhile.
        let zero = rank(0, 2, &address, "j");
        let id2 = id.clone();
        let rank0 = s.spawn(move || -> gridsync::Result<_> {
            let links = Links::open_with(&zero, Duration::from_secs(20), Duration::from_secs(1))?;
            let got = links.broadcast_id(Some(&id2))?;
            Ok((got, links.refusals().clone()))
        });
        let mut c = knock(&address);
        let _ = challenge_of(&mut c);
        let started = Instant::now();
        let dripped = wire::hello(&wire::Hello {
            rank: 1,
            world: 2,
            nonce: [2; NONCE_BYTES],
            proof: [2; 32],
        });
        let cut = dripped.iter().find_map(|&b| {
            std::thread::sleep(Duration::from_millis(100));
            c.write_all(&[b]).err().map(|_| started.elapsed())
        });
        let cut = cut.expect("a dripped hello was never cut");
        assert!(cut < Duration::from_secs(4), "cut after {cut:?}");
        assert_eq!(
            rendezvous(&rank(1, 2, &address, "j"), None, Duration::from_secs(20)).unwrap(),
            id
        );
        let (got, refusals) = rank0.join().unwrap().unwrap();
        assert_eq!(got, id);
        assert!(
            refusals
                .reasons
                .iter()
                .any(|r| r.contains("no hello within 1.0 s")),
            "{refusals:?}"
        );
    });
    // After the rendezvous: a proven rank that drips a message is cut at the exchange's bound
    // (an absolute deadline; a timeout per read would let it run on for 7 s).
    let address = free_address();
    let job = "drip";
    std::thread::scope(|s| {
        let zero = rank(0, 2, &address, job);
        let rank0 = s.spawn(move || -> gridsync::Result<Duration> {
            let links = Links::open(&zero, Duration::from_secs(3))?;
            let start = Instant::now();
            let e = links.barrier().unwrap_err();
            assert!(e.to_string().contains("no whole message within"), "{e}");
            assert!(
                matches!(e, gridsync::Error::Rank { rank: Some(1), .. }),
                "{e:?}"
            );
            Ok(start.elapsed())
        });
        let mut c = knock(&address);
        let challenge = challenge_of(&mut c);
        c.write_all(&proven_hello(&challenge, 1, 2, job)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let ok = wire::read_message(&mut c, 0).unwrap();
        assert_eq!(ok.code, wire::OK);
        for b in wire::message(wire::DATA, &[0; 64]) {
            std::thread::sleep(Duration::from_millis(100));
            if c.write_all(&[b]).is_err() {
                break;
            }
        }
        let took = rank0.join().unwrap().unwrap();
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(6),
            "rank 0 gave up after {took:?}"
        );
    });
}

// ---- Real processes ----

use common::{bin, within};

/// Runs `gridsync ARGS`, bounded by `limit`; its output.
fn gridsync(args: &[&str], limit: Duration) -> std::process::Output {
    let mut cmd = std::process::Command::new(bin());
    cmd.args(args);
    within(cmd, limit)
}

/// `gridsync launch -n N --no-prefix -- gridsync --json [--simulate] multi OP
/// --ranks env ARGS`: rank 0's JSON report.
fn launched(n: u32, simulate: bool, op: &str, args: &[&str]) -> serde_json::Value {
    let n = n.to_string();
    let b = bin();
    let mut all = vec![
        "launch",
        "-n",
        &n,
        "--no-prefix",
        "--timeout",
        "300",
        "--",
        &b,
        "--json",
    ];
    if simulate {
        all.push("--simulate");
    }
    all.extend(["multi", op, "--ranks", "env", "--rendezvous-timeout", "60"]);
    all.extend(args);
    let out = gridsync(&all, Duration::from_secs(320));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{all:?}\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn f32_of(v: &serde_json::Value) -> f32 {
    v.as_f64().map_or(f32::NAN, |x| x as f32)
}

fn bins_of(r: &serde_json::Value) -> Vec<u64> {
    r["bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .collect()
}

/// One process's plans over `n` simulated devices: (Σ, min, max).
fn one_process_reduce(n: usize, x: &[f32]) -> (f64, f32, f32) {
    use gpu::lessons::reduce::{MaxF32, MinF32, SumF32InF64};
    use gridsync::multi::{Combiner, DeviceSet, Op, ReducePlan, Scattered};
    let set = DeviceSet::simulated(n).unwrap();
    let on = Scattered::zeros(&set, x.len()).unwrap();
    on.copy_from(&set, x).unwrap();
    let c = Combiner::peer_copies();
    (
        ReducePlan::<SumF32InF64>::new(&set, &on, Op::Sum)
            .unwrap()
            .run(&c)
            .unwrap(),
        ReducePlan::<MinF32>::new(&set, &on, Op::Min)
            .unwrap()
            .run(&c)
            .unwrap(),
        ReducePlan::<MaxF32>::new(&set, &on, Op::Max)
            .unwrap()
            .run(&c)
            .unwrap(),
    )
}

#[test]
fn ranks_as_processes_give_the_one_process_results() {
    use gridsync::multi::report::SEED;
    let len = 1003;
    let x = gridsync::inputs::uniform_f32(len, SEED, -1.0, 1.0);
    let abs: f64 = x.iter().map(|v| v.abs() as f64).sum();
    for n in [1u32, 2, 3, 8] {
        let r = launched(n, true, "reduce", &["--len", "1003", "--repeats", "1"]);
        assert_eq!(r["world"], n);
        let slices: Vec<u64> = r["slices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(slices.iter().sum::<u64>(), len as u64);
        let (sum, lo, hi) = one_process_reduce(n as usize, &x);
        let got = r["sum"].as_f64().unwrap();
        assert!(
            (got - sum).abs() <= 64.0 * f64::EPSILON * abs,
            "{n} ranks: Σ {got}, one process {sum}"
        );
        assert_eq!(f32_of(&r["min"]), lo, "{n} ranks");
        assert_eq!(f32_of(&r["max"]), hi, "{n} ranks");
        assert!(r["combine"].as_str().unwrap().contains("host combine"));
    }
    // Integers: exactly the CPU's (which the one-process plans give too: tests/multi.rs).
    let bytes = gridsync::histogram::uniform_bytes(5001, SEED);
    let r = launched(3, true, "histogram", &["--len", "5001", "--repeats", "1"]);
    let want = gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Byte);
    assert_eq!(bins_of(&r), want);
    let r = launched(
        2,
        true,
        "histogram",
        &["--len", "5001", "--repeats", "1", "--bins", "128"],
    );
    let want = gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Ascii);
    assert_eq!(bins_of(&r), want);
    let r = launched(
        2,
        true,
        "histogram",
        &["--len", "3001", "--repeats", "1", "--bins", "65536"],
    );
    let words = gridsync::inputs::uniform_u16(3001, SEED);
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::wide::histogram_u16_cpu(&words)
    );
    let y = gridsync::inputs::uniform_f32(4099, SEED, 0.0, 1.0);
    let r = launched(3, true, "count-above", &["--len", "4099", "--repeats", "1"]);
    assert_eq!(
        r["count"].as_u64().unwrap(),
        y.iter().filter(|&&v| v > 0.5).count() as u64
    );
    // More ranks than elements: the empty slices give the identity.
    let r = launched(3, true, "reduce", &["--len", "2", "--repeats", "1"]);
    let two = gridsync::inputs::uniform_f32(2, SEED, -1.0, 1.0);
    assert_eq!(f32_of(&r["min"]), two[0].min(two[1]));
}

#[test]
fn ranks_read_their_byte_range_of_a_file() {
    use rand::Rng;
    let mut rng = common::rng();
    let dir = std::env::temp_dir().join(format!("gridsync-ranks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 10_007;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-3.0f32..3.0)).collect();
    let floats = dir.join("x.f32");
    std::fs::write(
        &floats,
        x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    let bytes: Vec<u8> = (0..65_537).map(|_| rng.random()).collect();
    let byte_file = dir.join("bytes.bin");
    std::fs::write(&byte_file, &bytes).unwrap();
    let f = floats.to_str().unwrap();
    // The same file as 16-bit values: 65 536 bins, each rank its range.
    let counts = dir.join("counts.csv");
    let r = launched(
        3,
        true,
        "histogram",
        &[
            "--input",
            f,
            "--repeats",
            "1",
            "--bins",
            "65536",
            "--output",
            counts.to_str().unwrap(),
        ],
    );
    let words: Vec<u16> = x
        .iter()
        .flat_map(|v| {
            let b = v.to_le_bytes();
            [
                u16::from_le_bytes([b[0], b[1]]),
                u16::from_le_bytes([b[2], b[3]]),
            ]
        })
        .collect();
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::wide::histogram_u16_cpu(&words)
    );
    // Rank 0 wrote every bin's count (`bin,count`, a line per bin).
    let csv = std::fs::read_to_string(&counts).unwrap();
    let written: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split_once(',').unwrap().1.parse().unwrap())
        .collect();
    assert_eq!(csv.lines().next(), Some("bin,count"));
    assert_eq!(written, bins_of(&r));
    let r = launched(3, true, "count-above", &["--input", f, "--repeats", "1"]);
    assert_eq!(
        r["count"].as_u64().unwrap(),
        x.iter().filter(|&&v| v > 0.5).count() as u64
    );
    // Each rank read its slice's bytes, no more: together the file once.
    let read: Vec<u64> = r["bytes_read"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let slices: Vec<u64> = r["slices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| 4 * v.as_u64().unwrap())
        .collect();
    assert_eq!(read, slices);
    assert_eq!(read.iter().sum::<u64>(), 4 * n as u64);
    let r = launched(3, true, "reduce", &["--input", f, "--repeats", "1"]);
    assert_eq!(
        f32_of(&r["max"]),
        x.iter().copied().fold(f32::NAN, f32::max)
    );
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
    assert!((r["sum"].as_f64().unwrap() - want).abs() <= 64.0 * f64::EPSILON * abs);
    let r = launched(
        2,
        true,
        "histogram",
        &["--input", byte_file.to_str().unwrap(), "--repeats", "1"],
    );
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Byte)
    );
    // A text file cannot be cut by bytes; a raw file of a length not a whole number of floats
    // or of 16-bit values is refused (as one process refuses it), not cut short by the byte
    // ranges; all before any rank reads.
    let text = dir.join("x.txt");
    std::fs::write(&text, "1 2 3").unwrap();
    let odd = dir.join("odd.f32");
    std::fs::write(&odd, [0u8; 7]).unwrap();
    let odd16 = dir.join("odd.u16");
    std::fs::write(&odd16, [1u8; 10_001]).unwrap();
    for (file, op, why) in [
        (&text, &["reduce"][..], "text file"),
        (&odd, &["reduce"][..], "whole number of 4-byte"),
        (
            &odd16,
            &["histogram", "--bins", "65536"][..],
            "whole number of 2-byte",
        ),
    ] {
        let b = bin();
        let mut args = vec!["launch", "-n", "2", "--", &b, "--simulate", "multi"];
        args.extend(op);
        args.extend(["--ranks", "env", "--input", file.to_str().unwrap()]);
        let out = gridsync(&args, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failures_of_processes_are_errors_in_bounded_time() {
    let rank_args = |rank: &str, world: &str, address: &str| -> Vec<String> {
        [
            "--simulate",
            "multi",
            "reduce",
            "--len",
            "100",
            "--repeats",
            "1",
            "--ranks",
            "env",
            "--rank",
            rank,
            "--world-size",
            world,
            "--rendezvous",
            address,
            "--rendezvous-timeout",
            "2",
        ]
        .map(String::from)
        .to_vec()
    };
    let run = |args: Vec<String>| {
        let mut c = std::process::Command::new(bin());
        c.args(args).env("GRIDSYNC_JOB", "t");
        std::thread::spawn(move || within(c, Duration::from_secs(20)))
    };
    let err = |c: std::thread::JoinHandle<std::process::Output>| {
        let o = c.join().unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let start = Instant::now();
    // A rank that never comes: rank 0 says which, after the timeout.
    let e = err(run(rank_args("0", "2", &free_address())));
    assert!(e.contains("rank(s) 1 of 2 never arrived"), "{e}");
    // A rank told another world size is refused, and its rank 0 times out.
    let address = free_address();
    let zero = run(rank_args("0", "2", &address));
    let wrong = run(rank_args("1", "3", &address));
    let e = err(wrong);
    assert!(e.contains("world size 3"), "{e}");
    assert!(err(zero).contains("never arrived"));
    // The port taken: rank 0 says so at once.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let e = err(run(rank_args(
        "0",
        "2",
        &taken.local_addr().unwrap().to_string(),
    )));
    assert!(e.contains("cannot listen"), "{e}");
    // No rank at all in the environment or options.
    let mut c = std::process::Command::new(bin());
    c.args(["--simulate", "multi", "reduce", "--ranks", "env"]);
    for v in [
        "RANK",
        "WORLD_SIZE",
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
    ] {
        c.env_remove(v);
    }
    let o = within(c, Duration::from_secs(20));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no rank found"));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );

    // Ranks that disagree on the input stop together, each saying why.
    let b = bin();
    let script =
        format!("exec {b} --simulate multi reduce --ranks env --repeats 1 --len $((100 + RANK))");
    let out = gridsync(
        &["launch", "-n", "3", "--", "sh", "-c", &script],
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(text.contains("different lengths"), "{text}");
    // One rank failing fails the launch at once, naming it, and stops the others.
    let out = gridsync(
        &[
            "launch",
            "-n",
            "3",
            "--",
            "sh",
            "-c",
            "if [ $RANK = 1 ]; then echo bye; exit 3; fi; sleep 60",
        ],
        Duration::from_secs(30),
    );
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success());
    assert!(so.contains("[1] bye"), "{so}");
    assert!(
        se.contains("rank 1 exited with status 3 (of 3 ranks)"),
        "{se}"
    );
    // What a rank left running in the background does not hold the launch: the rank's
    // process group ends with it, failed or not.
    for script in ["sleep 60 & exit 3", "sleep 60 &"] {
        let out = gridsync(
            &["launch", "-n", "2", "--", "sh", "-c", script],
            Duration::from_secs(20),
        );
        assert_eq!(out.status.success(), !script.contains("exit 3"), "{script}");
    }
    // A command that does not exist, no command, no ranks.
    for args in [
        &["launch", "-n", "2", "--", "/nonexistent/gridsync-rank"][..],
        &["launch", "-n", "0", "--", "true"][..],
        &["launch", "-n", "2"][..],
    ] {
        let out = gridsync(args, Duration::from_secs(10));
        assert!(!out.status.success(), "{args:?}");
    }
    // A launch whose ranks all succeed succeeds; the bound stops one that does not end.
    assert!(
        gridsync(
            &["launch", "-n", "4", "--", "true"],
            Duration::from_secs(10)
        )
        .status
        .success()
    );
    let out = gridsync(
        &["launch", "-n", "2", "--timeout", "1", "--", "sleep", "60"],
        Duration::from_secs(10),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("still running after 1.0 s"));
}

/// Two ranks on the GPUs: NCCL with two GPUs, the host combine on one GPU (two ranks on one
/// GPU cannot share an NCCL communicator). Each rank checks its results against the CPU; here
/// they are also the single-process plans' results: integers exactly, sums within the bound.
#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_two_ranks_give_the_single_process_results() {
    use gridsync::multi::report::SEED;
    let gpus = gridsync::runtime::device::init_driver().unwrap();
    let mut extra: Vec<&str> = vec!["--repeats", "3"];
    if gpus < 2 {
        extra.extend(["--device", "0", "--host-combine"]);
    }
    let len = 50_000_017usize;
    let len_s = len.to_string();
    let mut args = vec!["--len", len_s.as_str()];
    args.extend(&extra);
    let r = launched(2, false, "count-above", &args);
    let y = gridsync::inputs::uniform_f32(len, SEED, 0.0, 1.0);
    assert_eq!(
        r["count"].as_u64().unwrap(),
        y.iter().filter(|&&v| v > 0.5).count() as u64
    );
    if gpus >= 2 {
        assert!(r["combine"].as_str().unwrap().contains("NCCL"), "{r}");
    }
    let r = launched(2, false, "histogram", &args);
    let bytes = gridsync::histogram::uniform_bytes(len, SEED);
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::histogram_cpu(&bytes, gridsync::histogram::Bins::Byte)
    );
    let mut wide = args.clone();
    wide.extend(["--bins", "65536"]);
    let r = launched(2, false, "histogram", &wide);
    let words = gridsync::inputs::uniform_u16(len, SEED);
    assert_eq!(
        bins_of(&r),
        gridsync::histogram::wide::histogram_u16_cpu(&words)
    );
    let r = launched(2, false, "reduce", &args);
    let x = gridsync::inputs::uniform_f32(len, SEED, -1.0, 1.0);
    let abs: f64 = x.iter().map(|v| v.abs() as f64).sum();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    assert!((r["sum"].as_f64().unwrap() - want).abs() <= 64.0 * f64::EPSILON * abs);
    assert_eq!(
        f32_of(&r["min"]),
        x.iter().copied().fold(f32::NAN, f32::min)
    );
    assert_eq!(
        f32_of(&r["max"]),
        x.iter().copied().fold(f32::NAN, f32::max)
    );
}

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
    let want = gridsync::multi::ranks::Census {
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
    use gridsync::multi::world::{JoinOptions, World};
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
