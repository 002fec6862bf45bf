//! The one error type of the host library.

use std::fmt;

/// Everything that can go wrong in gridsync. Nothing in the library panics on bad input; it
/// returns one of these.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No NVIDIA driver on this machine: the stub `libcuda` answered (`CUDA_ERROR_STUB_LIBRARY`),
    /// or the driver reported no device.
    NoGpu(String),
    /// A driver call failed.
    Driver {
        /// What was being done, e.g. `"cuLaunchKernel(add_one)"`.
        op: String,
        /// The `CUresult` code.
        code: u32,
    },
    /// The caller's input cannot be used; says what and why.
    InvalidInput(String),
    /// A launch named a kernel its module does not have (a name typed wrong, or a kernel built
    /// into another module).
    MissingKernel {
        /// The kernel's name.
        kernel: String,
        /// The module's name: `gridsync` for the library's own kernels.
        module: String,
    },
    /// The device cannot run this (too old, or lacks a feature).
    Unsupported(String),
    /// A simulated launch failed.
    Sim(gpu::sim::SimError),
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// An event timer was read before its end event completed.
    TimerNotReady,
    /// A result did not match its CPU reference.
    Mismatch(String),
    /// Threads of a kernel gave up waiting for a device lock (see `gpu::lock::Mutex`): it was
    /// held past its timeout, most likely forever. The launch's work is incomplete.
    LockTimeout {
        /// The lock's kind, e.g. `"mutex"`.
        lock: &'static str,
        /// How many threads gave up.
        threads: u32,
    },
    /// An NCCL call failed, a collective reported an error while it ran, or it did not end in
    /// time; the communicators were aborted (NCCL can tell nothing more about their state).
    Nccl {
        /// The call, e.g. `"ncclCommInitAll"`.
        call: String,
        /// NCCL's code and words, or what the wait saw.
        why: String,
    },
    /// A device lock was still held after the kernels using it finished: a thread exited (or
    /// forgot its guard) without releasing it.
    LockHeld(&'static str),
    /// Blocks of a kernel gave up waiting at a grid barrier (see `gpu::grid::GridBarrier`):
    /// some block never arrived — it was not resident, exited early, or called the barrier
    /// fewer times. The launch's work is incomplete.
    BarrierTimeout {
        /// How many blocks gave up.
        blocks: u32,
    },
    /// Threads of a kernel gave up a bounded wait inside a block (an `mbarrier` of a pipeline
    /// stage): the other side never arrived. Says which kernel; the launch has no result.
    WaitTimeout(String),
    /// A job of several processes failed: a rank exited with an error or was stopped, or the
    /// job ran past its bound; the message names the rank.
    Job(String),
    /// Another rank of a job of several processes could not be reached, refused this one, left
    /// the job or stopped answering — at the rendezvous or in a later exchange between ranks.
    /// Its own variant (not [`Error::Unsupported`]): a lost rank is never a reason to fall back
    /// to another way of combining.
    Rank {
        /// The other rank, where one is known (rank 0 for a rank that cannot reach it).
        rank: Option<u32>,
        /// What happened, naming the ranks and the address.
        why: String,
    },
    /// An atom has more neighbors than the padded lists have slots (`MN`, `--max-neighbors`):
    /// nothing was written past them, and the counts are true.
    TooManyNeighbors {
        /// The first atom with the most neighbors.
        atom: usize,
        /// Its true count: the `MN` that would fit every atom.
        count: u32,
        /// The slots per atom there were.
        max_neighbors: usize,
    },
    /// A size the caller gave does not fit: it needs more memory than the host or the GPU has
    /// available (with a tenth to spare), or more items than a kernel's 32-bit indices can
    /// name. Refused before anything was allocated or launched.
    TooLarge {
        /// The option and its value as given, e.g. `"--len 99999999999"`.
        option: String,
        /// Bytes it needs (`u64::MAX` where computing them overflowed); for
        /// [`Room::Indices`], how many items.
        needed: u64,
        /// What it does not fit in.
        room: Room,
        /// Bytes available there (0 where unknown); for [`Room::Indices`], the most items.
        available: u64,
    },
}

/// What a size did not fit in ([`Error::TooLarge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Room {
    /// The host's memory.
    HostMemory,
    /// The GPU's memory.
    GpuMemory,
    /// A kernel's 32-bit indices: what they count, e.g. `"atoms"` or `"cells"`.
    Indices(&'static str),
}

