//! Tools layer, SNS: the server's envelope signer (docs/sns.md §7.7): RSA PKCS#1 v1.5 over the
//! string AWS documents, SHA-1 for SignatureVersion 1 and SHA-256 for 2, base64.
//!
//! The key pair is **committed, public and not secret** (`signing-key.pem`, 2048 bits like
//! AWS's, with its self-signed certificate `signing-cert.pem`, valid for 100 years): generating
//! an RSA key at every start took seconds in debug builds, and a fixed key lets a test suite
//! pin the certificate. Signatures prove nothing about who sent a message; they let consumers
//! that verify signatures run unchanged. The certificate is served at
//! [`SnsSigner::cert_path`], `/SimpleNotificationService-<MD5 of the PEM>.pem`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use md5::{Digest, Md5};
use rsa::RsaPrivateKey;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{SignatureEncoding, Signer as _};

use crate::command::checksum::hex;
use crate::command::sns::envelope::SnsSigner;

/// The test key (PKCS#8 PEM). Public on purpose: see the module documentation.
const KEY_PEM: &str = include_str!("signing-key.pem");
/// Its self-signed certificate.
const CERT_PEM: &str = include_str!("signing-cert.pem");

/// Signs envelopes with the committed test key.
pub struct Signer {
    v1: SigningKey<sha1::Sha1>,
    v2: SigningKey<sha2::Sha256>,
    cert_path: String,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("cert_path", &self.cert_path)
            .finish_non_exhaustive()
    }
}

impl Signer {
    /// Loads the committed key.
    pub fn new() -> Result<Self, String> {
        let key =
            RsaPrivateKey::from_pkcs8_pem(KEY_PEM).map_err(|e| format!("SNS signing key: {e}"))?;
        Ok(Self {
            v1: SigningKey::new(key.clone()),
            v2: SigningKey::new(key),
            cert_path: format!(
                "/SimpleNotificationService-{}.pem",
                hex(&Md5::digest(CERT_PEM.as_bytes()))
            ),
        })
    }
}

impl SnsSigner for Signer {
    fn sign(&self, version: u8, text: &[u8]) -> String {
        let sig = if version == 2 {
            self.v2.sign(text).to_vec()
        } else {
            self.v1.sign(text).to_vec()
        };
        STANDARD.encode(sig)
    }

    fn cert_path(&self) -> &str {
        &self.cert_path
    }

    fn cert_pem(&self) -> &str {
        CERT_PEM
    }
}

#[cfg(test)]
mod tests {
    use rsa::pkcs1v15::{Signature, VerifyingKey};
    use rsa::signature::Verifier;

    use super::*;

    #[test]
    fn signatures_verify_with_the_certificates_key() {
        let s = Signer::new().expect("the committed key loads");
        assert!(s.cert_path().starts_with("/SimpleNotificationService-"));
        assert_eq!(
            s.cert_path().len(),
            "/SimpleNotificationService-.pem".len() + 32
        );
        let key = RsaPrivateKey::from_pkcs8_pem(KEY_PEM)
            .unwrap()
            .to_public_key();
        for v in [1, 2] {
            let b64 = s.sign(v, b"Message\nhi\n");
            assert_eq!(b64.len(), 344);
            let sig = Signature::try_from(STANDARD.decode(b64).unwrap().as_slice()).unwrap();
            let ok = if v == 1 {
                VerifyingKey::<sha1::Sha1>::new(key.clone()).verify(b"Message\nhi\n", &sig)
            } else {
                VerifyingKey::<sha2::Sha256>::new(key.clone()).verify(b"Message\nhi\n", &sig)
            };
            assert!(ok.is_ok(), "version {v}");
        }
        assert!(s.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
    }
}
