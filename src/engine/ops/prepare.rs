//! Engine layer, ops: the part of a send that needs no queue state, done before the engine lock.
//!
//! Checking a 1 MiB body's characters and hashing it cost about as much as everything else a
//! send does; under the lock that work serialised every sender (W7). So SendMessage and
//! SendMessageBatch first build a [`Prepared`] message per entry outside the lock: the body,
//! attribute and system attribute checks, the message size, and the MD5s. Inside the lock
//! `enqueue` runs only what needs the queue (FIFO rules, DelaySeconds for the queue type,
//! MaximumMessageSize, deduplication) and reports the precomputed check results at the same
//! point of its order as before, so a request with several faults gets the same error.

use crate::command::MessageToSend;
use crate::command::checksum::{md5, md5_of_map};
use crate::command::validate;
use crate::error::SqsResult;

/// A send request with everything computed that does not depend on the queue.
#[derive(Debug)]
pub(super) struct Prepared {
    /// The request.
    pub msg: MessageToSend,
    /// The body check (not empty, allowed characters).
    pub body_check: SqsResult<()>,
    /// The user attribute check, then the system attribute check (first failure).
    pub attribute_check: SqsResult<()>,
    /// Body plus attribute bytes, as MaximumMessageSize counts them.
    pub size: usize,
    /// MD5 of the body.
    pub md5_of_body: [u8; 16],
    /// MD5 of the user attributes (hex), absent when there are none.
    pub md5_of_attributes: Option<String>,
    /// MD5 of the system attributes (hex), absent when there are none.
    pub md5_of_system_attributes: Option<String>,
}

impl Prepared {
    /// Runs the queue-independent checks and checksums of one send.
    pub fn new(msg: MessageToSend) -> Self {
        let body_check = validate::body(&msg.message_body);
        let attribute_check = validate::attributes(&msg.message_attributes)
            .and_then(|()| validate::system_attributes(&msg.message_system_attributes));
        Self {
            size: validate::message_size(&msg.message_body, &msg.message_attributes),
            md5_of_body: md5(msg.message_body.as_bytes()),
            md5_of_attributes: md5_of_map(&msg.message_attributes),
            md5_of_system_attributes: md5_of_map(&msg.message_system_attributes),
            body_check,
            attribute_check,
            msg,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::MessageAttributeValue;
    use crate::error::ErrorCode;

    #[test]
    fn checks_and_checksums_are_precomputed() {
        let mut msg = MessageToSend {
            message_body: "msg".into(),
            ..MessageToSend::default()
        };
        msg.message_attributes
            .insert("Foo".into(), MessageAttributeValue::string("String", "Bar"));
        let p = Prepared::new(msg);
        assert!(p.body_check.is_ok() && p.attribute_check.is_ok());
        assert_eq!(p.size, 3 + 3 + 6 + 3);
        assert_eq!(p.md5_of_body, md5(b"msg"));
        assert_eq!(
            p.md5_of_attributes.as_deref(),
            Some("ae7155c6026991b6d54b11589678bf9c")
        );
        assert!(p.md5_of_system_attributes.is_none());

        let bad = Prepared::new(MessageToSend {
            message_body: "\u{1}".into(),
            ..MessageToSend::default()
        });
        let err = bad.body_check.expect_err("control character");
        assert_eq!(err.code, ErrorCode::InvalidMessageContents);
    }
}
