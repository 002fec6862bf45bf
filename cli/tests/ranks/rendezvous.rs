//! The rendezvous on the loopback address, ranks as threads: the id handed out, the ranks
//! that never come or do not belong refused in time, strangers taught nothing.

use super::*;

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

use gridsync::multi::processes::secret::{self, NONCE_BYTES, Side, Terms};
use gridsync::multi::processes::wire;
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
