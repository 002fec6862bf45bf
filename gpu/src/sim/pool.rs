//! The simulator's OS threads, kept between launches.
//!
//! A launch needs one OS thread per GPU thread, all alive at once. Starting thousands of threads
//! for every launch cost more than running most kernels (about 60 µs each on a small virtual
//! machine: a quarter of a second for a 4096-thread grid), so a thread that has run its part of
//! a launch waits here for the next one. Within a launch each GPU thread still has an OS thread
//! of its own; across launches the same OS thread serves different GPU threads (so a kernel's
//! `thread_local!` values outlive its launch). Threads left idle for [`IDLE_EXIT`] end, so a
//! program that simulated once does not keep thousands of threads.

use super::STACK_BYTES;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long an idle thread waits for work before it ends.
const IDLE_EXIT: Duration = Duration::from_secs(10);

/// The most idle threads kept: one simulated grid's worth.
const MAX_IDLE: usize = super::MAX_THREADS as usize;

/// A job with its borrows erased ([`Group`] makes sure it has finished before they end), and
/// the count to lower once its thread is back on the idle list.
type Job = Box<dyn FnOnce() -> Option<Arc<Count>> + Send + 'static>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update under these locks is a single assignment or push: a poisoned lock is usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One kept thread: the job it is to run next.
struct Worker {
    job: Mutex<Option<Job>>,
    ready: Condvar,
}

impl Worker {
    fn give(&self, job: Job) {
        *lock(&self.job) = Some(job);
    }
}

/// The idle threads.
static IDLE: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());

/// Threads started since the program began (for the tests: kept threads are not started again).
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// `n` threads of their own: idle ones, then new ones; all or none.
fn take_workers(n: usize) -> std::io::Result<Vec<Arc<Worker>>> {
    let mut workers = {
        let mut idle = lock(&IDLE);
        let keep = idle.len().saturating_sub(n);
        idle.split_off(keep)
    };
    while workers.len() < n {
        let w = Arc::new(Worker {
            job: Mutex::new(None),
            ready: Condvar::new(),
        });
        let mine = Arc::clone(&w);
        let started = std::thread::Builder::new()
            .name("gridsync-sim".into())
            .stack_size(STACK_BYTES)
            .spawn(move || serve(&mine));
        if let Err(e) = started {
            retire(workers);
            return Err(e);
        }
        STARTED.fetch_add(1, Ordering::Relaxed);
        workers.push(w);
    }
    Ok(workers)
}

/// Threads taken and given no job: back to the idle list while it has room; the others are
/// given an empty job, after which they find the list full and end.
fn retire(mut workers: Vec<Arc<Worker>>) {
    {
        let mut idle = lock(&IDLE);
        let room = MAX_IDLE.saturating_sub(idle.len()).min(workers.len());
        idle.extend(workers.drain(..room));
    }
    for w in workers {
        w.give(Box::new(|| None));
        w.ready.notify_one();
    }
}

/// A kept thread's life: run each job it is given, go back to the idle list, and end once idle
/// for [`IDLE_EXIT`] (or when the list is full).
fn serve(me: &Arc<Worker>) {
    loop {
        let job = {
            let mut slot = lock(&me.job);
            loop {
                if let Some(job) = slot.take() {
                    break job;
                }
                let (s, waited) = me
                    .ready
                    .wait_timeout(slot, IDLE_EXIT)
                    .unwrap_or_else(PoisonError::into_inner);
                slot = s;
                if waited.timed_out() && slot.is_none() {
                    // Leave the idle list, unless a launch has just taken this thread from it
                    // (then its job is on the way).
                    let mut idle = lock(&IDLE);
                    if let Some(i) = idle.iter().position(|w| Arc::ptr_eq(w, me)) {
                        idle.swap_remove(i);
                        return;
                    }
                }
            }
        };
        let done = job();
        // Back on the list before the job counts as done: a launch right after this one's
        // finds this thread there rather than starting another.
        let stay = {
            let mut idle = lock(&IDLE);
            let room = idle.len() < MAX_IDLE;
            if room {
                idle.push(Arc::clone(me));
            }
            room
        };
        if let Some(count) = done {
            count.finish();
        }
        if !stay {
            return;
        }
    }
}

