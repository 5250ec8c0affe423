//! Engine layer, top: queue resolution: from a `QueueUrl` (or a name, or an ARN) and the
//! request's scope to the queue it names, under [`Regions`]; and the `QueueDoesNotExist` of a
//! miss, which says where queues of that name are when there are some.

use super::handle::Engine;
use super::model::address::{self, UrlParts};
use super::model::queue::Queue;
use super::model::registry::Registry;
use super::options::Regions;
use crate::command::Scope;
use crate::error::{SqsError, SqsResult};

impl Engine {
    /// Resolves a `QueueUrl` (a full URL, a path or a bare name, §2.3) to a queue id: the
    /// account and region the URL names, else those of `scope` (the request's).
    pub(super) fn resolve(&self, reg: &Registry, scope: &Scope, url: &str) -> SqsResult<u64> {
        let parts = address::parse_url(url).ok_or_else(SqsError::queue_does_not_exist)?;
        self.resolve_parts(reg, scope, parts)
    }

    /// [`Engine::resolve`] for a `QueueUrl` parsed already.
    pub(super) fn resolve_parts(
        &self,
        reg: &Registry,
        scope: &Scope,
        parts: UrlParts<'_>,
    ) -> SqsResult<u64> {
        let account = parts.account.unwrap_or(&scope.account);
        let region = parts.region.unwrap_or(&scope.region);
        self.lookup(reg, account, region, parts.name)
    }

    /// The id of queue `name` in this account and region. With [`Regions::Any`] a queue of
    /// that account and name in another region will do: the configured region's, else the
    /// first other region's in name order. A miss explains itself when a queue of that name
    /// exists elsewhere (AWS's code, status and text, then localsqs's words).
    pub(super) fn lookup(
        &self,
        reg: &Registry,
        account: &str,
        region: &str,
        name: &str,
    ) -> SqsResult<u64> {
        if let Some(id) = reg.id_in(account, region, name) {
            return Ok(id);
        }
        let any = self.inner.cfg.regions == Regions::Any;
        if any {
            let home = &self.inner.default_scope.region;
            if let Some(id) = reg.id_in(account, home, name) {
                return Ok(id);
            }
            if let Some((_, _, id)) = reg
                .holders(name)
                .filter(|(a, _, _)| *a == account)
                .min_by_key(|(_, r, _)| *r)
            {
                return Ok(id);
            }
        }
        Err(self.missing(reg, account, region, name, any))
    }

    /// `QueueDoesNotExist`, saying where queues of that name are when there are some.
    fn missing(
        &self,
        reg: &Registry,
        account: &str,
        region: &str,
        name: &str,
        any: bool,
    ) -> SqsError {
        const SHOWN: usize = 3;
        let mut elsewhere: Vec<(&str, &str)> = reg.holders(name).map(|(a, r, _)| (a, r)).collect();
        if elsewhere.is_empty() {
            return SqsError::queue_does_not_exist();
        }
        elsewhere.sort_unstable();
        let same_account = elsewhere.iter().any(|(a, _)| *a == account);
        let mut places: Vec<String> = elsewhere
            .iter()
            .take(SHOWN)
            .map(|(a, r)| format!("account {a}, region {r}"))
            .collect();
        if elsewhere.len() > SHOWN {
            places.push(format!("{} more", elsewhere.len() - SHOWN));
        }
        let acts_in = if any {
            format!("account {account} (any region: --regions any)")
        } else {
            format!("account {account}, region {region}")
        };
        let advice = if same_account && !any {
            "Sign requests for that region (or use a queue URL that names it), or start localsqs with --regions any to find queues by account and name in any region, as ElasticMQ does."
        } else {
            "Use the queue URL localsqs gave for that queue (it names the account), or sign with an access key id that is that 12-digit account id."
        };
        SqsError::queue_does_not_exist_because(&format!(
            "(localsqs: a queue named {name} exists in {}; this request acts in {acts_in}. {advice})",
            places.join("; ")
        ))
    }

    /// The queue a `QueueUrl` names.
    pub(super) fn queue<'a>(
        &self,
        reg: &'a Registry,
        scope: &Scope,
        url: &str,
    ) -> SqsResult<&'a Queue> {
        let id = self.resolve(reg, scope, url)?;
        reg.get(id).ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The queue a `QueueUrl` names, for changing it under the lock.
    pub(super) fn queue_mut<'a>(
        &self,
        reg: &'a mut Registry,
        scope: &Scope,
        url: &str,
    ) -> SqsResult<&'a mut Queue> {
        let id = self.resolve(reg, scope, url)?;
        reg.get_mut(id).ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The id of the queue an ARN names (in the ARN's account and region).
    pub(super) fn queue_by_arn(&self, reg: &Registry, arn: &str) -> Option<u64> {
        let (scope, name) = address::parse_arn(arn)?;
        reg.id_of(&scope, name)
    }
}
