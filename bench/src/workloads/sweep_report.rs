//! The sweeps as data (one [`Series`] per swept variable, read from the sample book) and as
//! Markdown tables; the charts (`charts`) and the JSON `sweeps` array are drawn from the same
//! series.

use std::fmt::Write as _;

use serde::Serialize;

use super::sweep::Axis;
use crate::harness::T_SELF;
use crate::report::{Book, num};

/// One point of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub x: f64,
    pub label: String,
    pub msgs_per_s: Option<f64>,
    pub mb_per_s: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Peak RSS (VmHWM) of the point's server.
    pub rss_mib: Option<f64>,
}

/// One sweep: its `--only` id, the swept variable, the load, and the points in order.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub id: &'static str,
    pub x_title: &'static str,
    pub load: &'static str,
    pub points: Vec<Point>,
}

impl Series {
    /// Whether the message sizes vary (MB/s is then worth its own column).
    pub fn shows_mb(&self) -> bool {
        self.id == Axis::Size.workload().id
    }
}

/// Every sweep that has at least one point in the book.
pub fn series(book: &Book) -> Vec<Series> {
    Axis::ALL
        .iter()
        .map(|&a| {
            let id = a.workload().id;
            let mut labels: Vec<&str> = Vec::new();
            for s in book.samples.iter().filter(|s| s.workload == id) {
                if !labels.contains(&s.variant.as_str()) {
                    labels.push(&s.variant);
                }
            }
            let get = |v: &str, k: &str| book.stat(id, v, T_SELF, k).map(|s| s.median);
            let mut points: Vec<Point> = labels
                .iter()
                .filter_map(|&v| {
                    Some(Point {
                        x: get(v, "x")?,
                        label: v.to_owned(),
                        msgs_per_s: get(v, "msgs_per_s"),
                        mb_per_s: get(v, "mb_per_s"),
                        p99_ms: get(v, "p99_ms"),
                        rss_mib: get(v, "hwm_mib"),
                    })
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            Series {
                id,
                x_title: a.x_title(),
                load: a.load(),
                points,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// The `### Sweeps` section: one table per sweep (empty when nothing was swept).
pub fn markdown(all: &[Series]) -> String {
    let mut s = String::new();
    if all.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\n### Sweeps\n");
    let _ = writeln!(
        s,
        "Each point on a fresh localsqs; msgs/s and p99 over the measured window, peak RSS \
         (VmHWM) of the point's server. Charts: `<stem>-<sweep>.svg` next to the JSON \
         (`bench/results/latest-sweep-conns.svg`, …)."
    );
    let opt = |x: Option<f64>| x.map_or_else(|| "n/a".to_owned(), num);
    for ser in all {
        let _ = writeln!(s, "\n#### {} ({}; x: {})\n", ser.id, ser.load, ser.x_title);
        let mb = ser.shows_mb();
        let _ = writeln!(
            s,
            "| {} | msgs/s |{} p99 ms | peak RSS MiB |",
            ser.x_title,
            if mb { " MB/s |" } else { "" }
        );
        let _ = writeln!(s, "|---|---|{}---|---|", if mb { "---|" } else { "" });
        for p in &ser.points {
            let mbs = if mb {
                format!(" {} |", opt(p.mb_per_s))
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "| {} | {} |{mbs} {} | {} |",
                p.label,
                opt(p.msgs_per_s),
                opt(p.p99_ms),
                opt(p.rss_mib)
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Metrics;

    #[test]
    fn series_are_sorted_by_x_and_rendered() {
        let mut b = Book::default();
        for (v, x, r) in [("c16", 16.0, 900.0), ("c1", 1.0, 100.0)] {
            let mut m = Metrics::new();
            m.insert("x".into(), x);
            m.insert("msgs_per_s".into(), r);
            m.insert("p99_ms".into(), 2.0);
            m.insert("hwm_mib".into(), 7.0);
            b.add("sweep-conns", v, T_SELF, 0, m);
        }
        let all = series(&b);
        assert_eq!(all.len(), 1);
        let xs: Vec<f64> = all[0].points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [1.0, 16.0]);
        let md = markdown(&all);
        assert!(md.contains("| c1 | 100 | 2.00 | 7.00 |"), "{md}");
        assert!(md.contains("| c16 | 900 | 2.00 | 7.00 |"), "{md}");
        assert!(markdown(&[]).is_empty());
    }
}