/// What a group's jobs share: how many are still running, and whether one panicked.
struct Count {
    left: Mutex<usize>,
    zero: Condvar,
    panicked: AtomicBool,
}

impl Count {
    fn finish(&self) {
        let mut left = lock(&self.left);
        *left -= 1;
        if *left == 0 {
            self.zero.notify_all();
        }
    }
}

/// Jobs run on kept threads that may borrow from the caller's stack. Its threads are taken when
/// it is made, so a job never waits for a thread that could not be started.
///
/// The jobs start only in [`join`](Self::join), which waits for all of them before it returns,
/// as [`std::thread::scope`] does; a group dropped (or forgotten) without `join` runs none.
/// They start as a tree: each thread wakes two more before it runs its own job. Waking them
/// one by one from the caller took long enough that the first threads of a grid spun at a
/// barrier while the caller, sharing the cores with them, was still waking the rest.
pub(super) struct Group<'a> {
    workers: Vec<Arc<Worker>>,
    /// Jobs given and not yet started, each with its thread.
    given: Vec<(Arc<Worker>, Job)>,
    count: Arc<Count>,
    _borrows: std::marker::PhantomData<&'a ()>,
}

impl<'a> Group<'a> {
    /// A group of `n` threads.
    ///
    /// # Errors
    /// When the OS refuses to start a thread; then the group has none.
    pub(super) fn new(n: usize) -> std::io::Result<Group<'a>> {
        Ok(Group {
            workers: take_workers(n)?,
            given: Vec::with_capacity(n),
            count: Arc::new(Count {
                left: Mutex::new(0),
                zero: Condvar::new(),
                panicked: AtomicBool::new(false),
            }),
            _borrows: std::marker::PhantomData,
        })
    }

    /// Gives `f` to the next of the group's threads, to run from [`join`](Self::join).
    ///
    /// # Panics
    /// When every thread of the group has been given a job.
    pub(super) fn spawn<F: FnOnce() + Send + 'a>(&mut self, f: F) {
        let worker = self
            .workers
            .pop()
            .expect("a job for each thread of the group, no more");
        let count = Arc::clone(&self.count);
        let job = move || {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_ok();
            if !ok {
                count.panicked.store(true, Ordering::Relaxed);
            }
            Some(count)
        };
        type Borrowing<'a> = Box<dyn FnOnce() -> Option<Arc<Count>> + Send + 'a>;
        let job: Borrowing<'a> = Box::new(job);
        // SAFETY: the job borrows for 'a and would outlive its borrows only if it ran after the
        // group is gone. It cannot: jobs are handed to their threads only in `join`, which
        // returns once `left` is back to zero; the job has run `f` and dropped it before its
        // thread lowers `left` (through `count`, an `Arc` of its own). A group dropped or
        // forgotten before `join` never hands its jobs over.
        let job: Job = unsafe { std::mem::transmute::<Borrowing<'a>, Job>(job) };
        self.given.push((worker, job));
    }

    /// Starts every job given: job `k`'s thread wakes those of jobs `2k + 1` and `2k + 2` first.
    fn start(&mut self) {
        let given = std::mem::take(&mut self.given);
        *lock(&self.count.left) += given.len();
        let workers: Vec<Arc<Worker>> = given.iter().map(|(w, _)| Arc::clone(w)).collect();
        // The children's jobs are in place before their parent's: a thread woken early (its
        // wait timed out) finds its children's jobs there when it wakes them. Nothing below can
        // fail, so every job counted is handed over.
        for (k, (worker, job)) in given.into_iter().enumerate().rev() {
            let children: Vec<Arc<Worker>> =
                workers.iter().skip(2 * k + 1).take(2).cloned().collect();
            worker.give(Box::new(move || {
                for c in &children {
                    c.ready.notify_one();
                }
                drop(children);
                job()
            }));
        }
        if let Some(root) = workers.first() {
            root.ready.notify_one();
        }
    }

    fn wait(&self) {
        let mut left = lock(&self.count.left);
        while *left > 0 {
            left = self
                .count
                .zero
                .wait(left)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Starts every job and waits for them all; panics if one did, as [`std::thread::scope`]
    /// does.
    pub(super) fn join(mut self) {
        self.start();
        self.wait();
        if self.count.panicked.load(Ordering::Relaxed) {
            panic!("a simulator thread panicked");
        }
    }
}

impl Drop for Group<'_> {
    fn drop(&mut self) {
        // Jobs never started are dropped unrun (only `join` starts them).
        for (worker, _job) in self.given.drain(..) {
            self.workers.push(worker);
        }
        self.wait();
        retire(std::mem::take(&mut self.workers));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::time::Instant;

    /// The pool is the program's: its tests run one at a time, so that they can count the
    /// threads started.
    fn alone() -> MutexGuard<'static, ()> {
        static ALONE: Mutex<()> = Mutex::new(());
        lock(&ALONE)
    }

    #[test]
    fn jobs_borrow_and_all_run_before_join_returns() {
        let _alone = alone();
        let hits = AtomicU32::new(0);
        for _ in 0..3 {
            let mut group = Group::new(100).unwrap();
            for _ in 0..100 {
                group.spawn(|| {
                    std::thread::sleep(Duration::from_millis(1));
                    hits.fetch_add(1, Ordering::Relaxed);
                });
            }
            group.join();
        }
        assert_eq!(hits.load(Ordering::Relaxed), 300);
    }

    #[test]
    fn every_job_has_a_thread_of_its_own_and_all_are_woken_at_once() {
        let _alone = alone();
        // Each job waits (boundedly) for all the others: they all get there only if each has a
        // thread of its own, and in time only if the tree wakes every one (a thread left asleep
        // would start only when its idle wait of 10 s ends).
        let n = 200;
        let arrived = AtomicU32::new(0);
        let all_met = AtomicU32::new(0);
        let started = Instant::now();
        let mut group = Group::new(n).unwrap();
        for _ in 0..n {
            group.spawn(|| {
                arrived.fetch_add(1, Ordering::SeqCst);
                let deadline = Instant::now() + Duration::from_secs(5);
                while arrived.load(Ordering::SeqCst) < n as u32 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
                if arrived.load(Ordering::SeqCst) == n as u32 {
                    all_met.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        group.join();
        assert_eq!(all_met.load(Ordering::Relaxed), n as u32);
        assert!(
            started.elapsed() < IDLE_EXIT / 2,
            "{:?}: some thread was not woken",
            started.elapsed()
        );
    }

    #[test]
    fn nothing_runs_before_join_and_a_group_dropped_unjoined_runs_nothing() {
        let _alone = alone();
        let hits = AtomicU32::new(0);
        let mut group = Group::new(8).unwrap();
        for _ in 0..8 {
            group.spawn(|| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
        }
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(hits.load(Ordering::Relaxed), 0);
        group.join();
        assert_eq!(hits.load(Ordering::Relaxed), 8);

        let mut group = Group::new(8).unwrap();
        group.spawn(|| {
            hits.fetch_add(100, Ordering::Relaxed);
        });
        drop(group);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(hits.load(Ordering::Relaxed), 8);
    }

    #[test]
    fn threads_given_no_job_are_kept_and_not_started_again() {
        let _alone = alone();
        let hits = AtomicU32::new(0);
        // Sixteen threads idle, then count what the groups below start: the first takes all
        // sixteen and gives one a job, the second needs eight of them back.
        drop(Group::new(16).unwrap());
        let before = STARTED.load(Ordering::Relaxed);
        let mut group = Group::new(16).unwrap();
        group.spawn(|| {
            hits.fetch_add(1, Ordering::Relaxed);
        });
        group.join();
        let mut group = Group::new(8).unwrap();
        for _ in 0..8 {
            group.spawn(|| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
        }
        group.join();
        assert_eq!(hits.load(Ordering::Relaxed), 9);
        assert_eq!(
            STARTED.load(Ordering::Relaxed),
            before,
            "threads started again"
        );
    }

    #[test]
    #[should_panic(expected = "a simulator thread panicked")]
    fn a_panic_in_a_job_reaches_join() {
        let _alone = alone();
        let mut group = Group::new(1).unwrap();
        group.spawn(|| panic!("inside"));
        group.join();
    }
}
