// Every error the C ABI can report through this binding arrives as its own
// exception class, carrying the status and the library's detail text.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <typeinfo>
#include <vector>

using namespace natsio_test;
using natsio::MsgView;

namespace {

template <class Expected>
void expect_mapped(natsio::Status status) {
    std::exception_ptr error = natsio::make_error(status, "detail");
    try {
        std::rethrow_exception(error);
    } catch (const Expected& e) {
        EXPECT_EQ(typeid(e), typeid(Expected)) << "status " << status << " maps to a subclass";
        EXPECT_EQ(e.status(), status);
        EXPECT_EQ(e.detail(), "detail");
        EXPECT_NE(std::string(e.what()).find("detail"), std::string::npos);
    } catch (...) {
        ADD_FAILURE() << "status " << status << " maps to the wrong class";
    }
}

}  // namespace

TEST(Errors, EveryStatusMapsToItsClass) {
    expect_mapped<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT);
    expect_mapped<natsio::InvalidUtf8Error>(NATSIO_ERR_INVALID_UTF8);
    expect_mapped<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT);
    expect_mapped<natsio::BadSubjectError>(NATSIO_ERR_BAD_SUBJECT);
    expect_mapped<natsio::BadQueueNameError>(NATSIO_ERR_BAD_QUEUE_NAME);
    expect_mapped<natsio::BadHeadersError>(NATSIO_ERR_BAD_HEADERS);
    expect_mapped<natsio::ConfigError>(NATSIO_ERR_CONFIG);
    expect_mapped<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE);
    expect_mapped<natsio::NotFoundError>(NATSIO_ERR_NOT_FOUND);
    expect_mapped<natsio::InternalError>(NATSIO_ERR_INTERNAL);
    expect_mapped<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT);
    expect_mapped<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED);
    expect_mapped<natsio::NoServersError>(NATSIO_ERR_NO_SERVERS);
    expect_mapped<natsio::IoError>(NATSIO_ERR_IO);
    expect_mapped<natsio::DrainTimeoutError>(NATSIO_ERR_DRAIN_TIMEOUT);
    expect_mapped<natsio::CancelledError>(NATSIO_ERR_CANCELLED);
    expect_mapped<natsio::ReconnectBufExceededError>(NATSIO_ERR_RECONNECT_BUF_EXCEEDED);
    expect_mapped<natsio::ProtocolError>(NATSIO_ERR_PROTOCOL);
    expect_mapped<natsio::ParserError>(NATSIO_ERR_PARSER);
    expect_mapped<natsio::MaxControlLineError>(NATSIO_ERR_MAX_CONTROL_LINE);
    expect_mapped<natsio::MaxPayloadError>(NATSIO_ERR_MAX_PAYLOAD);
    expect_mapped<natsio::ServerError>(NATSIO_ERR_SERVER);
    expect_mapped<natsio::StaleConnectionError>(NATSIO_ERR_STALE_CONNECTION);
    expect_mapped<natsio::AuthorizationError>(NATSIO_ERR_AUTHORIZATION);
    expect_mapped<natsio::AuthExpiredError>(NATSIO_ERR_AUTH_EXPIRED);
    expect_mapped<natsio::PermissionsError>(NATSIO_ERR_PERMISSIONS);
    expect_mapped<natsio::MaxSubscriptionsError>(NATSIO_ERR_MAX_SUBSCRIPTIONS);
    expect_mapped<natsio::WebsocketError>(NATSIO_ERR_WEBSOCKET);
    expect_mapped<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS);
    expect_mapped<natsio::NoReplySubjectError>(NATSIO_ERR_NO_REPLY_SUBJECT);
    expect_mapped<natsio::SubscriptionClosedError>(NATSIO_ERR_SUBSCRIPTION_CLOSED);
    expect_mapped<natsio::SlowConsumerError>(NATSIO_ERR_SLOW_CONSUMER);
    // A code this header does not know still arrives as natsio::Error.
    expect_mapped<natsio::Error>(static_cast<natsio::Status>(999));
    EXPECT_EQ(natsio::status_text(NATSIO_ERR_TIMEOUT), natsio_status_str(NATSIO_ERR_TIMEOUT));
    EXPECT_NE(natsio::status_text(NATSIO_ERR_TIMEOUT), natsio::status_text(NATSIO_ERR_IO));
    // Families: catch sites can be coarse.
    EXPECT_THROW(natsio::throw_error(NATSIO_ERR_DRAIN_TIMEOUT, ""), natsio::TimeoutError);
    EXPECT_THROW(natsio::throw_error(NATSIO_ERR_AUTH_EXPIRED, ""), natsio::ServerError);
    EXPECT_THROW(natsio::throw_error(NATSIO_ERR_PARSER, ""), natsio::ProtocolError);
}

