//! Tools layer: fault rules as a front-door [`Hook`]: before a command runs they may delay it,
//! answer an error or an empty receive instead, and afterwards hand received messages out again
//! and forget deleted ones.

use std::time::Duration;

use super::active::Faults;
use crate::command::hooks::{Before, Call, Hook};
use crate::command::{Command, ReceiveMessageResult, Reply};

impl Hook for Faults {
    fn wants_calls(&self) -> bool {
        self.any()
    }

    fn before<'a>(&'a self, call: &Call<'_>) -> Before<'a> {
        let d = self.decide(call.action, call.command);
        let delay = d.latency.filter(|l| *l > Duration::ZERO);
        if let Some(err) = d.error {
            return Before {
                delay,
                answer: Some(Err(err)),
                after: None,
            };
        }
        if d.empty_receive {
            return Before {
                delay,
                answer: Some(Ok(Reply::ReceiveMessage(ReceiveMessageResult::default()))),
                after: None,
            };
        }
        // What the after-step needs, taken now: the engine consumes the command.
        let receive = match call.command {
            Command::ReceiveMessage(r) => call.queue.map(|q| {
                let max = usize::try_from(r.max_number_of_messages.unwrap_or(1)).unwrap_or(1);
                (q.to_owned(), max)
            }),
            _ => None,
        };
        let deleted: Vec<String> = match call.command {
            Command::DeleteMessage(c) => vec![c.receipt_handle.clone()],
            Command::DeleteMessageBatch(c) => {
                c.entries.iter().map(|e| e.receipt_handle.clone()).collect()
            }
            _ => Vec::new(),
        };
        Before {
            delay,
            answer: None,
            after: Some(Box::new(move |result| {
                if let (Ok(Reply::ReceiveMessage(r)), Some((queue, max))) = (result, &receive) {
                    self.after_receive(queue, *max, &mut r.messages);
                }
                for h in &deleted {
                    self.deleted(h);
                }
            })),
        }
    }
}
