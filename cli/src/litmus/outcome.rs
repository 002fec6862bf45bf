//! Outcomes: the kernel's keys decoded, named as the literature writes them, and judged.

use super::catalogue::{Placement, Test, Variant, Verdict};
use gpu::lessons::litmus::{LITMUS_INVALID_KEY, LITMUS_VALUES};
use gpu::sim::weak::{Mode, program};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One outcome and how often it was seen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeCount {
    /// The values, digit by digit ([`Test::digit_names`]); `None` when some value was not 0, 1
    /// or 2 (which no run can give).
    pub values: Option<Vec<u64>>,
    /// As the literature writes it: `1:r0=1 1:r1=0`.
    pub text: String,
    /// How many instances ended so.
    pub count: u64,
    /// What the model says of it.
    pub verdict: Verdict,
}

/// The digits of kernel key `key` for a test with `digits` digits; `None` for the invalid key.
pub fn decode(key: u32, digits: usize) -> Option<Vec<u64>> {
    if key == LITMUS_INVALID_KEY {
        return None;
    }
    let base = u64::from(LITMUS_VALUES);
    let mut rest = u64::from(key);
    let values = (0..digits)
        .map(|_| {
            let d = rest % base;
            rest /= base;
            d
        })
        .collect();
    // A key with digits beyond the test's is as impossible as an invalid value.
    (rest == 0).then_some(values)
}

/// Every outcome some interleaving of `test`'s threads gives (every interleaving is tried).
pub fn sc_outcomes(test: Test) -> BTreeSet<Vec<u64>> {
    program::reachable(&test.program(Variant::Relaxed), Mode::Sc)
}

/// What the model says of `values` for `test` with `variant` at `placement`.
pub fn verdict(
    test: Test,
    variant: Variant,
    placement: Option<Placement>,
    values: Option<&[u64]>,
    sc: &BTreeSet<Vec<u64>>,
) -> Verdict {
    match values {
        Some(v) if sc.contains(v) => Verdict::Sc,
        Some(v) if v == test.weak_outcome() && !test.forbidden(variant, placement) => {
            Verdict::WeakAllowed
        }
        _ => Verdict::Forbidden,
    }
}

/// `1:r0=1 1:r1=0 x=2`, or a note for the invalid key.
pub fn text(test: Test, values: Option<&[u64]>) -> String {
    match values {
        Some(v) => test
            .digit_names()
            .iter()
            .zip(v)
            .map(|(n, d)| format!("{n}={d}"))
            .collect::<Vec<_>>()
            .join(" "),
        None => "a value no store wrote".to_string(),
    }
}

/// The outcomes of `counts` (indexed by key), judged, most frequent first.
pub fn tally(
    test: Test,
    variant: Variant,
    placement: Option<Placement>,
    counts: impl IntoIterator<Item = (Option<Vec<u64>>, u64)>,
) -> Vec<OutcomeCount> {
    let sc = sc_outcomes(test);
    let mut out: Vec<OutcomeCount> = counts
        .into_iter()
        .filter(|&(_, c)| c > 0)
        .map(|(values, count)| OutcomeCount {
            text: text(test, values.as_deref()),
            verdict: verdict(test, variant, placement, values.as_deref(), &sc),
            values,
            count,
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.values.cmp(&b.values)));
    out
}

/// The outcomes of the kernel's key counts.
pub fn tally_keys(
    test: Test,
    variant: Variant,
    placement: Option<Placement>,
    counts: &[u64],
) -> Vec<OutcomeCount> {
    let digits = test.digit_names().len();
    tally(
        test,
        variant,
        placement,
        counts
            .iter()
            .enumerate()
            .map(|(key, &c)| (decode(key as u32, digits), c)),
    )
}

/// A test's weak outcome among the outcomes of a combination or a tuning trial: how often it
/// was seen, per instance and per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeakSeen {
    /// How often the weak outcome was seen.
    pub count: u64,
    /// `count / instances` (0 when nothing ran).
    pub per_instance: f64,
    /// `count / seconds`.
    pub per_second: f64,
}

impl WeakSeen {
    /// `test`'s weak outcome in `outcomes`, of `instances` run in `seconds`.
    pub fn of(test: Test, outcomes: &[OutcomeCount], instances: u64, seconds: f64) -> WeakSeen {
        let weak = test.weak_outcome();
        let count = outcomes
            .iter()
            .filter(|o| o.values.as_deref() == Some(&weak[..]))
            .map(|o| o.count)
            .sum();
        WeakSeen {
            count,
            per_instance: if instances > 0 {
                count as f64 / instances as f64
            } else {
                0.0
            },
            per_second: count as f64 / seconds.max(f64::MIN_POSITIVE),
        }
    }
}
