//! The counts written as CSV or `.npy`.

use super::*;

/// A `.npy` file's `u64` values (format 1.0, dtype `<u8`, one dimension), checked as it goes.
fn read_npy_u64(path: &std::path::Path) -> Vec<u64> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
    let header_len = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<u8'"), "{header}");
    let values: Vec<u64> = b[10 + header_len..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(
        header.contains(&format!("'shape': ({},)", values.len())),
        "{header}"
    );
    values
}

/// A CSV file's counts (`bin,count`, then every bin in order).
fn read_csv_counts(path: &std::path::Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("bin,count"));
    lines
        .enumerate()
        .map(|(i, l)| {
            let (bin, count) = l.split_once(',').unwrap();
            assert_eq!(bin.parse::<usize>().unwrap(), i);
            count.parse().unwrap()
        })
        .collect()
}

#[test]
fn every_histogram_writes_its_counts_as_csv_or_npy() {
    let mut rng = common::rng();
    // Random bytes of an odd length (some ≥ 128), and the same bytes as 16-bit values.
    let bytes: Vec<u8> = (0..20_011).map(|_| rng.random()).collect();
    let file = temp_path("counts-in.bin");
    std::fs::write(&file, &bytes[..20_010]).unwrap();
    let f = file.to_str().unwrap();
    for (bins, name, bin_kind) in [
        ("256", "c256.csv", Bins::Byte),
        ("128", "c128.npy", Bins::Ascii),
    ] {
        let out = temp_path(name);
        let o = out.to_str().unwrap();
        ok_json(&[
            "histogram",
            "--simulate",
            "--json",
            "--bins",
            bins,
            "--input",
            f,
            "--output",
            o,
        ]);
        let got = if name.ends_with(".npy") {
            read_npy_u64(&out)
        } else {
            read_csv_counts(&out)
        };
        assert_eq!(got, expected(&bytes[..20_010], bin_kind), "{name}");
    }
    let out = temp_path("c65536.npy");
    let v = ok_json(&[
        "histogram",
        "--simulate",
        "--json",
        "--bins",
        "65536",
        "--input",
        f,
        "--output",
        out.to_str().unwrap(),
    ]);
    let words: Vec<u16> = bytes[..20_010]
        .chunks_exact(2)
        .map(|w| u16::from_le_bytes([w[0], w[1]]))
        .collect();
    let want = gridsync::histogram::histogram_u16_cpu(&words);
    assert_eq!(read_npy_u64(&out), want);
    // The JSON holds the counts too, as the byte histograms' does.
    assert_eq!(
        serde_json::from_value::<Vec<u64>>(v["histogram"].clone()).unwrap(),
        want
    );
    // A file in a directory that is not there is refused before anything runs.
    let out = common::cli(&[
        "histogram",
        "--simulate",
        "--input",
        f,
        "--output",
        "/nonexistent-gridsync/counts.csv",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no directory"));
}
