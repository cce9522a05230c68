//! stub
pub struct Bar { pub series: String, pub mean: f64, pub ci_low: f64, pub ci_high: f64 }
pub struct BarGroup { pub label: String, pub bars: Vec<Bar> }
pub fn bar_chart(title: &str, _unit: &str, _groups: &[BarGroup]) -> String { format!("<svg><title>{title}</title></svg>") }
pub fn percentile_chart(title: &str, _series: &[(String, Vec<(f64, f64)>)]) -> String { format!("<svg><title>{title}</title></svg>") }
