// Consumers, acknowledgements and KV keys/history through
// natsio/jetstream.hpp: consumer lifecycle, infos, pause and resume, push
// and pull consume (status events, budget, drain), fetch/next, MsgList,
// ack, nak (with a delay), term, in_progress, delivery metadata, inline
// pull statuses, one exception class per status 511-514, ADR-42 priority
// groups (overflow, pinned_client, and the prioritized policy with the
// priority of fetch and consume), the flow_control ack policy of a durable
// consumer a stream sources through, bad options and use after close, and
// KeyValue::keys/history. Built into both the C++17 and the C++20 test
// programs (each has its own server).
#include "js_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#if __cplusplus >= 202002L
#include <ranges>
#endif

using namespace natsio_test;

namespace {

natsio::FetchOptions fetch_options(std::int64_t max_messages, natsio::milliseconds expires) {
    natsio::FetchOptions options;
    options.max_messages = max_messages;
    options.expires = expires;
    return options;
}

natsio::FetchOptions no_wait() {
    natsio::FetchOptions options;
    options.no_wait = true;
    return options;
}

/// Publishes `count` messages "m<i>" to "<prefix>.<i % 2>".
void publish_numbered(const natsio::JetStream& js, const std::string& prefix, int count) {
    for (int i = 0; i < count; ++i) {
        js.publish(prefix + "." + std::to_string(i % 2), "m" + std::to_string(i));
    }
}

}  // namespace

// The list types iterate as views and read as ranges.
static_assert(std::is_same_v<decltype(*std::declval<natsio::MsgList>().begin()), natsio::MsgView>);
static_assert(
    std::is_same_v<decltype(*std::declval<natsio::KvEntryList>().begin()), natsio::KvEntryView>);
static_assert(std::is_base_of_v<natsio::KvEntryView, natsio::KvEntry>);
static_assert(!std::is_copy_constructible_v<natsio::MsgList>);
static_assert(!std::is_copy_constructible_v<natsio::KvEntryList>);
static_assert(std::is_nothrow_move_constructible_v<natsio::MsgList>);
#if __cplusplus >= 202002L
static_assert(std::ranges::input_range<natsio::MsgList>);
static_assert(std::ranges::input_range<natsio::KvEntryList>);
#endif

TEST(ConsumerErrors, EveryStatusMapsToItsClass) {
    using namespace natsio;
    expect_mapped<NoMessagesError, JetStreamError>(NATSIO_ERR_NO_MESSAGES);
    expect_mapped<NoMessagesError, TimeoutError>(NATSIO_ERR_NO_MESSAGES);
    expect_mapped<NoMessagesError, Error>(NATSIO_ERR_NO_MESSAGES);
    expect_mapped<ConsumerDeletedError, JetStreamError>(NATSIO_ERR_CONSUMER_DELETED);
    expect_mapped<MessageAlreadyAckedError, JetStreamError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED);
    expect_mapped<NotJsMessageError, JetStreamError>(NATSIO_ERR_NOT_JS_MESSAGE);
    // The other timeouts and JetStream errors keep their single base.
    expect_mapped<TimeoutError, Error>(NATSIO_ERR_TIMEOUT);
    expect_mapped<DrainTimeoutError, TimeoutError>(NATSIO_ERR_DRAIN_TIMEOUT);
    expect_mapped<WrongLastSequenceError, JetStreamError>(NATSIO_ERR_WRONG_LAST_SEQUENCE);
    expect_mapped<KeyDeletedError, Error>(NATSIO_ERR_KEY_DELETED);
    EXPECT_THROW(throw_error(NATSIO_ERR_NO_MESSAGES, ""), std::runtime_error);
    // None of the new classes is a TimeoutError except NoMessagesError.
    EXPECT_FALSE((std::is_base_of_v<TimeoutError, ConsumerDeletedError>));
    EXPECT_FALSE((std::is_base_of_v<TimeoutError, JetStreamError>));
    EXPECT_TRUE((std::is_base_of_v<TimeoutError, NoMessagesError>));
    for (int code : {511, 512, 513, 514}) {
        EXPECT_FALSE(status_text(static_cast<Status>(code)).empty()) << code;
    }
}

// A pull request answered by the server itself reaches a plain
// subscription with the inline status's code and description.
TEST(Consumer, InlineStatusCodeAndDescription) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_STATUS","subjects":["cpp.status.>"],"storage":"memory"})");
    js.create_consumer("CPP_STATUS", R"({"durable_name":"s","ack_policy":"explicit"})");
    const std::string inbox = client.new_inbox();
    natsio::Subscription sub = client.subscribe(inbox);
    client.flush();
    auto pull = [&](const std::string& body) {
        client.publish_with("$JS.API.CONSUMER.MSG.NEXT.CPP_STATUS.s", inbox, natsio::HeadersView(), body);
        return next_item(sub);
    };
    natsio::Msg none = pull(R"({"batch":1,"no_wait":true})");
    EXPECT_EQ(none.status(), 404);
    EXPECT_EQ(none.status_description(), "No Messages");
    natsio::Msg expired = pull(R"({"batch":1,"expires":50000000})");
    EXPECT_EQ(expired.status(), 408);
    EXPECT_EQ(expired.status_description(), "Request Timeout");
    js.publish("cpp.status.a", "m0");
    // A pull that waits: right after the publish's ack the consumer may not
    // have seen the message yet, and a no-wait pull would answer 404.
    natsio::Msg plain = pull(R"({"batch":1,"expires":5000000000})");
    EXPECT_EQ(plain.status(), 0);
    EXPECT_EQ(plain.status_description(), "");
    EXPECT_EQ(plain.data(), "m0");
    js.delete_stream("CPP_STATUS");
}

