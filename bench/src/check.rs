//! The targets table: a [`Check`] names one metric of one measured cell, the [`Goal`] it must
//! meet, and renders its own goal sentence; judged against the samples it becomes a
//! [`Verdict`], one row of the table (and one entry of the JSON `checks` array).

use std::fmt;

use serde::Serialize;

use crate::report::{self, Book};

/// The issues whose targets the table checks: the round-two targets of issue #16, and those of
/// issue #8 (round one) that still apply.
pub const TARGETS_OF: &str = "issue #16; round one: #8";

/// What a check asks of the median of its metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// Shown for context: always met once measured.
    Context,
    /// median ≥ bound.
    AtLeast(f64),
    /// median < bound.
    Below(f64),
    /// median ≤ bound.
    AtMost(f64),
    /// No correctness violation filed under the check's workload, once its cell ran:
    /// `claim` is the goal sentence, `clean` the value shown when it holds.
    Verified {
        claim: &'static str,
        clean: &'static str,
    },
}

impl Goal {
    /// Whether a median meets a numeric goal (`Verified` is judged on violations instead).
    pub fn met(self, x: f64) -> bool {
        match self {
            Goal::Context | Goal::Verified { .. } => true,
            Goal::AtLeast(t) => x >= t,
            Goal::Below(t) => x < t,
            Goal::AtMost(t) => x <= t,
        }
    }

    fn bound(self) -> Option<(&'static str, f64)> {
        match self {
            Goal::AtLeast(t) => Some(("≥", t)),
            Goal::Below(t) => Some(("<", t)),
            Goal::AtMost(t) => Some(("≤", t)),
            Goal::Context | Goal::Verified { .. } => None,
        }
    }
}

/// The unit of a metric, as values and bounds are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Messages or requests per second: a bare number.
    Rate,
    /// A ratio of two rates: `0.690×`; a bound below 1 is written as a fraction (`≥ 0.60`),
    /// one of 1 or more as a multiple (`≥ 200×`).
    Ratio,
    Ms,
    MiB,
    MBps,
    Bytes,
    /// Percent of one CPU core.
    PctCore,
}

impl Unit {
    /// What follows a number of this unit.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Rate => "",
            Unit::Ratio => "×",
            Unit::Ms => " ms",
            Unit::MiB => " MiB",
            Unit::MBps => " MB/s",
            Unit::Bytes => " B",
            Unit::PctCore => "% of a core",
        }
    }

    /// A bound in this unit: `10,000`, `0.5 ms`, `0.60`, `200×`.
    fn bound(self, t: f64) -> String {
        if self == Unit::Ratio && t < 1.0 {
            return format!("{t:.2}");
        }
        let n = if t.fract() == 0.0 && t.abs() < 1e15 {
            // Integral bounds: with thousands separators.
            let digits = format!("{}", t.abs() as u64);
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(c);
            }
            if t < 0.0 { format!("-{out}") } else { out }
        } else {
            format!("{t}")
        };
        format!("{n}{}", self.suffix())
    }
}

/// The cell a check reads: one metric of (workload id, variant, target) in the [`Book`].
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub workload: &'static str,
    pub variant: String,
    /// A server (`localsqs`, `calibration`, `moto`) or a ratio (`localsqs/calibration`, …).
    pub target: &'static str,
    pub metric: &'static str,
}

/// The cell `metric` of (`workload`, `variant`, `target`).
pub fn cell(
    workload: &'static str,
    variant: impl Into<String>,
    target: &'static str,
    metric: &'static str,
) -> Cell {
    Cell {
        workload,
        variant: variant.into(),
        target,
        metric,
    }
}

