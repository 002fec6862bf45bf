//! CUDA graphs: a sequence of launches recorded once and replayed with one call.
//!
//! Each `cuLaunchKernel` costs the host a few microseconds; a graph pays that once, when it is
//! instantiated, and then [`Graph::launch`] queues all its kernels at once. It is the fast form
//! of "one kernel per stage": the alternative to a grid barrier that needs no co-residency.
//!
//! A graph is recorded by *stream capture*: launches issued to a capturing stream are recorded
//! instead of run. `cust` 0.3.2 has no graph API, so this goes through `cust::sys`.

use crate::runtime::device::Gpu;
use crate::runtime::error::{Result, check};
use crate::runtime::stream::Stream;
use cust::sys as cu;

/// An instantiated CUDA graph (`CUgraphExec`), ready to launch any number of times.
///
/// CUDA: `cudaStreamBeginCapture` / `cudaStreamEndCapture` / `cudaGraphInstantiate` /
/// `cudaGraphLaunch`. It belongs to the context of the [`Gpu`] it was captured on: launch it on
/// that GPU's streams, and drop it before the `Gpu`.
pub struct Graph {
    exec: cu::CUgraphExec,
    graph: cu::CUgraph,
}

impl Graph {
    /// Records what `record` issues to the stream it is given, and instantiates it.
    ///
    /// The stream is a fresh non-blocking stream of `gpu`, capturing in thread-local mode (only
    /// this thread's unsafe calls are policed). `record` should only *queue* work on it, e.g.
    /// with [`launch_on_stream`](crate::runtime::launch::launch_on_stream): anything that
    /// synchronizes — `Target::synchronize`, a `Target::download`, a `Target::write` — is an
    /// error during a capture and invalidates it. Kernel arguments are copied into the graph
    /// when recorded; the pointers among them must stay valid for every later launch.
    ///
    /// # Errors
    /// The error of `record`, if it fails (the capture is ended and dropped); a driver error
    /// (`CUDA_ERROR_STREAM_CAPTURE_*`, 900–908, when the capture was invalidated).
    pub fn capture(gpu: &Gpu, record: impl FnOnce(&Stream) -> Result<()>) -> Result<Graph> {
        gpu.make_current()?;
        let stream = Stream::new()?;
        let mode = cu::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: the stream is live and not capturing.
        let code = unsafe { cu::cuStreamBeginCapture_v2(stream.as_raw(), mode) };
        check(code, || "cuStreamBeginCapture".into())?;
        let recorded = record(&stream);
        let mut graph = std::ptr::null_mut();
        // SAFETY: the stream is capturing (begun above); `graph` is a valid out-pointer. The
        // capture must be ended even when `record` failed, or the stream stays capturing.
        let ended = unsafe { cu::cuStreamEndCapture(stream.as_raw(), &mut graph) };
        let ended = check(ended, || "cuStreamEndCapture".into());
        if let Err(e) = recorded.and(ended) {
            if !graph.is_null() {
                // SAFETY: `graph` came from the capture and is destroyed once.
                unsafe { cu::cuGraphDestroy(graph) };
            }
            return Err(e);
        }
        let mut exec = std::ptr::null_mut();
        // SAFETY: `graph` is a live graph; `exec` is a valid out-pointer; 0 is "no flags".
        let code = unsafe { cu::cuGraphInstantiateWithFlags(&mut exec, graph, 0) };
        if let Err(e) = check(code, || "cuGraphInstantiateWithFlags".into()) {
            // SAFETY: as above.
            unsafe { cu::cuGraphDestroy(graph) };
            return Err(e);
        }
        Ok(Graph { exec, graph })
    }

    /// Queues every kernel of the graph on `stream` (a stream of the graph's GPU, e.g.
    /// [`Gpu::stream`]) and returns; wait with the stream's `synchronize`.
    ///
    /// # Errors
    /// A driver error.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        // SAFETY: `exec` is live and owned by `self`; the stream is live.
        let code = unsafe { cu::cuGraphLaunch(self.exec, stream.as_raw()) };
        check(code, || "cuGraphLaunch".into())
    }

    /// How many nodes (kernel launches, copies, …) the graph holds; 0 if the driver cannot say.
    pub fn nodes(&self) -> usize {
        let mut count = 0usize;
        // SAFETY: `graph` is live; a null node array asks for the count only.
        let code = unsafe { cu::cuGraphGetNodes(self.graph, std::ptr::null_mut(), &mut count) };
        if code == cu::CUresult::CUDA_SUCCESS {
            count
        } else {
            0
        }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: both handles are live and owned by `self`, destroyed once, the executable
        // first. Launches still queued keep what they need. An error (the context already gone)
        // cannot be reported from `drop` and leaves nothing unsafe.
        unsafe {
            cu::cuGraphExecDestroy(self.exec);
            cu::cuGraphDestroy(self.graph);
        }
    }
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("nodes", &self.nodes())
            .finish_non_exhaustive()
    }
}
