//! The sample book (every measured cell, medians over repeats), number formatting, and the
//! Markdown report (stamp, targets table, all measurements, notes, violations).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::check::Verdict;
use crate::driver::Metrics;
use crate::stamp::Env;

/// One measured cell: a workload variant against one target, in one repeat.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub workload: String,
    pub variant: String,
    pub target: String,
    pub repeat: usize,
    pub metrics: Metrics,
}

/// Median, range and count of one metric over repeats.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Stat {
    /// (max − min) / median > 25% (docs/benchmarks.md, noisy cells).
    pub fn noisy(&self) -> bool {
        self.n > 1 && self.median.abs() > 0.0 && (self.max - self.min) / self.median.abs() > 0.25
    }
}

pub fn stat_of(mut v: Vec<f64>) -> Option<Stat> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Stat {
        median,
        min: v[0],
        max: v[n - 1],
        n,
    })
}

/// All samples, with look-ups.
#[derive(Debug, Default)]
pub struct Book {
    pub samples: Vec<Sample>,
}

impl Book {
    pub fn add(&mut self, workload: &str, variant: &str, target: &str, repeat: usize, m: Metrics) {
        self.samples.push(Sample {
            workload: workload.into(),
            variant: variant.into(),
            target: target.into(),
            repeat,
            metrics: m,
        });
    }

    /// Median etc. of one metric of one cell over repeats.
    pub fn stat(&self, w: &str, v: &str, t: &str, metric: &str) -> Option<Stat> {
        stat_of(
            self.samples
                .iter()
                .filter(|s| s.workload == w && s.variant == v && s.target == t)
                .filter_map(|s| s.metrics.get(metric).copied())
                .collect(),
        )
    }

    /// The metrics of one cell in one repeat (the last recorded), for ratios across workloads.
    pub fn metrics(&self, w: &str, v: &str, t: &str, repeat: usize) -> Option<Metrics> {
        self.samples
            .iter()
            .rev()
            .find(|s| s.workload == w && s.variant == v && s.target == t && s.repeat == repeat)
            .map(|s| s.metrics.clone())
    }

    /// Every (workload, variant, target, metric) → stat, in first-seen order.
    pub fn summary(&self) -> Vec<SummaryRow> {
        let mut order: Vec<(String, String, String)> = Vec::new();
        for s in &self.samples {
            let k = (s.workload.clone(), s.variant.clone(), s.target.clone());
            if !order.contains(&k) {
                order.push(k);
            }
        }
        let mut out = Vec::new();
        for (w, v, t) in order {
            let mut metrics: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for s in self
                .samples
                .iter()
                .filter(|s| s.workload == w && s.variant == v && s.target == t)
            {
                for (k, x) in &s.metrics {
                    metrics.entry(k.clone()).or_default().push(*x);
                }
            }
            for (metric, vals) in metrics {
                if let Some(stat) = stat_of(vals) {
                    out.push(SummaryRow {
                        workload: w.clone(),
                        variant: v.clone(),
                        target: t.clone(),
                        metric,
                        stat,
                        noisy: stat.noisy(),
                    });
                }
            }
        }
        out
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow {
    pub workload: String,
    pub variant: String,
    pub target: String,
    pub metric: String,
    pub stat: Stat,
    pub noisy: bool,
}

/// Formats a number with sensible precision.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        "n/a".into()
    } else if a >= 100_000.0 {
        let s = format!("{x:.0}");
        // Thousands separators.
        let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else if a >= 1000.0 {
        let s = format!("{x:.0}");
        if s.len() > 3 {
            let (h, t) = s.split_at(s.len() - 3);
            format!("{h},{t}")
        } else {
            s
        }
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// "median (min–max, n=3)".
pub fn show(s: Option<Stat>, unit: &str) -> String {
    match s {
        None => "not measured".into(),
        Some(s) if s.n == 1 => format!("{}{unit}", num(s.median)),
        Some(s) => format!(
            "{}{unit} ({}–{}, n={}{})",
            num(s.median),
            num(s.min),
            num(s.max),
            s.n,
            if s.noisy() { ", noisy" } else { "" }
        ),
    }
}

/// The Markdown report: stamp, targets, notes, problems; `full` adds every measurement (the
/// file gets it, the terminal not).
pub fn markdown(
    env: &Env,
    checks: &[Verdict],
    book: &Book,
    problems: &[String],
    notes: &[String],
    full: bool,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## localsqs benchmark ({})", env.mode);
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{} · git {}{} · {} cores ({}) · kernel {} · {} MiB RAM · load1 {:.2}→{:.2} · steal {:.1}% · \
         fsync {}/s on {} · {} · {} repeat(s) of {:.1} s · wall {:.0} s",
        env.date_utc,
        env.git_sha.get(..12).unwrap_or(&env.git_sha),
        if env.git_dirty { " (dirty)" } else { "" },
        env.nproc,
        env.cpu_model,
        env.kernel,
        env.mem_total_mib,
        env.load1_before,
        env.load1_after,
        env.steal_pct,
        num(env.fsync_per_s),
        env.data_dir_fs,
        env.moto,
        env.repeats,
        env.duration_s,
        env.wall_s,
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "### Targets ({})", crate::check::TARGETS_OF);
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| Workload | Metric | Value (median (min–max, n)) | Target | Result |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for c in checks {
        let _ = writeln!(s, "{c}");
    }
    if full {
        let _ = writeln!(s);
        let _ = writeln!(s, "### All measurements");
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "| Workload | Variant | Target | Metric | Median | Min | Max | n |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
        for r in book.summary() {
            if !important(&r.metric) {
                continue;
            }
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {}{} | {} | {} | {} |",
                r.workload,
                r.variant,
                r.target,
                r.metric,
                num(r.stat.median),
                if r.noisy { " (noisy)" } else { "" },
                num(r.stat.min),
                num(r.stat.max),
                r.stat.n
            );
        }
    }
    let notes = collapse(notes);
    let problems = collapse(problems);
    if !notes.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "### Notes");
        let _ = writeln!(s);
        for n in &notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    let _ = writeln!(s);
    if problems.is_empty() {
        let _ = writeln!(s, "Correctness: no violations.");
    } else {
        let _ = writeln!(s, "### Correctness violations");
        let _ = writeln!(s);
        for p in &problems {
            let _ = writeln!(s, "- {p}");
        }
    }
    s
}

/// Identical lines once, with a count.
pub fn collapse(lines: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in lines {
        match out.iter_mut().find(|(x, _)| x == l) {
            Some((_, n)) => *n += 1,
            None => out.push((l.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(l, n)| if n > 1 { format!("{l} (×{n})") } else { l })
        .collect()
}

/// Metrics worth a row in the Markdown table (the JSON has all of them).
fn important(m: &str) -> bool {
    !(m.ends_with("p90_ms")
        || m.ends_with("p999_ms")
        || m == "reqs_total"
        || m == "window_s"
        || m == "rss_peak_sampled_mib"
        || m == "idle_window_s"
        || m == "conns")
}
