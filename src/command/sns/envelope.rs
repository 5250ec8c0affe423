//! Command layer, SNS: what a subscriber receives (docs/sns.md §7): the JSON envelope of a
//! notification in AWS's exact layout, the strings SignatureVersion 1 and 2 sign, the Lambda
//! event, and the [`SnsSigner`] extension point that signs them. Pure functions; the engine
//! builds each delivery with them and the tools layer implements the signer.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use crate::command::MessageAttributes;

/// Signs envelopes (installed by the server; `tools/sns/signing.rs`).
pub trait SnsSigner: Send + Sync + std::fmt::Debug {
    /// The base64 RSA signature of `text` for SignatureVersion `version` (`1`: SHA1withRSA,
    /// `2`: SHA256withRSA).
    fn sign(&self, version: u8, text: &[u8]) -> String;
    /// The path the signing certificate is served at (`/SimpleNotificationService-<hex>.pem`).
    fn cert_path(&self) -> &str;
    /// The certificate, PEM.
    fn cert_pem(&self) -> &str;
}

/// `SenderId` of the messages SNS sends into queues (§7.4, [V] us-east-1).
pub const SNS_SENDER_ID: &str = "AIDAIT2UOQQY3AUEKVGXU";

/// An ISO-8601 UTC timestamp with milliseconds, `2023-11-14T22:13:20.000Z` (§2).
#[must_use]
pub fn timestamp(epoch_ms: u64) -> String {
    let secs = epoch_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        epoch_ms % 1000
    )
}

/// A JSON string literal, escaped as AWS writes envelopes (`"` `\` and control characters
/// escaped, `/` and non-ASCII text kept).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The signature fields of a standard topic's envelope.
#[derive(Debug, Clone)]
pub struct Signature {
    /// `1` or `2`.
    pub version: u8,
    /// Base64 signature.
    pub signature: String,
    /// Where the certificate is served.
    pub cert_url: String,
}

/// One published message, as every envelope of it says it.
#[derive(Debug, Clone)]
pub struct Notification<'a> {
    /// The SNS message id.
    pub message_id: &'a str,
    /// The topic.
    pub topic_arn: &'a str,
    /// The subject, when published with one.
    pub subject: Option<&'a str>,
    /// The message for this protocol.
    pub message: &'a str,
    /// [`timestamp`] of the publish.
    pub timestamp: &'a str,
    /// FIFO topics: the topic's sequence number (and then no signature).
    pub sequence_number: Option<&'a str>,
    /// Message attributes, when the envelope carries them.
    pub attributes: Option<&'a MessageAttributes>,
}

impl Notification<'_> {
    /// The string SignatureVersion 1 and 2 sign for a notification (§7.7).
    #[must_use]
    pub fn string_to_sign(&self) -> String {
        let mut s = String::with_capacity(self.message.len() + 200);
        let mut field = |k: &str, v: &str| {
            s.push_str(k);
            s.push('\n');
            s.push_str(v);
            s.push('\n');
        };
        field("Message", self.message);
        field("MessageId", self.message_id);
        if let Some(subject) = self.subject {
            field("Subject", subject);
        }
        field("Timestamp", self.timestamp);
        field("TopicArn", self.topic_arn);
        field("Type", "Notification");
        s
    }

    /// The envelope split around its UnsubscribeURL, which alone differs per subscription:
    /// the text before the URL's value and the text after it (§7.1, §7.2).
    #[must_use]
    pub fn parts(&self, signature: Option<&Signature>) -> (String, String) {
        let mut head = String::with_capacity(self.message.len() + 900);
        let mut line = |k: &str, v: &str| {
            let _ = writeln!(head, "  \"{k}\" : {},", quoted(v));
        };
        line("Type", "Notification");
        line("MessageId", self.message_id);
        if let Some(n) = self.sequence_number {
            line("SequenceNumber", n);
        }
        line("TopicArn", self.topic_arn);
        if let Some(s) = self.subject {
            line("Subject", s);
        }
        line("Message", self.message);
        line("Timestamp", self.timestamp);
        if let Some(sig) = signature.filter(|_| self.sequence_number.is_none()) {
            line("SignatureVersion", &sig.version.to_string());
            line("Signature", &sig.signature);
            line("SigningCertURL", &sig.cert_url);
        }
        let head = format!("{{\n{head}  \"UnsubscribeURL\" : \"");
        let mut tail = String::from("\"");
        if let Some(attrs) = self.attributes.filter(|a| !a.is_empty()) {
            tail.push_str(",\n  \"MessageAttributes\" : {\n");
            let lines: Vec<String> = attrs
                .iter()
                .map(|(k, v)| format!("    {} : {}", quoted(k), attribute_json(v)))
                .collect();
            tail.push_str(&lines.join(",\n"));
            tail.push_str("\n  }");
        }
        tail.push_str("\n}");
        (head, tail)
    }
}

