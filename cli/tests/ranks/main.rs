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

#[path = "../common/mod.rs"]
mod common;
mod links;
mod processes;
mod rendezvous;

use common::{bin, within};
use gridsync::multi::processes::{ID_BYTES, Links, Rank, Token, rendezvous};
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

// ---- Helpers of the real processes ----

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
