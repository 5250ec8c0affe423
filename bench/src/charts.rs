//! SVG charts of a run, written next to its JSON as `<stem>-<chart>.svg`: one per sweep
//! (msgs/s — MB/s for message sizes —, p99 and peak RSS against the swept variable, on a log
//! x axis) and a bar chart of localsqs against the calibration server, moto and LocalStack on
//! W1, W2 and W3 (log y axis: they differ by orders of magnitude).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::cli::Params;
use crate::http::Proto;
use crate::procfs::Kind;
use crate::report::{Book, num};
use crate::workloads::sweep_report::{Point, Series};
use crate::workloads::{w01_send, w02_pipeline, w03_batch};

const SIZE: (u32, u32) = (1350, 460);
const FONT: &str = "sans-serif";
const LINE: RGBColor = RGBColor(31, 119, 180);
/// Room left and right of the first and last sweep points (a factor on the log x axis), so that
/// their labels fit.
const X_PAD: f64 = 2.5;

fn err(e: impl std::fmt::Display) -> String {
    format!("chart: {e}")
}

/// Writes every chart the book has data for; returns the files written.
pub fn write_all(book: &Book, p: &Params, sweeps: &[Series], json: &Path) -> Vec<PathBuf> {
    let dir = json.parent().unwrap_or(Path::new("."));
    let stem = json.file_stem().and_then(|s| s.to_str()).unwrap_or("bench");
    let mut out = Vec::new();
    let mut write = |name: &str, draw: &dyn Fn(&Path) -> Result<(), String>| {
        let path = dir.join(format!("{stem}-{name}.svg"));
        match draw(&path) {
            Ok(()) => out.push(path),
            Err(e) => eprintln!("localsqs-bench: {}: {e}", path.display()),
        }
    };
    for s in sweeps {
        write(s.id, &|path| sweep(path, s));
    }
    let groups = comparison(book, p);
    if groups.iter().any(|g| g.bars.len() > 1) {
        write("comparison", &|path| bars(path, &groups));
    }
    out
}

/// Redraws the charts of a results JSON from its samples (`--charts-from`).
pub fn redraw(json: &Path, p: &Params) -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read_to_string(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let samples = v.get("samples").cloned().unwrap_or_default();
    let book = Book {
        samples: serde_json::from_value(samples).map_err(|e| format!("samples: {e}"))?,
    };
    let sweeps = crate::workloads::sweep_report::series(&book);
    Ok(write_all(&book, p, &sweeps, json))
}

/// One panel of a sweep chart: what it plots and how.
struct Panel {
    title: &'static str,
    y_title: &'static str,
    get: fn(&Point) -> Option<f64>,
}

fn panels(s: &Series) -> [Panel; 3] {
    let throughput = if s.shows_mb() {
        Panel {
            title: "Throughput",
            y_title: "MB/s",
            get: |p| p.mb_per_s,
        }
    } else {
        Panel {
            title: "Throughput",
            y_title: "messages/s",
            get: |p| p.msgs_per_s,
        }
    };
    [
        throughput,
        Panel {
            title: "p99 request latency",
            y_title: "p99 (ms)",
            get: |p| p.p99_ms,
        },
        Panel {
            title: "Peak server RSS (VmHWM)",
            y_title: "RSS (MiB)",
            get: |p| p.rss_mib,
        },
    ]
}

/// A log-axis range around `v` with a factor `pad` of room on both sides (at least 2 for a
/// single value).
fn log_range(v: &[f64], pad: f64) -> std::ops::Range<f64> {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    let pad = if hi <= lo { pad.max(2.0) } else { pad };
    lo / pad..hi * pad
}

/// Whether values spread over a decade or more (then their axis is logarithmic).
pub fn spans_decades(v: &[f64]) -> bool {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    lo > 0.0 && hi / lo >= 10.0
}

/// A tick value: integers without decimals, `k`/`M` (or `kB`/`MB` for sizes) above 1,000.
fn tick(x: f64, bytes: bool) -> String {
    let units = if bytes {
        [" B", " kB", " MB"]
    } else {
        ["", "k", "M"]
    };
    let (scaled, u) = if x >= 1e6 {
        (x / 1e6, units[2])
    } else if x >= 1e3 {
        (x / 1e3, units[1])
    } else {
        (x, units[0])
    };
    if (scaled - scaled.round()).abs() < 1e-9 {
        format!("{}{u}", scaled.round())
    } else {
        format!("{}{u}", num(scaled))
    }
}

