//! The running ranks: each reaped once, each signalled only while it is alive, stopped with
//! `SIGTERM`, a grace, then `SIGKILL`, every wait bounded.
//!
//! Why a rank is never signalled after it is reaped: a rank is signalled through its process
//! group, whose id is the rank's pid. Until the launcher reaps the rank, that pid belongs to the
//! rank (alive, or a zombie), so the group id names only what the rank started; once it is
//! reaped, the kernel may give the number to any new process, and a signal to it could stop a
//! stranger. So each rank's group gets `SIGKILL` once, at the moment the rank is found ended
//! and *before* it is reaped (the look does not reap: `waitid` with `WNOWAIT`), which ends what
//! it left running; after the reap its slot holds only a status. (Where there is no such look,
//! i.e. not on Linux, the group is signalled right after the reap.)

use super::signals::{self, SIGKILL, SIGTERM};
use super::{AFTER_KILL, POLL};
// `now + wait`, or a day from now for a wait too long to add: the rendezvous's deadlines.
use crate::multi::processes::deadline::after;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// How a rank ended, as the look that reaped it saw it.
#[derive(Debug)]
pub enum Ended {
    /// Its exit status.
    Status(ExitStatus),
    /// It could not be waited for (the error): it is no longer this launcher's to signal.
    Lost(std::io::Error),
}

/// One rank: its process while it runs, then how it ended.
#[derive(Debug)]
enum Slot {
    Live(Child),
    Reaped(Option<ExitStatus>),
}

/// The ranks of a launch, in rank order.
#[derive(Debug, Default)]
pub struct Ranks {
    slots: Vec<Slot>,
    /// Every signal sent to a rank's group, in order: `(rank, signal)`.
    sent: Vec<(usize, i32)>,
}

/// What [`Ranks::stop`] did beyond `SIGTERM`.
#[derive(Debug, Default)]
pub struct Stopped {
    /// Ranks still running when the grace was over: they got `SIGKILL`.
    pub killed: Vec<usize>,
    /// Ranks still running [`AFTER_KILL`] after `SIGKILL`, left behind.
    pub left: Vec<usize>,
}

/// Makes `cmd` start a rank: in a process group of its own (stopping the rank stops what it
/// started; Ctrl-C reaches the launcher only, which stops every rank), and on Linux through
/// the supervisor that takes the group down when the launcher dies.
pub fn own_group(cmd: &mut Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    #[cfg(target_os = "linux")]
    super::supervise::supervise(cmd);
}

impl Ranks {
    /// Adds the next rank.
    pub fn push(&mut self, child: Child) {
        self.slots.push(Slot::Live(child));
    }