/// One row of the targets table, before it is judged.
#[derive(Debug, Clone)]
pub struct Check {
    /// Row label, e.g. "W1 SendMessage, 64 connections (json)".
    pub workload: String,
    /// What is measured, e.g. "p99".
    pub metric: &'static str,
    pub cell: Cell,
    pub unit: Unit,
    pub goal: Goal,
    /// A bound's name, written before its value: "≤ c × size = 8 MiB".
    pub bound_name: Option<&'static str>,
    /// Why or under which conditions, written in parentheses after the goal.
    pub aside: Option<String>,
    /// Whom a context row's bound is for: "(context; loadgen ≥ 30,000)".
    pub context_for: Option<&'static str>,
}

impl Check {
    /// A check of `metric` (the row's label) read from `cell`.
    pub fn new(workload: impl Into<String>, metric: &'static str, cell: Cell, unit: Unit) -> Self {
        Check {
            workload: workload.into(),
            metric,
            cell,
            unit,
            goal: Goal::Context,
            bound_name: None,
            aside: None,
            context_for: None,
        }
    }

    /// The goal (default: context).
    pub fn goal(mut self, g: Goal) -> Self {
        self.goal = g;
        self
    }

    pub fn at_least(self, t: f64) -> Self {
        self.goal(Goal::AtLeast(t))
    }

    pub fn below(self, t: f64) -> Self {
        self.goal(Goal::Below(t))
    }

    pub fn at_most(self, t: f64) -> Self {
        self.goal(Goal::AtMost(t))
    }

    pub fn bound_named(mut self, name: &'static str) -> Self {
        self.bound_name = Some(name);
        self
    }

    pub fn aside(mut self, text: impl Into<String>) -> Self {
        self.aside = Some(text.into());
        self
    }

    /// A numeric goal shown as context for something other than localsqs (the load generator).
    pub fn context_for(mut self, whom: &'static str) -> Self {
        self.context_for = Some(whom);
        self
    }

    /// The goal sentence, e.g. "< 10 ms" or "(context)".
    pub fn render(&self) -> String {
        self.to_string()
    }

    /// Judges the check against the samples and the violations filed so far.
    pub fn judge(&self, book: &Book, problems: &[String]) -> Verdict {
        let c = &self.cell;
        let stat = book.stat(c.workload, &c.variant, c.target, c.metric);
        let (value, met) = match self.goal {
            Goal::Verified { clean, .. } => {
                let tag = format!("[{}", c.workload);
                let bad = problems.iter().any(|p| p.starts_with(&tag));
                let value = match (stat.is_some(), bad) {
                    (false, _) => "not measured".to_owned(),
                    (true, true) => "violations (see below)".to_owned(),
                    (true, false) => clean.to_owned(),
                };
                (value, stat.map(|_| !bad))
            }
            g => (
                report::show(stat, self.unit.suffix()),
                stat.map(|s| g.met(s.median)),
            ),
        };
        Verdict {
            workload: self.workload.clone(),
            metric: self.metric.to_owned(),
            value,
            target: self.render(),
            met,
        }
    }
}

impl fmt::Display for Check {
    /// The goal sentence.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Goal::Verified { claim, .. } = self.goal {
            return f.write_str(claim);
        }
        let Some((op, t)) = self.goal.bound() else {
            return match &self.aside {
                Some(a) => write!(f, "(context: {a})"),
                None => f.write_str("(context)"),
            };
        };
        let bound = self.unit.bound(t);
        let sentence = match self.bound_name {
            Some(name) => format!("{op} {name} = {bound}"),
            None => format!("{op} {bound}"),
        };
        match (self.context_for, &self.aside) {
            (Some(whom), _) => write!(f, "(context; {whom} {sentence})"),
            (None, Some(a)) => write!(f, "{sentence} ({a})"),
            (None, None) => f.write_str(&sentence),
        }
    }
}

/// A judged check: one row of the targets table.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub workload: String,
    pub metric: String,
    /// "median (min–max, n)" or "not measured".
    pub value: String,
    /// The goal sentence.
    pub target: String,
    /// None when not measured in this run.
    pub met: Option<bool>,
}

