//! Findings, kept once per pair of call sites, and the report of everything checked.

use super::access::{Access, FindingKind};
use super::clock::StopReason;
use core::panic::Location;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Two accesses that race, with how often the same two call sites raced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Data race or scope race.
    pub kind: FindingKind,
    /// The access made first (as the checker saw them).
    pub first: Access,
    /// The access made second, which found the race.
    pub second: Access,
    /// How many races between these two call sites (of this kind) were seen; `first` and `second`
    /// are the first of them.
    pub count: u64,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.kind == FindingKind::OutOfBounds {
            let (access, buffer) = (&self.second, &self.first.bytes);
            let offset = access.bytes.addr.wrapping_sub(buffer.addr);
            write!(
                f,
                "{}: {access}: bytes {offset}..{} of a buffer of {} bytes at {:#x}",
                self.kind.name(),
                offset + access.bytes.width as usize,
                buffer.width,
                buffer.addr
            )?;
        } else if self.first == self.second {
            write!(f, "{}: {}", self.kind.name(), self.second)?;
        } else {
            write!(
                f,
                "{}: {}\n  and {}",
                self.kind.name(),
                self.second,
                self.first
            )?;
        }
        match self.kind {
            FindingKind::StaleParity => write!(
                f,
                "\n  (the wait passed on a phase this thread had already waited for: its parity \
                 was not moved on)"
            )?,
            FindingKind::ArrivalBeyondCount => write!(
                f,
                "\n  (more arrivals than the phase still expected: undefined on the GPU)"
            )?,
            FindingKind::WrongSpace => write!(
                f,
                "\n  (st.global, ld.global or ld.global.nc given a shared address: on the GPU a \
                 fault, or another address)"
            )?,
            _ => {}
        }
        if self.count > 1 {
            let sites = if site_key(self.first.site) == site_key(self.second.site) {
                "at this call site"
            } else {
                "between these two call sites"
            };
            write!(f, "\n  ({} times {sites})", self.count)?;
        }
        Ok(())
    }
}

/// What the checker found over every launch it followed, and what it could not check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// One finding per kind and pair of call sites, in the order first seen.
    pub findings: Vec<Finding>,
    /// Races between pairs of call sites not kept because [`Options::max_findings`] were kept
    /// already.
    ///
    /// [`Options::max_findings`]: super::Options::max_findings
    pub dropped: u64,
    /// Launches followed to their end.
    pub launches: u64,
    /// Events checked: accesses, fences, arrivals and waits.
    pub events: u64,
    /// Accesses forgotten to keep a granule's history bounded
    /// ([`Options::records_per_granule`](super::Options::records_per_granule)): a later race
    /// with one of them may have gone unseen.
    pub forgotten: u64,
    /// Why a launch stopped being checked before its end, if one did.
    pub stopped: Option<StopReason>,
    /// Events of such launches after the stop: not checked.
    pub unchecked: u64,
}

impl Report {
    /// Whether nothing was found and everything was checked.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty() && self.dropped == 0 && self.stopped.is_none()
    }

    /// The findings of one kind.
    pub fn of_kind(&self, kind: FindingKind) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.kind == kind)
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{finding}")?;
        }
        if self.dropped > 0 {
            writeln!(
                f,
                "{} more races between other call sites (not kept)",
                self.dropped
            )?;
        }
        if let Some(why) = self.stopped {
            writeln!(
                f,
                "checking stopped: {why}; {} events after it were not checked",
                self.unchecked
            )?;
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} finding{} in {} launch{}, {} events checked",
            self.findings.len(),
            plural(self.findings.len()),
            self.launches,
            if self.launches == 1 { "" } else { "es" },
            self.events
        )?;
        if self.forgotten > 0 {
            write!(
                f,
                " ({} accesses forgotten to keep histories bounded)",
                self.forgotten
            )?;
        }
        Ok(())
    }
}

/// A call site (file, line, column), compared by value: one site may have several `Location`
/// statics.
type SiteKey = (&'static str, u32, u32);

fn site_key(l: &'static Location<'static>) -> SiteKey {
    (l.file(), l.line(), l.column())
}

#[derive(Default)]
struct Kept {
    by_pair: HashMap<(FindingKind, SiteKey, SiteKey), usize>,
    report: Report,
}

/// The findings of every launch of one checker, bounded in number, with the totals.
pub(super) struct Findings {
    max: usize,
    kept: Mutex<Kept>,
}

impl Findings {
    pub(super) fn new(max: usize) -> Findings {
        Findings {
            max,
            kept: Mutex::new(Kept::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        // Every update is a few field writes: a panic cannot leave them half done.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a race between `first` and `second`; keeps it if its pair of call sites is new and
    /// there is room.
    pub(super) fn race(&self, kind: FindingKind, first: Access, second: Access) {
        let (a, b) = (site_key(first.site), site_key(second.site));
        let key = (kind, a.min(b), a.max(b));
        let mut kept = self.lock();
        let Kept { by_pair, report } = &mut *kept;
        if let Some(&i) = by_pair.get(&key) {
            report.findings[i].count += 1;
        } else if report.findings.len() < self.max {
            by_pair.insert(key, report.findings.len());
            report.findings.push(Finding {
                kind,
                first,
                second,
                count: 1,
            });
        } else {
            report.dropped += 1;
        }
    }

    /// Adds a finished launch's totals.
    pub(super) fn launch_ended(
        &self,
        events: u64,
        forgotten: u64,
        stopped: Option<StopReason>,
        unchecked: u64,
    ) {
        let mut kept = self.lock();
        let r = &mut kept.report;
        r.launches += 1;
        r.events += events;
        r.forgotten += forgotten;
        r.unchecked += unchecked;
        if r.stopped.is_none() {
            r.stopped = stopped;
        }
    }

    pub(super) fn report(&self) -> Report {
        self.lock().report.clone()
    }
}