TEST(Consumer, Lifecycle) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CONS","subjects":["cpp.cons.>"],"storage":"memory"})");
    publish_numbered(js, "cpp.cons", 4);

    const std::string config =
        R"({"durable_name":"work","ack_policy":"explicit","ack_wait":"2s","filter_subject":"cpp.cons.0"})";
    std::string info = js.create_consumer("CPP_CONS", config);
    EXPECT_TRUE(contains(info, R"("name":"work")")) << info;
    EXPECT_TRUE(contains(info, R"("ack_wait":2000000000)")) << info;
    EXPECT_TRUE(contains(info, R"("num_pending":2)")) << info;
    js.create_consumer("CPP_CONS", config);  // same config: fine
    // Another configuration under the same name is a server rejection.
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] {
        js.create_consumer(
            "CPP_CONS",
            R"({"durable_name":"work","ack_policy":"explicit","ack_wait":"3s","filter_subject":"cpp.cons.0"})");
    });
    info = js.create_consumer(
        "CPP_CONS",
        R"({"durable_name":"work","ack_policy":"explicit","ack_wait":"3s","filter_subject":"cpp.cons.0"})",
        natsio::CreateAction::Update);
    EXPECT_TRUE(contains(info, R"("ack_wait":3000000000)")) << info;
    EXPECT_TRUE(contains(js.consumer_info("CPP_CONS", "work"), R"("ack_wait":3000000000)"));
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND, [&] {
        js.create_consumer("CPP_CONS", R"({"name":"nope","ack_policy":"explicit"})",
                           natsio::CreateAction::Update);
    });

    // An ephemeral consumer gets a generated name.
    std::string eph = js.create_consumer("CPP_CONS", R"({"inactive_threshold":"30s"})",
                                         natsio::CreateAction::CreateOrUpdate);
    std::vector<std::string> names = js.consumer_names("CPP_CONS");
    ASSERT_EQ(names.size(), 2u);
    std::sort(names.begin(), names.end());
    std::string eph_name = names[0] == "work" ? names[1] : names[0];
    EXPECT_NE(std::find(names.begin(), names.end(), "work"), names.end());
    EXPECT_FALSE(eph_name.empty());
    EXPECT_TRUE(contains(eph, "\"name\":\"" + eph_name + "\"")) << eph;
    // CreateOrUpdate also updates.
    info = js.create_consumer(
        "CPP_CONS",
        R"({"durable_name":"work","ack_policy":"explicit","ack_wait":"4s","filter_subject":"cpp.cons.0"})",
        natsio::CreateAction::CreateOrUpdate);
    EXPECT_TRUE(contains(info, R"("ack_wait":4000000000)")) << info;

    // Bad configurations and names never reach the server.
    std::string what = expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        js.create_consumer("CPP_CONS", R"({"ack_policy":"sometimes"})");
    });
    EXPECT_TRUE(contains(what, "ack_policy")) << what;
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                       [&] { js.create_consumer("CPP_CONS", "not json"); });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.create_consumer("CPP_CONS", R"({"durable_name":"a.b"})");
    });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.consumer_info("CPP_CONS", "a b"); });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.consumer_info("CPP_CONS", std::string_view("wo\0rk", 5));
    });
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND, [&] {
        js.create_consumer("CPP_CONS_NONE", R"({"durable_name":"x"})");
    });
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { js.consumer_names("CPP_CONS_NONE"); });

    // Delete: gone for info, delete and fetch.
    js.delete_consumer("CPP_CONS", eph_name);
    js.delete_consumer("CPP_CONS", "work");
    EXPECT_TRUE(js.consumer_names("CPP_CONS").empty());
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.consumer_info("CPP_CONS", "work"); });
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.delete_consumer("CPP_CONS", "work"); });
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.fetch("CPP_CONS", "work", no_wait()); });
    js.delete_stream("CPP_CONS");
}

// A push consumer read through push_consume: in order, acks reach the
// server; a pull consumer is refused.
TEST(Consumer, PushConsume) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_PUSH","subjects":["cpp.push.>"],"storage":"memory"})");
    publish_numbered(js, "cpp.push", 3);
    std::string inbox = client.new_inbox();
    js.create_consumer("CPP_PUSH", R"({"durable_name":"p","ack_policy":"explicit","deliver_subject":")" + inbox +
                                       R"("})");
    natsio::Messages msgs = js.push_consume("CPP_PUSH", "p");
    std::vector<std::string> seen;
    for (int i = 0; i < 3; i++) {
        natsio::Msg m = next_item(msgs);
        seen.emplace_back(m.subject());
        m.ack_sync();
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"cpp.push.0", "cpp.push.1", "cpp.push.0"}));
    EXPECT_EQ(json_number(js.consumer_info("CPP_PUSH", "p"), "num_ack_pending"), 0);
    msgs.stop();
    js.create_consumer("CPP_PUSH", R"({"durable_name":"pull"})");
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.push_consume("CPP_PUSH", "pull"); });
    natsio::Messages later = js.push_consume_async("CPP_PUSH", "p").get();
    later.stop();
    js.delete_stream("CPP_PUSH");
}

// Messages::drain of a pull consume: no more pulls, what was pulled is
// still read (next() then ends with std::nullopt), acked, nothing left
// pending at the server, the rest stays there; blocking drain() in
// callback mode returns after the final call. A pull consume tells no
// status events: next_status is std::nullopt at once, also as a Future.
TEST(Consumer, DrainOfAPullConsume) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_PDRAIN","subjects":["cpp.pdrain.>"],"storage":"memory"})");
    constexpr int n = 30;
    publish_numbered(js, "cpp.pdrain", n);
    js.create_consumer("CPP_PDRAIN", R"({"durable_name":"p","ack_policy":"explicit","ack_wait":"30s"})");
    natsio::ConsumeOptions options;
    options.max_messages = 10;
    natsio::Messages msgs = js.consume("CPP_PDRAIN", "p", options);
    // A pull consume tells each request it sends: its first event is its
    // first pull ("next").
    std::optional<std::string> first_event = msgs.next_status_async().get();
    ASSERT_TRUE(first_event.has_value());
    EXPECT_NE(first_event->find("\"type\":\"next\""), std::string::npos) << *first_event;
    next_item(msgs).ack();
    natsio::Future<void> drained = msgs.drain_async(30s);
    int read = 1;
    while (std::optional<natsio::Msg> m = msgs.next(10s)) {
        EXPECT_EQ(m->data(), "m" + std::to_string(read));
        m->ack();
        read++;
    }
    drained.get();
    EXPECT_LT(read, n);
    ASSERT_TRUE(wait_until(
        [&] { return json_number(js.consumer_info("CPP_PDRAIN", "p"), "num_ack_pending") == 0; }, 10s));
    std::string info = js.consumer_info("CPP_PDRAIN", "p");
    EXPECT_EQ(json_number(info, "consumer_seq"), read) << info;
    EXPECT_EQ(json_number(info, "num_pending"), n - read) << info;
    EXPECT_EQ(json_number(info, "num_redelivered"), 0) << info;
    // Draining again reports the same end.
    msgs.drain(1s);

    // Callback mode: drain() returns once the final call was made.
    natsio::Messages cb = js.consume("CPP_PDRAIN", "p", options);
    std::atomic<int> handled{0};
    std::atomic<bool> ended{false};
    std::promise<void> first;
    cb.set_callback(
        [&](natsio::MsgView m) {
            m.ack();
            if (handled.fetch_add(1) == 0) {
                first.set_value();
            }
        },
        [&](std::exception_ptr error) { ended = error == nullptr; });
    first.get_future().wait();
    cb.drain(30s);
    EXPECT_TRUE(ended.load());
    EXPECT_GE(handled.load(), 1);
    // Its events end with the drain: what it told before, then the end.
    int told = 0;
    while (cb.next_status(10s)) ASSERT_LT(++told, 300);

    // Stopped first: nothing to drain.
    natsio::Messages stopped = js.consume("CPP_PDRAIN", "p");
    stopped.stop();
    expect_throws<natsio::SubscriptionClosedError>(NATSIO_ERR_SUBSCRIPTION_CLOSED, [&] { stopped.drain(1s); });
    js.delete_stream("CPP_PDRAIN");
}

