//! The scope of a lock, as a type: a [`Mutex`](super::Mutex) is `Mutex<DeviceScope>` (one GPU)
//! or `Mutex<SystemScope>` (every GPU of the node and the host), and every scope test in its
//! code is settled at compile time.

use crate::atomic::Scope;

/// The scope a [`Mutex`] takes and releases its lock word at, as a type.
pub trait LockScope: Copy + core::fmt::Debug {
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
