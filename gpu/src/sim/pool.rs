//! The simulator's OS threads, kept between launches.
//!
//! A launch needs one OS thread per GPU thread, all alive at once. Starting thousands of threads
//! for every launch cost more than running most kernels (about 60 µs each on a small virtual
//! machine: a quarter of a second for a 4096-thread grid), so a thread that has run its part of
//! a launch waits here for the next one. Each launch still gets as many threads as it has GPU
//! threads, each its own: only their starting is saved. Threads left idle for [`IDLE_EXIT`]
//! end, so a program that simulated once does not keep thousands of threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long an idle thread waits for work before it ends.
const IDLE_EXIT: Duration = Duration::from_secs(10);

/// The most idle threads kept: one simulated grid's worth.
const MAX_IDLE: usize = super::MAX_THREADS as usize;

/// A job with its borrows erased: [`Group`] makes sure it has finished before they end.
type Job = Box<dyn FnOnce() + Send + 'static>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update under these locks is a single assignment or push: a poisoned lock is usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One kept thread: the job it is to run next.
struct Worker {
    job: Mutex<Option<Job>>,
    ready: Condvar,
}

/// The idle threads.
static IDLE: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());

/// `n` threads of their own: idle ones, then new ones; all or none.
fn take_workers(n: usize, stack_bytes: usize) -> std::io::Result<Vec<Arc<Worker>>> {
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
            .stack_size(stack_bytes)
            .spawn(move || serve(&mine));
        if let Err(e) = started {
            // Back to waiting for work: they were never given any.
            lock(&IDLE).extend(workers);
            return Err(e);
        }
        workers.push(w);
    }
    Ok(workers)
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
        job();
        let mut idle = lock(&IDLE);
        if idle.len() >= MAX_IDLE {
            return;
        }
        idle.push(Arc::clone(me));
    }
}

/// What a group's jobs share: how many are still running, and whether one panicked.
struct Count {
    left: Mutex<usize>,
    zero: Condvar,
    panicked: AtomicBool,
}

/// Jobs run on kept threads that may borrow from the caller's stack: the group waits for all of
/// them before it is dropped, as [`std::thread::scope`] does. Its threads are taken when it is
/// made, so a job never waits for a thread that could not be started.
///
/// The jobs start together at [`join`](Self::join), woken as a tree: each thread wakes two
/// more before it runs its own job. Waking them one by one from the caller took long enough
/// that the first threads of a grid spun at a barrier while the caller, sharing the cores with
/// them, was still waking the rest.
pub(super) struct Group<'a> {
    workers: Vec<Arc<Worker>>,
    /// Jobs given and not yet started, each with its thread.
    given: Vec<(Arc<Worker>, Job)>,
    count: Arc<Count>,
    _borrows: std::marker::PhantomData<&'a ()>,
}

impl<'a> Group<'a> {
    /// A group of `n` threads, each with a stack of at least `stack_bytes`.
    ///
    /// # Errors
    /// When the OS refuses to start a thread; then the group has none.
    pub(super) fn new(n: usize, stack_bytes: usize) -> std::io::Result<Group<'a>> {
        Ok(Group {
            workers: take_workers(n, stack_bytes)?,
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
            let mut left = lock(&count.left);
            *left -= 1;
            if *left == 0 {
                count.zero.notify_all();
            }
        };
        let job: Box<dyn FnOnce() + Send + 'a> = Box::new(job);
        // SAFETY: the job borrows only for 'a, and `Group` does not end before the job has run
        // or been dropped unrun: its drop waits for `left` to return to zero, and the job's last
        // use of anything it borrows is before it decrements `left` (`count` is its own `Arc`).
        let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
        self.given.push((worker, job));
    }

    /// Starts every job given: job `k`'s thread wakes those of jobs `2k + 1` and `2k + 2` first.
    fn start(&mut self) {
        let given = std::mem::take(&mut self.given);
        *lock(&self.count.left) += given.len();
        let workers: Vec<Arc<Worker>> = given.iter().map(|(w, _)| Arc::clone(w)).collect();
        // The children's jobs are in place before their parent's: a thread woken early (its
        // wait timed out) finds its children's jobs there when it wakes them.
        for (k, (worker, job)) in given.into_iter().enumerate().rev() {
            let children: Vec<Arc<Worker>> =
                workers.iter().skip(2 * k + 1).take(2).cloned().collect();
            let wake_then_run: Job = Box::new(move || {
                for c in &children {
                    c.ready.notify_one();
                }
                drop(children);
                job();
            });
            *lock(&worker.job) = Some(wake_then_run);
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
        // Threads given no job go back to waiting for one.
        lock(&IDLE).append(&mut self.workers);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    const STACK: usize = 64 * 1024;

    #[test]
    fn jobs_borrow_and_all_run_before_join_returns() {
        let hits = AtomicU32::new(0);
        for _ in 0..3 {
            let mut group = Group::new(100, STACK).unwrap();
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
    fn every_job_has_a_thread_of_its_own() {
        // Jobs that all wait for each other finish only if each runs on its own thread.
        let n = 64;
        let barrier = std::sync::Barrier::new(n);
        let mut group = Group::new(n, STACK).unwrap();
        for _ in 0..n {
            group.spawn(|| {
                barrier.wait();
            });
        }
        group.join();
    }

    #[test]
    fn threads_given_no_job_are_kept() {
        let hits = AtomicU32::new(0);
        let mut group = Group::new(8, STACK).unwrap();
        group.spawn(|| {
            hits.fetch_add(1, Ordering::Relaxed);
        });
        group.join();
        assert_eq!(hits.load(Ordering::Relaxed), 1);
        let mut group = Group::new(8, STACK).unwrap();
        for _ in 0..8 {
            group.spawn(|| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
        }
        group.join();
        assert_eq!(hits.load(Ordering::Relaxed), 9);
    }

    #[test]
    #[should_panic(expected = "a simulator thread panicked")]
    fn a_panic_in_a_job_reaches_join() {
        let mut group = Group::new(1, STACK).unwrap();
        group.spawn(|| panic!("inside"));
        group.join();
    }
}