impl Error {
    /// The error a pipeline kernel's error word reports (`gpu::pipeline::error_bits`), if any:
    /// `name` is the kernel's.
    ///
    /// # Errors
    /// [`Error::WaitTimeout`] for a timed-out wait on a stage; [`Error::InvalidInput`] for a
    /// launch shape the pipeline cannot use, or a refused copy.
    pub fn from_pipeline_word(name: &str, word: u32) -> Result<()> {
        use gpu::pipeline::error_bits as bits;
        if word & bits::TIMED_OUT != 0 {
            return Err(Error::WaitTimeout(format!(
                "{name}: a wait on a pipeline stage's mbarrier (a stalled producer or consumer); \
                 no result"
            )));
        }
        if word != 0 {
            return Err(Error::InvalidInput(format!(
                "{name}: the launch shape cannot hold the pipeline (blocks of at least two whole \
                 warps and the ring's shared memory), or a bulk copy was refused; no result"
            )));
        }
        Ok(())
    }

    /// `Ok` where `count` items of `what` are at most `limit`, the most a kernel's 32-bit
    /// indices name; else [`Error::TooLarge`] naming `option` (what was asked for, made only
    /// then) and the limit.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past the limit.
    pub fn check_index_limit(
        count: u64,
        limit: u64,
        what: &'static str,
        option: impl FnOnce() -> String,
    ) -> Result<()> {
        if count <= limit {
            return Ok(());
        }
        Err(Error::TooLarge {
            option: option(),
            needed: count,
            room: Room::Indices(what),
            available: limit,
        })
    }
}

/// What the errors of a device wait that timed out add: a slow run, not a stuck one, may have
/// reached the bound (see [`wait_bound`](crate::runtime::wait::wait_bound)).
const WAIT_SCALE_HINT: &str =
    "under a sanitizer or a debugger, GRIDSYNC_WAIT_SCALE stretches bounds of 1 s or more";

