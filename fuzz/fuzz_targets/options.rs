//! The command line's option values that are more than one number: `--devices`, the labelled
//! options (`--pipeline`, `--schedule`, `--accumulate`), `--shape`, `--periodic`,
//! `--plot-window`. Any text is a value or an error, never a panic, and a value keeps its
//! promises (finite sides, a window with area, devices named once).
#![no_main]

use gridsync::multi::DeviceList;
use gridsync::normalize::{Pipeline, Schedule};
use gridsync::reduce::Accumulate;
use gridsync_cli::options::{parse_shape, parse_sides, parse_window};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(DeviceList::Ordinals(list)) = s.parse::<DeviceList>() {
        for (k, d) in list.iter().enumerate() {
            assert!(!list[..k].contains(d), "device {d} twice in {s:?}");
        }
    }
    let _ = s.parse::<Pipeline>();
    let _ = s.parse::<Schedule>();
    let _ = s.parse::<Accumulate>();
    let _ = parse_shape(s);
    if let Ok(sides) = parse_sides(s) {
        assert!(sides.iter().all(|v| v.is_finite()), "{s:?}");
    }
    if let Ok([x0, y0, x1, y1]) = parse_window(s) {
        assert!(x1 > x0 && y1 > y0, "{s:?}");
    }
});
