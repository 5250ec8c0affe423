//! Admin layer: LocalStack's status endpoints besides its health check, for suites and wait
//! scripts written against LocalStack: `GET /_localstack/init` and `/_localstack/init/<stage>`
//! (where the init hooks stand, in the shape of LocalStack's `InitScriptsResource`) and
//! `GET /_localstack/info` (the fields of LocalStack's `InfoResource`).

use std::time::{SystemTime, UNIX_EPOCH};

use md5::{Digest, Md5};
use serde_json::json;

use super::state::{Admin, AdminError, Answer, Req, ok_json};
use crate::tools::init::Stage;

/// `GET /_localstack/init`: `{"completed": {"BOOT": …}, "scripts": [{"stage", "name", "state"}]}`.
pub fn init(admin: &Admin, _req: &Req<'_>) -> Answer {
    Ok(ok_json(&admin.init.status()))
}

/// `GET /_localstack/init/<stage>`: `{"completed": bool, "scripts": [...]}`; 404 for a stage
/// LocalStack does not have.
pub fn init_stage(admin: &Admin, req: &Req<'_>) -> Answer {
    let name = req.wire.path.rsplit('/').next().unwrap_or("");
    let stage = Stage::from_name(name).ok_or_else(|| {
        AdminError::not_found(format!(
            "no such stage {name} (the stages are boot, start, ready and shutdown)"
        ))
    })?;
    Ok(ok_json(&admin.init.stage_status(stage)))
}

/// `GET /_localstack/info`: LocalStack's fields, with localsqs's version.
pub fn info(admin: &Admin, _req: &Req<'_>) -> Answer {
    let now = SystemTime::now();
    let uptime = now
        .duration_since(admin.started_at)
        .map_or(0, |d| d.as_secs());
    let in_container = ["/.dockerenv", "/run/.containerenv"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    Ok(ok_json(&json!({
        "version": concat!("localsqs-", env!("CARGO_PKG_VERSION")),
        "edition": "community",
        "is_license_activated": false,
        "session_id": admin.session_id,
        "machine_id": machine_id(&admin.session_id),
        "system": std::env::consts::OS,
        "is_docker": in_container,
        "server_time_utc": utc_seconds(now),
        "uptime": uptime,
    })))
}

/// As LocalStack derives it: `sys_` and 12 hex digits of a salted hash of `/etc/machine-id`,
/// else `gen_` and 12 generated ones.
fn machine_id(session_id: &str) -> String {
    match std::fs::read_to_string("/etc/machine-id") {
        Ok(id) if !id.trim().is_empty() => {
            let digest = Md5::digest(format!("ls{}", id.trim()).as_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            format!("sys_{}", &hex[..12])
        }
        _ => format!(
            "gen_{}",
            session_id
                .replace('-', "")
                .chars()
                .take(12)
                .collect::<String>()
        ),
    }
}

/// `YYYY-MM-DDTHH:MM:SS` in UTC (Python's `isoformat(timespec="seconds")` of a naive UTC time).
fn utc_seconds(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn utc_times_as_python_writes_them() {
        assert_eq!(utc_seconds(UNIX_EPOCH), "1970-01-01T00:00:00");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661); // 2000-02-29
        assert_eq!(utc_seconds(t), "2000-02-29T01:01:01");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(utc_seconds(t), "2024-12-31T23:59:59");
    }
}