/// `Result<T, gridsync::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The driver's name for a `CUresult`, for messages.
pub fn driver_error_name(code: u32) -> &'static str {
    match code {
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        34 => "CUDA_ERROR_STUB_LIBRARY",
        35 => "CUDA_ERROR_INSUFFICIENT_DRIVER",
        100 => "CUDA_ERROR_NO_DEVICE",
        101 => "CUDA_ERROR_INVALID_DEVICE",
        200 => "CUDA_ERROR_INVALID_IMAGE",
        201 => "CUDA_ERROR_INVALID_CONTEXT",
        209 => "CUDA_ERROR_NO_BINARY_FOR_GPU",
        218 => "CUDA_ERROR_INVALID_PTX",
        222 => "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        400 => "CUDA_ERROR_INVALID_HANDLE",
        500 => "CUDA_ERROR_NOT_FOUND",
        600 => "CUDA_ERROR_NOT_READY",
        700 => "CUDA_ERROR_ILLEGAL_ADDRESS",
        701 => "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        702 => "CUDA_ERROR_LAUNCH_TIMEOUT",
        715 => "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        716 => "CUDA_ERROR_MISALIGNED_ADDRESS",
        719 => "CUDA_ERROR_LAUNCH_FAILED",
        720 => "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
        801 => "CUDA_ERROR_NOT_SUPPORTED",
        _ => "CUDA error",
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoGpu(why) => write!(f, "no GPU: {why}"),
            Error::Driver { op, code } => {
                write!(f, "{op} failed: {} ({code})", driver_error_name(*code))
            }
            Error::InvalidInput(why) => write!(f, "invalid input: {why}"),
            Error::MissingKernel { kernel, module } => {
                write!(f, "no kernel named {kernel} in module {module}")
            }
            Error::Unsupported(why) => write!(f, "unsupported: {why}"),
            Error::Nccl { call, why } => write!(f, "{call} failed: {why}"),
            Error::Sim(e) => write!(f, "simulator: {e}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::TimerNotReady => {
                write!(
                    f,
                    "the timer's end event has not completed yet (stop it and synchronize first)"
                )
            }
            Error::LockTimeout { lock, threads } => write!(
                f,
                "{threads} GPU thread(s) gave up waiting for the device {lock}: it was held past \
                 its timeout; {WAIT_SCALE_HINT}"
            ),
            Error::LockHeld(lock) => write!(
                f,
                "the device {lock} was left locked when the kernels using it finished"
            ),
            Error::WaitTimeout(why) => {
                write!(f, "a bounded wait timed out: {why}; {WAIT_SCALE_HINT}")
            }
            Error::Job(why) => write!(f, "the job failed: {why}"),
            Error::Rank { why, .. } => write!(f, "{why}"),
            Error::BarrierTimeout { blocks } => write!(
                f,
                "{blocks} block(s) gave up waiting at a grid barrier: some block never arrived \
                 (not co-resident, exited early, or called it fewer times); {WAIT_SCALE_HINT}"
            ),
            Error::TooManyNeighbors {
                atom,
                count,
                max_neighbors,
            } => write!(
                f,
                "atom {atom} has {count} neighbors, more than the {max_neighbors} slots per atom \
                 (--max-neighbors {max_neighbors}); no atom has more than {count}, so \
                 --max-neighbors {count} fits"
            ),
            Error::Mismatch(what) => write!(f, "result does not match the CPU reference: {what}"),
            Error::TooLarge {
                option,
                needed,
                room,
                available,
            } => {
                use crate::runtime::memory::human_bytes;
                let memory = match room {
                    Room::HostMemory => "host memory",
                    Room::GpuMemory => "GPU memory",
                    Room::Indices(what) => {
                        return write!(
                            f,
                            "{option} is too large: {needed} {what}, more than the {available} \
                             that 32-bit indices can name"
                        );
                    }
                };
                if *needed == u64::MAX {
                    return write!(f, "{option} is too large: its size overflows 64 bits");
                }
                write!(
                    f,
                    "{option} is too large: it needs {} of {memory}",
                    human_bytes(*needed)
                )?;
                if *available > 0 {
                    write!(f, ", and {} is available", human_bytes(*available))?;
                }
                write!(f, " (a tenth is kept free)")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Sim(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<gpu::sim::SimError> for Error {
    fn from(e: gpu::sim::SimError) -> Error {
        Error::Sim(e)
    }
}

/// The option of `all` whose `label` is `s` (ignoring case), or an [`Error::InvalidInput`]
/// naming `what` and listing the labels: `"schedule x: expected staged or per-stream"`. The one
/// parser behind every `FromStr` of a labelled option.
pub fn parse_label<T: Copy>(
    all: &[T],
    label: impl Fn(T) -> &'static str,
    what: &str,
    s: &str,
) -> Result<T> {
    all.iter()
        .copied()
        .find(|&o| label(o).eq_ignore_ascii_case(s))
        .ok_or_else(|| {
            let labels: Vec<&str> = all.iter().map(|&o| label(o)).collect();
            let expected = match labels.split_last() {
                Some((last, [])) => (*last).to_string(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => "nothing".into(),
            };
            Error::InvalidInput(format!("{what} {s}: expected {expected}"))
        })
}

/// Turns a raw `CUresult` into a `Result`, naming the operation.
pub(crate) fn check(code: cust::sys::CUresult, op: impl FnOnce() -> String) -> Result<()> {
    if code == cust::sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Driver {
            op: op(),
            code: code as u32,
        })
    }
}

/// Adds the operation to an error from one of `cust`'s safe calls.
pub(crate) fn cust_err(op: &str) -> impl FnOnce(cust::error::CudaError) -> Error + '_ {
    move |e| Error::Driver {
        op: op.to_string(),
        code: e as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu::pipeline::error_bits as bits;

    #[test]
    fn the_errors_of_a_timed_out_device_wait_name_the_wait_scale() {
        let errors = [
            Error::LockTimeout {
                lock: "mutex",
                threads: 3,
            },
            Error::BarrierTimeout { blocks: 2 },
            Error::from_pipeline_word("histogram_pipeline", bits::TIMED_OUT).unwrap_err(),
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(msg.contains(crate::runtime::wait::WAIT_SCALE_VAR), "{msg}");
        }
        let other = Error::from_pipeline_word("histogram_pipeline", bits::BAD_LAUNCH).unwrap_err();
        assert!(
            !other.to_string().contains("GRIDSYNC_WAIT_SCALE"),
            "{other}"
        );
    }
}
