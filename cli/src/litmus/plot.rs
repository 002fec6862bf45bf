//! The litmus report's heat map: the weak outcome's rate per test, variant and placement.

use super::{LitmusReport, Placement};

impl LitmusReport {
    /// The weak outcome's rate per test (a panel each), variant (rows) and placement
    /// (columns), on a log scale; a cross where the model forbids it. An SVG document.
    pub fn plot(&self) -> String {
        use crate::plot::{HeatCell, HeatPanel, heatmaps};
        let mut panels: Vec<HeatPanel> = Vec::new();
        let columns: Vec<Option<Placement>> = if self.memory == "gpu" {
            self.options.placements.iter().copied().map(Some).collect()
        } else {
            vec![None]
        };
        for &test in &self.options.tests {
            let cols: Vec<Option<Placement>> = if test.threads() == 1 {
                vec![None]
            } else {
                columns.clone()
            };
            let cells = self
                .options
                .variants
                .iter()
                .map(|&v| {
                    cols.iter()
                        .map(|&p| {
                            let r = self
                                .results
                                .iter()
                                .find(|r| r.test == test && r.variant == v && r.placement == p);
                            HeatCell {
                                value: r.filter(|r| r.instances > 0).map(|r| r.weak_rate),
                                marked: test.forbidden(v, p),
                                note: r.map_or("not run".into(), |r| {
                                    format!(
                                        "{} {} {}: {} weak of {}",
                                        test.name(),
                                        v.name(),
                                        p.map_or("—", Placement::name),
                                        r.weak,
                                        r.instances
                                    )
                                }),
                            }
                        })
                        .collect()
                })
                .collect();
            panels.push(HeatPanel {
                title: format!("{} ({})", test.name(), {
                    let names = test.digit_names();
                    names
                        .iter()
                        .zip(test.weak_outcome())
                        .map(|(n, v)| format!("{n}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                }),
                rows: self
                    .options
                    .variants
                    .iter()
                    .map(|v| v.name().to_string())
                    .collect(),
                cols: cols
                    .iter()
                    .map(|p| p.map_or("—", Placement::name).to_string())
                    .collect(),
                cells,
            });
        }
        heatmaps(
            &panels,
            5,
            -7.0,
            -1.0,
            &format!(
                "how often each test's weak outcome was seen on the {} ({})",
                self.target, self.memory
            ),
        )
    }
}
