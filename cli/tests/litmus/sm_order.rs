//! The launch's order of the SMs: bijections onto whole groups, shuffles that differ between
//! launches and pair SMs that are not neighbours.

use super::*;

/// A launch of the litmus kernel across `sms` SMs in `order`, for [`SmGroups`] alone.
fn sm_launch(sms: u32, order: u32, seed: u32) -> LitmusLaunch {
    let null = core::ptr::null_mut();
    LitmusLaunch {
        program: core::ptr::null(),
        locations: null,
        start: null,
        regs: null,
        scratch: null,
        sm_tickets: null,
        counts: core::ptr::null_mut(),
        errors: null,
        variant: 0,
        placement: PLACE_DIFFERENT_SMS,
        iterations: 1,
        seed,
        sms,
        test_blocks_per_sm: 1,
        slot_bits: 1,
        stride_words: 32,
        stress_iters: 0,
        stress_lines: 2,
        stress_pattern: STRESS_STORE_LOAD,
        pre_stress_iters: 0,
        sm_order: order,
        spin_up: 1,
        max_instances: 1,
        spin_polls: 1,
        gpu: 0,
        gpus: 1,
        multi: core::ptr::null_mut(),
    }
}

/// The launch's order of the SMs: every order is a bijection between the SMs it places and the
/// positions `0..positions()`, `at` its inverse, with whole groups only — for every SM count up
/// to 200, every test size and many launches.
#[test]
fn every_order_of_the_sms_is_a_bijection_onto_whole_groups() {
    for order in [SM_ORDER_ADJACENT, SM_ORDER_SPREAD, SM_ORDER_SHUFFLED] {
        for sms in 1..=200u32 {
            for threads in 1..=LITMUS_MAX_THREADS {
                for seed in 0..8u32 {
                    let o = SmGroups::of(
                        &sm_launch(sms, order, seed.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995),
                        threads,
                    );
                    let len = o.positions();
                    if order == SM_ORDER_SPREAD {
                        assert!(len <= sms && len.is_multiple_of(threads));
                    } else {
                        assert_eq!(len, sms);
                    }
                    let mut taken = [false; 200];
                    let mut placed = 0;
                    for s in 0..sms {
                        if let Some(p) = o.position(s) {
                            assert!(p < len, "{order} {sms} {threads}: {s} at {p}");
                            assert!(!taken[p as usize], "{order} {sms} {threads}: {p} twice");
                            taken[p as usize] = true;
                            assert_eq!(o.at(p), s, "{order} {sms} {threads} {seed}");
                            placed += 1;
                        }
                    }
                    assert_eq!(placed, len, "{order} {sms} {threads}");
                }
            }
        }
    }
}

#[test]
fn shuffled_orders_differ_between_launches_and_pair_sms_that_are_not_neighbours() {
    let sms = 132;
    let partners: Vec<u32> = (0..16u32)
        .map(|seed| {
            let o = SmGroups::of(
                &sm_launch(
                    sms,
                    SM_ORDER_SHUFFLED,
                    seed.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995,
                ),
                2,
            );
            let p = o.position(0).unwrap_or(0);
            o.at(p ^ 1)
        })
        .collect();
    let distinct = partners
        .iter()
        .enumerate()
        .filter(|(i, p)| !partners[..*i].contains(p))
        .count();
    assert!(distinct > 8, "SM 0's partners in 16 launches: {partners:?}");
    assert!(partners.iter().any(|&p| p > 1), "{partners:?}");
}
