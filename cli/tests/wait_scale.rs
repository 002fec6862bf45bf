//! The scale of device wait bounds reaches every host site that hands a bound to a kernel, and
//! a bad `GRIDSYNC_WAIT_SCALE` is a warning, not a failure. The scale is read once per process
//! and set here through the environment, so this binary holds one test: nothing else runs
//! while it writes the environment.

mod common;

use gridsync::runtime::wait::{WAIT_SCALE_VAR, wait_scale};
use gridsync::{DeviceGridBarrier, DeviceMutex, DeviceTicketLock, MutexBounds, Target};
use std::time::Duration;

#[test]
fn bounds_stretch_by_the_scale_and_a_bad_scale_is_a_warning() {
    // The CLI, in processes of its own: a malformed or out-of-range value warns once and the
    // run goes on.
    for bad in ["abc", "0", "10001"] {
        let out = common::cli_env(
            &["--simulate", "--json", "mutex", "--shape", "2x33"],
            &[(WAIT_SCALE_VAR, bad)],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{bad}: {stderr}");
        let warning = format!("{WAIT_SCALE_VAR}={bad}");
        assert_eq!(stderr.matches(&warning).count(), 1, "{bad}: {stderr}");
    }

    // SAFETY: the only test of this binary, and no thread of it runs meanwhile (the children
    // above have exited): nothing else reads or writes the environment.
    unsafe { std::env::set_var(WAIT_SCALE_VAR, "3") };
    assert_eq!(wait_scale(), 3);
    let t = Target::Sim;

    // The grid barrier: its default 1 s stretches, a test's 50 ms stays.
    let barrier = DeviceGridBarrier::new(&t).unwrap();
    assert_eq!(barrier.timeout(), Duration::from_secs(3));
    assert_eq!(barrier.read(&t).unwrap().timeout_ns, 3_000_000_000);
    let short = DeviceGridBarrier::with_timeout(&t, Duration::from_millis(50)).unwrap();
    assert_eq!(short.timeout(), Duration::from_millis(50));

    // The locks: the default 2 s stretches, a deliberate 100 ms stays.
    let mutex = DeviceMutex::new(&t).unwrap();
    assert_eq!(mutex.read(&t).unwrap().timeout_ns, 6_000_000_000);
    let held_forever = MutexBounds {
        timeout: Duration::from_millis(100),
        ..MutexBounds::default()
    };
    assert_eq!(held_forever.state().unwrap().timeout_ns, 100_000_000);
    let ticket = DeviceTicketLock::new(&t).unwrap();
    assert_eq!(ticket.read(&t).unwrap().timeout_ns, 6_000_000_000);
    let ticket = DeviceTicketLock::with_bounds(&t, Duration::from_secs(1), 64).unwrap();
    assert_eq!(ticket.read(&t).unwrap().timeout_ns, 3_000_000_000);
}
