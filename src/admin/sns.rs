//! Admin layer, SNS: the endpoints SNS adds: the certificate envelopes are signed with, served
//! unauthenticated at their `SigningCertURL` (docs/sns.md §7.7).

use super::state::{Admin, AdminError, Answer, Req};
use crate::wire::WireResponse;

/// `GET /SimpleNotificationService-<hex>.pem`: the signing certificate, PEM.
pub fn certificate(admin: &Admin, req: &Req<'_>) -> Answer {
    let signer = admin
        .engine
        .config()
        .sns_signer
        .as_ref()
        .filter(|s| s.cert_path() == req.wire.path)
        .ok_or_else(|| AdminError::not_found("no such certificate"))?;
    Ok(WireResponse::new(
        200,
        "application/x-pem-file",
        signer.cert_pem().to_owned(),
    ))
}
