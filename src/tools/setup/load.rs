//! Tools layer: reading a `--config` file, as localsqs's TOML or as ElasticMQ's
//! `elasticmq.conf`.

use std::path::Path;

use super::decl::{Setup, parse};
use super::elasticmq;

/// Reads and parses a config file: localsqs's TOML, or ElasticMQ's `elasticmq.conf`.
pub fn load(path: &Path) -> Result<Setup, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("config file {}: {e}", path.display()))?;
    let parsed = if elasticmq::looks_like(path, &text) {
        elasticmq::read(&text)
    } else {
        parse(&text)
    };
    parsed.map_err(|e| format!("config file {}: {e}", path.display()))
}