TEST(Errors, ArgumentErrors) {
    natsio::Client client = connect();
    expect_throws<natsio::BadSubjectError>(NATSIO_ERR_BAD_SUBJECT,
                                           [&] { client.publish("a..b", "x"); });
    expect_throws<natsio::BadSubjectError>(NATSIO_ERR_BAD_SUBJECT,
                                           [&] { client.subscribe("has space"); });
    expect_throws<natsio::InvalidUtf8Error>(NATSIO_ERR_INVALID_UTF8,
                                                [&] { client.publish("bad.\xff", "x"); });
    natsio::SubscribeOptions bad_queue;
    bad_queue.queue = "bad queue";
    expect_throws<natsio::BadQueueNameError>(NATSIO_ERR_BAD_QUEUE_NAME,
                                             [&] { client.subscribe(subject("q"), bad_queue); });
    expect_throws<natsio::BadQueueNameError>(NATSIO_ERR_BAD_QUEUE_NAME, [&] {
        client.subscribe(subject("q"), [](MsgView) {}, bad_queue);
    });
    natsio::SubscribeOptions bad_policy;
    bad_policy.policy = static_cast<natsio::PendingPolicy>(42);
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { client.subscribe(subject("p"), bad_policy); });
    natsio::Subscription sub = client.subscribe(subject("u"));
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { sub.unsubscribe_after(0); });
    // A string_view with an embedded NUL cannot cross the C ABI intact.
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        client.publish(std::string_view("a\0b", 3), "x");
    });
}

TEST(Errors, DetailTextComesFromTheLibrary) {
    natsio::Client client = connect();
    try {
        client.publish("a..b", "x");
        FAIL() << "no exception";
    } catch (const natsio::BadSubjectError& e) {
        EXPECT_FALSE(e.detail().empty());
        EXPECT_NE(std::string(e.what()).find(e.detail()), std::string::npos);
    }
}

TEST(Errors, WhatNamesTheStatusOnce) {
    // The usual form: status text, ": ", detail.
    natsio::Error plain(NATSIO_ERR_TIMEOUT, "no reply within 2 s");
    EXPECT_STREQ(plain.what(), "timeout: no reply within 2 s");
    natsio::Error bare(NATSIO_ERR_TIMEOUT, "");
    EXPECT_STREQ(bare.what(), "timeout");
    // A detail that already begins with the status text (in any case) is
    // the whole text; detail() is unchanged.
    const std::string wls = "wrong last sequence: 2 (code 400, err_code 10071)";
    natsio::WrongLastSequenceError repeated(NATSIO_ERR_WRONG_LAST_SEQUENCE, wls);
    EXPECT_EQ(std::string(repeated.what()), wls);
    EXPECT_EQ(repeated.detail(), wls);
    natsio::Error upper(NATSIO_ERR_WRONG_LAST_SEQUENCE, "Wrong Last Sequence: 2");
    EXPECT_STREQ(upper.what(), "Wrong Last Sequence: 2");
    natsio::Error exact(NATSIO_ERR_TIMEOUT, "timeout");
    EXPECT_STREQ(exact.what(), "timeout");
    // Only whole words count: "timeout_ms" does not begin with "timeout".
    natsio::Error longer(NATSIO_ERR_TIMEOUT, "timeout_ms must be positive");
    EXPECT_STREQ(longer.what(), "timeout: timeout_ms must be positive");
    natsio::Error inside(NATSIO_ERR_TIMEOUT, "request timeout");
    EXPECT_STREQ(inside.what(), "timeout: request timeout");
    // Through make_error (every thrown exception is built there).
    try {
        natsio::throw_error(NATSIO_ERR_WRONG_LAST_SEQUENCE, wls);
    } catch (const natsio::Error& e) {
        EXPECT_EQ(std::string(e.what()), wls);
    }
}

