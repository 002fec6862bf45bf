//! The CPU model of the warp primitives' check kernel (`gpu::checks::primitives::warp_check`),
//! which `gridsync check` and the GPU tests compare its rows with.

use gpu::checks::primitives::WARP_CHECK_FIELDS;

/// What `warp_check` must write for thread `g` of blocks of `block` threads (`None`: a shuffle
/// from a lane the warp does not have, whose value is unspecified).
pub fn warp_check_row(input: &[u32], block: usize, g: usize) -> [Option<u32>; WARP_CHECK_FIELDS] {
    let t = g % block;
    let lane = t % 32;
    let base = g - lane;
    let lanes = (block - (t - lane)).min(32);
    let exists = |l: usize| l < lanes;
    let v = input[g];
    let ballot = (0..lanes)
        .filter(|&l| input[base + l] & 1 == 1)
        .fold(0u32, |b, l| b | 1 << l);
    let sum = input[g - t..][..block]
        .iter()
        .fold(0u32, |s, x| s.wrapping_add(*x));
    let down = exists(lane + 1).then(|| input[g + 1]);
    [
        Some(lane as u32),
        Some(input[base]),
        Some(if lane == 0 { v } else { input[g - 1] }),
        down,
        exists(lane ^ 1).then(|| input[base + (lane ^ 1)]),
        Some(ballot),
        Some(sum),
        exists(lane + 1).then(|| (g + 1) as u32),
        down,
    ]
}