fn sweep(path: &Path, s: &Series) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let title = format!(
        "localsqs sweep of {} — {} ({})",
        s.x_title, s.load, "in memory, JSON, loopback"
    );
    let root = root.titled(&title, (FONT, 24)).map_err(err)?;
    let areas = root.split_evenly((1, 3));
    let xs: Vec<f64> = s.points.iter().map(|p| p.x).collect();
    let x_title = format!("{} (log scale)", s.x_title);
    for (area, panel) in areas.iter().zip(panels(s)) {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|p| Some((p.x, (panel.get)(p)?)))
            .filter(|&(x, y)| x > 0.0 && y > 0.0)
            .collect();
        if pts.is_empty() {
            continue;
        }
        let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let labels: Vec<String> = s
            .points
            .iter()
            .filter(|p| (panel.get)(p).is_some_and(|y| y > 0.0) && p.x > 0.0)
            .map(|p| p.label.clone())
            .collect();
        let xr = log_range(&xs, X_PAD).log_scale();
        let bytes = s.shows_mb();
        let fmt = |x: &f64| tick(*x, bytes);
        let axes = Axes {
            title: panel.title,
            x_title: &x_title,
            x_fmt: &fmt,
            y_title: panel.y_title,
            labels: &labels,
        };
        if spans_decades(&ys) {
            let y_title = format!("{} (log scale)", panel.y_title);
            let axes = Axes {
                y_title: &y_title,
                ..axes
            };
            line_panel(area, xr, log_range(&ys, 1.6).log_scale(), &axes, &pts)?;
        } else {
            let hi = ys.iter().copied().fold(0.0, f64::max) * 1.2;
            line_panel(area, xr, 0.0..hi, &axes, &pts)?;
        }
    }
    root.present().map_err(err)
}

/// Titles, the x tick format and the point labels of one panel.
struct Axes<'a> {
    title: &'a str,
    x_title: &'a str,
    x_fmt: &'a dyn Fn(&f64) -> String,
    y_title: &'a str,
    labels: &'a [String],
}

fn line_panel<DB, X, Y>(
    area: &DrawingArea<DB, Shift>,
    x: X,
    y: Y,
    axes: &Axes<'_>,
    pts: &[(f64, f64)],
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(axes.title, (FONT, 18))
        .margin(14)
        .x_label_area_size(52)
        .y_label_area_size(78)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    let y_fmt = |v: &f64| tick(*v, false);
    chart
        .configure_mesh()
        .x_desc(axes.x_title)
        .y_desc(axes.y_title)
        .x_labels(6)
        .y_labels(8)
        .x_label_formatter(axes.x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(pts.iter().copied(), LINE.stroke_width(2)))
        .map_err(err)?;
    chart
        .draw_series(pts.iter().map(|&p| Circle::new(p, 4, LINE.filled())))
        .map_err(err)?;
    // Each point named by its swept value and its value, just above it.
    let style = (FONT, 12)
        .into_font()
        .color(&RGBColor(80, 80, 80))
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(pts.iter().zip(axes.labels).map(|(&p, l)| {
            let text = format!("{l}: {}", num(p.1));
            EmptyElement::at(p) + Text::new(text, (0, -8), style.clone())
        }))
        .map_err(err)?;
    Ok(())
}

/// One group of bars: a workload, and msgs/s of each server that ran it.
#[derive(Debug, Clone)]
pub struct Group {
    pub label: &'static str,
    pub bars: Vec<(Kind, f64)>,
}

/// The servers of the comparison, in bar order, with their colours.
const SERVERS: [(Kind, RGBColor); 4] = [
    (Kind::Localsqs, RGBColor(31, 119, 180)),
    (Kind::Calibration, RGBColor(150, 150, 150)),
    (Kind::Moto, RGBColor(255, 127, 14)),
    (Kind::LocalStack, RGBColor(44, 160, 44)),
];