// A push consumption's status events through next_status (idle heartbeats
// naming the last message) and next_status_async; its drain hands out
// what the server sent, then the events end with std::nullopt.
TEST(Consumer, PushConsumeStatusEventsAndDrain) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_PSTAT","subjects":["cpp.pstat.>"],"storage":"memory"})");
    publish_numbered(js, "cpp.pstat", 3);
    std::string inbox = client.new_inbox();
    js.create_consumer("CPP_PSTAT", R"({"durable_name":"p","ack_policy":"explicit","idle_heartbeat":"200ms",)"
                                    R"("deliver_subject":")" +
                                        inbox + R"("})");
    natsio::Messages msgs = js.push_consume("CPP_PSTAT", "p");
    for (int i = 0; i < 3; i++) {
        next_item(msgs).ack();
    }
    // Idle now: heartbeats name the last message delivered.
    auto heartbeat_after_last = [](const std::optional<std::string>& event) {
        return event && contains(*event, R"("type":"heartbeat")") && contains(*event, R"("last_stream_seq":3)");
    };
    bool seen = false;
    for (int i = 0; i < 50 && !seen; i++) {
        seen = heartbeat_after_last(msgs.next_status(5s));
    }
    EXPECT_TRUE(seen);
    seen = false;
    for (int i = 0; i < 50 && !seen; i++) {
        seen = heartbeat_after_last(msgs.next_status_async().get());
    }
    EXPECT_TRUE(seen);
    // no_wait: only the events already there, then TimeoutError (read
    // faster than the heartbeats come).
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] {
        while (msgs.next_status(natsio::no_wait)) {
        }
    });

    js.publish("cpp.pstat.0", "late");
    ASSERT_TRUE(wait_until(
        [&] { return json_number(js.consumer_info("CPP_PSTAT", "p"), "num_ack_pending") == 1; }));
    natsio::Future<void> drained = msgs.drain_async();
    natsio::Msg late = next_item(msgs);
    EXPECT_EQ(late.data(), "late");
    late.ack();
    EXPECT_EQ(msgs.next(5s), std::nullopt);
    drained.get();
    // Ended: the events left are read, then std::nullopt.
    bool done = false;
    for (int i = 0; i < 300 && !done; i++) {
        done = !msgs.next_status(5s).has_value();
    }
    EXPECT_TRUE(done);
    ASSERT_TRUE(wait_until(
        [&] { return json_number(js.consumer_info("CPP_PSTAT", "p"), "num_ack_pending") == 0; }));
    js.delete_stream("CPP_PSTAT");
}

// A consume whose reader took one message and stalls holds at most its
// budget unacked (requested, buffered and handed to the reader together),
// in pull mode and in push mode with a callback that blocks; by messages
// and by bytes (1,000-byte payloads: 10 kB is 10 messages).
TEST(Consumer, ConsumeHoldsAtMostItsBudget) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_BUDGET";
    js.create_stream(R"({"name":"CPP_BUDGET","subjects":["cpp.budget"],"storage":"memory"})");
    const std::string payload(1000, 'x');
    for (int i = 0; i < 400; ++i) {
        js.publish("cpp.budget", payload);
    }
    struct Case {
        std::int64_t max_messages;
        std::int64_t max_bytes;
        bool callback;
        long long bound;
    };
    const Case cases[] = {{10, 0, false, 10},   {100, 0, false, 100}, {0, 10000, false, 10},
                          {10, 0, true, 10},    {100, 0, true, 100},  {0, 10000, true, 10}};
    int n = 0;
    for (const Case& c : cases) {
        const std::string name = "c" + std::to_string(n++);
        SCOPED_TRACE(name);
        js.create_consumer(stream, R"({"durable_name":")" + name +
                                       R"(","ack_policy":"explicit","ack_wait":"60s"})");
        natsio::ConsumeOptions options;
        options.max_messages = c.max_messages;
        options.max_bytes = c.max_bytes;
        natsio::Messages msgs = js.consume(stream, name, options);
        std::promise<void> release;
        std::shared_future<void> released = release.get_future().share();
        std::promise<void> first;
        if (c.callback) {
            auto taken = std::make_shared<bool>(false);
            auto first_taken = std::make_shared<std::promise<void>>(std::move(first));
            msgs.set_callback([taken, first_taken, released](natsio::MsgView m) {
                if (*taken) return;  // only after release: the rest go unacked
                *taken = true;
                m.ack_sync();
                first_taken->set_value();
                released.wait();  // the reader stalls in its callback
            });
            ASSERT_EQ(first_taken->get_future().wait_for(5s), std::future_status::ready);
        } else {
            next_item(msgs).ack_sync();
        }
        long long most = -1;
        for (const auto until = std::chrono::steady_clock::now() + 2s;
             std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(50ms)) {
            most = std::max(most, json_number(js.consumer_info(stream, name), "num_ack_pending"));
        }
        release.set_value();
        msgs.stop();
        EXPECT_LE(most, c.bound);
        EXPECT_GE(most, c.bound / 2);
    }
    js.delete_stream(stream);
}

