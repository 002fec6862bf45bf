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

/// An idle thread, or a new one.
fn take_worker(stack_bytes: usize) -> std::io::Result<Arc<Worker>> {
    if let Some(w) = lock(&IDLE).pop() {
        return Ok(w);
    }
    let w = Arc::new(Worker {
        job: Mutex::new(None),
        ready: Condvar::new(),
    });
    let mine = Arc::clone(&w);
    std::thread::Builder::new()
        .name("gridsync-sim".into())
        .stack_size(stack_bytes)
        .spawn(move || serve(&mine))?;
    Ok(w)
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
/// them before it is dropped, as [`std::thread::scope`] does.
pub(super) struct Group<'a> {
    count: Arc<Count>,
    _borrows: std::marker::PhantomData<&'a ()>,
}

impl<'a> Group<'a> {
    pub(super) fn new() -> Group<'a> {
        Group {
            count: Arc::new(Count {
                left: Mutex::new(0),
                zero: Condvar::new(),
                panicked: AtomicBool::new(false),
            }),
            _borrows: std::marker::PhantomData,
        }
    }

    /// Runs `f` on a thread of its own.
    ///
    /// # Errors
    /// When no thread is idle and the OS refuses to start one; `f` is not run.
    pub(super) fn spawn<F: FnOnce() + Send + 'a>(
        &self,
        f: F,
        stack_bytes: usize,
    ) -> std::io::Result<()> {
        let worker = take_worker(stack_bytes)?;
        *lock(&self.count.left) += 1;
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
        // SAFETY: the job borrows only for 'a, and `Group` does not end before the job has run:
        // its drop waits for `left` to return to zero, and the job's last use of anything it
        // borrows is before it decrements `left` (`count` is its own `Arc`).
        let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
        *lock(&worker.job) = Some(job);
        worker.ready.notify_one();
        Ok(())
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

    /// Waits for every job; panics if one did, as [`std::thread::scope`] does.
    pub(super) fn join(self) {
        self.wait();
        if self.count.panicked.load(Ordering::Relaxed) {
            panic!("a simulator thread panicked");
        }
    }
}

impl Drop for Group<'_> {
    fn drop(&mut self) {
        self.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn jobs_borrow_and_all_run_before_join_returns() {
        let hits = AtomicU32::new(0);
        for _ in 0..3 {
            let group = Group::new();
            for _ in 0..100 {
                group
                    .spawn(
                        || {
                            std::thread::sleep(Duration::from_millis(1));
                            hits.fetch_add(1, Ordering::Relaxed);
                        },
                        64 * 1024,
                    )
                    .unwrap();
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
        let group = Group::new();
        for _ in 0..n {
            group
                .spawn(
                    || {
                        barrier.wait();
                    },
                    64 * 1024,
                )
                .unwrap();
        }
        group.join();
    }

    #[test]
    #[should_panic(expected = "a simulator thread panicked")]
    fn a_panic_in_a_job_reaches_join() {
        let group = Group::new();
        group.spawn(|| panic!("inside"), 64 * 1024).unwrap();
        group.join();
    }
}