TEST(Errors, HeaderErrors) {
    natsio::Headers headers;
    expect_throws<natsio::BadHeadersError>(NATSIO_ERR_BAD_HEADERS,
                                           [&] { headers.add("Bad:Name", "v"); });
    expect_throws<natsio::BadHeadersError>(NATSIO_ERR_BAD_HEADERS,
                                           [&] { headers.set("Name", "line\r\nbreak"); });
    EXPECT_EQ(headers.size(), 0u) << "nothing is added on failure";
    expect_throws<natsio::NotFoundError>(NATSIO_ERR_NOT_FOUND, [&] { headers.entry(0); });
}

TEST(Errors, ConfigErrors) {
    natsio::Options options;
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                       [&] { options.set_connect_timeout(0ms); });
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] { options.set_ping(0ms, 1); });
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                       [&] { options.set_inbox_prefix("bad.*"); });
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] { options.set_servers({}); });
    options.set_user_password("user", "pass");
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] { options.set_token("t"); });
}

TEST(Errors, IllegalStateAfterRuntimeStarted) {
    natsio::Client client = connect();  // the runtime is running now
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [] { natsio::set_worker_threads(2); });
    // A Future accepts one completion callback.
    natsio::Subscription responder =
        client.subscribe(subject("svc"), [](MsgView msg) { msg.respond("ok"); });
    client.flush();
    natsio::Future<natsio::Msg> result = client.request_async(subject("svc"), "x", 5s);
    std::promise<std::string> seen;
    result.then([&seen](natsio::Future<natsio::Msg> done) {
        seen.set_value(std::string(done.get().data()));
    });
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { result.then([](natsio::Future<natsio::Msg>) {}); });
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { (void)result.to_std_future(); });
    EXPECT_EQ(result.get().data(), "ok");
    std::future<std::string> seen_future = seen.get_future();
    ASSERT_EQ(seen_future.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(seen_future.get(), "ok");
    // Cancelling a completed operation is illegal too.
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE, [&] { result.cancel(); });
    // An empty Future holds no token: the library's NULL check.
    natsio::Future<void> empty;
    EXPECT_FALSE(empty);
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { empty.get(); });
    EXPECT_FALSE(empty.ready());
}

TEST(Errors, TimeoutErrors) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("t"));
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { sub.next(20ms); });
    // A subscriber that never answers: the request times out.
    natsio::Subscription silent = client.subscribe(subject("silent"), [](MsgView) {});
    client.flush();
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT,
                                        [&] { client.request(subject("silent"), "x", 100ms); });
    natsio::Future<natsio::Msg> pending = client.request_async(subject("silent"), "x", 100ms);
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { pending.get(); });
    EXPECT_EQ(pending.status(), NATSIO_ERR_TIMEOUT);
}

TEST(Errors, CancelledRequest) {
    natsio::Client client = connect();
    natsio::Subscription silent = client.subscribe(subject("silent"), [](MsgView) {});
    client.flush();
    natsio::Future<natsio::Msg> pending = client.request_async(subject("silent"), "x", 10s);
    EXPECT_FALSE(pending.wait_for(natsio::no_wait));
    EXPECT_EQ(pending.status(), NATSIO_PENDING);
    pending.cancel();
    expect_throws<natsio::CancelledError>(NATSIO_ERR_CANCELLED, [&] { pending.get(); });
    EXPECT_EQ(pending.status(), NATSIO_ERR_CANCELLED);
    // Read again: the same outcome.
    expect_throws<natsio::CancelledError>(NATSIO_ERR_CANCELLED, [&] { pending.get(); });
}