TEST(Consumer, FetchMetadataAckNakTerm) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_PULL","subjects":["cpp.pull.>"],"storage":"memory"})");
    publish_numbered(js, "cpp.pull", 10);
    js.create_consumer(
        "CPP_PULL",
        R"({"durable_name":"work","ack_policy":"explicit","ack_wait":"10s","filter_subject":"cpp.pull.0"})");

    natsio::MsgList batch = js.fetch("CPP_PULL", "work", fetch_options(3, 2s));
    ASSERT_EQ(batch.size(), 3u);
    EXPECT_FALSE(batch.empty());
    std::vector<std::string> bodies;
    for (natsio::MsgView msg : batch) {
        bodies.emplace_back(msg.data());
        EXPECT_EQ(msg.subject(), "cpp.pull.0");
    }
    EXPECT_EQ(bodies, (std::vector<std::string>{"m0", "m2", "m4"}));
    EXPECT_EQ(std::distance(batch.begin(), batch.end()), 3);
    EXPECT_EQ(batch.at(2).data(), "m4");
    EXPECT_FALSE(batch[3]);
    EXPECT_THROW(batch.at(3), std::out_of_range);

    natsio::JsMsgMetadata md = batch[0].js_metadata();
    EXPECT_EQ(md.stream, "CPP_PULL");
    EXPECT_EQ(md.consumer, "work");
    EXPECT_FALSE(md.domain.has_value());
    EXPECT_EQ(md.stream_seq, 1u);
    EXPECT_EQ(md.consumer_seq, 1u);
    EXPECT_EQ(md.num_delivered, 1u);
    EXPECT_EQ(md.num_pending, 4u);
    EXPECT_TRUE(near_now(md.timestamp));
    natsio::JsMsgMetadata md2 = batch[2].js_metadata();
    EXPECT_EQ(md2.stream_seq, 5u);
    EXPECT_EQ(md2.consumer_seq, 3u);
    EXPECT_EQ(md2.num_pending, 2u);
    EXPECT_LE(md.timestamp, md2.timestamp);

    // ack: once; any second terminal ack through the handle is refused.
    batch[0].ack_sync(2s);
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { batch[0].ack(); });
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { batch[0].nak(); });
    // term with a reason: never redelivered; a second term is refused too.
    batch[1].term("bad input");
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { batch[1].term(); });
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { batch[1].ack_sync(); });
    // in_progress any number of times, then nak: redelivered.
    batch[2].in_progress();
    batch[2].in_progress();
    batch[2].nak();
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { batch[2].ack(); });

    // The nak'ed one comes again (delivered twice) with the rest; the
    // server does not promise the order.
    natsio::MsgList rest = js.fetch("CPP_PULL", "work", fetch_options(10, 500ms));
    std::vector<std::pair<std::string, std::uint64_t>> got;
    for (natsio::MsgView msg : rest) {
        got.emplace_back(std::string(msg.data()), msg.js_metadata().num_delivered);
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<std::pair<std::string, std::uint64_t>>{
                       {"m4", 2}, {"m6", 1}, {"m8", 1}}));
    for (natsio::MsgView msg : rest) {
        msg.ack_sync(2s);
    }

    // Nothing left: no_wait returns at once with an empty list.
    auto t0 = std::chrono::steady_clock::now();
    natsio::MsgList none = js.fetch("CPP_PULL", "work", no_wait());
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(none.begin(), none.end());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
    // A fetch that waits ends empty after its expiry.
    t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(js.fetch("CPP_PULL", "work", fetch_options(5, 300ms)).empty());
    auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 250ms);
    EXPECT_LT(waited, 3s);
    std::string info = js.consumer_info("CPP_PULL", "work");
    EXPECT_TRUE(contains(info, R"("num_ack_pending":0)")) << info;
    EXPECT_TRUE(contains(info, R"("num_pending":0)")) << info;
    js.delete_stream("CPP_PULL");
}

TEST(Consumer, NextAndNoMessages) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_NEXT","subjects":["cpp.next.>"],"storage":"memory"})");
    js.create_consumer("CPP_NEXT", R"({"durable_name":"one","ack_policy":"explicit"})");
    js.publish("cpp.next.a", "first");

    natsio::Msg msg = js.next("CPP_NEXT", "one", 2s);
    EXPECT_EQ(msg.data(), "first");
    EXPECT_EQ(msg.subject(), "cpp.next.a");
    natsio::JsMsgMetadata md = msg.js_metadata();
    EXPECT_EQ(md.stream_seq, 1u);
    EXPECT_EQ(md.num_pending, 0u);
    msg.ack_sync(2s);
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { msg.ack(); });

    // None: NoMessagesError after about the timeout; also a TimeoutError.
    auto t0 = std::chrono::steady_clock::now();
    expect_throws<natsio::NoMessagesError>(NATSIO_ERR_NO_MESSAGES,
                                           [&] { js.next("CPP_NEXT", "one", 200ms); });
    auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 150ms);
    EXPECT_LT(waited, 3s);
    EXPECT_THROW(js.next("CPP_NEXT", "one", 100ms), natsio::TimeoutError);

    // An owned message outlives a clone of it, and the clone carries the
    // ack state it had when cloned.
    js.publish("cpp.next.b", "second");
    natsio::Msg second = js.next("CPP_NEXT", "one", 2s);
    natsio::Msg copy = second.clone();
    second = natsio::Msg();
    EXPECT_EQ(copy.data(), "second");
    copy.ack_sync(2s);
    natsio::Msg acked_copy = copy.clone();
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { acked_copy.ack(); });
    EXPECT_TRUE(contains(js.consumer_info("CPP_NEXT", "one"), R"("num_ack_pending":0)"));
    js.delete_stream("CPP_NEXT");
}

TEST(Consumer, NakWithDelayHoldsRedeliveryAndTermEndsIt) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_WPI","subjects":["cpp.wpi.>"],"storage":"memory"})");
    js.create_consumer("CPP_WPI",
                       R"({"durable_name":"slow","ack_policy":"explicit","ack_wait":"30s"})");
    js.publish("cpp.wpi.a", "job");

    // nak with a delay: not redelivered at once, but after the delay.
    natsio::Msg job = js.next("CPP_WPI", "slow", 2s);
    auto t0 = std::chrono::steady_clock::now();
    job.nak(400ms);
    EXPECT_TRUE(js.fetch("CPP_WPI", "slow", no_wait()).empty());
    natsio::Msg again = js.next("CPP_WPI", "slow", 3s);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);
    EXPECT_EQ(again.data(), "job");
    EXPECT_EQ(again.js_metadata().num_delivered, 2u);

    // (in_progress holding a message past its ack wait is the C suite's
    // test_in_progress_holds_a_message_past_ack_wait: the C++ call only
    // translates.)
    again.term();
    // Terminated: never again.
    EXPECT_TRUE(js.fetch("CPP_WPI", "slow", no_wait()).empty());
    EXPECT_TRUE(wait_until([&] { return contains(js.consumer_info("CPP_WPI", "slow"), R"("num_ack_pending":0)"); }));
    js.delete_stream("CPP_WPI");
}