impl Verdict {
    /// The result column: met, missed or not measured.
    pub fn result(&self) -> &'static str {
        match self.met {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "not measured",
        }
    }
}

impl fmt::Display for Verdict {
    /// One Markdown table row.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "| {} | {} | {} | {} | {} |",
            self.workload,
            self.metric,
            self.value,
            self.target,
            self.result()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Metrics;

    fn cell(metric: &'static str) -> Cell {
        super::cell("W9", "v", "localsqs", metric)
    }

    #[test]
    fn goal_sentences() {
        let c = |u, g| Check::new("W9", "m", cell("x"), u).goal(g).render();
        assert_eq!(c(Unit::Rate, Goal::AtLeast(10_000.0)), "≥ 10,000");
        assert_eq!(c(Unit::Rate, Goal::AtLeast(100_000.0)), "≥ 100,000");
        assert_eq!(c(Unit::Ms, Goal::Below(10.0)), "< 10 ms");
        assert_eq!(c(Unit::Ms, Goal::Below(0.5)), "< 0.5 ms");
        assert_eq!(c(Unit::Ms, Goal::Below(2000.0)), "< 2,000 ms");
        assert_eq!(c(Unit::Ratio, Goal::AtLeast(0.6)), "≥ 0.60");
        assert_eq!(c(Unit::Ratio, Goal::AtLeast(200.0)), "≥ 200×");
        assert_eq!(c(Unit::Bytes, Goal::AtMost(400.0)), "≤ 400 B");
        assert_eq!(c(Unit::Ms, Goal::Context), "(context)");
        let named = Check::new("W9", "m", cell("x"), Unit::MiB)
            .at_most(8.0)
            .bound_named("c × size")
            .aside("bounded by concurrency, not volume");
        assert_eq!(
            named.to_string(),
            "≤ c × size = 8 MiB (bounded by concurrency, not volume)"
        );
        let ctx = Check::new("W9", "m", cell("x"), Unit::Rate)
            .at_least(30_000.0)
            .context_for("loadgen");
        assert_eq!(ctx.render(), "(context; loadgen ≥ 30,000)");
        let floor = Check::new("W9", "m", cell("x"), Unit::Ms).aside("floor");
        assert_eq!(floor.render(), "(context: floor)");
        let pct = Check::new("W9", "m", cell("x"), Unit::PctCore)
            .below(1.0)
            .aside("200 parked");
        assert_eq!(pct.render(), "< 1% of a core (200 parked)");
    }

    #[test]
    fn verdicts() {
        let mut b = Book::default();
        let mut m = Metrics::new();
        m.insert("p99_ms".into(), 4.0);
        b.add("W9", "v", "localsqs", 0, m);
        let v = Check::new("W9 label", "p99", cell("p99_ms"), Unit::Ms)
            .below(10.0)
            .judge(&b, &[]);
        assert_eq!(v.met, Some(true));
        assert_eq!(
            v.to_string(),
            "| W9 label | p99 | 4.00 ms | < 10 ms | met |"
        );
        let v = Check::new("W9", "p99", cell("p99_ms"), Unit::Ms)
            .below(1.0)
            .judge(&b, &[]);
        assert_eq!(v.result(), "**missed**");
        let v = Check::new("W9", "p50", cell("p50_ms"), Unit::Ms)
            .below(1.0)
            .judge(&b, &[]);
        assert_eq!((v.met, v.value.as_str()), (None, "not measured"));
        let order = Check::new("W9", "order", cell("p99_ms"), Unit::Rate).goal(Goal::Verified {
            claim: "in order",
            clean: "all good",
        });
        let ok = order.judge(&b, &["[W1 x] localsqs: lost".into()]);
        assert_eq!((ok.met, ok.value.as_str()), (Some(true), "all good"));
        let bad = order.judge(&b, &["[W9 v] localsqs: lost".into()]);
        assert_eq!(bad.met, Some(false));
        assert_eq!(bad.target, "in order");
    }
}
