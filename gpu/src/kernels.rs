//! The one list of kernels: every `kernel!` in this crate is named here once.
//!
//! The host looks kernels up in the PTX by these names, and the PTX tests check both ways that
//! this list and the `.entry` points of every PTX build are the same set.

macro_rules! kernel_list {
    ($($variant:ident => $name:ident),* $(,)?) => {
        /// Every kernel in the device crate.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                $variant,
            )*
        }

        impl Kernel {
            /// All kernels, in declaration order.
            pub const ALL: &'static [Kernel] = &[$(Kernel::$variant),*];

            /// The kernel's entry-point name in the PTX.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Kernel::$variant => stringify!($name),)*
                }
            }
        }
    };
}

kernel_list! {
    AddOne => add_one,
    AddOneAtomic => add_one_atomic,
    Empty => empty,
    AtomicsCheckU32 => atomics_check_u32,
    AtomicsCheckI32 => atomics_check_i32,
    AtomicsCheckU64 => atomics_check_u64,
    AtomicsCheckI64 => atomics_check_i64,
    AtomicsCheckF32 => atomics_check_f32,
    AtomicsCheckF64 => atomics_check_f64,
    WarpCheck => warp_check,
    FenceCheck => fence_check,
    TimerCheck => timer_check,
    AddOneMutex => add_one_mutex,
    LockUnfenced => lock_unfenced,
    LockFenced => lock_fenced,
    LockLoop => lock_loop,
    LockWarpLeader => lock_warp_leader,
    LockMutex => lock_mutex,
    LockTicket => lock_ticket,
    MutexHeldForever => mutex_held_forever,
}