TEST(Errors, NoResponders) {
    natsio::Client client = connect();
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS,
                                             [&] { client.request(subject("nobody"), "x", 2s); });
    natsio::Future<natsio::Msg> result = client.request_async(subject("nobody"), "x", 2s);
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS, [&] { result.get(); });
}

TEST(Errors, NoReplySubject) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("n"));
    client.flush();
    client.publish(subject("n"), "no reply");
    natsio::Msg msg = next_item(sub);
    expect_throws<natsio::NoReplySubjectError>(NATSIO_ERR_NO_REPLY_SUBJECT,
                                               [&] { msg.respond("x"); });
}

TEST(Errors, MaxPayload) {
    natsio::Client client = connect();
    std::string too_big(static_cast<std::size_t>(client.max_payload()) + 1, 'x');
    expect_throws<natsio::MaxPayloadError>(NATSIO_ERR_MAX_PAYLOAD,
                                           [&] { client.publish(subject("big"), too_big); });
}

TEST(Errors, ConnectionClosed) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("c"));
    client.close();
    client.close();  // idempotent
    EXPECT_EQ(client.status(), natsio::ConnStatus::Closed);
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { client.publish(subject("c"), "x"); });
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { client.flush(1s); });
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { client.flush_async(); });
    // The subscription ended with the close: its error, on every call.
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { sub.next(1s); });
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { sub.next(1s); });
    EXPECT_TRUE(sub.is_closed());
}

TEST(Errors, StoppedSubscriptionEndsAndRefusesIteratorCallsInPushMode) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("s"));
    sub.stop();
    EXPECT_TRUE(sub.is_closed());
    // Ended without error: std::nullopt, now and later; stop is idempotent.
    EXPECT_FALSE(sub.next(1s).has_value());
    sub.stop();
    EXPECT_FALSE(sub.next(natsio::no_wait).has_value());
    EXPECT_FALSE(sub.next_async().get().has_value());
    // An ended subscription cannot count down to an auto-unsubscribe.
    expect_throws<natsio::SubscriptionClosedError>(NATSIO_ERR_SUBSCRIPTION_CLOSED,
                                                   [&] { sub.unsubscribe_after(1); });
    // next on a callback subscription is refused.
    natsio::Subscription callback = client.subscribe(subject("cb"), [](MsgView) {});
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { callback.next(10ms); });
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { callback.next_async(); });
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { callback.set_callback([](MsgView) {}); });
}

TEST(Errors, SlowConsumer) {
    natsio::Client client = connect();
    natsio::SubscribeOptions options;
    options.pending_msgs_limit = 2;
    options.policy = natsio::PendingPolicy::Error;
    natsio::Subscription sub = client.subscribe(subject("slow"), options);
    client.flush();
    for (int i = 0; i < 20; ++i) {
        client.publish(subject("slow"), "x");
    }
    client.flush();
    ASSERT_TRUE(wait_until([&] { return sub.is_closed(); }));
    // The backlog is discarded: the failure comes at once, on every call.
    expect_throws<natsio::SlowConsumerError>(NATSIO_ERR_SLOW_CONSUMER, [&] { sub.next(1s); });
    expect_throws<natsio::SlowConsumerError>(NATSIO_ERR_SLOW_CONSUMER, [&] { sub.next(1s); });
}

