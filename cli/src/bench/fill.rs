//! Benchmark inputs generated on every core: uniform values from a hash of the index, so that
//! gigabytes take a fraction of a second and every run sees the same data.

use gridsync::multi::split;

/// Uniform floats in [-1, 1) from a hash of the index, on every core.
pub fn fill_floats(x: &mut [f32]) {
    par_fill(x, |i| {
        ((hash(i) >> 40) as f32) * (2.0 / (1u64 << 24) as f32) - 1.0
    });
}

/// Uniform bytes from a hash of the index, on every core.
pub fn fill_bytes(x: &mut [u8]) {
    par_fill(x, |i| (hash(i) >> 56) as u8);
}

fn hash(i: usize) -> u64 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn par_fill<T: Send>(x: &mut [T], f: impl Fn(usize) -> T + Sync) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ranges = split(x.len(), threads);
    std::thread::scope(|s| {
        let mut rest = x;
        for r in ranges {
            let (mine, tail) = rest.split_at_mut(r.len());
            rest = tail;
            let f = &f;
            s.spawn(move || {
                for (k, v) in mine.iter_mut().enumerate() {
                    *v = f(r.start + k);
                }
            });
        }
    });
}
