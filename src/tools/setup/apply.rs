//! Tools layer: putting the server in the state a [`Setup`] declares. Each `[[queue]]` becomes
//! CreateQueue / SetQueueAttributes / TagQueue commands run through the engine, so a config file
//! gets exactly the validation an SDK caller gets; applying it twice changes nothing. Errors name
//! the queue and, through SQS's own message, the attribute.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::decl::{Setup, value_string};
use crate::command::{
    Command, CreateQueue, GetQueueAttributes, RedrivePolicy, Reply, RequestContext, Scope,
    SetQueueAttributes, TagQueue, is_account_id,
};
use crate::engine::Engine;
use crate::engine::StorageState;
use crate::tools::clock::ControlledClock;
use crate::tools::faults::Faults;
use crate::tools::push::PushTargets;

/// The queue's current attributes, or `None` when it does not exist.
async fn current(
    engine: &Engine,
    ctx: &RequestContext,
    url: &str,
) -> Option<BTreeMap<String, String>> {
    let reply = engine
        .execute(
            ctx,
            Command::GetQueueAttributes(GetQueueAttributes {
                queue_url: url.to_owned(),
                attribute_names: vec!["All".into()],
            }),
        )
        .await
        .ok()?;
    match reply {
        Reply::GetQueueAttributes(r) => Some(r.attributes.into_iter().collect()),
        _ => None,
    }
}

/// Sets attributes that differ; nothing at all when none do, so LastModifiedTimestamp stays.
async fn set(
    engine: &Engine,
    ctx: &RequestContext,
    url: &str,
    attributes: Vec<(String, String)>,
) -> Result<(), String> {
    if attributes.is_empty() {
        return Ok(());
    }
    let cmd = Command::SetQueueAttributes(SetQueueAttributes {
        queue_url: url.to_owned(),
        attributes,
    });
    engine
        .execute(ctx, cmd)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

impl Setup {
    /// Puts the server in its declared starting state: the declared queues (created or
    /// updated), exactly the declared fault rules, the declared clock and the declared push
    /// targets. Used at start and by `POST /_localsqs/reset` after the engine has dropped
    /// everything.
    pub async fn restore(
        &self,
        engine: &Engine,
        faults: &Faults,
        clock: &ControlledClock,
        push: &PushTargets,
    ) -> Result<(), String> {
        if let Err(e) = self.apply(engine).await {
            // On a full disk the server still starts (and a reset still empties it): it serves
            // what storage allows, and the declared queues that exist already.
            if matches!(
                engine.storage_state(),
                StorageState::Ready | StorageState::Recovering(_)
            ) {
                return Err(e);
            }
            tracing::warn!(error = %e, "declared queues not applied: storage refuses writes");
        }
        crate::tools::sns::setup::apply(engine, &self.topic).await?;
        faults.clear();
        for rule in &self.fault {
            faults
                .add(rule.clone())
                .map_err(|e| format!("fault rule: {e}"))?;
        }
        clock.reset();
        if self.clock.freeze {
            clock.freeze();
        }
        clock
            .advance_ms(self.clock.advance_seconds.saturating_mul(1000))
            .map_err(|e| {
                format!(
                    "[clock] advance_seconds = {}: {e}",
                    self.clock.advance_seconds
                )
            })?;
        engine.wake_all();
        push.restore(
            self.queue
                .iter()
                .flat_map(|q| q.push.iter().map(|p| (q.name.as_str(), p))),
        )
    }

    /// Creates or updates every declared queue. Runs in two passes so that dead-letter queues
    /// may be declared after the queues that use them.
    pub async fn apply(&self, engine: &Engine) -> Result<(), String> {
        let mut redrive = Vec::new();
        for q in &self.queue {
            let err = |e: String| format!("queue {}: {e}", q.name);
            if let Some(a) = q.account.as_deref().filter(|a| !is_account_id(a)) {
                return Err(err(format!("account {a:?} is not a 12-digit account id")));
            }
            // The queue's account and region: as declared, else the server's. Not what a
            // request signed for them would act in: under --regions any that ignores regions.
            let default = engine.default_scope();
            let scope = if q.account.is_none() && q.region.is_none() {
                default
            } else {
                Arc::new(Scope {
                    account: q.account.clone().unwrap_or_else(|| default.account.clone()),
                    region: q.region.clone().unwrap_or_else(|| default.region.clone()),
                })
            };
            let ctx = RequestContext::new("http://localhost", Arc::clone(&scope));
            let arn = |name: &str| scope.arn(name);
            let mut attributes = Vec::new();
            for (k, v) in &q.attributes {
                let v = value_string(v).map_err(|e| err(format!("attribute {k}: {e}")))?;
                if k == "RedrivePolicy" {
                    redrive.push((q.name.clone(), ctx.clone(), v));
                } else {
                    attributes.push((k.clone(), v));
                }
            }
            if q.name.ends_with(".fifo") && !q.attributes.contains_key("FifoQueue") {
                attributes.push(("FifoQueue".into(), "true".into()));
            }
            if let Some(a) = &q.redrive_allow {
                let mut policy = json!({ "redrivePermission": a.permission });
                if !a.source_queues.is_empty() {
                    policy["sourceQueueArns"] = a
                        .source_queues
                        .iter()
                        .map(|n| arn(n))
                        .collect::<Vec<_>>()
                        .into();
                }
                attributes.push(("RedriveAllowPolicy".into(), policy.to_string()));
            }
            if let Some(d) = &q.dead_letter {
                let policy = RedrivePolicy {
                    dead_letter_target_arn: arn(&d.queue),
                    max_receive_count: d.max_receive_count,
                };
                redrive.push((q.name.clone(), ctx.clone(), policy.to_json()));
            }
            let url = format!("/{}/{}", scope.account, q.name);
            match current(engine, &ctx, &url).await {
                Some(cur) => {
                    let changed: Vec<(String, String)> = attributes
                        .into_iter()
                        .filter(|(k, v)| k != "FifoQueue" && cur.get(k) != Some(v))
                        .collect();
                    set(engine, &ctx, &url, changed).await.map_err(err)?;
                }
                None => {
                    let cmd = Command::CreateQueue(CreateQueue {
                        queue_name: q.name.clone(),
                        attributes,
                        tags: Vec::new(),
                    });
                    engine
                        .execute(&ctx, cmd)
                        .await
                        .map_err(|e| err(e.to_string()))?;
                }
            }
            if !q.tags.is_empty() {
                let tags = q.tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                engine
                    .execute(
                        &ctx,
                        Command::TagQueue(TagQueue {
                            queue_url: url,
                            tags,
                        }),
                    )
                    .await
                    .map_err(|e| err(e.to_string()))?;
            }
        }
        for (name, ctx, policy) in redrive {
            let url = format!("/{}/{}", ctx.scope.account, name);
            let cur = current(engine, &ctx, &url).await.unwrap_or_default();
            let changed: Vec<(String, String)> = (cur.get("RedrivePolicy") != Some(&policy))
                .then(|| ("RedrivePolicy".to_owned(), policy))
                .into_iter()
                .collect();
            set(engine, &ctx, &url, changed)
                .await
                .map_err(|e| format!("queue {name}: {e}"))?;
        }
        Ok(())
    }
}