TEST(Consumer, CoreMessagesAreNotJetStreamMessages) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("core"));
    client.flush();
    client.publish(subject("core"), "plain");
    client.publish_with(subject("core"), std::string_view(subject("reply")), {}, "with reply");
    natsio::Msg plain = next_item(sub);
    natsio::Msg with_reply = next_item(sub);
    ASSERT_TRUE(with_reply.reply().has_value());
    for (const natsio::Msg* msg : {&plain, &with_reply}) {
        const natsio::Status status = NATSIO_ERR_NOT_JS_MESSAGE;
        using NotJs = natsio::NotJsMessageError;
        expect_throws<NotJs>(status, [&] { msg->ack(); });
        expect_throws<NotJs>(status, [&] { msg->ack_sync(1s); });
        expect_throws<NotJs>(status, [&] { msg->nak(); });
        expect_throws<NotJs>(status, [&] { msg->term(std::string_view("why")); });
        expect_throws<NotJs>(status, [&] { msg->in_progress(); });
        expect_throws<NotJs>(status, [&] { (void)msg->js_metadata(); });
    }
    // A handler's borrowed message says the same.
    std::promise<std::string> seen;
    natsio::Subscription cb = client.subscribe(subject("cb"), [&seen](natsio::MsgView msg) {
        try {
            msg.ack();
            seen.set_value("acked");
        } catch (const natsio::NotJsMessageError& e) {
            seen.set_value(std::string("not js: ") + std::to_string(e.status()));
        }
    });
    client.flush();
    client.publish(subject("cb"), "x");
    std::future<std::string> result = seen.get_future();
    ASSERT_EQ(result.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(result.get(), "not js: 514");
    // No message at all.
    natsio::MsgView empty;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { empty.ack(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { (void)empty.js_metadata(); });
}

TEST(Consumer, DeletedWhileFetchWaits) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_DEL","subjects":["cpp.del.>"],"storage":"memory"})");
    js.create_consumer("CPP_DEL", R"({"durable_name":"doomed","ack_policy":"explicit"})");

    auto t0 = std::chrono::steady_clock::now();
    std::future<natsio::MsgList> waiter = std::async(std::launch::async, [&js] {
        return js.fetch("CPP_DEL", "doomed", fetch_options(5, 5s));
    });
    // Delete once the pull request is waiting on the server.
    EXPECT_TRUE(wait_until(
        [&] { return contains(js.consumer_info("CPP_DEL", "doomed"), R"("num_waiting":1)"); }));
    js.delete_consumer("CPP_DEL", "doomed");
    expect_throws<natsio::ConsumerDeletedError>(NATSIO_ERR_CONSUMER_DELETED,
                                                [&] { waiter.get(); });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
    js.delete_stream("CPP_DEL");
}

// fetch_messages: the messages of one pull request as they arrive. Each
// wait below (20 s, for a busy machine) is shorter than the request's
// expiry (60 s), so a fetch that only handed out its batch once complete
// (or expired) would time out there.
TEST(Consumer, FetchMessagesHandsOutEachAsItArrives) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_STREAMED","subjects":["cpp.streamed.>"],"storage":"memory"})");
    js.create_consumer("CPP_STREAMED", R"({"durable_name":"w","ack_policy":"explicit"})");

    // The first of five arrives on its own, long before the expiry;
    // the fifth ends the iteration at once.
    natsio::Messages msgs = js.fetch_messages("CPP_STREAMED", "w", fetch_options(5, 60s));
    js.publish("cpp.streamed.a", "m0");
    std::optional<natsio::Msg> first = msgs.next(20s);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->data(), "m0");
    first->ack_sync(2s);
    for (int i = 1; i < 5; ++i) {
        js.publish("cpp.streamed.a", "m" + std::to_string(i));
    }
    for (int i = 1; i < 5; ++i) {
        std::optional<natsio::Msg> msg = msgs.next(20s);
        ASSERT_TRUE(msg) << "ended after " << i << " messages";
        EXPECT_EQ(msg->data(), "m" + std::to_string(i));
        msg->ack_sync(2s);
    }
    EXPECT_FALSE(msgs.next(20s)) << "the batch of 5 did not end the iteration";

    // An expired request ends it without messages (the future form).
    natsio::Messages expired =
        js.fetch_messages_async("CPP_STREAMED", "w", fetch_options(10, 300ms)).get();
    EXPECT_FALSE(expired.next(20s));

    // stop() withdraws the request: what is published after goes to the
    // consumer's next reader.
    natsio::Messages stopped = js.fetch_messages("CPP_STREAMED", "w", fetch_options(5, 60s));
    EXPECT_TRUE(wait_until(
        [&] { return contains(js.consumer_info("CPP_STREAMED", "w"), R"("num_waiting":1)"); }));
    stopped.stop();
    EXPECT_FALSE(stopped.next(natsio::no_wait));
    js.publish("cpp.streamed.a", "later");
    natsio::MsgList next_reader = js.fetch("CPP_STREAMED", "w", fetch_options(1, 5s));
    ASSERT_EQ(next_reader.size(), 1u);
    EXPECT_EQ(next_reader[0].data(), "later");
    next_reader[0].ack_sync(2s);

    // A consumer deleted while the request waits ends it with the error.
    natsio::Messages doomed = js.fetch_messages("CPP_STREAMED", "w", fetch_options(5, 60s));
    EXPECT_TRUE(wait_until(
        [&] { return contains(js.consumer_info("CPP_STREAMED", "w"), R"("num_waiting":1)"); }));
    js.delete_consumer("CPP_STREAMED", "w");
    expect_throws<natsio::ConsumerDeletedError>(NATSIO_ERR_CONSUMER_DELETED,
                                                [&] { (void)doomed.next(20s); });

    // Bad input is refused at the call.
    natsio::FetchOptions negative;
    negative.max_messages = -1;
    expect_throws<natsio::InvalidArgumentError>(
        NATSIO_ERR_INVALID_ARGUMENT, [&] { (void)js.fetch_messages("CPP_STREAMED", "w", negative); });
    expect_throws<natsio::InvalidArgumentError>(
        NATSIO_ERR_INVALID_ARGUMENT, [&] { (void)js.fetch_messages("CPP_STREAMED", "a.b"); });
    natsio::JetStream none;
    expect_throws<natsio::NullArgumentError>(
        NATSIO_ERR_NULL_ARGUMENT, [&] { (void)none.fetch_messages("CPP_STREAMED", "w"); });
    js.delete_stream("CPP_STREAMED");
}

TEST(Consumer, BadOptionsAndEmptyHandles) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_BAD","subjects":["cpp.bad.>"],"storage":"memory"})");
    js.create_consumer("CPP_BAD", R"({"durable_name":"c","ack_policy":"explicit"})");
    natsio::FetchOptions negative;
    negative.max_messages = -1;
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.fetch("CPP_BAD", "c", negative); });
    negative = natsio::FetchOptions();
    negative.expires = -5ms;
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.fetch("CPP_BAD", "c", negative); });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.fetch("CPP_BAD", "a.b", no_wait()); });
    js.delete_stream("CPP_BAD");

    natsio::JetStream none;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { none.fetch("CPP_BAD", "c"); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { none.consumer_names("CPP_BAD"); });
    natsio::MsgList list;
    EXPECT_FALSE(list);
    EXPECT_EQ(list.size(), 0u);
    EXPECT_EQ(list.begin(), list.end());
    EXPECT_FALSE(list[0]);
    natsio::KvEntryList entries;
    EXPECT_TRUE(entries.empty());
    EXPECT_EQ(entries[0].revision(), 0u);
    EXPECT_THROW(entries.at(0), std::out_of_range);
    natsio::KeyValue kv;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { kv.keys(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { kv.history("k"); });
}

