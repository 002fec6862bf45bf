//! The scope of a lock, as a type: a [`Mutex`](super::Mutex) is `Mutex<DeviceScope>` (one GPU)
//! or `Mutex<SystemScope>` (every GPU of the node and the host), and every scope test in its
//! code is settled at compile time.

use crate::atomic::Scope;

/// The scope a [`Mutex`](super::Mutex) takes and releases its lock word at, as a type.
pub trait LockScope: Copy + core::fmt::Debug + sealed::Sealed {
    /// The scope.
    const SCOPE: Scope;
}

/// Device scope: every thread of one GPU (the default).
#[derive(Clone, Copy, Debug)]
pub struct DeviceScope;

/// System scope: every GPU of the node and the host.
#[derive(Clone, Copy, Debug)]
pub struct SystemScope;

impl LockScope for DeviceScope {
    const SCOPE: Scope = Scope::Device;
}

impl LockScope for SystemScope {
    const SCOPE: Scope = Scope::System;
}

/// Only device and system scope make a lock: block scope cannot order two blocks' critical
/// sections, so no other type may implement [`LockScope`].
mod sealed {
    pub trait Sealed {}
    impl Sealed for super::DeviceScope {}
    impl Sealed for super::SystemScope {}
}
