//! One process per GPU, the rendezvous: ranks on the loopback address (threads here; each rank
//! only talks TCP, so threads stand for processes) receive rank 0's id; a rank that never
//! arrives, a wrong world size, another job's rank and an address in use are errors, each
//! within the timeout.

use gridsync::multi::ranks::{ID_BYTES, Rank, rendezvous};
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
    }
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
        (rank(1, 2, "", "other"), "two jobs"),
        (rank(5, 2, "", "job"), "not one of 1..2"),
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
    // A rank twice: the second is refused.
    let address = free_address();
    let timeout = Duration::from_secs(10);
    let (zero, one) = (rank(0, 3, &address, "j"), rank(1, 3, &address, "j"));
    std::thread::scope(|s| {
        let id = &id;
        let rank0 = s.spawn(move || rendezvous(&zero, Some(id), timeout));
        let first = s.spawn(|| rendezvous(&one, None, timeout));
        // The twin goes after the first has had time to arrive; it is refused at once.
        std::thread::sleep(Duration::from_millis(300));
        let e = rendezvous(&one, None, timeout).unwrap_err().to_string();
        assert!(e.contains("arrived twice"), "{e}");
        assert_eq!(
            &rendezvous(&rank(2, 3, &address, "j"), None, timeout).unwrap(),
            id
        );
        assert_eq!(&first.join().unwrap().unwrap(), id);
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