TEST(KeyValue, KeysAndHistory) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"CPP_HIST","history":10,"storage":"memory"})");
    EXPECT_TRUE(kv.keys().empty());
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { kv.history("a"); });
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY, [&] { kv.history("a b"); });

    std::vector<std::uint64_t> revisions;
    for (int i = 0; i < 3; ++i) {
        revisions.push_back(kv.put("a", "a" + std::to_string(i)));
    }
    kv.put("b.c", "x");
    kv.put("gone", "x");
    kv.del("gone");
    kv.put("purged", "1");
    kv.put("purged", "2");
    kv.purge("purged");
    for (int i = 0; i < 150; ++i) {
        // (A named key: g++ 12 at -O3 in C++20 mode reports a false
        // -Wstringop-overread for a temporary "many." + to_string(i).)
        std::string key = "many.";
        key += std::to_string(i);
        kv.put(key, "v");
    }
    std::vector<std::string> keys = kv.keys();
    std::sort(keys.begin(), keys.end());
    ASSERT_EQ(keys.size(), 152u);
    EXPECT_EQ(keys[0], "a");
    EXPECT_EQ(keys[1], "b.c");
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "gone"), 0);
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "purged"), 0);
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "many.149"), 1);

    natsio::KvEntryList history = kv.history("a");
    ASSERT_EQ(history.size(), 3u);
    std::vector<std::string> values;
    std::vector<std::uint64_t> deltas;
    std::vector<std::uint64_t> got_revisions;
    for (natsio::KvEntryView entry : history) {
        values.emplace_back(entry.value());
        deltas.push_back(entry.delta());
        got_revisions.push_back(entry.revision());
        EXPECT_EQ(entry.key(), "a");
        EXPECT_EQ(entry.bucket(), "CPP_HIST");
        EXPECT_EQ(entry.operation(), natsio::KvOperation::Put);
        EXPECT_TRUE(near_now(entry.created()));
    }
    EXPECT_EQ(values, (std::vector<std::string>{"a0", "a1", "a2"}));
    EXPECT_EQ(deltas, (std::vector<std::uint64_t>{2, 1, 0}));
    EXPECT_EQ(got_revisions, revisions);
    // The latest history entry is what get returns.
    EXPECT_EQ(history[2].revision(), kv.get("a").revision());

    natsio::KvEntryList gone = kv.history("gone");
    ASSERT_EQ(gone.size(), 2u);
    EXPECT_EQ(gone[0].operation(), natsio::KvOperation::Put);
    EXPECT_EQ(gone[1].operation(), natsio::KvOperation::Del);
    EXPECT_EQ(gone[1].value(), "");
    // A purge keeps only its marker.
    natsio::KvEntryList purged = kv.history("purged");
    ASSERT_EQ(purged.size(), 1u);
    EXPECT_EQ(purged[0].operation(), natsio::KvOperation::Purge);

    // A moved list keeps its entries.
    natsio::KvEntryList moved = std::move(history);
    EXPECT_TRUE(history.empty());  // NOLINT(bugprone-use-after-move): the point
    EXPECT_EQ(moved.at(1).value(), "a1");

    // Scans leave no consumers behind.
    EXPECT_TRUE(js.consumer_names("KV_CPP_HIST").empty());
    js.delete_key_value("CPP_HIST");
}

TEST(Consumer, UseAfterClientClose) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CCLOSE","subjects":["cpp.cclose.>"],"storage":"memory"})");
    js.create_consumer("CPP_CCLOSE", R"({"durable_name":"c","ack_policy":"explicit"})");
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_CCLOSE_KV","storage":"memory"})");
    kv.put("k", "v");
    js.publish("cpp.cclose.a", "one");
    js.publish("cpp.cclose.a", "two");
    natsio::MsgList batch = js.fetch("CPP_CCLOSE", "c", fetch_options(1, 2s));
    ASSERT_EQ(batch.size(), 1u);
    natsio::Msg owned = batch[0].clone();
    client.close();

    const natsio::Status closed = NATSIO_ERR_CONNECTION_CLOSED;
    using Closed = natsio::ConnectionClosedError;
    expect_throws<Closed>(closed, [&] { js.fetch("CPP_CCLOSE", "c", no_wait()); });
    expect_throws<Closed>(closed, [&] { js.next("CPP_CCLOSE", "c", 200ms); });
    expect_throws<Closed>(closed, [&] { js.consumer_info("CPP_CCLOSE", "c"); });
    expect_throws<Closed>(closed, [&] { js.consumer_names("CPP_CCLOSE"); });
    expect_throws<Closed>(closed, [&] {
        js.create_consumer("CPP_CCLOSE", R"({"durable_name":"d"})");
    });
    expect_throws<Closed>(closed, [&] { js.delete_consumer("CPP_CCLOSE", "c"); });
    expect_throws<Closed>(closed, [&] { batch[0].ack(); });
    expect_throws<Closed>(closed, [&] { owned.nak(); });
    expect_throws<Closed>(closed, [&] { kv.keys(); });
    expect_throws<Closed>(closed, [&] { kv.history("k"); });
    // A failed ack did not use up the handle: still "closed", not "acked".
    expect_throws<Closed>(closed, [&] { batch[0].term(); });
    // The messages themselves stay readable.
    EXPECT_EQ(batch[0].data(), "one");
    EXPECT_EQ(owned.js_metadata().stream, "CPP_CCLOSE");

    // Cleanup through a fresh connection.
    delete_through_new_client("CPP_CCLOSE", "CPP_CCLOSE_KV");
}

#if __cplusplus >= 202002L
TEST(Consumer, DesignatedFetchOptions) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_DESIG","subjects":["cpp.desig"],"storage":"memory"})");
    js.create_consumer("CPP_DESIG", R"({"durable_name":"d","ack_policy":"none"})");
    js.publish("cpp.desig", "a");
    js.publish("cpp.desig", "b");
    natsio::MsgList list =
        js.fetch("CPP_DESIG", "d", {.max_messages = 5, .expires = 300ms});
    std::vector<std::string> bodies;
    for (natsio::MsgView msg : list | std::views::take(5)) {
        bodies.emplace_back(msg.data());
    }
    EXPECT_EQ(bodies, (std::vector<std::string>{"a", "b"}));
    js.delete_stream("CPP_DESIG");
}
#endif

