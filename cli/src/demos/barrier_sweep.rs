//! The article's figure 5: time per X→P→X iteration against the number of blocks, one launch
//! with a barrier against many launches, up to the largest grid the device holds at once.

use crate::plot::{BLUE, GREEN, ORANGE, RED, Series, TwoAxisChart, two_axis_chart};
use gpu::LaunchConfig;
use gridsync::barrier::Variant;
use gridsync::barrier::{BarrierOptions, run_variant};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::grid::check_coresident;
use gridsync::runtime::launch::Target;
use serde::Serialize;

/// The variants the sweep times: the correct ones.
pub const SWEEP_VARIANTS: [Variant; 4] = [
    Variant::ManyLaunches,
    Variant::Graph,
    Variant::GridBarrier,
    Variant::Cooperative,
];

/// What [`sweep`] measures.
#[derive(Clone, Debug, Serialize)]
pub struct SweepOptions {
    /// The experiment at each point; its `blocks` is replaced by the sweep's.
    pub base: BarrierOptions,
    /// The block counts, ascending; empty: powers of two and multiples of the SM count up to
    /// the co-residency limit.
    pub blocks: Vec<u32>,
}

/// One block count.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    /// Blocks of the grid.
    pub blocks: u32,
    /// Median microseconds per iteration, per variant of [`SWEEP_VARIANTS`] (`None` where it
    /// did not run).
    pub us_per_iteration: Vec<Option<f64>>,
}

impl SweepPoint {
    /// One launch with [`gpu::grid::GridBarrier`] against many launches: how much less time it
    /// takes, in percent of the many-launch time (the article's figure 5, positive when the one
    /// launch wins).
    pub fn one_launch_gain_percent(&self) -> Option<f64> {
        let many = self.us_per_iteration[0]?;
        let one = self.us_per_iteration[2]?;
        Some((many - one) / many * 100.0)
    }
}

/// The whole sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    /// Where it ran.
    pub target: String,
    /// Threads per block.
    pub threads: u32,
    /// `W`.
    pub len: usize,
    /// Iterations per launch.
    pub iterations: u32,
    /// The co-residency limit for this block size.
    pub coresident_blocks: u32,
    /// The variants, in the order of every point's times.
    pub variants: Vec<Variant>,
    /// The points, by block count.
    pub points: Vec<SweepPoint>,
}

/// Powers of two, then multiples of `sms`, up to and including `limit`.
fn default_blocks(sms: u32, limit: u32) -> Vec<u32> {
    let mut b: Vec<u32> = (0..31)
        .map(|i| 1u32 << i)
        .take_while(|&b| b < sms)
        .collect();
    b.extend((1..).map(|k| k * sms).take_while(|&b| b <= limit));
    if b.last() != Some(&limit) {
        b.push(limit);
    }
    b
}

/// Times the correct variants at every block count (GPU only). `progress` is called with
/// (runs done, runs).
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for a block count of zero
/// or past the co-residency limit (its blocks could never all arrive); what [`gridsync::barrier::run`]
/// returns.
pub fn sweep(
    target: &Target,
    opts: &SweepOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<SweepReport> {
    let Target::Gpu(gpu) = target else {
        return Err(Error::Unsupported(
            "the sweep times a GPU; the simulator says nothing about speed".into(),
        ));
    };
    let threads = opts.base.threads;
    let probe = LaunchConfig::linear(1, threads);
    let limit = check_coresident(target, "xpx_grid_barrier", &probe)?;
    let blocks = if opts.blocks.is_empty() {
        default_blocks(gpu.info().sm_count, limit)
    } else {
        opts.blocks.clone()
    };
    if let Some(&bad) = blocks.iter().find(|&&b| b == 0 || b > limit) {
        return Err(Error::InvalidInput(format!(
            "{bad} blocks of {threads} threads: the sweep goes from 1 to the {limit} blocks \
             that fit on the device at once (more could never all arrive at the grid barrier)"
        )));
    }
    let total = (blocks.len() * SWEEP_VARIANTS.len()) as u32;
    let mut points = Vec::new();
    for (i, &b) in blocks.iter().enumerate() {
        let o = BarrierOptions {
            blocks: b,
            ..opts.base.clone()
        };
        let mut us = Vec::new();
        for (j, &v) in SWEEP_VARIANTS.iter().enumerate() {
            let r = run_variant(target, &o, v)?;
            us.push(r.us_per_iteration.map(|s| s.median));
            progress((i * SWEEP_VARIANTS.len() + j + 1) as u32, total);
        }
        points.push(SweepPoint {
            blocks: b,
            us_per_iteration: us,
        });
    }
    Ok(SweepReport {
        target: target.describe(),
        threads,
        len: opts.base.len,
        iterations: opts.base.iterations,
        coresident_blocks: limit,
        variants: SWEEP_VARIANTS.to_vec(),
        points,
    })
}

/// The sweep as an SVG chart: microseconds per iteration of each variant on the left axis, the
/// one launch's gain over many launches on the right, against the block count.
pub fn sweep_chart(r: &SweepReport) -> String {
    let colors = [ORANGE, GREEN, BLUE, RED];
    let left = SWEEP_VARIANTS
        .iter()
        .enumerate()
        .map(|(i, v)| Series {
            name: v.name().into(),
            values: r
                .points
                .iter()
                .map(|p| p.us_per_iteration[i].unwrap_or(f64::NAN))
                .collect(),
            color: colors[i],
            dashed: false,
            mark_min: false,
        })
        .collect();
    let gain = Series {
        name: "one launch's gain over many (%)".into(),
        values: r
            .points
            .iter()
            .map(|p| p.one_launch_gain_percent().unwrap_or(f64::NAN))
            .collect(),
        color: "#777777",
        dashed: true,
        mark_min: false,
    };
    two_axis_chart(&TwoAxisChart {
        title: format!(
            "X→P→X on the {}: W = {}, {} threads per block, {} iterations per launch",
            r.target, r.len, r.threads, r.iterations
        ),
        x_label: "blocks".into(),
        x: r.points.iter().map(|p| p.blocks as f64).collect(),
        left_label: "µs per iteration".into(),
        left,
        right_label: "gain of one launch (%)".into(),
        right: vec![gain],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_block_counts_climb_to_the_limit() {
        assert_eq!(
            default_blocks(132, 264),
            [1, 2, 4, 8, 16, 32, 64, 128, 132, 264]
        );
        assert_eq!(default_blocks(4, 10), [1, 2, 4, 8, 10]);
    }
}
