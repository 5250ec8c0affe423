//! Engine layer, ops: queue metadata: tags (docs/protocol.md §6.14) and the permission statements
//! of AddPermission and RemovePermission (§6.16).

use serde_json::{Map, Value, json};

use crate::command::attributes::MAX_POLICY_BYTES;
use crate::command::validate::{self, MAX_TAGS};
use crate::command::{
    AddPermission, ListQueueTags, ListQueueTagsResult, RemovePermission, Scope, TagQueue,
    UntagQueue,
};
use crate::engine::handle::Engine;
use crate::error::{ErrorCode, SqsError, SqsResult};

/// Most actions in one permission statement (§6.16).
const MAX_ACTIONS: usize = 7;
/// AWS's policy quotas (developer guide, "Amazon SQS policy quotas"): statements and principals
/// per policy. The byte quota is `attributes::MAX_POLICY_BYTES`.
const MAX_STATEMENTS: usize = 20;
const MAX_PRINCIPALS: usize = 50;
/// Action names AddPermission accepts [E: the SQS API reference's list].
const PERMISSION_ACTIONS: &[&str] = &[
    "*",
    "SendMessage",
    "ReceiveMessage",
    "DeleteMessage",
    "ChangeMessageVisibility",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "PurgeQueue",
];

impl Engine {
    pub(super) async fn tag_queue(&self, scope: &Scope, c: &TagQueue) -> SqsResult<()> {
        if c.tags.is_empty() {
            // [E] wording.
            return Err(SqsError::missing("Tags"));
        }
        validate::tags(&c.tags)?;
        let commit = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            let mut tags = q.tags().clone();
            tags.extend(c.tags.iter().cloned());
            if tags.len() > MAX_TAGS {
                // [E] wording (moto's).
                return Err(SqsError::invalid_value(format!(
                    "Too many tags added for queue {}.",
                    q.name()
                )));
            }
            *q.tags_mut() = tags;
            self.inner.store.submit(vec![q.put_op()])
        };
        self.commit(commit).await
    }

    pub(super) async fn untag_queue(&self, scope: &Scope, c: &UntagQueue) -> SqsResult<()> {
        if c.tag_keys.is_empty() {
            // [E] moto 5's code and text (no AWS capture).
            return Err(SqsError::invalid_value(
                "Tag keys must be between 1 and 128 characters in length.",
            ));
        }
        let commit = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            // Keys that do not exist are ignored (§6.14).
            for k in &c.tag_keys {
                q.tags_mut().remove(k);
            }
            self.inner.store.submit(vec![q.put_op()])
        };
        self.commit(commit).await
    }

    pub(super) fn list_queue_tags(
        &self,
        scope: &Scope,
        c: &ListQueueTags,
    ) -> SqsResult<ListQueueTagsResult> {
        let reg = self.lock();
        let q = self.queue(&reg, scope, &c.queue_url)?;
        Ok(ListQueueTagsResult {
            tags: q
                .tags()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }

    pub(super) async fn add_permission(&self, scope: &Scope, c: &AddPermission) -> SqsResult<()> {
        check_permission(c)?;
        let now = self.now();
        let commit = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            let arn = q.arn();
            let mut policy = q
                .attributes()
                .policy
                .as_deref()
                .and_then(|p| serde_json::from_str::<Map<String, Value>>(p).ok())
                .unwrap_or_else(|| {
                    let mut m = Map::new();
                    m.insert("Version".into(), json!("2008-10-17"));
                    m.insert("Id".into(), json!(format!("{arn}/SQSDefaultPolicy")));
                    m
                });
            let mut list: Vec<Value> = match policy.remove("Statement") {
                Some(Value::Array(a)) => a,
                Some(other) => vec![other],
                None => Vec::new(),
            };
            if list
                .iter()
                .any(|s| s.get("Sid").and_then(Value::as_str) == Some(&c.label))
            {
                return Err(SqsError::invalid_param(
                    &c.label,
                    "Label",
                    "Already exists.",
                ));
            }
            if list.len() >= MAX_STATEMENTS {
                return Err(over_limit(format!(
                    "{} Statements were found, maximum allowed is {MAX_STATEMENTS}.",
                    list.len() + 1
                )));
            }
            let principals: Vec<Value> = c
                .aws_account_ids
                .iter()
                .map(|a| json!(format!("arn:aws:iam::{a}:root")))
                .collect();
            let actions: Vec<Value> = c
                .actions
                .iter()
                .map(|a| json!(format!("SQS:{a}")))
                .collect();
            let one_or_many = |mut v: Vec<Value>| {
                if v.len() == 1 {
                    v.remove(0)
                } else {
                    Value::Array(v)
                }
            };
            list.push(json!({
                "Sid": c.label,
                "Effect": "Allow",
                "Principal": { "AWS": one_or_many(principals) },
                "Action": one_or_many(actions),
                "Resource": arn,
            }));
            policy.insert("Statement".into(), Value::Array(list));
            let text = Value::Object(policy).to_string();
            if text.len() > MAX_POLICY_BYTES {
                return Err(over_limit(format!(
                    "The policy would be {} bytes, maximum allowed is {MAX_POLICY_BYTES}.",
                    text.len()
                )));
            }
            q.set_policy(Some(text));
            q.touch(now);
            self.inner.store.submit(vec![q.put_op()])
        };
        self.commit(commit).await
    }

    pub(super) async fn remove_permission(
        &self,
        scope: &Scope,
        c: &RemovePermission,
    ) -> SqsResult<()> {
        let commit = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            let not_found = || SqsError::invalid_param(&c.label, "Label", "can't find label.");
            let mut policy = q
                .attributes()
                .policy
                .as_deref()
                .and_then(|p| serde_json::from_str::<Map<String, Value>>(p).ok())
                .ok_or_else(not_found)?;
            let list: Vec<Value> = match policy.get("Statement") {
                Some(Value::Array(a)) => a.clone(),
                Some(other) => vec![other.clone()],
                None => Vec::new(),
            };
            let before = list.len();
            let list: Vec<Value> = list
                .into_iter()
                .filter(|s| s.get("Sid").and_then(Value::as_str) != Some(&c.label))
                .collect();
            if list.len() == before {
                return Err(not_found());
            }
            if list.is_empty() {
                // Removing the last statement removes the Policy attribute (§6.16).
                q.set_policy(None);
            } else {
                policy.insert("Statement".into(), Value::Array(list));
                q.set_policy(Some(Value::Object(policy).to_string()));
            }
            self.inner.store.submit(vec![q.put_op()])
        };
        self.commit(commit).await
    }
}

