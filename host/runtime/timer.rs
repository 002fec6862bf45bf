//! Event timing: how long work on a stream took, measured by the GPU itself.
//!
//! A host clock around an asynchronous launch measures the launch call, not the kernel. An
//! event is a marker the stream passes when everything issued before it has finished; the
//! driver reports the milliseconds between two of them. Source: the Numba tutorial's
//! `CUDATimer`, which wraps a region in two events.

use crate::runtime::error::{Error, Result, check};
use crate::runtime::launch::Target;
use crate::runtime::stream::Stream;
use cust::sys as cu;

/// A CUDA event with timing enabled.
#[derive(Debug)]
pub struct Event {
    raw: cu::CUevent,
}

impl Event {
    /// Creates an event that records timestamps (`CU_EVENT_DEFAULT`; timing is *not* disabled).
    ///
    /// # Errors
    /// A driver error.
    pub fn new() -> Result<Event> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        let code =
            unsafe { cu::cuEventCreate(&mut raw, cu::CUevent_flags::CU_EVENT_DEFAULT as u32) };
        check(code, || "cuEventCreate".into())?;
        Ok(Event { raw })
    }

    /// Marks the point in `stream` after everything issued to it so far.
    ///
    /// # Errors
    /// A driver error.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        // SAFETY: both handles are live.
        check(
            unsafe { cu::cuEventRecord(self.raw, stream.as_raw()) },
            || "cuEventRecord".into(),
        )
    }

    /// Whether the work before the recorded point has completed.
    ///
    /// # Errors
    /// A driver error other than "not ready".
    pub fn is_complete(&self) -> Result<bool> {
        // SAFETY: `raw` is live.
        match unsafe { cu::cuEventQuery(self.raw) } {
            cu::CUresult::CUDA_SUCCESS => Ok(true),
            cu::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            code => check(code, || "cuEventQuery".into()).map(|_| false),
        }
    }

    /// Waits for the recorded point.
    ///
    /// # Errors
    /// A driver error, including faults of the work before the event.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: `raw` is live.
        check(unsafe { cu::cuEventSynchronize(self.raw) }, || {
            "cuEventSynchronize".into()
        })
    }

    /// Milliseconds from `start` to `self` (resolution about 0.5 µs).
    ///
    /// # Errors
    /// [`Error::TimerNotReady`] if either event has not completed (or was never recorded).
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        let mut ms = 0.0f32;
        // SAFETY: both handles are live; `ms` is a valid out-pointer.
        match unsafe { cu::cuEventElapsedTime(&mut ms, start.raw, self.raw) } {
            cu::CUresult::CUDA_SUCCESS => Ok(ms),
            cu::CUresult::CUDA_ERROR_NOT_READY | cu::CUresult::CUDA_ERROR_INVALID_HANDLE => {
                Err(Error::TimerNotReady)
            }
            code => check(code, || "cuEventElapsedTime".into()).map(|_| 0.0),
        }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> cu::CUevent {
        self.raw
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: `raw` is live and owned. Errors cannot be reported from `drop`.
        unsafe {
            cu::cuEventDestroy_v2(self.raw);
        }
    }
}

/// A start and a stop event: times a region of one stream.
///
/// ```no_run
/// # fn main() -> gridsync::Result<()> {
/// let gpu = gridsync::Gpu::new(0)?;
/// let mut timer = gridsync::Timer::new()?;
/// let ms = timer.time(gpu.stream(), || {
///     // … launches on gpu.stream() …
///     Ok(())
/// })?;
/// # let _ = ms; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Timer {
    start: Event,
    stop: Event,
    /// The stream the start was recorded on, once started.
    started_on: Option<cu::CUstream>,
    stopped: bool,
}

impl Timer {
    /// Two fresh events.
    ///
    /// # Errors
    /// A driver error.
    pub fn new() -> Result<Timer> {
        Ok(Timer {
            start: Event::new()?,
            stop: Event::new()?,
            started_on: None,
            stopped: false,
        })
    }

    /// A timer where `target` is a GPU; none on the simulator, whose speed says nothing
    /// about a GPU's (the demos time only what ran on a GPU).
    ///
    /// # Errors
    /// A driver error.
    pub fn on(target: &Target) -> Result<Option<Timer>> {
        match target {
            Target::Gpu(_) => Ok(Some(Timer::new()?)),
            Target::Sim => Ok(None),
        }
    }

