//! Command layer: the extension points around running a command. The front door (`http`) calls
//! every [`Hook`] it was given, knowing each only as this trait; the emulator's extras (fault
//! injection, metrics, in `tools`) implement it. Neither side names the other.
//!
//! Imports only the command types and `error`.

use std::time::Duration;

use super::{Action, Command, Reply};
use crate::error::{ErrorCode, SqsResult};

/// A step to run on a command's result once the engine has answered.
pub type AfterStep<'a> = Box<dyn FnOnce(&mut SqsResult<Reply>) + Send + 'a>;

/// A decoded SQS request, as hooks see it before it runs.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The action named.
    pub action: Action,
    /// The command decoded.
    pub command: &'a Command,
    /// The name of the queue it addresses ([`Command::queue_name`]), when it addresses one.
    pub queue: Option<&'a str>,
}

/// What a hook decides before a command runs. The default runs it unchanged.
#[derive(Default)]
pub struct Before<'a> {
    /// Wait this long first.
    pub delay: Option<Duration>,
    /// Answer this instead of running the command.
    pub answer: Option<SqsResult<Reply>>,
    /// Change the result once the command has run (not called when `answer` is set).
    pub after: Option<AfterStep<'a>>,
}

impl std::fmt::Debug for Before<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Before")
            .field("delay", &self.delay)
            .field("answer", &self.answer.as_ref().map(|r| r.as_ref().err()))
            .field("after", &self.after.is_some())
            .finish()
    }
}

/// One answered request, as hooks see it afterwards.
#[derive(Debug, Clone, Copy)]
pub struct Finished<'a> {
    /// The SQS action answered, when the request named a known one.
    pub action: Option<Action>,
    /// The queue addressed, when the front door knows it.
    pub queue: Option<&'a str>,
    /// The error answered, if the request failed.
    pub error: Option<ErrorCode>,
    /// The HTTP status sent.
    pub status: u16,
    /// Time from the request's arrival to its answer.
    pub elapsed: Duration,
}

/// An extension of the front door. Both methods default to doing nothing.
pub trait Hook: Send + Sync {
    /// Whether [`Hook::before`] may do anything right now: when no hook wants a call, the
    /// front door skips building one (and naming the queue) entirely.
    fn wants_calls(&self) -> bool {
        false
    }

    /// Before `call` runs.
    fn before<'a>(&'a self, call: &Call<'_>) -> Before<'a> {
        let _ = call;
        Before::default()
    }

    /// After a request has been answered, whatever it was (an SQS action or an admin route).
    fn finished(&self, done: &Finished<'_>) {
        let _ = done;
    }
}

/// Runs `hooks`' [`Hook::before`] in order and folds their decisions into one: delays add up,
/// the first answer wins, and every after-step runs in order.
#[must_use]
pub fn before_all<'a>(hooks: &'a [std::sync::Arc<dyn Hook>], call: &Call<'_>) -> Before<'a> {
    let mut out = Before::default();
    let mut steps: Vec<AfterStep<'a>> = Vec::new();
    for h in hooks.iter().filter(|h| h.wants_calls()) {
        let b = h.before(call);
        if let Some(d) = b.delay {
            out.delay = Some(out.delay.unwrap_or_default() + d);
        }
        if out.answer.is_none() {
            out.answer = b.answer;
        }
        steps.extend(b.after);
    }
    if !steps.is_empty() {
        out.after = Some(Box::new(move |result: &mut SqsResult<Reply>| {
            for step in steps {
                step(result);
            }
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::command::{ListQueues, ListQueuesResult};
    use crate::error::SqsError;

    struct Slow(u64);
    impl Hook for Slow {
        fn wants_calls(&self) -> bool {
            true
        }
        fn before<'a>(&'a self, _: &Call<'_>) -> Before<'a> {
            Before {
                delay: Some(Duration::from_millis(self.0)),
                ..Before::default()
            }
        }
    }

    struct Fail(ErrorCode);
    impl Hook for Fail {
        fn wants_calls(&self) -> bool {
            true
        }
        fn before<'a>(&'a self, _: &Call<'_>) -> Before<'a> {
            Before {
                answer: Some(Err(SqsError::new(self.0, ""))),
                ..Before::default()
            }
        }
    }

    struct Count(AtomicUsize);
    impl Hook for Count {
        fn wants_calls(&self) -> bool {
            true
        }
        fn before<'a>(&'a self, _: &Call<'_>) -> Before<'a> {
            Before {
                after: Some(Box::new(|_| {
                    self.0.fetch_add(1, Ordering::Relaxed);
                })),
                ..Before::default()
            }
        }
    }

    struct Idle;
    impl Hook for Idle {}

    #[test]
    fn decisions_fold_in_order() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let hooks: Vec<Arc<dyn Hook>> = vec![
            Arc::new(Slow(5)),
            Arc::new(Fail(ErrorCode::OverLimit)),
            Arc::new(Fail(ErrorCode::InternalError)),
            Arc::new(Slow(7)),
            count.clone(),
            count.clone(),
            Arc::new(Idle),
        ];
        let cmd = Command::ListQueues(ListQueues::default());
        let call = Call {
            action: Action::ListQueues,
            command: &cmd,
            queue: None,
        };
        let b = before_all(&hooks, &call);
        assert_eq!(b.delay, Some(Duration::from_millis(12)));
        let code = b
            .answer
            .as_ref()
            .and_then(|a| a.as_ref().err())
            .map(|e| e.code);
        assert_eq!(code, Some(ErrorCode::OverLimit), "the first answer wins");
        let mut result = Ok(Reply::ListQueues(ListQueuesResult::default()));
        (b.after.expect("two after-steps"))(&mut result);
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn hooks_that_want_nothing_cost_nothing() {
        let hooks: Vec<Arc<dyn Hook>> = vec![Arc::new(Idle)];
        let cmd = Command::ListQueues(ListQueues::default());
        let call = Call {
            action: Action::ListQueues,
            command: &cmd,
            queue: None,
        };
        let b = before_all(&hooks, &call);
        assert!(b.delay.is_none() && b.answer.is_none() && b.after.is_none());
    }
}
