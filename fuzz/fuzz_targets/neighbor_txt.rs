//! The book's `neighbor.txt` reader (`NeighborList::read_book_format`): any text is a list or
//! an error, never a panic, and a list it read writes back and reads back the same.
#![no_main]

use gridsync::neighbor::NeighborList;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(list) = NeighborList::read_book_format(text) {
        let mut written = Vec::new();
        list.write_book_format(&mut written, list.max_count())
            .expect("every atom fits its own longest row");
        let written = String::from_utf8(written).expect("neighbor.txt is ASCII");
        let again = NeighborList::read_book_format(&written).expect("a written list reads back");
        assert_eq!(again, list, "neighbor.txt round trip");
    }
});
