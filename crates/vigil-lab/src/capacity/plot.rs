//! Plots of a sweep (drop % and CPU % against the offered rate, one line per
//! engine or setting), drawn with plotters as SVG and PNG from one chart
//! description. Text is laid out with DejaVu Sans compiled into the binary,
//! so a machine without fonts or fontconfig still gets labelled plots. The
//! HTML report puts the SVG plots and the table in one self-contained file.

use super::report::{self, Step};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write as _;
use std::sync::Once;

/// Plot size in pixels (both formats).
const SIZE: (u32, u32) = (640, 400);
/// The family name the chart asks for; DejaVu Sans is registered under it.
const FONT: &str = "sans-serif";
const COLOURS: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

/// Which quantity a plot shows.
#[derive(Debug, Clone, Copy)]
pub enum Plot {
    /// Frames lost, percent of frames sent.
    Drop,
    /// The engine's CPU, percent of one core.
    Cpu,
}

impl Plot {
    fn title(self) -> &'static str {
        match self {
            Plot::Drop => "Frames lost against offered rate",
            Plot::Cpu => "Engine CPU against offered rate",
        }
    }

    fn y_label(self) -> &'static str {
        match self {
            Plot::Drop => "dropped (% of sent)",
            Plot::Cpu => "CPU (% of one core)",
        }
    }

    fn value(self, s: &Step) -> f64 {
        match self {
            Plot::Drop => s.drop_percent(),
            Plot::Cpu => s.cpu_percent,
        }
    }
}

fn register_font() {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        // The bytes are a valid TrueType font compiled in: this cannot fail.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Draws the chart on any plotters backend.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, steps: &[Step], plot: Plot) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("plot: {e}");
    root.fill(&WHITE).map_err(err)?;
    let mut engines: Vec<&str> = steps.iter().map(|s| s.engine.as_str()).collect();
    engines.dedup();
    let x_max = nice(steps.iter().map(|s| s.offered_mbps).fold(0.0, f64::max));
    let y_max = nice(steps.iter().map(|s| plot.value(s)).fold(0.0, f64::max).max(1.0));
    let mut chart = ChartBuilder::on(root)
        .caption(plot.title(), (FONT, 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("offered rate (Mbit/s)")
        .y_desc(plot.y_label())
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .x_labels(6)
        .y_labels(6)
        .light_line_style(WHITE)
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .draw()
        .map_err(err)?;
    for (i, e) in engines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let pts: Vec<(f64, f64)> =
            steps.iter().filter(|st| st.engine == *e).map(|st| (st.offered_mbps, plot.value(st))).collect();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(2)))
            .map_err(err)?
            .label(*e)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled()))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// The plot as an SVG document.
pub fn svg(steps: &[Step], plot: Plot) -> Result<String, String> {
    register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(&root, steps, plot)?;
    }
    Ok(out)
}

/// The plot as a PNG file's bytes.
pub fn png(steps: &[Step], plot: Plot) -> Result<Vec<u8>, String> {
    register_font();
    let (w, h) = SIZE;
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
        draw(&root, steps, plot)?;
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| format!("png: {e}"))?;
    writer.write_image_data(&rgb).map_err(|e| format!("png: {e}"))?;
    writer.finish().map_err(|e| format!("png: {e}"))?;
    Ok(out)
}

/// One HTML file with both plots, the zero-drop rates and the table.
pub fn html(steps: &[Step], about: &str) -> Result<String, String> {
    let mut s = String::from("<!doctype html><meta charset=\"utf-8\"><title>vigil capacity</title>\n<body style=\"font-family:sans-serif;max-width:1000px;margin:auto\">\n<h1>vigil bench capacity</h1>\n");
    let _ = writeln!(s, "<p>{}</p><ul>", esc(about));
    for (e, r) in report::zero_drop(steps) {
        let rate = r.map_or("none of the rates tried".to_string(), |r| format!("{r:.1} Mbit/s"));
        let _ = writeln!(s, "<li>{}: highest rate with no frame lost: {}</li>", esc(&e), rate);
    }
    s.push_str("</ul>\n");
    s.push_str(&svg(steps, Plot::Drop)?);
    s.push_str(&svg(steps, Plot::Cpu)?);
    let _ = writeln!(s, "<pre>{}</pre></body>", esc(&report::text(steps)));
    Ok(s)
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

    fn steps() -> Vec<Step> {
        let st = |e: &str, r: f64, d: u64| Step {
            engine: e.into(),
            offered_mbps: r,
            sent_packets: 100,
            dropped: d,
            ..Step::default()
        };
        vec![st("vigil", 100.0, 0), st("vigil", 300.0, 7), st("a<b", 100.0, 1)]
    }

    #[test]
    fn one_line_per_engine_and_escaped_labels() {
        let svg = svg(&steps(), Plot::Drop).unwrap();
        // Each engine: its line and its legend sample, in its own colour.
        let series = |c: &str| svg.matches(&format!(r#"stroke="{c}" stroke-width="2""#)).count();
        assert_eq!((series("#1F77B4"), series("#D62728"), series("#2CA02C")), (2, 2, 0), "{svg}");
        assert!(svg.contains("a&lt;b"));
        assert!(svg.contains("offered rate (Mbit/s)"));
        assert_eq!(nice(1234.0), 2000.0);
        assert!(html(&steps(), "t").unwrap().contains("<svg"));
    }

    #[test]
    fn png_is_a_png_with_the_lines_drawn() {
        let bytes = png(&steps(), Plot::Drop).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), SIZE);
        let px = |c: RGBColor| buf.chunks(3).filter(|p| p == &[c.0, c.1, c.2]).count();
        // Both engines' colours are on the picture; most of it is white.
        assert!(px(COLOURS[0]) > 50 && px(COLOURS[1]) > 50);
        assert!(px(WHITE) > buf.len() / 3 / 2);
        // Text was rendered (dark anti-aliased pixels beyond the frame lines).
        assert!(buf.chunks(3).filter(|p| p[0] < 100 && p[0] == p[1] && p[1] == p[2]).count() > 500);
    }
}
