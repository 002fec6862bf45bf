//! The `f32` input files (`--input` of reduce, count-above, streams): raw little-endian bytes
//! and whitespace-separated text. Any bytes are floats or an error, never a panic; raw floats
//! give back their bytes, and text floats written with Rust's shortest form read back the same.
#![no_main]

use gridsync::inputs::{parse_raw_f32, parse_text_f32};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = parse_raw_f32(data) {
        let bytes: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
        assert_eq!(bytes, data, "raw f32 round trip");
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = parse_text_f32(text) {
        let written: Vec<String> = v.iter().map(|f| f.to_string()).collect();
        let again = parse_text_f32(&written.join(" ")).expect("written floats read back");
        assert_eq!(again.len(), v.len());
        for (a, b) in again.iter().zip(&v) {
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{a} {b}"
            );
        }
    }
});