/// AWS's OverLimit (403) with a text of ours.
fn over_limit(text: String) -> SqsError {
    SqsError::new(ErrorCode::OverLimit, text)
}

/// Validates an AddPermission request. [E] wordings except OverLimit's code and status.
fn check_permission(c: &AddPermission) -> SqsResult<()> {
    if !validate::short_name(&c.label) {
        return Err(SqsError::invalid_param(
            &c.label,
            "Label",
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.",
        ));
    }
    if c.actions.is_empty() {
        return Err(SqsError::missing("Actions"));
    }
    if c.aws_account_ids.is_empty() {
        // [E] moto 5's text and order (no AWS capture): the principal list is checked after
        // the actions, and an empty one cannot be verified (§6.16).
        return Err(SqsError::invalid_param(
            "[]",
            "PrincipalId",
            "Unable to verify.",
        ));
    }
    if c.aws_account_ids.len() > MAX_PRINCIPALS {
        return Err(over_limit(format!(
            "{} Principals were found, maximum allowed is {MAX_PRINCIPALS}.",
            c.aws_account_ids.len()
        )));
    }
    if c.actions.len() > MAX_ACTIONS {
        return Err(SqsError::new(
            ErrorCode::OverLimit,
            format!(
                "{} Actions were found, maximum allowed is {MAX_ACTIONS}.",
                c.actions.len()
            ),
        ));
    }
    if let Some(bad) = c
        .actions
        .iter()
        .find(|a| !PERMISSION_ACTIONS.contains(&a.as_str()))
    {
        // [E] moto 5's text for an SQS action only the owner may call (no AWS capture); a
        // name that is no SQS action at all keeps the WSDL wording.
        return Err(if crate::command::Action::from_name(bad).is_some() {
            SqsError::invalid_param(
                &format!("SQS:{bad}"),
                "ActionName",
                "Only the queue owner is allowed to invoke this action.",
            )
        } else {
            SqsError::invalid_param(
                bad,
                "ActionName",
                "Please refer to the appropriate WSDL for a list of valid actions.",
            )
        });
    }
    Ok(())
}