    /// Runs `work` (launches on `target`'s stream), event-timed by `timer` where `target` is a
    /// GPU and a timer is given: its milliseconds, or `None` where it ran untimed (the
    /// simulator, or no timer).
    ///
    /// # Errors
    /// What `work` returns; a driver error.
    pub fn time_if(
        target: &Target,
        timer: Option<&mut Timer>,
        work: impl FnOnce() -> Result<()>,
    ) -> Result<Option<f64>> {
        match (target, timer) {
            (Target::Gpu(gpu), Some(timer)) => Ok(Some(f64::from(timer.time(gpu.stream(), work)?))),
            _ => work().map(|()| None),
        }
    }

    /// The median milliseconds of `trials` runs of `work`, each event-timed by `timer` where
    /// `target` is a GPU and a timer is given; `None`, running nothing, otherwise (the
    /// simulator, or no timer).
    ///
    /// # Errors
    /// What `work` returns; a driver error; [`Error::InvalidInput`] for zero trials.
    pub fn median_ms_if(
        target: &Target,
        timer: Option<&mut Timer>,
        trials: u32,
        mut work: impl FnMut() -> Result<()>,
    ) -> Result<Option<f64>> {
        let (Target::Gpu(gpu), Some(timer)) = (target, timer) else {
            return Ok(None);
        };
        let mut ms = Vec::new();
        for _ in 0..trials {
            ms.push(f64::from(timer.time(gpu.stream(), &mut work)?));
        }
        Ok(Some(crate::runtime::stats::Stats::of(&ms)?.median))
    }

    /// Records the start on `stream`.
    ///
    /// # Errors
    /// A driver error.
    pub fn start(&mut self, stream: &Stream) -> Result<()> {
        self.stopped = false;
        self.start.record(stream)?;
        self.started_on = Some(stream.as_raw());
        Ok(())
    }

    /// Records the stop on `stream`, which must be the stream the start was recorded on: on
    /// another stream the two events would bracket unrelated work (time several streams with an
    /// [`Event`] per stream, as `gridsync::normalize` does).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the timer was not started, or was started on another stream; a
    /// driver error.
    pub fn stop(&mut self, stream: &Stream) -> Result<()> {
        match self.started_on {
            None => {
                return Err(Error::InvalidInput(
                    "Timer::stop before Timer::start".into(),
                ));
            }
            Some(s) if s != stream.as_raw() => {
                return Err(Error::InvalidInput(
                    "Timer::stop on another stream than Timer::start: the events would not \
                     bracket one stream's work"
                        .into(),
                ));
            }
            Some(_) => {}
        }
        self.stop.record(stream)?;
        self.stopped = true;
        Ok(())
    }

    /// Milliseconds between start and stop, without waiting.
    ///
    /// # Errors
    /// [`Error::TimerNotReady`] if the timer was not stopped or the stop event has not completed
    /// yet.
    pub fn elapsed_ms(&self) -> Result<f32> {
        if !self.stopped || !self.stop.is_complete()? {
            return Err(Error::TimerNotReady);
        }
        self.stop.elapsed_ms_since(&self.start)
    }

    /// Waits for the stop event, then returns the milliseconds.
    ///
    /// # Errors
    /// [`Error::TimerNotReady`] if the timer was not stopped; a driver error.
    pub fn wait_ms(&self) -> Result<f32> {
        if !self.stopped {
            return Err(Error::TimerNotReady);
        }
        self.stop.synchronize()?;
        self.stop.elapsed_ms_since(&self.start)
    }

    /// Times `work` on `stream` (start, work, stop, wait) and returns the milliseconds: the
    /// source's `with CUDATimer(stream) as t:` block.
    ///
    /// # Errors
    /// `work`'s error, or a driver error.
    pub fn time(&mut self, stream: &Stream, work: impl FnOnce() -> Result<()>) -> Result<f32> {
        self.start(stream)?;
        work()?;
        self.stop(stream)?;
        self.wait_ms()
    }

    /// Starts the timer and returns a guard that stops it when dropped; read the time afterwards
    /// with [`Timer::wait_ms`]. A failure to record the stop event in `drop` leaves the timer
    /// unstopped, so the read returns [`Error::TimerNotReady`] instead of a wrong number.
    ///
    /// # Errors
    /// A driver error recording the start.
    pub fn guard<'a>(&'a mut self, stream: &'a Stream) -> Result<TimerGuard<'a>> {
        self.start(stream)?;
        Ok(TimerGuard {
            timer: self,
            stream,
        })
    }
}

/// Stops its [`Timer`] on drop. Made by [`Timer::guard`].
#[derive(Debug)]
pub struct TimerGuard<'a> {
    timer: &'a mut Timer,
    stream: &'a Stream,
}

impl Drop for TimerGuard<'_> {
    fn drop(&mut self) {
        // An error is kept as "not stopped", which `wait_ms` reports; `drop` must not panic.
        if self.timer.stop(self.stream).is_err() {
            self.timer.stopped = false;
        }
    }
}
