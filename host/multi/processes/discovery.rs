//! Who this process is in a launched job: its rank, the world size, its GPU, where rank 0
//! listens and the job's secret — from explicit options, else the launcher's environment.

use super::MAX_WORLD;
use super::secret::{TOKEN_VAR, Token};
use crate::runtime::error::{Error, Result};

/// The variables torchrun gives each rank, read here and set by `gridsync launch` (written
/// once, for both).
pub mod torchrun {
    /// The rank in the job.
    pub const RANK: &str = "RANK";
    /// Ranks in the job.
    pub const WORLD_SIZE: &str = "WORLD_SIZE";
    /// The rank's place among its node's ranks.
    pub const LOCAL_RANK: &str = "LOCAL_RANK";
    /// Ranks on this node.
    pub const LOCAL_WORLD_SIZE: &str = "LOCAL_WORLD_SIZE";
    /// Rank 0's host.
    pub const MASTER_ADDR: &str = "MASTER_ADDR";
    /// Rank 0's port.
    pub const MASTER_PORT: &str = "MASTER_PORT";
    /// `True` where torchrun's agent serves its own store at `MASTER_PORT`.
    pub const USE_AGENT_STORE: &str = "TORCHELASTIC_USE_AGENT_STORE";
    /// The job's id.
    pub const RUN_ID: &str = "TORCHELASTIC_RUN_ID";
}

/// The variables Slurm's `srun` gives each task, read here.
pub mod slurm {
    /// The rank in the job.
    pub const PROCID: &str = "SLURM_PROCID";
    /// Ranks in the job.
    pub const NTASKS: &str = "SLURM_NTASKS";
    /// The rank's place among its node's ranks.
    pub const LOCALID: &str = "SLURM_LOCALID";
    /// The job's id.
    pub const JOB_ID: &str = "SLURM_JOB_ID";
}

/// The variables Open MPI's `mpirun` gives each process, read here.
pub mod openmpi {
    /// The rank in the job.
    pub const RANK: &str = "OMPI_COMM_WORLD_RANK";
    /// Ranks in the job.
    pub const SIZE: &str = "OMPI_COMM_WORLD_SIZE";
    /// The rank's place among its node's ranks.
    pub const LOCAL_RANK: &str = "OMPI_COMM_WORLD_LOCAL_RANK";
    /// The job's id.
    pub const JOB_ID: &str = "OMPI_MCA_ess_base_jobid";
}

/// The variable naming where rank 0 listens (`HOST:PORT`), before `MASTER_ADDR`/`MASTER_PORT`.
pub const RENDEZVOUS_VAR: &str = "GRIDSYNC_RENDEZVOUS";
/// The variable naming the address rank 0 binds (`0.0.0.0` for every interface), where it is not
/// the rendezvous address's own.
pub const BIND_VAR: &str = "GRIDSYNC_RENDEZVOUS_BIND";
/// The variable `gridsync launch` names its job with.
pub const JOB_VAR: &str = "GRIDSYNC_JOB";

/// This process's place in a job.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rank {
    /// Its rank, `0..world`.
    pub rank: u32,
    /// Ranks in the job.
    pub world: u32,
    /// Its rank among the ranks of its node: the GPU it uses unless told otherwise.
    pub local_rank: u32,
    /// Where rank 0 listens (host and port).
    pub address: String,
    /// The job's name: ranks of different jobs on one address refuse each other.
    pub job: String,
    /// Which convention gave the values (`options`, `torchrun`, `slurm`, `openmpi`).
    pub source: &'static str,
    /// What rank 0 binds: `None`, the rendezvous address itself (so a job told `127.0.0.1`
    /// listens on loopback only); `0.0.0.0` or `::` for every interface, or another of the
    /// host's addresses (`--rendezvous-bind`, [`BIND_VAR`]).
    pub bind: Option<String>,
    /// The job's secret ([`TOKEN_VAR`]), which every rank proves at the rendezvous; `None`: the
    /// weaker fallback, in which the ranks prove only the job's name ([`super::secret`]).
    #[serde(skip)]
    pub token: Option<Token>,
}

