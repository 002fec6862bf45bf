//! The book's `xy.txt` reader (`gridsync::neighbor::xy::parse_xy`): any text is atoms or an
//! error, never a panic, and atoms it read write back and read back the same.
#![no_main]

use gridsync::neighbor::xy::{format_xy, parse_xy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // `read_xy` reads files as UTF-8 (anything else is an I/O error before the parser).
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(atoms) = parse_xy(text) {
        let again = parse_xy(&format_xy(&atoms)).expect("a written xy.txt reads back");
        assert_eq!(again, atoms, "xy.txt round trip");
    }
});
