//! Long polls in the background: a ReceiveMessage on its own task, shown to be still parked by a
//! bounded wait while the injected clock stands still, and its answer awaited within the hang
//! guard. Nothing here asserts how long anything took.

use std::time::Duration;

use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::SdkError;
use aws_sdk_sqs::operation::receive_message::builders::ReceiveMessageFluentBuilder;
use aws_sdk_sqs::operation::receive_message::{ReceiveMessageError, ReceiveMessageOutput};
use aws_sdk_sqs::types::Message;
use tokio::task::JoinHandle;

use super::{HANG_GUARD, TestServer, only};

/// How long a parked poll is given to prove that it is still waiting. A correct server never
/// answers within it while its clock stands still, so this cannot cause a false failure.
const STILL_WAITING: Duration = Duration::from_millis(200);

type Answer = Result<ReceiveMessageOutput, SdkError<ReceiveMessageError, HttpResponse>>;

/// A ReceiveMessage running in the background.
pub struct LongPoll(JoinHandle<Answer>);

impl TestServer {
    /// A long poll of `wait` seconds on `url` (one message, the queue's visibility timeout).
    pub fn long_poll(&self, url: &str, wait: i32) -> LongPoll {
        LongPoll::spawn(
            self.client
                .receive_message()
                .queue_url(url)
                .wait_time_seconds(wait),
        )
    }
}

impl LongPoll {
    /// Sends `request` on a task of its own.
    pub fn spawn(request: ReceiveMessageFluentBuilder) -> Self {
        Self(tokio::spawn(request.send()))
    }

    /// Asserts that the poll has not answered within [`STILL_WAITING`].
    pub async fn assert_parked(&mut self, what: &str) {
        assert!(
            tokio::time::timeout(STILL_WAITING, &mut self.0)
                .await
                .is_err(),
            "{what}: the poll should still be waiting"
        );
    }

    /// Whether the poll has answered.
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// The answer if it comes within `within`; otherwise the poll keeps waiting.
    pub async fn answer_within(&mut self, within: Duration) -> Option<ReceiveMessageOutput> {
        let joined = tokio::time::timeout(within, &mut self.0).await.ok()?;
        Some(Self::unwrap(joined, "the poll"))
    }

    /// The answer, waiting at most the hang guard; panics (naming `what`) when none comes or
    /// it is an error.
    pub async fn answer(self, what: &str) -> ReceiveMessageOutput {
        let joined = tokio::time::timeout(HANG_GUARD, self.0)
            .await
            .unwrap_or_else(|_| panic!("{what}: the poll was not woken"));
        Self::unwrap(joined, what)
    }

    /// The one message of the answer.
    pub async fn answer_message(self, what: &str) -> Message {
        only(self.answer(what).await.messages.unwrap_or_default(), what)
    }

    /// The body of the one message of the answer.
    pub async fn answer_body(self, what: &str) -> String {
        let m = self.answer_message(what).await;
        m.body().expect("Body").to_owned()
    }

    fn unwrap(joined: Result<Answer, tokio::task::JoinError>, what: &str) -> ReceiveMessageOutput {
        joined
            .expect("the poll's task")
            .unwrap_or_else(|e| panic!("{what}: ReceiveMessage failed: {e:?}"))
    }
}
