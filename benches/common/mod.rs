//! What the benches share: reading back the medians criterion just wrote, and printing them
//! with ratios measured in the same run.

/// The median (ns) criterion recorded for `function` of `group` in this run, if it ran.
pub fn median(group: &str, function: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| format!("{}/target", env!("CARGO_MANIFEST_DIR")));
    let path = format!(
        "{dir}/criterion/{}/{function}/new/estimates.json",
        group.replace('/', "_")
    );
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["median"]["point_estimate"].as_f64()
}

/// A median in milliseconds, or `-`.
pub fn ms(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{:.3}", v / 1e6))
}

/// `a / b` to two places, or `-`.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", a / b),
        _ => "-".to_string(),
    }
}