    /// How many ranks.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The ranks not yet reaped.
    pub fn live(&self) -> impl Iterator<Item = usize> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, Slot::Live(_)))
            .map(|(r, _)| r)
    }

    /// Each rank's exit status; `None` where it is not known.
    pub fn statuses(&self) -> Vec<Option<ExitStatus>> {
        self.slots
            .iter()
            .map(|s| match s {
                Slot::Live(_) => None,
                Slot::Reaped(s) => *s,
            })
            .collect()
    }

    /// Reaps every rank that has ended since the last look, after sending `SIGKILL` to its
    /// group (see the module docs for why then and only then).
    pub fn reap(&mut self) -> Vec<(usize, Ended)> {
        let mut ended = Vec::new();
        for (rank, slot) in self.slots.iter_mut().enumerate() {
            let Slot::Live(child) = slot else { continue };
            let looked = signals::has_exited(child.id());
            if looked == Some(false) {
                continue;
            }
            if looked == Some(true) {
                // Ended: its zombie still holds the group's id.
                signals::signal_group(child.id(), SIGKILL);
                self.sent.push((rank, SIGKILL));
            }
            match child.try_wait() {
                Ok(None) => {}
                Ok(Some(s)) => {
                    if looked.is_none() {
                        // No look without a reap here (not Linux): the group right after it,
                        // while a new process taking the id is all but impossible.
                        signals::signal_group(child.id(), SIGKILL);
                        self.sent.push((rank, SIGKILL));
                    }
                    *slot = Slot::Reaped(Some(s));
                    ended.push((rank, Ended::Status(s)));
                }
                Err(e) => {
                    *slot = Slot::Reaped(None);
                    ended.push((rank, Ended::Lost(e)));
                }
            }
        }
        ended
    }

    /// Stops every rank still running: `SIGTERM` to its group, up to `grace` for it to end,
    /// `SIGKILL` to those left, up to [`AFTER_KILL`] more. Ranks that end are reaped (and their
    /// groups killed) as they end; their statuses say how. A `grace` too long to add to the
    /// clock (the library takes any `Duration`) is a day.
    pub fn stop(&mut self, grace: Duration) -> Stopped {
        self.signal_live(SIGTERM);
        self.reap_until(after(grace));
        let killed = self.signal_live(SIGKILL);
        self.reap_until(after(AFTER_KILL));
        Stopped {
            killed,
            left: self.live().collect(),
        }
    }

    /// Sends `sig` to the group of every rank not yet reaped; returns those ranks.
    fn signal_live(&mut self, sig: i32) -> Vec<usize> {
        let live: Vec<usize> = self.live().collect();
        for &rank in &live {
            if let Slot::Live(child) = &self.slots[rank] {
                signals::signal_group(child.id(), sig);
                self.sent.push((rank, sig));
            }
        }
        live
    }

    /// Reaps ranks as they end until none runs or `deadline` passes.
    fn reap_until(&mut self, deadline: Instant) {
        loop {
            self.reap();
            if self.live().next().is_none() || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(script: &str) -> Child {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        own_group(&mut c);
        c.spawn().unwrap()
    }

    fn sent_to(ranks: &Ranks, rank: usize) -> Vec<i32> {
        ranks
            .sent
            .iter()
            .filter(|(r, _)| *r == rank)
            .map(|(_, s)| *s)
            .collect()
    }

    /// A rank that ended early is not signalled when the others are stopped: its group got
    /// `SIGKILL` once, when it was reaped, and nothing after.
    #[test]
    fn a_reaped_rank_is_never_signalled_again() {
        let mut ranks = Ranks::default();
        ranks.push(rank("exit 0"));
        ranks.push(rank("sleep 1000"));
        let until = Instant::now() + Duration::from_secs(10);
        while ranks.live().count() == 2 {
            ranks.reap();
            assert!(Instant::now() < until, "rank 0 never ended");
            std::thread::sleep(POLL);
        }
        assert_eq!(sent_to(&ranks, 0), [SIGKILL]);
        let start = Instant::now();
        let stopped = ranks.stop(Duration::from_secs(5));
        // `sleep` ends on SIGTERM: no SIGKILL needed, and well within the grace.
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        assert!(stopped.killed.is_empty() && stopped.left.is_empty());
        assert_eq!(
            sent_to(&ranks, 0),
            [SIGKILL],
            "rank 0 was signalled after its reap"
        );
        // Rank 1: SIGTERM from the stop, SIGKILL to its group when it was reaped.
        assert_eq!(sent_to(&ranks, 1), [SIGTERM, SIGKILL]);
        let st = ranks.statuses();
        assert!(st[0].unwrap().success());
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st[1].unwrap().signal(), Some(SIGTERM));
    }

    /// A grace too long to add to the clock is waited as a day: no overflow, and a rank that
    /// ends on `SIGTERM` still ends the stop at once.
    #[test]
    fn a_grace_too_long_to_add_does_not_overflow() {
        let mut ranks = Ranks::default();
        ranks.push(rank("exec sleep 1000"));
        let start = Instant::now();
        let stopped = ranks.stop(Duration::MAX);
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        assert!(stopped.killed.is_empty() && stopped.left.is_empty());
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ranks.statuses()[0].unwrap().signal(), Some(SIGTERM));
    }

    /// A rank that ignores `SIGTERM` gets `SIGKILL` when the grace is over, not before.
    #[test]
    fn a_rank_that_ignores_sigterm_is_killed_after_the_grace() {
        let ready = std::env::temp_dir().join(format!("gridsync-procs-{}", std::process::id()));
        let _ = std::fs::remove_file(&ready);
        let mut ranks = Ranks::default();
        ranks.push(rank(&format!(
            "trap '' TERM; touch {}; sleep 1000",
            ready.display()
        )));
        let until = Instant::now() + Duration::from_secs(10);
        while !ready.exists() {
            assert!(Instant::now() < until, "the rank never set its trap");
            std::thread::sleep(POLL);
        }
        let _ = std::fs::remove_file(&ready);
        let start = Instant::now();
        let stopped = ranks.stop(Duration::from_millis(500));
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(500), "{took:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert_eq!(stopped.killed, [0]);
        assert!(stopped.left.is_empty());
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ranks.statuses()[0].unwrap().signal(), Some(SIGKILL));
    }
}
