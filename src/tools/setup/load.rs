//! Tools layer: reading a `--config` file, as localsqs's TOML or as ElasticMQ's
//! `elasticmq.conf`. The format is told by the content, the file name only breaking a tie: a
//! TOML file called `queues.conf` is TOML, an ElasticMQ file called `config.toml` is ElasticMQ's.

use std::path::Path;

use super::decl::{Setup, parse};
use super::elasticmq;
use super::hocon;

/// Which format a config file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// localsqs's TOML (`[[queue]]`, `[[fault]]`, `[clock]`).
    Toml,
    /// ElasticMQ's HOCON (`queues { … }`, `aws { … }`).
    ElasticMq,
}

/// The format of `text`: TOML when it is TOML (unless all its tables are ElasticMQ's blocks,
/// as `aws.region = "x"` alone would be), ElasticMQ's when it is not TOML but reads as HOCON;
/// when it is neither, the one its name suggests (`.conf`, `.hocon`: ElasticMQ's), so that the
/// error shown is that format's.
#[must_use]
pub fn detect(path: &Path, text: &str) -> Format {
    match toml::from_str::<toml::Table>(text) {
        Ok(table) => {
            let all_elasticmq = !table.is_empty()
                && table
                    .keys()
                    .all(|k| elasticmq::TOP_LEVEL_KEYS.contains(&k.as_str()) || k == "include");
            if all_elasticmq {
                Format::ElasticMq
            } else {
                Format::Toml
            }
        }
        Err(_) if hocon::parse(text).is_ok() => Format::ElasticMq,
        Err(_) => {
            let named_hocon = path
                .extension()
                .is_some_and(|e| e == "conf" || e == "hocon");
            if named_hocon {
                Format::ElasticMq
            } else {
                Format::Toml
            }
        }
    }
}

/// Reads and parses a config file: localsqs's TOML, or ElasticMQ's `elasticmq.conf`.
pub fn load(path: &Path) -> Result<Setup, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("config file {}: {e}", path.display()))?;
    let parsed = match detect(path, &text) {
        Format::Toml => parse(&text).map_err(|e| format!("(read as localsqs's TOML) {e}")),
        Format::ElasticMq => elasticmq::read(&text)
            .map(|read| {
                for note in read.notes {
                    tracing::warn!(config = %path.display(), "{note}");
                }
                read.setup
            })
            .map_err(|e| format!("(read as ElasticMQ's HOCON) {e}")),
    };
    parsed.map_err(|e| format!("config file {} {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(name: &str, text: &str) -> Format {
        detect(Path::new(name), text)
    }

    #[test]
    fn the_content_decides_and_the_name_breaks_ties() {
        let toml = "[[queue]]\nname = \"orders\"\n";
        let hocon = "queues {\n  orders { }\n}\n";
        assert_eq!(fmt("queues.conf", toml), Format::Toml, "TOML named .conf");
        assert_eq!(fmt("localsqs.toml", toml), Format::Toml);
        assert_eq!(
            fmt("config.toml", hocon),
            Format::ElasticMq,
            "HOCON named .toml"
        );
        assert_eq!(fmt("elasticmq.conf", hocon), Format::ElasticMq);
        assert_eq!(
            fmt("x.conf", "aws.region = \"eu-west-1\"\n"),
            Format::ElasticMq,
            "TOML syntax, ElasticMQ's keys"
        );
        assert_eq!(fmt("x.conf", ""), Format::Toml, "empty: nothing to declare");
        // Broken in both: the name says which error to show.
        assert_eq!(fmt("x.conf", "queues {\n"), Format::ElasticMq);
        assert_eq!(fmt("x.toml", "[[queue]\n"), Format::Toml);
    }

    #[test]
    fn a_toml_file_named_conf_loads() {
        let dir = std::env::temp_dir().join(format!("localsqs-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("queues.conf");
        std::fs::write(&path, "[[queue]]\nname = \"orders\"\n").expect("write");
        let loaded = load(&path);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(loaded.expect("loads").queue[0].name, "orders");
    }
}
