//! Two GPUs of one machine: whether one can map the other's memory and use native atomics on
//! it, peer access switched on, and what identifies a device to other tools (its PCI bus id,
//! the driver's version).

use crate::runtime::device::{Gpu, init_driver};
use crate::runtime::error::{Error, Result, check};
use cust::sys as cu;

/// Whether device `from` can map device `to`'s memory (`cuDeviceCanAccessPeer`): NVLink, or a
/// common PCIe root, and a system that allows it.
///
/// # Errors
/// [`Error::NoGpu`] without a driver; a driver error (an ordinal that is not a device).
pub fn can_access_peer(from: u32, to: u32) -> Result<bool> {
    init_driver()?;
    let mut can = 0;
    // SAFETY: valid out-pointer; the driver is initialized and checks the ordinals.
    check(
        unsafe { cu::cuDeviceCanAccessPeer(&mut can, from as i32, to as i32) },
        || format!("cuDeviceCanAccessPeer({from} → {to})"),
    )?;
    Ok(can != 0)
}

/// Whether atomics from device `a` on device `b`'s memory are native over the link between
/// them (`CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED`), rather than unsupported.
///
/// # Errors
/// As [`can_access_peer`].
pub fn native_peer_atomics(a: u32, b: u32) -> Result<bool> {
    init_driver()?;
    let mut native = 0;
    // SAFETY: valid out-pointer; the driver is initialized and checks the ordinals.
    check(
        unsafe {
            cu::cuDeviceGetP2PAttribute(
                &mut native,
                cu::CUdevice_P2PAttribute::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                a as i32,
                b as i32,
            )
        },
        || format!("cuDeviceGetP2PAttribute({a}, {b})"),
    )?;
    Ok(native != 0)
}

/// The PCI bus id of device `ordinal` (`0000:3b:00.0`): how tools that number devices in PCI
/// order (NVML, `nvidia-smi`) find it.
///
/// # Errors
/// As [`can_access_peer`].
pub fn pci_bus_id(ordinal: u32) -> Result<String> {
    init_driver()?;
    let mut bus = [0 as std::ffi::c_char; 32];
    // SAFETY: the buffer and its length; the driver writes a NUL-terminated id within it.
    check(
        unsafe { cu::cuDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as i32, ordinal as i32) },
        || format!("cuDeviceGetPCIBusId({ordinal})"),
    )?;
    // SAFETY: NUL-terminated within the buffer (the driver's contract; the last byte is still
    // the zero it was given if the id filled the rest).
    let id = unsafe { std::ffi::CStr::from_ptr(bus.as_ptr()) };
    Ok(id.to_string_lossy().into_owned())
}

/// The CUDA version the installed driver supports, as `major·1000 + minor·10` (13000 is
/// CUDA 13.0).
///
/// # Errors
/// As [`can_access_peer`].
pub fn driver_version() -> Result<i32> {
    init_driver()?;
    let mut version = 0;
    // SAFETY: valid out-pointer; the driver is initialized.
    check(unsafe { cu::cuDriverGetVersion(&mut version) }, || {
        "cuDriverGetVersion".into()
    })?;
    Ok(version)
}

impl Gpu {
    /// Lets kernels and copies on this GPU reach `other`'s memory (`cuCtxEnablePeerAccess`
    /// from this GPU's context); already enabled is fine. One direction: call it on both for
    /// both.
    ///
    /// # Errors
    /// [`Error::Unsupported`] where the hardware cannot map `other`'s memory
    /// ([`can_access_peer`] says no); a driver error.
    pub fn enable_peer_access(&self, other: &Gpu) -> Result<()> {
        let (from, to) = (self.info().ordinal, other.info().ordinal);
        if from == to {
            return Ok(());
        }
        if !can_access_peer(from, to)? {
            return Err(Error::Unsupported(format!(
                "device {from} cannot map device {to}'s memory (no peer access between them)"
            )));
        }
        self.make_current()?;
        // SAFETY: `other`'s context is alive as long as `other`; flags must be 0.
        match unsafe { cu::cuCtxEnablePeerAccess(other.raw_context(), 0) } {
            cu::CUresult::CUDA_SUCCESS | cu::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
                Ok(())
            }
            code => check(code, || format!("cuCtxEnablePeerAccess({from} → {to})")),
        }
    }

    /// This GPU's context as a value another thread can make current
    /// ([`ContextHandle::make_current`]), for a thread that must outlive a bounded wait for it
    /// (a library call that blocks until other processes join).
    pub fn context_handle(&self) -> ContextHandle {
        ContextHandle(self.raw_context() as usize)
    }
}

/// A GPU's context as a number that crosses threads ([`Gpu::context_handle`]).
#[derive(Clone, Copy, Debug)]
pub struct ContextHandle(usize);

impl ContextHandle {
    /// Makes the context current on the calling thread (`cuCtxSetCurrent`).
    ///
    /// # Safety
    /// The [`Gpu`] it came from (or another holder of the same device's primary context) is
    /// still alive.
    ///
    /// # Errors
    /// A driver error.
    pub unsafe fn make_current(self) -> Result<()> {
        // SAFETY: a live context (the caller's contract); any thread may make it current.
        check(
            unsafe { cu::cuCtxSetCurrent(self.0 as cu::CUcontext) },
            || "cuCtxSetCurrent".into(),
        )
    }
}