TEST(Consumer, InfosPauseAndResume) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_PAUSE","subjects":["cpp.pause.>"],"storage":"memory"})");
    for (const char* body : {"m0", "m1", "m2"}) {
        js.publish("cpp.pause.x", body);
    }
    js.create_consumer("CPP_PAUSE", R"({"durable_name":"p1"})");
    js.create_consumer("CPP_PAUSE", R"({"durable_name":"p2","filter_subject":"cpp.pause.y"})");

    // Every consumer's info, with its state.
    std::vector<std::string> infos = js.consumer_infos("CPP_PAUSE");
    ASSERT_EQ(infos.size(), 2u);
    int with_three_pending = 0;
    for (const std::string& info : infos) {
        if (info.find(R"("name":"p1")") != std::string::npos) {
            EXPECT_NE(info.find(R"("num_pending":3)"), std::string::npos) << info;
            ++with_three_pending;
        }
    }
    EXPECT_EQ(with_three_pending, 1);
    EXPECT_EQ(js.consumer_infos_async("CPP_PAUSE").get().size(), 2u);

    // Paused for an hour: the answer and the info say so, a fetch gets nothing.
    const auto hour_ahead = std::chrono::system_clock::now() + std::chrono::hours(1);
    std::string answer = js.pause_consumer("CPP_PAUSE", "p1", hour_ahead);
    EXPECT_NE(answer.find(R"("paused":true)"), std::string::npos) << answer;
    EXPECT_NE(js.consumer_info("CPP_PAUSE", "p1").find(R"("paused":true)"), std::string::npos);
    EXPECT_TRUE(js.fetch("CPP_PAUSE", "p1", fetch_options(3, 300ms)).empty());

    // Resumed (the future form): it delivers again.
    std::string resumed = js.resume_consumer_async("CPP_PAUSE", "p1").get();
    EXPECT_NE(resumed.find(R"("paused":false)"), std::string::npos) << resumed;
    natsio::MsgList all = js.fetch("CPP_PAUSE", "p1", fetch_options(3, 2s));
    EXPECT_EQ(all.size(), 3u);
    for (natsio::MsgView msg : all) {
        msg.ack();
    }
    EXPECT_NE(js.pause_consumer_async("CPP_PAUSE", "p2", hour_ahead).get().find(R"("paused":true)"),
              std::string::npos);
    EXPECT_NE(js.resume_consumer("CPP_PAUSE", "p2").find(R"("paused":false)"), std::string::npos);

    // Errors.
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.pause_consumer("CPP_PAUSE", "nope", hour_ahead); });
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.resume_consumer("CPP_PAUSE", "nope"); });
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { js.consumer_infos("CPP_NOPAUSE"); });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.pause_consumer("CPP_PAUSE", "p1", std::chrono::system_clock::time_point{});
    });
    js.delete_stream("CPP_PAUSE");
}

// ADR-42 priority groups: validation, overflow's min_pending, a pinned
// client and unpin; ADR-37 statuses that end a consume.
TEST(Consumer, PriorityGroupsPinUnpinAndPullStatuses) {
    natsio::Client client = connect();
    natsio::Client other_client = connect();
    natsio::JetStream js(client);
    natsio::JetStream other(other_client);
    js.create_stream(R"({"name":"CPP_PRIO","subjects":["cpp.prio.>"],"storage":"memory"})");
    for (const char* body : {"m0", "m1", "m2", "m3"}) {
        js.publish("cpp.prio.x", body);
    }
    std::string info = js.create_consumer(
        "CPP_PRIO", R"({"durable_name":"ov","priority_groups":["A"],"priority_policy":"overflow"})");
    EXPECT_NE(info.find(R"("priority_policy":"overflow")"), std::string::npos) << info;

    natsio::FetchOptions options = fetch_options(1, 300ms);
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.fetch("CPP_PRIO", "ov", options); });
    options.group = "B";
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.fetch("CPP_PRIO", "ov", options); });
    options.group = "A";
    options.min_pending = 5;
    EXPECT_TRUE(js.fetch("CPP_PRIO", "ov", options).empty());
    options.min_pending = 4;
    options.expires = 2s;
    natsio::Msg first = js.next("CPP_PRIO", "ov", options);
    EXPECT_EQ(first.data(), "m0");
    first.ack();
    options.min_pending = 3;  // 3 left
    EXPECT_EQ(js.next_async("CPP_PRIO", "ov", options).get().data(), "m1");  // unacked
    natsio::ConsumeOptions consume_options;
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.consume("CPP_PRIO", "ov", consume_options); });

    // Pinned client: only the pinned context gets messages until unpinned.
    js.create_consumer("CPP_PRIO",
                       R"({"durable_name":"pin","priority_groups":["G"],"priority_policy":"pinned_client"})");
    natsio::FetchOptions pinned = fetch_options(1, 2s);
    pinned.group = "G";
    EXPECT_EQ(js.fetch("CPP_PRIO", "pin", pinned).size(), 1u);
    natsio::FetchOptions short_wait = fetch_options(1, 300ms);
    short_wait.group = "G";
    EXPECT_TRUE(other.fetch("CPP_PRIO", "pin", short_wait).empty());
    js.unpin_consumer("CPP_PRIO", "pin", "G");
    EXPECT_EQ(other.fetch("CPP_PRIO", "pin", pinned).size(), 1u);
    EXPECT_TRUE(js.fetch("CPP_PRIO", "pin", short_wait).empty());
    other.unpin_consumer_async("CPP_PRIO", "pin", "G").get();
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.unpin_consumer("CPP_PRIO", "pin", "Z"); });
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.unpin_consumer("CPP_PRIO", "nope", "G"); });

    // A consume in the group gets messages; one with max_bytes below a
    // message's size ends with JetStreamError.
    consume_options.group = "G";
    consume_options.expires = 2s;
    natsio::Messages msgs = js.consume("CPP_PRIO", "pin", consume_options);
    EXPECT_EQ(next_item(msgs).data(), "m2");
    msgs.stop();
    js.create_consumer("CPP_PRIO", R"({"durable_name":"small"})");
    natsio::ConsumeOptions tiny;
    tiny.max_bytes = 10;
    tiny.expires = 2s;
    natsio::Messages too_small = js.consume("CPP_PRIO", "small", tiny);
    expect_throws<natsio::JetStreamError>(NATSIO_ERR_JETSTREAM, [&] { too_small.next(3s); });
    js.delete_stream("CPP_PRIO");
}

namespace {

/// True once `consumer` of `stream` has at least `want` pull requests
/// waiting at the server (ConsumerInfo's num_waiting), polled for up to
/// 10 s.
bool wait_for_waiting(const natsio::JetStream& js, const std::string& stream,
                      const std::string& consumer, long long want) {
    return wait_until(
        [&] { return json_number(js.consumer_info(stream, consumer), "num_waiting") >= want; },
        10s);
}

/// A fetch of one message in group "P" at `priority`, held open 10 s.
natsio::FetchOptions one_in_p_at(std::int32_t priority) {
    natsio::FetchOptions options = fetch_options(1, 10s);
    options.group = "P";
    options.priority = priority;
    return options;
}

/// The one message of a completed fetch, acknowledged; its payload.
std::string only_payload(natsio::Future<natsio::MsgList>& fetch) {
    natsio::MsgList list = fetch.get();
    if (list.size() != 1) {
        ADD_FAILURE() << "the fetch returned " << list.size() << " messages, not 1";
        return "";
    }
    list[0].ack();
    return std::string(list[0].data());
}

}  // namespace

