//! Admin layer: one match from a [`Route`] to its handler. Every handler has the same shape,
//! `fn(&Admin, &Req) -> Answer` (some `async`), and every failure the same `{"error"}` body;
//! console answers also carry the console's security headers.

use super::routes::Route;
use super::state::{Admin, Answer, Req};
use super::{clock, console, faults, health, localstack, peek, push, sns};
use crate::wire::{WireRequest, WireResponse};

impl Admin {
    /// Answers an admin request.
    pub async fn handle(
        &self,
        route: Route,
        wire: &WireRequest<'_>,
        accept_json: bool,
        authorized: bool,
        request_id: &str,
    ) -> WireResponse {
        let req = Req {
            wire,
            accept_json,
            authorized,
            request_id,
        };
        let answer: Answer = match route {
            Route::Health => health::health(self, &req),
            Route::LocalStackHealth => health::localstack_health(self, &req),
            Route::LocalStackInit => localstack::init(self, &req),
            Route::LocalStackInitStage => localstack::init_stage(self, &req),
            Route::LocalStackInfo => localstack::info(self, &req),
            Route::About => health::about(self, &req),
            Route::Metrics => health::metrics(self, &req),
            Route::Peek => peek::peek(self, &req),
            Route::Reset => clock::reset(self, &req).await,
            Route::ShowClock => clock::show(self, &req),
            Route::SetClock => clock::set(self, &req),
            Route::ListFaults => faults::list(self, &req),
            Route::AddFault => faults::add(self, &req),
            Route::ClearFaults => faults::clear(self, &req),
            Route::RemoveFault => faults::remove(self, &req),
            Route::ListPush => push::list(self, &req),
            Route::AddPush => push::add(self, &req).await,
            Route::ClearPush => push::clear(self, &req),
            Route::RemovePush => push::remove(self, &req),
            Route::Console => console::assets::asset(self, &req).await,
            Route::ConsoleHome => console::assets::home(self, &req),
            Route::ConsoleQueues => console::queues::queues(self, &req).await,
            Route::ConsoleMessages => console::messages::messages(self, &req).await,
            Route::ConsoleDeleteMessage => console::messages::delete(self, &req).await,
            Route::SnsCertificate => sns::certificate(self, &req),
            Route::ConsoleTopics => console::topics::topics(self, &req),
            Route::ConsoleBulk => console::bulk::bulk(self, &req).await,
        };
        let mut resp = answer.unwrap_or_else(super::state::AdminError::into_response);
        if route.is_console() {
            console::common::headers(&mut resp);
        }
        resp
    }
}