/// Values given explicitly (command-line options), which win over the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankOptions {
    /// `--rank`.
    pub rank: Option<u32>,
    /// `--world-size`.
    pub world: Option<u32>,
    /// `--local-rank`.
    pub local_rank: Option<u32>,
    /// `--rendezvous HOST:PORT`.
    pub address: Option<String>,
    /// `--rendezvous-bind HOST`.
    pub bind: Option<String>,
}

/// Finds this process's rank from `opts` and the environment `env` (a lookup, so that tests can
/// pass their own; [`discover`] uses the process's).
///
/// # Errors
/// [`Error::InvalidInput`] naming what is missing or inconsistent: no convention's variables,
/// a value that is not a number, a rank not below the world size, a world of 0 or past
/// [`MAX_WORLD`], no rendezvous address, a secret too short or too long.
pub fn discover_from(opts: &RankOptions, env: impl Fn(&str) -> Option<String>) -> Result<Rank> {
    let found = convention(opts, &env)?;
    let source = match (&found, opts.rank.is_some() || opts.world.is_some()) {
        (_, true) => "options",
        (Some((s, ..)), false) => s,
        (None, false) => {
            return Err(Error::InvalidInput(
                "no rank found: give --rank and --world-size, or run under a launcher that sets \
                 RANK/WORLD_SIZE (torchrun, gridsync launch), SLURM_PROCID/SLURM_NTASKS (srun) \
                 or OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (mpirun)"
                    .into(),
            ));
        }
    };
    let rank = opts
        .rank
        .or(found.map(|f| f.1))
        .ok_or_else(|| Error::InvalidInput("--world-size was given without --rank".into()))?;
    let world = opts
        .world
        .or(found.map(|f| f.2))
        .ok_or_else(|| Error::InvalidInput("--rank was given without --world-size".into()))?;
    if world == 0 || world > MAX_WORLD {
        return Err(Error::InvalidInput(format!(
            "a world of {world} ranks: 1 to {MAX_WORLD}"
        )));
    }
    if rank >= world {
        return Err(Error::InvalidInput(format!(
            "rank {rank} in a world of {world}: a rank is below the world size"
        )));
    }
    let local_rank = opts
        .local_rank
        .or(found.and_then(|f| f.3))
        .unwrap_or(if world == 1 { 0 } else { rank });
    let address = address(opts, &env, world)?;
    let job = [JOB_VAR, torchrun::RUN_ID, slurm::JOB_ID, openmpi::JOB_ID]
        .iter()
        .find_map(|v| env(v))
        .unwrap_or_default();
    let token = match env(TOKEN_VAR) {
        Some(t) => Some(Token::new(&t)?),
        None => None,
    };
    Ok(Rank {
        rank,
        world,
        local_rank,
        address,
        job,
        source,
        bind: opts.bind.clone().or_else(|| env(BIND_VAR)),
        token,
    })
}