/// `{"Type":"String","Value":"v"}`: an attribute as envelopes carry it (Binary as base64).
fn attribute_json(v: &crate::command::MessageAttributeValue) -> String {
    let value = match (&v.string_value, &v.binary_value) {
        (Some(s), _) => s.clone(),
        (None, Some(b)) => STANDARD.encode(b),
        (None, None) => String::new(),
    };
    format!(
        "{{\"Type\":{},\"Value\":{}}}",
        quoted(&v.data_type),
        quoted(&value)
    )
}

/// `<base>/?Action=Unsubscribe&SubscriptionArn=<arn>` (the ARN not percent-encoded, §2).
#[must_use]
pub fn unsubscribe_url(base_url: &str, subscription_arn: &str) -> String {
    format!("{base_url}/?Action=Unsubscribe&SubscriptionArn={subscription_arn}")
}

/// `<base>/?Action=ConfirmSubscription&TopicArn=<arn>&Token=<token>` (§2).
#[must_use]
pub fn subscribe_url(base_url: &str, topic_arn: &str, token: &str) -> String {
    format!("{base_url}/?Action=ConfirmSubscription&TopicArn={topic_arn}&Token={token}")
}

/// A `SubscriptionConfirmation` or `UnsubscribeConfirmation` (§7.2).
#[derive(Debug, Clone)]
pub struct Confirmation<'a> {
    /// `SubscriptionConfirmation` or `UnsubscribeConfirmation`.
    pub kind: &'a str,
    /// Its message id.
    pub message_id: &'a str,
    /// The token.
    pub token: &'a str,
    /// The topic.
    pub topic_arn: &'a str,
    /// The text AWS sends.
    pub message: &'a str,
    /// The URL that confirms.
    pub subscribe_url: &'a str,
    /// [`timestamp`].
    pub timestamp: &'a str,
}

impl Confirmation<'_> {
    /// The string signed (§7.7).
    #[must_use]
    pub fn string_to_sign(&self) -> String {
        let mut s = String::new();
        for (k, v) in [
            ("Message", self.message),
            ("MessageId", self.message_id),
            ("SubscribeURL", self.subscribe_url),
            ("Timestamp", self.timestamp),
            ("Token", self.token),
            ("TopicArn", self.topic_arn),
            ("Type", self.kind),
        ] {
            let _ = write!(s, "{k}\n{v}\n");
        }
        s
    }

    /// The envelope, field order of the developer guide's example.
    #[must_use]
    pub fn render(&self, sig: &Signature) -> String {
        let fields = [
            ("Type", self.kind.to_owned()),
            ("MessageId", self.message_id.to_owned()),
            ("Token", self.token.to_owned()),
            ("TopicArn", self.topic_arn.to_owned()),
            ("Message", self.message.to_owned()),
            ("SubscribeURL", self.subscribe_url.to_owned()),
            ("Timestamp", self.timestamp.to_owned()),
            ("SignatureVersion", sig.version.to_string()),
            ("Signature", sig.signature.clone()),
            ("SigningCertURL", sig.cert_url.clone()),
        ];
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("  \"{k}\" : {}", quoted(v)))
            .collect();
        format!("{{\n{}\n}}", body.join(",\n"))
    }
}