TEST(Errors, DrainTimeoutIsThrownAndReported) {
    std::mutex mutex;
    std::vector<natsio::Status> reported;
    natsio::Options options;
    options.set_url(server_url()).on_error([&](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        reported.push_back(e.status);
    });
    natsio::Client client = natsio::Client::connect(options);
    natsio::Subscription sub = client.subscribe(subject("dt"), [](MsgView) {
        std::this_thread::sleep_for(100ms);
    });
    client.flush();
    for (int i = 0; i < 10; ++i) {
        client.publish(subject("dt"), "x");
    }
    client.flush();
    expect_throws<natsio::DrainTimeoutError>(NATSIO_ERR_DRAIN_TIMEOUT,
                                             [&] { client.drain(50ms); });
    EXPECT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return std::find(reported.begin(), reported.end(), NATSIO_ERR_DRAIN_TIMEOUT) !=
               reported.end();
    }));
}

TEST(Errors, NoServers) {
    int port = nt_free_port();
    natsio::Options options;
    options.set_url("nats://127.0.0.1:" + std::to_string(port)).set_connect_timeout(500ms);
    expect_throws<natsio::NoServersError>(NATSIO_ERR_NO_SERVERS,
                                          [&] { natsio::Client::connect(options); });
    expect_throws<natsio::NoServersError>(NATSIO_ERR_NO_SERVERS, [&] {
        natsio::Client::connect("nats://127.0.0.1:" + std::to_string(port));
    });
}

TEST(Errors, AuthorizationAndPermissions) {
    nt_server* server = nt_server_start(
        "authorization {\n"
        "  users = [\n"
        "    { user: \"cpp\", password: \"secret\",\n"
        "      permissions: { publish: { deny: [\"forbidden.>\"] } } }\n"
        "  ]\n"
        "}\n");
    ASSERT_NE(server, nullptr);
    std::unique_ptr<nt_server, void (*)(nt_server*)> stop(server, nt_server_stop);

    natsio::Options anonymous;
    anonymous.set_url(nt_server_url(server));
    expect_throws<natsio::AuthorizationError>(NATSIO_ERR_AUTHORIZATION,
                                              [&] { natsio::Client::connect(anonymous); });

    std::mutex mutex;
    std::vector<natsio::AsyncError> reported;
    natsio::Options user;
    user.set_url(nt_server_url(server))
        .set_user_password("cpp", "secret")
        .on_error([&](const natsio::AsyncError& e) {
            std::lock_guard<std::mutex> lock(mutex);
            reported.push_back(e);
        });
    natsio::Client client = natsio::Client::connect(user);
    client.publish("forbidden.topic", "x");
    client.flush();
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !reported.empty();
    }));
    std::lock_guard<std::mutex> lock(mutex);
    const natsio::AsyncError& error = reported.front();
    EXPECT_EQ(error.source, natsio::AsyncError::Source::Library);
    EXPECT_EQ(error.status, NATSIO_ERR_PERMISSIONS);
    EXPECT_THROW(error.rethrow(), natsio::PermissionsError);
}

TEST(Errors, PermissionErrOnSubscribeEndsTheSubscription) {
    nt_server* server = nt_server_start(
        "authorization {\n"
        "  users = [\n"
        "    { user: \"cpp\", password: \"secret\",\n"
        "      permissions: { subscribe: { deny: [\"hidden.>\"] } } }\n"
        "  ]\n"
        "}\n");
    ASSERT_NE(server, nullptr);
    std::unique_ptr<nt_server, void (*)(nt_server*)> stop(server, nt_server_stop);
    natsio::Options options;
    options.set_url(nt_server_url(server))
        .set_user_password("cpp", "secret")
        .set_permission_err_on_subscribe(true)
        .on_error([](const natsio::AsyncError&) {});
    natsio::Client client = natsio::Client::connect(options);
    natsio::Subscription allowed = client.subscribe("open.x");
    natsio::Subscription denied = client.subscribe("hidden.x");
    EXPECT_THROW(denied.next(5s), natsio::PermissionsError);
    client.publish("open.x", "hi");
    auto msg = allowed.next(5s);
    ASSERT_TRUE(msg.has_value());
    EXPECT_EQ(msg->data(), "hi");
}
