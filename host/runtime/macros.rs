//! The launch macros: a kernel named by its path, in gridsync's module or in one of yours.

/// Launches a kernel by its path, with its arguments as a tuple.
///
/// - gridsync's own kernels: `launch!(target, gpu::lessons::race::add_one, cfg, (x.ptr(),))`;
/// - a kernel of your own [`Module`](crate::Module):
///   `launch!(target, module => kernels::count, cfg, (x.ptr(), n))`.
///
/// The path gives both the PTX entry-point name (kernels are `#[no_mangle]`) and the host
/// function the simulator runs, whose signature checks the arguments' types at compile time.
/// Expands to [`Target::launch_with`](crate::Target::launch_with) or
/// [`Target::launch_in`](crate::Target::launch_in) in
/// [`LaunchMode::Plain`](crate::runtime::launch::LaunchMode::Plain); `unsafe` for the same
/// reason, so it must be used inside an `unsafe` block that says why the pointers are valid.
#[macro_export]
macro_rules! launch {
    ($target:expr, $module:expr => $kernel:path, $cfg:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__launch!($target, $module => $kernel, $cfg, ($($arg),*), Plain)
    };
    ($target:expr, $kernel:path, $cfg:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__launch!($target, $kernel, $cfg, ($($arg),*), Plain)
    };
}

/// [`launch!`](crate::launch!) as a cooperative launch, in both forms:
/// `launch_cooperative!(target, gpu::bench::barrier::grid_barrier_bare, cfg, (state, rounds))`,
/// `launch_cooperative!(target, module => kernels::step, cfg, (state, n))`.
///
/// Expands as `launch!` does, with
/// [`LaunchMode::Cooperative`](crate::runtime::launch::LaunchMode::Cooperative); `unsafe` for
/// the same reason. A kernel with a grid barrier needs every block resident:
/// [`check_coresident_in`](crate::runtime::grid::check_coresident_in) says before launch.
#[macro_export]
macro_rules! launch_cooperative {
    ($target:expr, $module:expr => $kernel:path, $cfg:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__launch!($target, $module => $kernel, $cfg, ($($arg),*), Cooperative)
    };
    ($target:expr, $kernel:path, $cfg:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__launch!($target, $kernel, $cfg, ($($arg),*), Cooperative)
    };
}

/// The one expansion of both launch macros.
#[doc(hidden)]
#[macro_export]
macro_rules! __launch {
    ($target:expr, $module:expr => $kernel:path, $cfg:expr, ($($arg:expr),*), $mode:ident) => {
        $target.launch_in(
            &$module,
            $crate::runtime::launch::kernel_name(stringify!($kernel)),
            $cfg,
            ($($arg,)*),
            $kernel,
            $crate::runtime::launch::LaunchMode::$mode,
        )
    };
    ($target:expr, $kernel:path, $cfg:expr, ($($arg:expr),*), $mode:ident) => {
        $target.launch_with(
            $crate::runtime::launch::kernel_name(stringify!($kernel)),
            $cfg,
            ($($arg,)*),
            $kernel,
            $crate::runtime::launch::LaunchMode::$mode,
        )
    };
}

/// A [`KernelRef`](crate::runtime::args::KernelRef) of gridsync's kernel at `path`:
/// `kernel_ref!(gpu::lessons::neighbor::cell_bin_f32)`. Usable in a constant.
#[macro_export]
macro_rules! kernel_ref {
    ($kernel:path) => {
        $crate::runtime::args::KernelRef {
            name: $crate::runtime::launch::kernel_name(stringify!($kernel)),
            function: $kernel,
        }
    };
}