/// The event a Lambda subscription's function gets (§7.6): `Url`, not `URL`; `Subject` null when
/// absent; `SignatureVersion` `"1"`; attributes `{Type, Value}`.
#[must_use]
pub fn lambda_event(
    n: &Notification<'_>,
    sig: Option<&Signature>,
    subscription_arn: &str,
    unsubscribe_url: &str,
) -> Value {
    let mut attrs = Map::new();
    for (k, v) in n.attributes.into_iter().flatten() {
        let ty = if v.data_type.starts_with("Binary") {
            "Binary"
        } else {
            "String"
        };
        let value = match (&v.string_value, &v.binary_value) {
            (Some(s), _) => s.clone(),
            (None, Some(b)) => STANDARD.encode(b),
            _ => String::new(),
        };
        attrs.insert(k.clone(), json!({ "Type": ty, "Value": value }));
    }
    json!({ "Records": [{
        "EventSource": "aws:sns",
        "EventVersion": "1.0",
        "EventSubscriptionArn": subscription_arn,
        "Sns": {
            "Type": "Notification",
            "MessageId": n.message_id,
            "TopicArn": n.topic_arn,
            "Subject": n.subject,
            "Message": n.message,
            "Timestamp": n.timestamp,
            "SignatureVersion": "1",
            "Signature": sig.map_or("", |s| s.signature.as_str()),
            "SigningCertUrl": sig.map_or("", |s| s.cert_url.as_str()),
            "UnsubscribeUrl": unsubscribe_url,
            "MessageAttributes": attrs,
        }
    }]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::MessageAttributeValue;

    #[test]
    fn timestamps_have_milliseconds_and_z() {
        assert_eq!(timestamp(1_700_000_000_000), "2023-11-14T22:13:20.000Z");
        assert_eq!(timestamp(1_683_326_343_532), "2023-05-05T22:39:03.532Z");
        assert_eq!(timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn the_envelope_is_aws_layout_byte_for_byte() {
        let mut attrs = MessageAttributes::new();
        attrs.insert("count".into(), MessageAttributeValue::string("Number", "1"));
        attrs.insert(
            "b".into(),
            MessageAttributeValue::binary("Binary", &[2, 3, 4]),
        );
        let n = Notification {
            message_id: "m",
            topic_arn: "arn:aws:sns:us-east-1:000000000000:t",
            subject: Some("s"),
            message: "say \"hi\"\n/",
            timestamp: "2023-05-05T22:39:03.532Z",
            sequence_number: None,
            attributes: Some(&attrs),
        };
        let sig = Signature {
            version: 1,
            signature: "SIG".into(),
            cert_url: "http://h/c.pem".into(),
        };
        let (head, tail) = n.parts(Some(&sig));
        let body = format!("{head}http://h/?Action=Unsubscribe{tail}");
        assert_eq!(
            body,
            "{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"m\",\n  \"TopicArn\" : \"arn:aws:sns:us-east-1:000000000000:t\",\n  \"Subject\" : \"s\",\n  \"Message\" : \"say \\\"hi\\\"\\n/\",\n  \"Timestamp\" : \"2023-05-05T22:39:03.532Z\",\n  \"SignatureVersion\" : \"1\",\n  \"Signature\" : \"SIG\",\n  \"SigningCertURL\" : \"http://h/c.pem\",\n  \"UnsubscribeURL\" : \"http://h/?Action=Unsubscribe\",\n  \"MessageAttributes\" : {\n    \"b\" : {\"Type\":\"Binary\",\"Value\":\"AgME\"},\n    \"count\" : {\"Type\":\"Number\",\"Value\":\"1\"}\n  }\n}"
        );
        let v: Value = serde_json::from_str(&body).expect("valid JSON");
        assert_eq!(v["Message"], "say \"hi\"\n/");
        assert_eq!(
            n.string_to_sign(),
            "Message\nsay \"hi\"\n/\nMessageId\nm\nSubject\ns\nTimestamp\n2023-05-05T22:39:03.532Z\nTopicArn\narn:aws:sns:us-east-1:000000000000:t\nType\nNotification\n"
        );
        let fifo = Notification {
            sequence_number: Some("10000000000000001000"),
            attributes: None,
            subject: None,
            ..n
        };
        let (head, tail) = fifo.parts(Some(&sig));
        assert!(!head.contains("Signature"));
        assert!(head.contains("\"SequenceNumber\" : \"10000000000000001000\",\n  \"TopicArn\""));
        assert_eq!(tail, "\"\n}");
    }
}
