//! Kernels for the launch benchmark.

kernel! {
    /// Does nothing: its launch costs only the launch itself, which `gridsync bench launch`
    /// measures.
    pub unsafe fn empty() {}
}