// ADR-42 "prioritized" policy: waiting pull requests of a lower priority
// number are served first. Each request waits first at 5, then one at 1
// (num_waiting says when each is at the server), then one message comes:
// without the priority sent both would be 0 and the first would get it.
TEST(Consumer, PrioritizedPolicyServesLowerNumbersFirst) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_PRZ","subjects":["cpp.prz.>"],"storage":"memory"})");
    std::string info = js.create_consumer(
        "CPP_PRZ",
        R"({"durable_name":"pz","priority_groups":["P"],"priority_policy":"prioritized"})");
    EXPECT_TRUE(contains(info, R"("priority_policy":"prioritized")")) << info;

    // Two fetches: 5 waits first, 1 after it; the message goes to 1.
    natsio::Future<natsio::MsgList> low = js.fetch_async("CPP_PRZ", "pz", one_in_p_at(5));
    ASSERT_TRUE(wait_for_waiting(js, "CPP_PRZ", "pz", 1));
    natsio::Future<natsio::MsgList> high = js.fetch_async("CPP_PRZ", "pz", one_in_p_at(1));
    ASSERT_TRUE(wait_for_waiting(js, "CPP_PRZ", "pz", 2));
    js.publish("cpp.prz.x", "a0");
    EXPECT_EQ(only_payload(high), "a0");
    EXPECT_FALSE(low.ready());
    js.publish("cpp.prz.x", "b0");
    EXPECT_EQ(only_payload(low), "b0");

    // A consume's requests carry its priority: a fetch at 1 that waits
    // after a consume at 5 gets the next message, the consume the one after.
    natsio::ConsumeOptions at_five;
    at_five.group = "P";
    at_five.priority = 5;
    at_five.max_messages = 1;
    at_five.expires = 10s;
    natsio::Messages consume = js.consume("CPP_PRZ", "pz", at_five);
    ASSERT_TRUE(wait_for_waiting(js, "CPP_PRZ", "pz", 1));
    natsio::Future<natsio::MsgList> fetch = js.fetch_async("CPP_PRZ", "pz", one_in_p_at(1));
    ASSERT_TRUE(wait_for_waiting(js, "CPP_PRZ", "pz", 2));
    js.publish("cpp.prz.x", "c0");
    EXPECT_EQ(only_payload(fetch), "c0");
    js.publish("cpp.prz.x", "d0");
    natsio::Msg consumed = next_item(consume);
    EXPECT_EQ(consumed.data(), "d0");
    consumed.ack();
    consume.stop();

    // Refused before anything is sent: out of range (negative too), or
    // without a group; fetch, next and consume alike.
    natsio::FetchOptions bad = no_wait();
    bad.group = "P";
    for (std::int32_t priority : {10, -1}) {
        bad.priority = priority;
        std::string what = expect_throws<natsio::InvalidArgumentError>(
            NATSIO_ERR_INVALID_ARGUMENT, [&] { js.fetch("CPP_PRZ", "pz", bad); });
        EXPECT_TRUE(contains(what, "between 0 and 9")) << what;
        what = expect_throws<natsio::InvalidArgumentError>(
            NATSIO_ERR_INVALID_ARGUMENT, [&] { js.next("CPP_PRZ", "pz", bad); });
        EXPECT_TRUE(contains(what, "between 0 and 9")) << what;
    }
    bad.priority = 1;
    bad.group.clear();
    std::string what = expect_throws<natsio::InvalidArgumentError>(
        NATSIO_ERR_INVALID_ARGUMENT, [&] { js.fetch_async("CPP_PRZ", "pz", bad).get(); });
    EXPECT_TRUE(contains(what, "priority needs a priority group")) << what;
    at_five.priority = 10;
    what = expect_throws<natsio::InvalidArgumentError>(
        NATSIO_ERR_INVALID_ARGUMENT, [&] { js.consume("CPP_PRZ", "pz", at_five); });
    EXPECT_TRUE(contains(what, "between 0 and 9")) << what;
    at_five.priority = 1;
    at_five.group.clear();
    what = expect_throws<natsio::InvalidArgumentError>(
        NATSIO_ERR_INVALID_ARGUMENT, [&] { js.consume("CPP_PRZ", "pz", at_five); });
    EXPECT_TRUE(contains(what, "priority needs a priority group")) << what;
    js.delete_stream("CPP_PRZ");
}

// The "flow_control" ack policy (nats-server 2.14): a durable push
// consumer a stream sources through, acknowledged by the flow-control
// replies of the sourcing (its ack floor follows what was sourced).
TEST(Consumer, FlowControlAckPolicyForDurableSourcing) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_FCO","subjects":["cpp.fco.>"],"storage":"memory"})");
    for (const char* body : {"m0", "m1", "m2"}) {
        js.publish("cpp.fco.x", body);
    }
    std::string info = js.create_consumer(
        "CPP_FCO",
        R"({"durable_name":"fcsrc","deliver_subject":"cpp_fco_deliver.sink",)"
        R"("ack_policy":"flow_control","flow_control":true,"idle_heartbeat":"1s",)"
        R"("max_ack_pending":100})");
    EXPECT_TRUE(contains(info, R"("ack_policy":"flow_control")")) << info;
    js.create_stream(
        R"({"name":"CPP_FCS","storage":"memory","sources":[{"name":"CPP_FCO",)"
        R"("consumer":{"name":"fcsrc","deliver_subject":"cpp_fco_deliver.sink"}}]})");
    // The sourcing stream holds `want` messages and the consumer's ack
    // floor is at stream sequence `want`.
    auto sourced_and_acked = [&](long long want) {
        return wait_until(
            [&] {
                if (json_number(js.stream_info("CPP_FCS"), "messages") != want) {
                    return false;
                }
                std::string consumer = js.consumer_info("CPP_FCO", "fcsrc");
                const auto floor = consumer.find(R"("ack_floor":)");
                return floor != std::string::npos &&
                       json_number(consumer.substr(floor), "stream_seq") == want;
            },
            20s);
    };
    EXPECT_TRUE(sourced_and_acked(3)) << js.consumer_info("CPP_FCO", "fcsrc");
    js.publish("cpp.fco.x", "n0");
    js.publish("cpp.fco.x", "n1");
    EXPECT_TRUE(sourced_and_acked(5)) << js.consumer_info("CPP_FCO", "fcsrc");

    // The server refuses it on a pull consumer; a misspelt policy is a
    // ConfigError naming the field.
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] {
        js.create_consumer("CPP_FCO", R"({"durable_name":"fcpull","ack_policy":"flow_control"})");
    });
    std::string what = expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        js.create_consumer("CPP_FCO", R"({"durable_name":"x","ack_policy":"flowcontrol"})");
    });
    EXPECT_TRUE(contains(what, "ack_policy")) << what;
    js.delete_stream("CPP_FCS");
    js.delete_stream("CPP_FCO");
}