/// W1, W2 and W3 (JSON, 64 connections) as measured against each server.
pub fn comparison(book: &Book, p: &Params) -> Vec<Group> {
    let cells = [
        (
            "W1 SendMessage",
            w01_send::W1.id,
            w01_send::variant(Proto::Json, p.conns),
        ),
        (
            "W2 send→receive→delete",
            w02_pipeline::WORKLOAD.id,
            w02_pipeline::variant(Proto::Json, p.conns),
        ),
        (
            "W3 batches of 10",
            w03_batch::WORKLOAD.id,
            w03_batch::VARIANT.to_owned(),
        ),
    ];
    cells
        .into_iter()
        .map(|(label, w, v)| Group {
            label,
            bars: SERVERS
                .iter()
                .filter_map(|&(k, _)| {
                    let stat = book.stat(w, &v, k.name(), "msgs_per_s")?;
                    Some((k, stat.median))
                })
                .collect(),
        })
        .collect()
}

/// Bar width as a fraction of a group's slot.
const BAR: f64 = 0.2;

fn bars(path: &Path, groups: &[Group]) -> Result<(), String> {
    let root = SVGBackend::new(path, (1100, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let all: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.1))
        .collect();
    let hi = all.iter().copied().fold(1.0, f64::max) * 4.0;
    let lo = (all.iter().copied().fold(f64::INFINITY, f64::min) / 4.0).max(1.0);
    let n = groups.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Throughput on the same machine and load generator (JSON, median of repeats)",
            (FONT, 22),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(90)
        .build_cartesian_2d(-0.5..n - 0.5, (lo..hi).log_scale())
        .map_err(err)?;
    let x_fmt = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            groups
                .get(i as usize)
                .map_or(String::new(), |g| g.label.to_owned())
        } else {
            String::new()
        }
    };
    let y_fmt = |v: &f64| num(*v);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .y_desc("messages/s (log scale)")
        .x_desc(
            "64 connections (moto and LocalStack: 8, at most 1,000 messages); the calibration \
             server answers W1 only",
        )
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    for &(kind, color) in &SERVERS {
        let mut rects = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            // The bars present in a group sit side by side around its tick.
            let Some(slot) = g.bars.iter().position(|b| b.0 == kind) else {
                continue;
            };
            let x0 = gi as f64 - g.bars.len() as f64 * BAR / 2.0 + slot as f64 * BAR;
            rects.push((x0, g.bars[slot].1));
        }
        if rects.is_empty() {
            continue;
        }
        chart
            .draw_series(rects.iter().map(|&(x0, v)| {
                Rectangle::new([(x0 + 0.01, lo), (x0 + BAR - 0.01, v)], color.filled())
            }))
            .map_err(err)?
            .label(kind.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        chart
            .draw_series(rects.iter().map(|&(x0, v)| {
                Text::new(
                    num(v),
                    (x0 + BAR / 2.0, v * 1.25),
                    (FONT, 12)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
            }))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Metrics;
    use crate::harness::{T_CAL, T_SELF};

    #[test]
    fn ticks() {
        assert_eq!(tick(16.0, false), "16");
        assert_eq!(tick(100_000.0, false), "100k");
        assert_eq!(tick(1_048_576.0, true), "1.05 MB");
        assert_eq!(tick(1000.0, true), "1 kB");
        assert_eq!(tick(0.5, false), "0.500");
    }

    #[test]
    fn decades_decide_the_axis() {
        assert!(spans_decades(&[100.0, 1000.0]));
        assert!(!spans_decades(&[6.0, 8.0, 50.0]));
        let r = log_range(&[16.0], 1.5);
        assert!((r.start - 8.0).abs() < 1e-9 && (r.end - 32.0).abs() < 1e-9);
    }

    #[test]
    fn comparison_reads_every_server_that_ran() {
        let p = Params::full();
        let mut b = Book::default();
        let v = w01_send::variant(Proto::Json, p.conns);
        for (t, x) in [(T_SELF, 80_000.0), (T_CAL, 100_000.0), ("moto", 100.0)] {
            let mut m = Metrics::new();
            m.insert("msgs_per_s".into(), x);
            b.add(w01_send::W1.id, &v, t, 0, m);
        }
        let g = comparison(&b, &p);
        assert_eq!(g.len(), 3);
        let kinds: Vec<Kind> = g[0].bars.iter().map(|b| b.0).collect();
        assert_eq!(kinds, [Kind::Localsqs, Kind::Calibration, Kind::Moto]);
        assert!(g[1].bars.is_empty());
        let dir = std::env::temp_dir().join(format!("lsqs-charts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("c.svg");
        bars(&svg, &g).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            text.contains("W1 SendMessage") && text.contains("moto"),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
