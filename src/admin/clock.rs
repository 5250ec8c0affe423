//! Admin layer: the clock users can move (`/_localsqs/clock`), and the reset
//! (`/_localsqs/reset`) that puts the whole server back in its starting state.

use serde_json::json;

use super::state::{Admin, AdminError, Answer, Req, ok_json};

/// `GET /_localsqs/clock`: the server's time, offset and whether it is frozen.
pub fn show(admin: &Admin, _req: &Req<'_>) -> Answer {
    Ok(ok_json(&json!(admin.clock.state())))
}

/// A change of the clock, as `POST /_localsqs/clock` takes it.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockChange {
    /// Move forward by this many seconds (fractions allowed).
    advance_seconds: Option<f64>,
    /// Stop (`true`) or restart (`false`) time.
    freeze: Option<bool>,
    /// Return to real time.
    #[serde(default)]
    reset: bool,
}

/// `POST /_localsqs/clock`: advance, freeze, resume or reset the clock, then wake parked long
/// polls and move tasks so they look at the new time.
pub fn set(admin: &Admin, req: &Req<'_>) -> Answer {
    let change: ClockChange = serde_json::from_slice(req.wire.body)
        .map_err(|e| AdminError::bad_request(format!("not a clock change: {e}")))?;
    let advance_ms = match change.advance_seconds {
        None => None,
        Some(s) if (0.0..=1e12).contains(&s) => {
            // Rounded to the millisecond the clock counts in; the range check bounds the cast.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Some((s * 1000.0).round() as u64)
        }
        Some(_) => {
            return Err(AdminError::bad_request(
                "advance_seconds must be a number of seconds >= 0: the clock never moves backwards",
            ));
        }
    };
    let clock = &admin.clock;
    // Checked before anything changes, so a refused request leaves the clock as it was.
    if let Some(ms) = advance_ms {
        clock
            .check_advance(ms, change.reset)
            .map_err(|e| AdminError::bad_request(format!("advance_seconds refused: {e}")))?;
    }
    if change.reset {
        clock.reset();
    }
    match change.freeze {
        Some(true) => clock.freeze(),
        Some(false) => clock.resume(),
        None => {}
    }
    if let Some(ms) = advance_ms {
        clock
            .advance_ms(ms)
            .map_err(|e| AdminError::bad_request(format!("advance_seconds refused: {e}")))?;
    }
    admin.engine.wake_all();
    Ok(ok_json(&json!(clock.state())))
}

/// `POST /_localsqs/reset`: drops every queue and message, then restores the starting state:
/// the declared queues, fault rules, clock and push targets.
pub async fn reset(admin: &Admin, _req: &Req<'_>) -> Answer {
    admin.engine.reset().await.map_err(|e| AdminError {
        status: e.code.spec().status,
        message: e.message.into_owned(),
    })?;
    admin
        .startup
        .restore(&admin.engine, &admin.faults, &admin.clock, &admin.push)
        .await
        .map_err(AdminError::internal)?;
    Ok(ok_json(&json!({ "reset": true })))
}
