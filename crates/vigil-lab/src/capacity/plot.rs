//! Plots of a sweep as SVG (drop % and CPU % against the offered rate, one
//! line per engine), drawn directly: a chart this simple needs no plotting
//! library and no fonts, and the SVG opens in any browser and renders on
//! code hosting sites. The HTML report puts the plots and the table in one
//! self-contained file.

use super::report::{self, Step};
use std::fmt::Write as _;

const W: f64 = 640.0;
const H: f64 = 400.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 55.0;
const COLOURS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

/// A line chart of `value` against the offered rate, one line per engine.
pub fn svg(steps: &[Step], title: &str, y_label: &str, value: fn(&Step) -> f64) -> String {
    let mut engines: Vec<&str> = steps.iter().map(|s| s.engine.as_str()).collect();
    engines.dedup();
    let x_max = nice(steps.iter().map(|s| s.offered_mbps).fold(0.0, f64::max));
    let y_max = nice(steps.iter().map(value).fold(0.0, f64::max).max(1.0));
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let px = |x: f64| LEFT + x / x_max * pw;
    let py = |y: f64| TOP + ph - y / y_max * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#, W / 2.0, esc(title));
    for i in 0..=5 {
        let (xv, yv) = (x_max * i as f64 / 5.0, y_max * i as f64 / 5.0);
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{TOP}" x2="{x}" y2="{b}" stroke="#ddd"/><text x="{x}" y="{t}" text-anchor="middle">{xv}</text>"##,
            x = px(xv),
            b = TOP + ph,
            t = TOP + ph + 16.0,
            xv = fmt_num(xv)
        );
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y}" x2="{r}" y2="{y}" stroke="#ddd"/><text x="{t}" y="{ty}" text-anchor="end">{yv}</text>"##,
            y = py(yv),
            r = LEFT + pw,
            t = LEFT - 6.0,
            ty = py(yv) + 4.0,
            yv = fmt_num(yv)
        );
    }
    let _ = writeln!(s, r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">offered rate (Mbit/s)</text>"#,
        LEFT + pw / 2.0,
        H - 12.0
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{y}" text-anchor="middle" transform="rotate(-90 16 {y})">{}</text>"#,
        esc(y_label),
        y = TOP + ph / 2.0
    );
    for (i, e) in engines.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let pts: Vec<String> = steps
            .iter()
            .filter(|st| st.engine == *e)
            .map(|st| format!("{:.1},{:.1}", px(st.offered_mbps), py(value(st))))
            .collect();
        let _ = writeln!(s, r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#, pts.join(" "));
        for p in &pts {
            let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(s, r#"<circle cx="{x}" cy="{y}" r="3" fill="{c}"/>"#);
        }
        let ly = TOP + 16.0 + 16.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{a}" y1="{ly}" x2="{b}" y2="{ly}" stroke="{c}" stroke-width="2"/><text x="{t}" y="{ty}">{}</text>"#,
            esc(e),
            a = LEFT + 10.0,
            b = LEFT + 30.0,
            t = LEFT + 36.0,
            ty = ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The drop and CPU plots.
pub fn drop_svg(steps: &[Step]) -> String {
    svg(steps, "Frames lost against offered rate", "dropped (% of sent)", Step::drop_percent)
}

pub fn cpu_svg(steps: &[Step]) -> String {
    svg(steps, "Engine CPU against offered rate", "CPU (% of one core)", |s| s.cpu_percent)
}

/// One HTML file with both plots, the zero-drop rates and the table.
pub fn html(steps: &[Step], about: &str) -> String {
    let mut s = String::from("<!doctype html><meta charset=\"utf-8\"><title>vigil capacity</title>\n<body style=\"font-family:sans-serif;max-width:1000px;margin:auto\">\n<h1>vigil bench capacity</h1>\n");
    let _ = writeln!(s, "<p>{}</p><ul>", esc(about));
    for (e, r) in report::zero_drop(steps) {
        let rate = r.map_or("none of the rates tried".to_string(), |r| format!("{r:.1} Mbit/s"));
        let _ = writeln!(s, "<li>{}: highest rate with no frame lost: {}</li>", esc(&e), rate);
    }
    s.push_str("</ul>\n");
    s.push_str(&drop_svg(steps));
    s.push_str(&cpu_svg(steps));
    let _ = writeln!(s, "<pre>{}</pre></body>", esc(&report::text(steps)));
    s
}

/// A round upper bound for an axis.
fn nice(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if v <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

fn fmt_num(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_engine_and_escaped_labels() {
        let st = |e: &str, r: f64| Step { engine: e.into(), offered_mbps: r, sent_packets: 10, ..Step::default() };
        let steps = vec![st("vigil", 100.0), st("vigil", 300.0), st("a<b", 100.0)];
        let svg = drop_svg(&steps);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a&lt;b"));
        assert_eq!(nice(1234.0), 2000.0);
        assert!(html(&steps, "t").contains("<svg"));
    }
}