/// A launcher convention found: (source, rank, world size, local rank).
type Convention = (&'static str, u32, u32, Option<u32>);

/// The first launcher convention whose variables `env` holds: (source, rank, world size,
/// local rank); `None` where there is none, or where `opts` give both the rank and the world
/// size (explicit values win: the launchers' variables are not read at all, and a malformed
/// one does not matter).
///
/// # Errors
/// [`Error::InvalidInput`] for a value that is not a number, or a rank without a world size.
fn convention(
    opts: &RankOptions,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<Convention>> {
    let num = |name: &str| -> Result<Option<u32>> {
        match env(name) {
            None => Ok(None),
            Some(v) => v.trim().parse::<u32>().map(Some).map_err(|_| {
                Error::InvalidInput(format!("{name}={v:?} is not a non-negative number"))
            }),
        }
    };
    // (source, rank variable, world variable, local-rank variable)
    let conventions: [(&'static str, &str, &str, &str); 3] = [
        (
            "torchrun",
            torchrun::RANK,
            torchrun::WORLD_SIZE,
            torchrun::LOCAL_RANK,
        ),
        ("slurm", slurm::PROCID, slurm::NTASKS, slurm::LOCALID),
        ("openmpi", openmpi::RANK, openmpi::SIZE, openmpi::LOCAL_RANK),
    ];
    if opts.rank.is_some() && opts.world.is_some() {
        return Ok(None);
    }
    for (source, r, w, l) in conventions {
        if env(r).is_some() || env(w).is_some() {
            let (rank, world) = (num(r)?, num(w)?);
            let (Some(rank), Some(world)) = (rank, world) else {
                return Err(Error::InvalidInput(format!(
                    "{source}: {r} and {w} must both be set (found only {})",
                    if rank.is_some() { r } else { w }
                )));
            };
            return Ok(Some((source, rank, world, num(l)?)));
        }
    }
    Ok(None)
}

/// Where rank 0 listens: `opts.address`, else [`RENDEZVOUS_VAR`], else
/// `MASTER_ADDR:MASTER_PORT` (`MASTER_PORT + 1` under torchrun's agent); `127.0.0.1:0` for a
/// world of one.
///
/// # Errors
/// [`Error::InvalidInput`] for no address, half of one, or a port that is not one.
fn address(
    opts: &RankOptions,
    env: &impl Fn(&str) -> Option<String>,
    world: u32,
) -> Result<String> {
    let address = match opts.address.clone().or_else(|| env(RENDEZVOUS_VAR)) {
        Some(a) => a,
        None => match (env(torchrun::MASTER_ADDR), env(torchrun::MASTER_PORT)) {
            // torchrun's agent serves its own store at MASTER_PORT (and says so): the next port.
            (Some(host), Some(port))
                if env(torchrun::USE_AGENT_STORE).as_deref() == Some("True") =>
            {
                let p: u16 = port.trim().parse().map_err(|_| {
                    Error::InvalidInput(format!("MASTER_PORT={port:?} is not a port"))
                })?;
                let next = p.checked_add(1).ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "MASTER_PORT={p}: under torchrun gridsync listens at MASTER_PORT + 1; \
                         set GRIDSYNC_RENDEZVOUS=HOST:PORT"
                    ))
                })?;
                format!("{host}:{next}")
            }
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (None, None) if world == 1 => "127.0.0.1:0".into(),
            (None, None) => {
                return Err(Error::InvalidInput(
                    "no rendezvous address: set MASTER_ADDR and MASTER_PORT (rank 0's host and a \
                     free port) or give --rendezvous HOST:PORT"
                        .into(),
                ));
            }
            (Some(_), None) => {
                return Err(Error::InvalidInput(
                    "MASTER_ADDR without MASTER_PORT".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(Error::InvalidInput(
                    "MASTER_PORT without MASTER_ADDR".into(),
                ));
            }
        },
    };
    Ok(address)
}

/// [`discover_from`] the process's environment.
///
/// # Errors
/// As [`discover_from`].
pub fn discover(opts: &RankOptions) -> Result<Rank> {
    discover_from(opts, |name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn conventions_are_read_in_order_and_checked() {
        let none = RankOptions::default();
        let r = discover_from(
            &none,
            env(&[
                ("RANK", "1"),
                ("WORLD_SIZE", "2"),
                ("LOCAL_RANK", "1"),
                ("MASTER_ADDR", "127.0.0.1"),
                ("MASTER_PORT", "29500"),
                ("SLURM_PROCID", "5"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (r.rank, r.world, r.local_rank, r.source),
            (1, 2, 1, "torchrun")
        );
        assert_eq!(r.address, "127.0.0.1:29500");
        // Under torchrun's agent (which holds MASTER_PORT), the next port; an explicit address
        // (GRIDSYNC_RENDEZVOUS, then --rendezvous) wins.
        let torchrun = [
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "localhost"),
            ("MASTER_PORT", "46167"),
            ("TORCHELASTIC_USE_AGENT_STORE", "True"),
        ];
        assert_eq!(
            discover_from(&none, env(&torchrun)).unwrap().address,
            "localhost:46168"
        );
        let mut given = torchrun.to_vec();
        given.push(("GRIDSYNC_RENDEZVOUS", "node0:1234"));
        assert_eq!(
            discover_from(&none, env(&given)).unwrap().address,
            "node0:1234"
        );
        let opts = RankOptions {
            address: Some("node1:99".into()),
            ..RankOptions::default()
        };
        assert_eq!(
            discover_from(&opts, env(&given)).unwrap().address,
            "node1:99"
        );
        let mut last = torchrun.to_vec();
        last[3] = ("MASTER_PORT", "65535");
        assert!(discover_from(&none, env(&last)).is_err());
        let r = discover_from(
            &none,
            env(&[
                ("SLURM_PROCID", "3"),
                ("SLURM_NTASKS", "8"),
                ("SLURM_LOCALID", "1"),
                ("SLURM_JOB_ID", "77"),
                ("MASTER_ADDR", "n1"),
                ("MASTER_PORT", "1"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (r.rank, r.world, r.local_rank, r.source),
            (3, 8, 1, "slurm")
        );
        assert_eq!(r.job, "77");
        let r = discover_from(
            &none,
            env(&[
                ("OMPI_COMM_WORLD_RANK", "0"),
                ("OMPI_COMM_WORLD_SIZE", "4"),
                ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
                ("MASTER_ADDR", "h"),
                ("MASTER_PORT", "2"),
            ]),
        )
        .unwrap();
        assert_eq!((r.rank, r.world, r.source), (0, 4, "openmpi"));
        // Options win.
        let opts = RankOptions {
            rank: Some(2),
            world: Some(3),
            local_rank: Some(0),
            address: Some("127.0.0.1:9".into()),
            bind: None,
        };
        let r = discover_from(&opts, env(&[("RANK", "1"), ("WORLD_SIZE", "2")])).unwrap();
        assert_eq!(
            (r.rank, r.world, r.local_rank, r.source),
            (2, 3, 0, "options")
        );
    }

    #[test]
    fn options_win_over_a_malformed_environment_and_the_secret_is_read() {
        let opts = RankOptions {
            rank: Some(0),
            world: Some(2),
            address: Some("127.0.0.1:9".into()),
            ..RankOptions::default()
        };
        let bad = [("RANK", "foo"), ("WORLD_SIZE", "x"), ("SLURM_PROCID", "?")];
        let r = discover_from(&opts, env(&bad)).unwrap();
        assert_eq!(
            (r.rank, r.world, r.local_rank, r.source),
            (0, 2, 0, "options")
        );
        assert!(discover_from(&RankOptions::default(), env(&bad)).is_err());
        assert_eq!(r.token, None);
        assert_eq!(r.bind, None);
        let with = [
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
            ("MASTER_ADDR", "h"),
            ("MASTER_PORT", "1"),
            (TOKEN_VAR, "0123456789abcdef0123"),
            (BIND_VAR, "0.0.0.0"),
        ];
        let r = discover_from(&RankOptions::default(), env(&with)).unwrap();
        assert_eq!(r.token, Some(Token::new("0123456789abcdef0123").unwrap()));
        assert_eq!(r.bind.as_deref(), Some("0.0.0.0"));
        // Never shown, not even by Debug or in JSON.
        assert!(!format!("{r:?}").contains("0123456789abcdef0123"));
        assert!(
            !serde_json::to_string(&r)
                .unwrap()
                .contains("0123456789abcdef0123")
        );
        let mut short = with.to_vec();
        short[4] = (TOKEN_VAR, "short");
        assert!(discover_from(&RankOptions::default(), env(&short)).is_err());
    }

    #[test]
    fn missing_and_inconsistent_values_are_errors() {
        let none = RankOptions::default();
        for pairs in [
            vec![],
            vec![("RANK", "1")],
            vec![("RANK", "x"), ("WORLD_SIZE", "2")],
            vec![
                ("RANK", "2"),
                ("WORLD_SIZE", "2"),
                ("MASTER_ADDR", "h"),
                ("MASTER_PORT", "1"),
            ],
            vec![("RANK", "0"), ("WORLD_SIZE", "0")],
            vec![("RANK", "0"), ("WORLD_SIZE", "2")],
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h")],
        ] {
            assert!(discover_from(&none, env(&pairs)).is_err(), "{pairs:?}");
        }
        let half = RankOptions {
            rank: Some(0),
            ..RankOptions::default()
        };
        assert!(discover_from(&half, env(&[])).is_err());
    }
}
