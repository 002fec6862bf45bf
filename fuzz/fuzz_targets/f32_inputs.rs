//! The array input files: `f32` (`--input` of reduce, count-above, streams) as raw
//! little-endian bytes and as whitespace-separated text, and `u16` (`histogram --bins 65536`) as
//! raw little-endian bytes. Any bytes are values or an error, never a panic; raw values give back
//! their bytes (an odd length is the `u16` parser's only error), and text floats written with
//! Rust's shortest form read back the same.
#![no_main]

use gridsync::inputs::{parse_raw_f32, parse_raw_u16, parse_text_f32};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match parse_raw_u16(data) {
        Ok(v) => {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            assert_eq!(bytes, data, "raw u16 round trip");
        }
        Err(_) => assert!(data.len() % 2 == 1, "an even length refused"),
    }
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
