// JetStream and Key-Value through natsio/jetstream.hpp: streams, publish
// acks and expectations, asynchronous publishes as futures, KV buckets and
// keys, batch reads of the last messages (get_last_msgs_for, a StoredMsgs
// feed), and one exception class per JetStream/KV status. Built into both the
// C++17 and the C++20 test programs (each has its own server).
#include "js_support.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <vector>

using namespace natsio_test;

namespace {

natsio::JetStream jetstream(const natsio::Client& client) { return natsio::JetStream(client); }

/// The "subjects" object of a StreamInfo's state ({"subject": count, ...}),
/// parsed; empty when the info has none. (The config's "subjects" is an
/// array and is skipped.)
std::map<std::string, std::uint64_t> subject_counts(const std::string& info) {
    std::map<std::string, std::uint64_t> counts;
    const std::string key = "\"subjects\"";
    for (std::size_t at = info.find(key); at != std::string::npos; at = info.find(key, at + 1)) {
        std::size_t i = at + key.size();
        auto skip_space = [&] {
            while (i < info.size() && std::isspace(static_cast<unsigned char>(info[i]))) ++i;
        };
        skip_space();
        if (i >= info.size() || info[i] != ':') continue;
        ++i;
        skip_space();
        if (i >= info.size() || info[i] != '{') continue;
        ++i;
        for (;;) {
            skip_space();
            if (i >= info.size() || info[i] == '}') return counts;
            if (info[i] == ',') {
                ++i;
                continue;
            }
            if (info[i] != '"') return {};
            std::size_t end = info.find('"', i + 1);
            if (end == std::string::npos) return {};
            std::string subject = info.substr(i + 1, end - i - 1);
            i = end + 1;
            skip_space();
            if (i >= info.size() || info[i] != ':') return {};
            ++i;
            skip_space();
            std::uint64_t count = 0;
            while (i < info.size() && std::isdigit(static_cast<unsigned char>(info[i]))) {
                count = count * 10 + static_cast<std::uint64_t>(info[i] - '0');
                ++i;
            }
            counts[subject] = count;
        }
    }
    return counts;
}

/// The config "name" of a StreamInfo JSON text ("" when not found).
std::string config_name(const std::string& info) {
    const std::string prefix = "\"name\":\"";
    std::size_t config = info.find("\"config\"");
    if (config == std::string::npos) return "";
    std::size_t at = info.find(prefix, config);
    if (at == std::string::npos) return "";
    at += prefix.size();
    return info.substr(at, info.find('"', at) - at);
}

/// The config names of a list of StreamInfo JSON texts, sorted.
std::vector<std::string> config_names(const std::vector<std::string>& infos) {
    std::vector<std::string> names;
    for (const std::string& info : infos) names.push_back(config_name(info));
    std::sort(names.begin(), names.end());
    return names;
}

/// How often `part` occurs in `text`, ignoring ASCII case.
std::size_t count_ignoring_case(std::string text, std::string part) {
    auto lower = [](std::string& s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    };
    lower(text);
    lower(part);
    std::size_t count = 0;
    for (std::size_t at = text.find(part); at != std::string::npos;
         at = text.find(part, at + part.size())) {
        ++count;
    }
    return count;
}

}  // namespace

TEST(JetStreamErrors, EveryStatusMapsToItsClass) {
    using namespace natsio;
    expect_mapped<JetStreamError, Error>(NATSIO_ERR_JETSTREAM);
    expect_mapped<ApiError, JetStreamError>(NATSIO_ERR_JS_API);
    expect_mapped<JetStreamNotEnabledError, ApiError>(NATSIO_ERR_JS_NOT_ENABLED);
    expect_mapped<NoStreamResponseError, JetStreamError>(NATSIO_ERR_NO_STREAM_RESPONSE);
    expect_mapped<StreamNotFoundError, ApiError>(NATSIO_ERR_STREAM_NOT_FOUND);
    expect_mapped<StreamNameInUseError, ApiError>(NATSIO_ERR_STREAM_NAME_IN_USE);
    expect_mapped<ConsumerNotFoundError, ApiError>(NATSIO_ERR_CONSUMER_NOT_FOUND);
    expect_mapped<MessageNotFoundError, ApiError>(NATSIO_ERR_MESSAGE_NOT_FOUND);
    expect_mapped<WrongLastSequenceError, ApiError>(NATSIO_ERR_WRONG_LAST_SEQUENCE);
    expect_mapped<TooManyStalledMsgsError, JetStreamError>(NATSIO_ERR_TOO_MANY_STALLED);
    expect_mapped<AsyncPublishTimeoutError, JetStreamError>(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT);
    expect_mapped<BucketNotFoundError, JetStreamError>(NATSIO_ERR_BUCKET_NOT_FOUND);
    expect_mapped<BucketExistsError, JetStreamError>(NATSIO_ERR_BUCKET_EXISTS);
    expect_mapped<KeyNotFoundError, JetStreamError>(NATSIO_ERR_KEY_NOT_FOUND);
    expect_mapped<KeyDeletedError, KeyNotFoundError>(NATSIO_ERR_KEY_DELETED);
    expect_mapped<KeyExistsError, JetStreamError>(NATSIO_ERR_KEY_EXISTS);
    expect_mapped<InvalidBucketNameError, ConfigError>(NATSIO_ERR_INVALID_BUCKET_NAME);
    expect_mapped<InvalidKeyError, ConfigError>(NATSIO_ERR_INVALID_KEY);
    // The library names every new code.
    for (int code : {500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 600, 601, 602, 603,
                     604, 605, 606}) {
        EXPECT_FALSE(natsio::status_text(static_cast<natsio::Status>(code)).empty()) << code;
    }
}

TEST(JetStream, StreamLifecycle) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string config =
        R"({"name":"CPP_LIFE","subjects":["cpp.life.>"],"max_age":"1h","storage":"memory"})";
    std::string info = js.create_stream(config);
    EXPECT_TRUE(contains(info, R"("name":"CPP_LIFE")")) << info;
    EXPECT_TRUE(contains(info, "3600000000000")) << info;  // "1h" in nanoseconds
    js.create_stream(config);                             // same config: fine
    expect_throws<natsio::StreamNameInUseError>(NATSIO_ERR_STREAM_NAME_IN_USE, [&] {
        js.create_stream(R"({"name":"CPP_LIFE","subjects":["cpp.other.>"],"storage":"memory"})");
    });
    info = js.create_stream(
        R"({"name":"CPP_LIFE","subjects":["cpp.life.>"],"max_age":"2h","storage":"memory"})",
        natsio::CreateAction::Update);
    EXPECT_TRUE(contains(info, "7200000000000")) << info;
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND, [&] {
        js.create_stream(R"({"name":"CPP_LIFE_NOPE","subjects":["cpp.nope"]})",
                         natsio::CreateAction::Update);
    });
    js.create_stream(R"({"name":"CPP_LIFE2","subjects":["cpp.life2.>"],"storage":"memory"})",
                     natsio::CreateAction::CreateOrUpdate);
    // CreateOrUpdate also updates an existing one.
    info = js.create_stream(
        R"({"name":"CPP_LIFE2","subjects":["cpp.life2.>"],"storage":"memory","max_msgs":9})",
        natsio::CreateAction::CreateOrUpdate);
    EXPECT_TRUE(contains(info, R"("max_msgs":9)")) << info;
    // An action outside the enum is the library's argument error.
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.create_stream(R"({"name":"CPP_LIFE3"})", static_cast<natsio::CreateAction>(9));
    });

    std::vector<std::string> names = js.stream_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "CPP_LIFE"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "CPP_LIFE2"), names.end());
    EXPECT_EQ(js.stream_names(std::string_view("cpp.life.x")), std::vector<std::string>{"CPP_LIFE"});
    EXPECT_EQ(js.stream_names(std::string_view("cpp.life2.y")), std::vector<std::string>{"CPP_LIFE2"});
    EXPECT_TRUE(js.stream_names(std::string_view("cpp.nobody.z")).empty());

    for (int i = 0; i < 5; ++i) {
        js.publish("cpp.life." + std::to_string(i % 2), "x");
    }
    EXPECT_EQ(js.purge_stream("CPP_LIFE", std::string_view(R"({"filter":"cpp.life.0"})")), 3u);
    EXPECT_TRUE(contains(js.stream_info("CPP_LIFE"), R"("messages":2)"));
    EXPECT_EQ(js.purge_stream("CPP_LIFE"), 2u);
    EXPECT_TRUE(contains(js.stream_info("CPP_LIFE"), R"("messages":0)"));

    js.delete_stream("CPP_LIFE");
    js.delete_stream("CPP_LIFE2");
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { js.stream_info("CPP_LIFE"); });
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { js.delete_stream("CPP_LIFE"); });
    EXPECT_TRUE(contains(js.account_info(), R"("streams")"));
}

TEST(JetStream, ConfigErrorsNameTheField) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    std::string what = expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        js.create_stream(R"({"name":"CPP_CFG","max_age":"soon"})");
    });
    EXPECT_TRUE(contains(what, "max_age")) << what;
    what = expect_throws<natsio::ConfigError>(
        NATSIO_ERR_CONFIG, [&] { js.create_stream(R"({"name":"CPP_CFG","max_msgs":"many"})"); });
    EXPECT_TRUE(contains(what, "max_msgs")) << what;
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                       [&] { js.create_stream(R"({"subjects":["a"]})"); });
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] { js.create_stream("not json"); });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.create_stream(R"({"name":"a.b"})"); });
    // Nothing was created by the rejected configs.
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { js.stream_info("CPP_CFG"); });
    js.create_stream(R"({"name":"CPP_CFG","subjects":["cpp.cfg"],"storage":"memory"})");
    what = expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        js.purge_stream("CPP_CFG", std::string_view(R"({"keep":1,"seq":2})"));
    });
    EXPECT_FALSE(what.empty());
    // A server-side rejection (subjects overlapping another stream).
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] {
        js.create_stream(R"({"name":"CPP_CFG_OVERLAP","subjects":["cpp.cfg"],"storage":"memory"})");
    });
    // A JetStream context with a bad domain.
    natsio::JetStreamOptions bad;
    bad.domain = "bad domain";
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] { (void)natsio::JetStream(client, bad); });
    js.delete_stream("CPP_CFG");
}

TEST(JetStream, PublishAcksDedupesAndChecksExpectations) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(
        R"({"name":"CPP_PUB","subjects":["cpp.pub.>"],"storage":"memory","allow_msg_ttl":true})");

    natsio::PubAck first = js.publish("cpp.pub.a", "one");
    EXPECT_EQ(first.stream, "CPP_PUB");
    EXPECT_EQ(first.seq, 1u);
    EXPECT_FALSE(first.duplicate);
    EXPECT_FALSE(first.domain.has_value());

    // De-duplication by msg id.
    natsio::PublishOptions dedupe;
    dedupe.msg_id = "id-1";
    natsio::PubAck second = js.publish("cpp.pub.a", "two", dedupe);
    EXPECT_EQ(second.seq, 2u);
    EXPECT_FALSE(second.duplicate);
    natsio::PubAck again = js.publish("cpp.pub.a", "two again", dedupe);
    EXPECT_TRUE(again.duplicate);
    EXPECT_EQ(again.seq, 2u);

    // Expected last sequence: wrong, then right.
    natsio::PublishOptions expect_last;
    expect_last.expected_last_seq = 1;
    std::string what = expect_throws<natsio::WrongLastSequenceError>(
        NATSIO_ERR_WRONG_LAST_SEQUENCE, [&] { js.publish("cpp.pub.a", "x", expect_last); });
    EXPECT_TRUE(contains(what, "10071")) << what;
    expect_last.expected_last_seq = 2;
    EXPECT_EQ(js.publish("cpp.pub.a", "three", expect_last).seq, 3u);

    // Per subject: cpp.pub.b has no message yet (0), then seq 4.
    natsio::PublishOptions subject_seq;
    subject_seq.expected_last_subject_seq = 0;
    EXPECT_EQ(js.publish("cpp.pub.b", "b1", subject_seq).seq, 4u);
    expect_throws<natsio::WrongLastSequenceError>(NATSIO_ERR_WRONG_LAST_SEQUENCE,
                                                  [&] { js.publish("cpp.pub.b", "b2", subject_seq); });
    subject_seq.expected_last_subject_seq = 4;
    EXPECT_EQ(js.publish("cpp.pub.b", "b2", subject_seq).seq, 5u);

    // Expected last msg id and expected stream.
    natsio::PublishOptions last_id;
    last_id.expected_last_msg_id = "not-the-last";
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API,
                                    [&] { js.publish("cpp.pub.a", "x", last_id); });
    natsio::PublishOptions other_stream;
    other_stream.expected_stream = "CPP_OTHER";
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API,
                                    [&] { js.publish("cpp.pub.a", "x", other_stream); });

    // Headers and TTL arrive with the stored message.
    natsio::Headers headers;
    headers.set("X-Cpp", "yes");
    natsio::PublishOptions with_headers;
    with_headers.headers = headers;
    with_headers.ttl = natsio::ttl_never;
    const std::string binary("a\0b", 3);
    natsio::PubAck h = js.publish("cpp.pub.h", binary, with_headers);
    natsio::StoredMsg stored = js.get_msg("CPP_PUB", h.seq);
    EXPECT_EQ(stored.subject(), "cpp.pub.h");
    EXPECT_EQ(stored.seq(), h.seq);
    EXPECT_EQ(stored.data(), binary);
    EXPECT_EQ(stored.headers().get("X-Cpp"), std::optional<std::string_view>("yes"));
    EXPECT_EQ(stored.headers().get("Nats-TTL"), std::optional<std::string_view>("never"));
    EXPECT_TRUE(near_now(stored.time()));

    natsio::StoredMsg last_b = js.get_last_msg("CPP_PUB", "cpp.pub.b");
    EXPECT_EQ(last_b.seq(), 5u);
    EXPECT_EQ(last_b.data(), "b2");
    // (It carries the expectation header it was published with.)
    EXPECT_EQ(last_b.headers().get("Nats-Expected-Last-Subject-Sequence"),
              std::optional<std::string_view>("4"));
    natsio::StoredMsg plain = js.get_msg("CPP_PUB", 1);
    EXPECT_EQ(plain.data(), "one");
    EXPECT_FALSE(plain.headers());
    expect_throws<natsio::MessageNotFoundError>(
        NATSIO_ERR_MESSAGE_NOT_FOUND, [&] { js.get_last_msg("CPP_PUB", "cpp.pub.none"); });

    js.delete_msg("CPP_PUB", 3, false);  // marked deleted, not erased
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { js.get_msg("CPP_PUB", 3); });
    js.delete_msg("CPP_PUB", 1);  // erased (the default)
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { js.get_msg("CPP_PUB", 1); });
    // Past the last sequence.
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { js.get_msg("CPP_PUB", 99); });
    // Deleting a message that is not there (the server's err_code 10043).
    EXPECT_THROW(js.delete_msg("CPP_PUB", 1), natsio::MessageNotFoundError);
    EXPECT_THROW(js.delete_msg("CPP_PUB", 3, true), natsio::MessageNotFoundError);
    EXPECT_THROW(js.delete_msg("CPP_PUB", 99), natsio::MessageNotFoundError);
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { js.get_msg("CPP_NO_SUCH", 1); });
    js.delete_stream("CPP_PUB");
}

TEST(JetStream, HeaderConstantsAreNatsioHsAndTheServerActsOnThem) {
    static_assert(natsio::js_headers::MSG_ID == "Nats-Msg-Id");
    static_assert(natsio::js_headers::ROLLUP_SUBJECT == "sub");
    EXPECT_EQ(natsio::js_headers::EXPECTED_STREAM, "Nats-Expected-Stream");
    EXPECT_EQ(natsio::js_headers::REQUIRED_API_LEVEL, "Nats-Required-Api-Level");

    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_HDRS","subjects":["cpp.hdrs.>"],"storage":"memory","allow_rollup_hdrs":true})");
    natsio::Headers once;
    once.set(natsio::js_headers::MSG_ID, "once");
    natsio::PublishOptions dedupe;
    dedupe.headers = once;
    EXPECT_FALSE(js.publish("cpp.hdrs.a", "1", dedupe).duplicate);
    EXPECT_TRUE(js.publish("cpp.hdrs.a", "1", dedupe).duplicate);
    js.publish("cpp.hdrs.b", "b1");
    natsio::Headers rollup;
    rollup.set(natsio::js_headers::ROLLUP, natsio::js_headers::ROLLUP_SUBJECT);
    natsio::PublishOptions roll;
    roll.headers = rollup;
    js.publish("cpp.hdrs.b", "b2", roll);
    EXPECT_EQ(json_number(js.stream_info("CPP_HDRS"), "messages"), 2);
    js.delete_stream("CPP_HDRS");
}

TEST(JetStream, PublishWithoutStreamThrows) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    expect_throws<natsio::NoStreamResponseError>(NATSIO_ERR_NO_STREAM_RESPONSE,
                                                 [&] { js.publish("cpp.nostream.x", "x"); });
    natsio::Future<natsio::PubAck> pending = js.publish_async("cpp.nostream.y", "y");
    expect_throws<natsio::NoStreamResponseError>(NATSIO_ERR_NO_STREAM_RESPONSE,
                                                 [&] { pending.get(); });
    expect_throws<natsio::BadSubjectError>(NATSIO_ERR_BAD_SUBJECT, [&] { js.publish("a b", "x"); });
}

// PublishOptions::retry_attempts and retry_wait: a publish to a subject no
// stream holds is sent 1 + retries times, counted in the client's out_msgs
// (never timed), by publish and publish_async alike.
TEST(JetStream, PublishRetryAttemptsCountTheMessagesSent) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string nowhere = subject("nostream");
    struct Case {
        std::optional<int> attempts;
        std::optional<natsio::milliseconds> wait;
        std::uint64_t sent;
    };
    // Unset: the default 2 retries (once with the default 250 ms wait, once
    // with a short one); 0: none; 1 and 4: that many.
    const Case cases[] = {{std::nullopt, std::nullopt, 3}, {std::nullopt, 10ms, 3},
                          {0, 10ms, 1},                    {1, 10ms, 2},
                          {4, 10ms, 5}};
    for (const Case& c : cases) {
        natsio::PublishOptions options;
        options.retry_attempts = c.attempts;
        options.retry_wait = c.wait;
        const std::string label = "retry_attempts " +
                                  (c.attempts ? std::to_string(*c.attempts) : "unset") +
                                  ", retry_wait " +
                                  (c.wait ? std::to_string(c.wait->count()) + " ms" : "unset");
        std::uint64_t before = client.stats().out_msgs;
        expect_throws<natsio::NoStreamResponseError>(
            NATSIO_ERR_NO_STREAM_RESPONSE, [&] { js.publish(nowhere, "x", options); });
        EXPECT_EQ(client.stats().out_msgs - before, c.sent) << "publish, " << label;

        before = client.stats().out_msgs;
        natsio::Future<natsio::PubAck> pending = js.publish_async(nowhere, "x", options);
        expect_throws<natsio::NoStreamResponseError>(NATSIO_ERR_NO_STREAM_RESPONSE,
                                                     [&] { pending.get(); });
        EXPECT_EQ(client.stats().out_msgs - before, c.sent) << "publish_async, " << label;
    }

    // retry_wait reaches the library, shown by order rather than by time: a
    // publish whose one retry is a minute away has sent only its first
    // message when another, started after it, has gone through 4 retries
    // 250 ms (the default) apart. (With the default wait the first one's
    // retry would go out after 250 ms, before the other's second.)
    natsio::PublishOptions later;
    later.retry_attempts = 1;
    later.retry_wait = 60s;
    later.timeout = 120s;
    natsio::PublishOptions reference;
    reference.retry_attempts = 4;
    const std::uint64_t before = client.stats().out_msgs;
    natsio::Future<natsio::PubAck> waiting = js.publish_async(nowhere, "x", later);
    natsio::Future<natsio::PubAck> retried = js.publish_async(nowhere, "y", reference);
    expect_throws<natsio::NoStreamResponseError>(NATSIO_ERR_NO_STREAM_RESPONSE,
                                                 [&] { retried.get(); });
    EXPECT_EQ(client.stats().out_msgs - before, 1u + 5u);
    EXPECT_FALSE(waiting.ready());
    waiting.cancel();
    expect_throws<natsio::CancelledError>(NATSIO_ERR_CANCELLED, [&] { waiting.get(); });
}

TEST(JetStream, PublishRetryOptionsRejectNegativeAndZeroWait) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string nowhere = subject("nostream");
    using Invalid = natsio::InvalidArgumentError;
    const std::uint64_t before = client.stats().out_msgs;
    for (int attempts : {-1, -2, std::numeric_limits<int>::min()}) {
        natsio::PublishOptions options;
        options.retry_attempts = attempts;
        std::string what = expect_throws<Invalid>(
            NATSIO_ERR_INVALID_ARGUMENT, [&] { js.publish(nowhere, "x", options); });
        EXPECT_TRUE(contains(what, "retry_attempts")) << attempts << ": " << what;
        what = expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT,
                                      [&] { js.publish_async(nowhere, "x", options); });
        EXPECT_TRUE(contains(what, "retry_attempts")) << attempts << ": " << what;
    }
    for (natsio::milliseconds wait : {0ms, -1ms, -250ms}) {
        natsio::PublishOptions options;
        options.retry_wait = wait;
        std::string what = expect_throws<Invalid>(
            NATSIO_ERR_INVALID_ARGUMENT, [&] { js.publish(nowhere, "x", options); });
        EXPECT_TRUE(contains(what, "retry_wait")) << wait.count() << ": " << what;
        what = expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT,
                                      [&] { js.publish_async(nowhere, "x", options); });
        EXPECT_TRUE(contains(what, "retry_wait")) << wait.count() << ": " << what;
    }
    // Refused before anything was sent.
    client.flush();
    EXPECT_EQ(client.stats().out_msgs, before);
}

TEST(JetStream, AsyncPublishOfThousands) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_ASYNC","subjects":["cpp.async.>"],"storage":"memory"})");
    constexpr int kCount = 3000;
    std::vector<natsio::Future<natsio::PubAck>> futures;
    futures.reserve(kCount);
    for (int i = 0; i < kCount; ++i) {
        futures.push_back(js.publish_async("cpp.async." + std::to_string(i % 7), std::to_string(i)));
    }
    js.publish_async_complete(10s);
    EXPECT_EQ(js.publish_async_pending(), 0u);
    std::set<std::uint64_t> seqs;
    for (natsio::Future<natsio::PubAck>& future : futures) {
        // Every publish has completed: its Future is ready.
        ASSERT_TRUE(future.ready())
            << "status " << future.status() << " index " << (&future - futures.data())
            << " pending " << js.publish_async_pending();
        EXPECT_EQ(future.status(), NATSIO_OK);
        natsio::PubAck ack = future.get();
        EXPECT_EQ(ack.stream, "CPP_ASYNC");
        seqs.insert(ack.seq);
    }
    ASSERT_EQ(seqs.size(), static_cast<std::size_t>(kCount));
    EXPECT_EQ(*seqs.begin(), 1u);
    EXPECT_EQ(*seqs.rbegin(), static_cast<std::uint64_t>(kCount));
    EXPECT_TRUE(contains(js.stream_info("CPP_ASYNC"), R"("messages":3000)"));

    // A std::future taken from the result outlives the result and the context.
    std::future<natsio::PubAck> detached;
    {
        natsio::JetStream other(client);
        detached = other.publish_async("cpp.async.last", "last").to_std_future();
    }
    ASSERT_EQ(detached.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(detached.get().seq, static_cast<std::uint64_t>(kCount + 1));
    js.delete_stream("CPP_ASYNC");
}

TEST(JetStream, DeferredPublishesAreSent) {
    natsio::Client client = connect();
    // nats-server's first PING comes 2 to 2.4 s after the connect, and the
    // PONG would send what is queued: waited out (the next is 2 min away),
    // then a flush, whose PING follows the PONG.
    for (auto until = std::chrono::steady_clock::now() + 10s; client.stats().server_pings == 0;) {
        ASSERT_LT(std::chrono::steady_clock::now(), until) << "nats-server sent no PING within 10 s";
        std::this_thread::sleep_for(10ms);
    }
    client.flush();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_DEFER","subjects":["cpp.defer.>"],"storage":"memory"})");
    // An unanswered request: no publish is the only one awaiting a reply
    // (that one is written at once).
    natsio::Subscription silent = client.subscribe(subject("silent"));
    client.flush();
    natsio::Future<natsio::Msg> held = client.request_async(subject("silent"), "q", 60s);
    natsio::PublishOptions deferred;
    deferred.defer_send = true;
    // Polled, not waited on (a wait would send them): the first three by
    // the library's own tick, the next three by send_deferred.
    auto poll = [](natsio::Future<natsio::PubAck>& ack) {
        for (auto until = std::chrono::steady_clock::now() + 5s;
             !ack.ready() && std::chrono::steady_clock::now() < until;) {
            std::this_thread::sleep_for(1ms);
        }
        return ack.ready();
    };
    std::vector<natsio::Future<natsio::PubAck>> acks;
    for (int i = 0; i < 6; ++i) {
        acks.push_back(js.publish_async("cpp.defer.a", std::to_string(i), deferred));
        if (i == 2) {
            ASSERT_TRUE(poll(acks.back()));
        }
    }
    client.send_deferred();
    ASSERT_TRUE(poll(acks.back()));
    std::uint64_t seq = 0;
    for (natsio::Future<natsio::PubAck>& ack : acks) {
        ASSERT_TRUE(ack.ready());
        EXPECT_EQ(ack.get().seq, ++seq);
    }
    EXPECT_TRUE(contains(js.stream_info("CPP_DEFER"), R"("messages":6)"));
    js.delete_stream("CPP_DEFER");
}

TEST(JetStream, AsyncPublishStallsAndTimesOut) {
    natsio::Client client = connect();
    // A plain subscriber that never acks stands in for a stuck stream.
    natsio::Subscription sink = client.subscribe(subject("stuck"));
    client.flush();
    natsio::JetStreamOptions options;
    options.publish_async_max_pending = 2;
    options.publish_async_stall_wait = 50ms;
    options.publish_async_timeout = 300ms;
    natsio::JetStream js(client, options);
    natsio::Future<natsio::PubAck> one = js.publish_async(subject("stuck"), "1");
    natsio::Future<natsio::PubAck> two = js.publish_async(subject("stuck"), "2");
    expect_throws<natsio::TooManyStalledMsgsError>(
        NATSIO_ERR_TOO_MANY_STALLED, [&] { js.publish_async(subject("stuck"), "3"); });
    EXPECT_EQ(js.publish_async_pending(), 2u);
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT,
                                        [&] { js.publish_async_complete(10ms); });
    expect_throws<natsio::AsyncPublishTimeoutError>(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT,
                                                    [&] { one.get(); });
    expect_throws<natsio::AsyncPublishTimeoutError>(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT,
                                                    [&] { two.get(); });
    js.publish_async_complete(1s);
    // Room again; a cancelled publish completes with CancelledError.
    natsio::Future<natsio::PubAck> three = js.publish_async(subject("stuck"), "3");
    three.cancel();
    expect_throws<natsio::CancelledError>(NATSIO_ERR_CANCELLED, [&] { three.get(); });
    EXPECT_EQ(js.publish_async_pending(), 0u);
}

TEST(KeyValue, RoundTrips) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"CPP_KV","history":5,"storage":"memory"})");
    EXPECT_EQ(kv.bucket(), "CPP_KV");

    std::uint64_t r1 = kv.put("app.color", "red");
    natsio::KvEntry entry = kv.get("app.color");
    EXPECT_EQ(entry.bucket(), "CPP_KV");
    EXPECT_EQ(entry.key(), "app.color");
    EXPECT_EQ(entry.value(), "red");
    EXPECT_EQ(entry.revision(), r1);
    EXPECT_EQ(entry.operation(), natsio::KvOperation::Put);
    EXPECT_EQ(entry.delta(), 0u);
    EXPECT_TRUE(near_now(entry.created()));

    // Binary values keep their NUL bytes.
    const std::string binary("\0x\0", 3);
    kv.put("app.bin", binary);
    EXPECT_EQ(kv.get("app.bin").value(), binary);

    // Compare and set.
    std::uint64_t r2 = kv.update("app.color", "green", r1);
    EXPECT_GT(r2, r1);
    std::string what = expect_throws<natsio::WrongLastSequenceError>(
        NATSIO_ERR_WRONG_LAST_SEQUENCE, [&] { kv.update("app.color", "blue", r1); });
    EXPECT_FALSE(what.empty());
    EXPECT_EQ(kv.get("app.color").value(), "green");

    // History: the old revision, with one newer revision.
    natsio::KvEntry old = kv.get_revision("app.color", r1);
    EXPECT_EQ(old.value(), "red");
    EXPECT_EQ(old.revision(), r1);
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND,
                                            [&] { kv.get_revision("app.bin", r1); });

    // create only when there is no live value.
    expect_throws<natsio::KeyExistsError>(NATSIO_ERR_KEY_EXISTS,
                                          [&] { kv.create("app.color", "x"); });
    std::uint64_t created = kv.create("app.size", "L");
    EXPECT_EQ(kv.get("app.size").revision(), created);

    // delete: a marker; the key reads as deleted (also a KeyNotFoundError).
    expect_throws<natsio::WrongLastSequenceError>(NATSIO_ERR_WRONG_LAST_SEQUENCE,
                                                  [&] { kv.del("app.color", r1); });
    std::uint64_t deleted = kv.del("app.color", r2);
    EXPECT_GT(deleted, r2);
    {
        natsio::KvEntryList history = kv.history("app.color");
        ASSERT_EQ(history.size(), 3u);
        EXPECT_EQ(history[2].revision(), deleted);
        EXPECT_EQ(history[2].operation(), natsio::KvOperation::Del);
    }
    // Reading the marker's revision says the key was deleted there.
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED,
                                           [&] { kv.get_revision("app.color", deleted); });
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("app.color"); });
    EXPECT_THROW(kv.get("app.color"), natsio::KeyNotFoundError);
    EXPECT_FALSE(kv.try_get("app.color").has_value());
    EXPECT_EQ(kv.get_revision("app.color", r2).value(), "green");
    // A deleted key can be created again.
    std::uint64_t recreated = kv.create("app.color", "violet");
    EXPECT_EQ(kv.try_get("app.color")->revision(), recreated);

    // purge: earlier revisions are gone.
    std::uint64_t purged = kv.purge("app.color");
    EXPECT_GT(purged, recreated);
    EXPECT_EQ(kv.history("app.color").size(), 1u);
    EXPECT_EQ(kv.history("app.color")[0].revision(), purged);
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("app.color"); });
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND,
                                            [&] { kv.get_revision("app.color", r1); });
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { kv.get("missing"); });
    EXPECT_FALSE(kv.try_get("missing").has_value());

    for (const char* bad : {"", "a b", ".a", "a..b", "a*"}) {
        expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY, [&] { kv.put(bad, "x"); });
    }
    EXPECT_THROW(kv.get("a b"), natsio::ConfigError);

    std::string status = kv.status();
    EXPECT_TRUE(contains(status, R"("name":"KV_CPP_KV")")) << status;
    EXPECT_TRUE(contains(status, R"("max_msgs_per_subject":5)")) << status;
    js.delete_key_value("CPP_KV");
}

TEST(KeyValue, BucketErrors) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { js.key_value("CPP_NONE"); });
    expect_throws<natsio::InvalidBucketNameError>(NATSIO_ERR_INVALID_BUCKET_NAME,
                                                  [&] { js.key_value("bad.name"); });
    expect_throws<natsio::InvalidBucketNameError>(
        NATSIO_ERR_INVALID_BUCKET_NAME, [&] { js.create_key_value(R"({"bucket":"b c"})"); });
    std::string what = expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        js.create_key_value(R"({"bucket":"CPP_B","history":65})");
    });
    EXPECT_TRUE(contains(what, "history")) << what;
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                       [&] { js.create_key_value(R"({"history":2})"); });
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND, [&] {
        js.create_key_value(R"({"bucket":"CPP_B"})", natsio::CreateAction::Update);
    });

    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_B","storage":"memory"})");
    js.create_key_value(R"({"bucket":"CPP_B","storage":"memory"})");  // same: bound
    expect_throws<natsio::BucketExistsError>(NATSIO_ERR_BUCKET_EXISTS, [&] {
        js.create_key_value(R"({"bucket":"CPP_B","history":3,"storage":"memory"})");
    });
    js.create_key_value(R"({"bucket":"CPP_B","history":3,"storage":"memory"})",
                        natsio::CreateAction::Update);
    EXPECT_TRUE(contains(kv.status(), R"("max_msgs_per_subject":3)"));
    natsio::KeyValue other = js.create_key_value(R"({"bucket":"CPP_C","storage":"memory"})",
                                                 natsio::CreateAction::CreateOrUpdate);
    EXPECT_EQ(other.bucket(), "CPP_C");

    kv.put("k", "v1");
    natsio::KeyValue bound = js.key_value("CPP_B");
    EXPECT_EQ(bound.get("k").value(), "v1");

    js.delete_key_value("CPP_B");
    js.delete_key_value("CPP_C");
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { js.key_value("CPP_B"); });
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { js.delete_key_value("CPP_B"); });
}

TEST(JetStream, NotEnabledForTheAccount) {
    nt_server* server =
        nt_server_start("accounts: { NOJS: { users: [ { user: u, password: p } ] } }\n");
    ASSERT_NE(server, nullptr);
    std::unique_ptr<nt_server, void (*)(nt_server*)> stop(server, nt_server_stop);
    natsio::Client client = natsio::Client::connect(
        "nats://u:p@127.0.0.1:" + std::to_string(nt_server_port(server)));
    natsio::JetStream js(client);
    expect_throws<natsio::JetStreamNotEnabledError>(NATSIO_ERR_JS_NOT_ENABLED,
                                                    [&] { js.account_info(); });
    expect_throws<natsio::JetStreamNotEnabledError>(
        NATSIO_ERR_JS_NOT_ENABLED, [&] { js.create_stream(R"({"name":"S"})"); });
}

TEST(JetStream, UseAfterCloseThrowsConnectionClosed) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CLOSE","subjects":["cpp.close.>"],"storage":"memory"})");
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_CLOSE_KV","storage":"memory"})");
    kv.put("k", "v");
    // Clean up while still connected (the shared server outlives the test).
    js.delete_stream("CPP_CLOSE");
    client.close();

    const natsio::Status closed = NATSIO_ERR_CONNECTION_CLOSED;
    using Closed = natsio::ConnectionClosedError;
    expect_throws<Closed>(closed, [&] { js.stream_info("CPP_CLOSE"); });
    expect_throws<Closed>(closed, [&] { js.account_info(); });
    expect_throws<Closed>(closed, [&] { js.publish("cpp.close.a", "x"); });
    expect_throws<Closed>(closed, [&] { js.publish_async("cpp.close.a", "x"); });
    expect_throws<Closed>(closed, [&] { kv.put("k", "v2"); });
    expect_throws<Closed>(closed, [&] { kv.get("k"); });
    expect_throws<Closed>(closed, [&] { natsio::JetStream(client).stream_names(); });
    EXPECT_EQ(js.publish_async_pending(), 0u);

    // A context whose client was destroyed behaves the same.
    natsio::JetStream orphan;
    {
        natsio::Client gone = connect();
        orphan = natsio::JetStream(gone);
    }
    expect_throws<Closed>(closed, [&] { orphan.account_info(); });

    // Cleanup of the bucket through a fresh connection.
    natsio::Client again = connect();
    jetstream(again).delete_key_value("CPP_CLOSE_KV");
}

TEST(JetStream, MovedFromAndEmptyHandles) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::JetStream moved = std::move(js);
    EXPECT_FALSE(js);  // NOLINT(bugprone-use-after-move): the point of the test
    EXPECT_TRUE(moved);
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { js.account_info(); });
    EXPECT_EQ(js.publish_async_pending(), 0u);
    natsio::KeyValue kv;
    EXPECT_EQ(kv.bucket(), "");
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { kv.put("k", "v"); });
    natsio::KvEntry entry;
    EXPECT_EQ(entry.value(), "");
    EXPECT_EQ(entry.revision(), 0u);
    EXPECT_EQ(entry.operation(), natsio::KvOperation::Put);
    natsio::StoredMsg msg;
    EXPECT_EQ(msg.data(), "");
    EXPECT_FALSE(msg.headers());
    // A stream config with an embedded NUL never reaches the library.
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        moved.create_stream(std::string_view("{\"name\":\"A\0\"}", 12));
    });
}

TEST(JetStream, WrongLastSequenceNamesTheStatusOnce) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_WLS","subjects":["cpp.wls.>"],"storage":"memory"})");
    js.publish("cpp.wls.a", "one");
    js.publish("cpp.wls.a", "two");
    natsio::PublishOptions wrong;
    wrong.expected_last_seq = 1;  // the last is 2
    std::string what = expect_throws<natsio::WrongLastSequenceError>(
        NATSIO_ERR_WRONG_LAST_SEQUENCE, [&] { js.publish("cpp.wls.a", "x", wrong); });
    EXPECT_EQ(count_ignoring_case(what, "wrong last sequence"), 1u) << what;
    EXPECT_TRUE(contains(what, "10071")) << what;
    // The same text through a future.
    natsio::Future<natsio::PubAck> pending = js.publish_async("cpp.wls.a", "x", wrong);
    what = expect_throws<natsio::WrongLastSequenceError>(NATSIO_ERR_WRONG_LAST_SEQUENCE,
                                                         [&] { pending.get(); });
    EXPECT_EQ(count_ignoring_case(what, "wrong last sequence"), 1u) << what;
    // A detail that does not repeat the status text still follows it.
    what = expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                                      [&] { js.stream_info("CPP_WLS_NONE"); });
    const std::string not_found(natsio::status_text(NATSIO_ERR_STREAM_NOT_FOUND));
    EXPECT_EQ(count_ignoring_case(what.substr(0, not_found.size()), not_found), 1u) << what;
    EXPECT_EQ(count_ignoring_case(what, "stream not found"), 1u) << what;
    js.delete_stream("CPP_WLS");
}

TEST(JetStream, GetNextMsgWalksOneSubject) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_NEXT","subjects":["cpp.next.>"],"storage":"memory"})");
    // Interleaved: a b a c a b -> a at 1, 3, 5.
    const std::vector<std::string> order = {"a", "b", "a", "c", "a", "b"};
    for (std::size_t i = 0; i < order.size(); ++i) {
        js.publish("cpp.next." + order[i], numbered(order[i], static_cast<long long>(i + 1)));
    }

    std::vector<std::uint64_t> seqs;
    std::vector<std::string> data;
    std::uint64_t from = 1;
    for (;;) {
        natsio::StoredMsg msg;
        try {
            msg = js.get_next_msg("CPP_NEXT", from, "cpp.next.a");
        } catch (const natsio::MessageNotFoundError& e) {
            EXPECT_EQ(e.status(), NATSIO_ERR_MESSAGE_NOT_FOUND);
            break;
        }
        ASSERT_LT(seqs.size(), 10u) << "the walk does not end";
        EXPECT_EQ(msg.subject(), "cpp.next.a");
        seqs.push_back(msg.seq());
        data.emplace_back(msg.data());
        from = msg.seq() + 1;
    }
    EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 3, 5}));
    EXPECT_EQ(data, (std::vector<std::string>{"a1", "a3", "a5"}));

    // Wildcards: the first of any subject at or after 4 is c at 4; of b.
    natsio::StoredMsg any = js.get_next_msg("CPP_NEXT", 4, "cpp.next.*");
    EXPECT_EQ(any.seq(), 4u);
    EXPECT_EQ(any.subject(), "cpp.next.c");
    EXPECT_EQ(js.get_next_msg("CPP_NEXT", 3, "cpp.next.>").seq(), 3u);
    EXPECT_EQ(js.get_next_msg("CPP_NEXT", 3, "cpp.next.b").seq(), 6u);
    // A subject with no message at all, and past the end.
    expect_throws<natsio::MessageNotFoundError>(
        NATSIO_ERR_MESSAGE_NOT_FOUND, [&] { js.get_next_msg("CPP_NEXT", 1, "cpp.next.none"); });
    expect_throws<natsio::MessageNotFoundError>(
        NATSIO_ERR_MESSAGE_NOT_FOUND, [&] { js.get_next_msg("CPP_NEXT", 7, "cpp.next.>"); });
    expect_throws<natsio::StreamNotFoundError>(
        NATSIO_ERR_STREAM_NOT_FOUND, [&] { js.get_next_msg("CPP_NEXT_NONE", 1, "cpp.next.a"); });
    EXPECT_THROW(js.get_next_msg("CPP_NEXT", 1, "cpp..a"), natsio::BadSubjectError);

    // The future form walks the same way: b at 2, then 6, then not found.
    natsio::Future<natsio::StoredMsg> first = js.get_next_msg_async("CPP_NEXT", 1, "cpp.next.b");
    natsio::StoredMsg b = first.get();
    EXPECT_EQ(b.seq(), 2u);
    EXPECT_EQ(b.data(), "b2");
    natsio::StoredMsg b_next = js.get_next_msg_async("CPP_NEXT", b.seq() + 1, "cpp.next.b").get();
    EXPECT_EQ(b_next.seq(), 6u);
    EXPECT_EQ(b_next.data(), "b6");
    natsio::Future<natsio::StoredMsg> end =
        js.get_next_msg_async("CPP_NEXT", b_next.seq() + 1, "cpp.next.b");
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND, [&] { end.get(); });
    js.delete_stream("CPP_NEXT");
}

TEST(JetStream, DirectAndLeaderReadsReturnTheSameMessage) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(
        R"({"name":"CPP_DIRECT","subjects":["cpp.direct.>"],"storage":"memory","allow_direct":true})");
    js.create_stream(
        R"({"name":"CPP_LEADER","subjects":["cpp.leader.>"],"storage":"memory","allow_direct":false})");
    EXPECT_TRUE(contains(js.stream_info("CPP_DIRECT"), R"("allow_direct":true)"));
    EXPECT_FALSE(contains(js.stream_info("CPP_LEADER"), R"("allow_direct":true)"));

    // Watch which API each read goes through: Direct Get requests go to
    // $JS.API.DIRECT.GET.<stream>[.<subject>], leader reads to
    // $JS.API.STREAM.MSG.GET.<stream>.
    std::mutex seen_mutex;
    std::map<std::string, int> seen;  // "direct CPP_X" / "leader CPP_X" -> requests
    auto requests = [&](const std::string& key) {
        std::lock_guard<std::mutex> lock(seen_mutex);
        auto it = seen.find(key);
        return it == seen.end() ? 0 : it->second;
    };
    natsio::Client observer = connect();
    natsio::Subscription watch = observer.subscribe("$JS.API.>", [&](natsio::MsgView msg) {
        const std::string subject(msg.subject());
        const std::string direct = "$JS.API.DIRECT.GET.";
        const std::string leader = "$JS.API.STREAM.MSG.GET.";
        std::lock_guard<std::mutex> lock(seen_mutex);
        if (subject.rfind(direct, 0) == 0) {
            std::string rest = subject.substr(direct.size());
            ++seen["direct " + rest.substr(0, rest.find('.'))];
        } else if (subject.rfind(leader, 0) == 0) {
            ++seen["leader " + subject.substr(leader.size())];
        }
    });
    observer.flush();

    natsio::Headers headers;
    headers.set("X-Cpp", "same");
    natsio::PublishOptions with_headers;
    with_headers.headers = headers;
    for (const char* stream : {"direct", "leader"}) {
        const std::string prefix = std::string("cpp.") + stream + ".";
        js.publish(prefix + "x", "x1");
        js.publish(prefix + "y", "y2", with_headers);
        js.publish(prefix + "x", std::string("x\0" "3", 3));
    }

    auto expect_same = [](const natsio::StoredMsg& direct, const natsio::StoredMsg& leader) {
        ASSERT_TRUE(direct);
        ASSERT_TRUE(leader);
        EXPECT_EQ(direct.seq(), leader.seq());
        EXPECT_EQ(direct.data(), leader.data());
        // The subjects differ only in the stream's prefix.
        EXPECT_EQ(direct.subject().substr(std::string("cpp.direct.").size()),
                  leader.subject().substr(std::string("cpp.leader.").size()));
        EXPECT_EQ(direct.headers().get("X-Cpp"), leader.headers().get("X-Cpp"));
    };
    for (std::uint64_t seq = 1; seq <= 3; ++seq) {
        natsio::StoredMsg direct = js.get_msg("CPP_DIRECT", seq);
        natsio::StoredMsg leader = js.get_msg("CPP_LEADER", seq);
        expect_same(direct, leader);
        EXPECT_EQ(direct.subject(), seq == 2 ? "cpp.direct.y" : "cpp.direct.x");
    }
    natsio::StoredMsg direct_y = js.get_msg("CPP_DIRECT", 2);
    EXPECT_EQ(direct_y.data(), "y2");
    EXPECT_EQ(direct_y.headers().get("X-Cpp"), std::optional<std::string_view>("same"));
    EXPECT_TRUE(near_now(direct_y.time()));
    expect_same(js.get_last_msg("CPP_DIRECT", "cpp.direct.x"),
                js.get_last_msg("CPP_LEADER", "cpp.leader.x"));
    EXPECT_EQ(js.get_last_msg("CPP_DIRECT", "cpp.direct.x").data(), std::string("x\0" "3", 3));
    expect_same(js.get_next_msg("CPP_DIRECT", 2, "cpp.direct.x"),
                js.get_next_msg("CPP_LEADER", 2, "cpp.leader.x"));
    expect_same(js.get_next_msg_async("CPP_DIRECT", 1, "cpp.direct.y").get(),
                js.get_next_msg_async("CPP_LEADER", 1, "cpp.leader.y").get());
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { js.get_msg("CPP_DIRECT", 9); });
    expect_throws<natsio::MessageNotFoundError>(
        NATSIO_ERR_MESSAGE_NOT_FOUND, [&] { js.get_next_msg("CPP_DIRECT", 4, "cpp.direct.>"); });

    // Each stream was read through its own API: 10 reads of CPP_DIRECT by
    // Direct Get, 6 of CPP_LEADER from the leader, none the other way.
    client.flush();
    EXPECT_TRUE(wait_until([&] {
        return requests("direct CPP_DIRECT") == 10 && requests("leader CPP_LEADER") == 6;
    })) << "direct " << requests("direct CPP_DIRECT") << ", leader "
        << requests("leader CPP_LEADER");
    EXPECT_EQ(requests("leader CPP_DIRECT"), 0);
    EXPECT_EQ(requests("direct CPP_LEADER"), 0);
    // (The watcher must go: its interest in the API subjects would turn the
    // quick "no responders" of a Direct Get on a deleted stream into a
    // timeout.)
    watch.stop();
    observer.flush();

    // Once a stream is gone, reads throw: through this context (which
    // learnt of the delete) and through one that still thinks it exists.
    natsio::JetStream other(client);
    EXPECT_EQ(other.get_msg("CPP_DIRECT", 1).data(), "x1");
    EXPECT_EQ(other.get_msg("CPP_LEADER", 1).data(), "x1");
    js.delete_stream("CPP_DIRECT");
    js.delete_stream("CPP_LEADER");
    auto expect_gone = [](const natsio::JetStream& reader, const char* stream) {
        try {
            reader.get_msg(stream, 1);
            ADD_FAILURE() << stream << ": read after delete";
        } catch (const natsio::ApiError& e) {
            EXPECT_TRUE(e.status() == NATSIO_ERR_MESSAGE_NOT_FOUND ||
                        e.status() == NATSIO_ERR_STREAM_NOT_FOUND)
                << stream << ": " << e.what();
        }
    };
    for (const char* stream : {"CPP_DIRECT", "CPP_LEADER"}) {
        expect_gone(js, stream);
        expect_gone(other, stream);
    }
}

TEST(JetStream, StreamInfoWithSubjectsCountsPerSubject) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(
        R"({"name":"CPP_SUBJ","subjects":["cpp.subj.a.>","cpp.subj.b.>"],"storage":"memory"})");
    js.publish("cpp.subj.a.1", "x");
    js.publish("cpp.subj.a.2", "x");
    js.publish("cpp.subj.b.1", "x");
    js.publish("cpp.subj.a.1", "x");

    std::string info = js.stream_info_with_subjects("CPP_SUBJ", "cpp.subj.a.>");
    EXPECT_EQ(config_name(info), "CPP_SUBJ") << info;
    EXPECT_TRUE(contains(info, R"("messages":4)")) << info;
    EXPECT_EQ(subject_counts(info),
              (std::map<std::string, std::uint64_t>{{"cpp.subj.a.1", 2}, {"cpp.subj.a.2", 1}}))
        << info;
    EXPECT_EQ(subject_counts(js.stream_info_with_subjects("CPP_SUBJ", ">")),
              (std::map<std::string, std::uint64_t>{
                  {"cpp.subj.a.1", 2}, {"cpp.subj.a.2", 1}, {"cpp.subj.b.1", 1}}));
    EXPECT_EQ(subject_counts(js.stream_info_with_subjects("CPP_SUBJ", "cpp.subj.a.2")),
              (std::map<std::string, std::uint64_t>{{"cpp.subj.a.2", 1}}));
    EXPECT_TRUE(subject_counts(js.stream_info_with_subjects("CPP_SUBJ", "cpp.subj.c.>")).empty());
    // Plain stream_info has no per-subject counts.
    EXPECT_TRUE(subject_counts(js.stream_info("CPP_SUBJ")).empty());

    natsio::Future<std::string> pending = js.stream_info_with_subjects_async("CPP_SUBJ", "*.*.b.*");
    EXPECT_EQ(subject_counts(pending.get()),
              (std::map<std::string, std::uint64_t>{{"cpp.subj.b.1", 1}}));

    expect_throws<natsio::BadSubjectError>(NATSIO_ERR_BAD_SUBJECT, [&] {
        js.stream_info_with_subjects("CPP_SUBJ", "cpp..a");
    });
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND, [&] {
        js.stream_info_with_subjects("CPP_SUBJ_NONE", ">");
    });
    natsio::Future<std::string> missing = js.stream_info_with_subjects_async("CPP_SUBJ_NONE", ">");
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { missing.get(); });
    js.delete_stream("CPP_SUBJ");
}

TEST(JetStream, StreamInfosListsEveryStream) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_INFOS_1","subjects":["cpp.infos.one.>"],"storage":"memory"})");
    js.create_stream(R"({"name":"CPP_INFOS_2","subjects":["cpp.infos.two.>"],"storage":"memory"})");
    js.publish("cpp.infos.two.x", "x");

    std::vector<std::string> infos = js.stream_infos();
    std::vector<std::string> names = config_names(infos);
    std::vector<std::string> expected_names = js.stream_names();
    std::sort(expected_names.begin(), expected_names.end());
    EXPECT_EQ(names, expected_names);
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "CPP_INFOS_1"));
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "CPP_INFOS_2"));
    for (const std::string& info : infos) {
        if (config_name(info) == "CPP_INFOS_2") {
            EXPECT_TRUE(contains(info, R"("messages":1)")) << info;
            EXPECT_TRUE(contains(info, R"("state")")) << info;
        }
    }

    // A subject narrows the list to the streams holding it.
    EXPECT_EQ(config_names(js.stream_infos(std::string_view("cpp.infos.one.x"))),
              std::vector<std::string>{"CPP_INFOS_1"});
    EXPECT_EQ(config_names(js.stream_infos(std::string_view("cpp.infos.two.>"))),
              std::vector<std::string>{"CPP_INFOS_2"});
    EXPECT_EQ(config_names(js.stream_infos(std::string_view("cpp.infos.*.x"))),
              (std::vector<std::string>{"CPP_INFOS_1", "CPP_INFOS_2"}));
    EXPECT_TRUE(js.stream_infos(std::string_view("cpp.nobody.z")).empty());

    // The future forms.
    natsio::Future<std::vector<std::string>> all = js.stream_infos_async();
    EXPECT_EQ(config_names(all.get()), expected_names);
    natsio::Future<std::vector<std::string>> one =
        js.stream_infos_async(std::string_view("cpp.infos.one.y"));
    std::vector<std::string> only = one.get();
    ASSERT_EQ(only.size(), 1u);
    EXPECT_EQ(config_name(only[0]), "CPP_INFOS_1");

    js.delete_stream("CPP_INFOS_1");
    EXPECT_TRUE(js.stream_infos(std::string_view("cpp.infos.one.x")).empty());
    EXPECT_EQ(config_names(js.stream_infos(std::string_view("cpp.infos.>"))),
              std::vector<std::string>{"CPP_INFOS_2"});
    js.delete_stream("CPP_INFOS_2");
}

TEST(JetStream, ApiLevel) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::uint64_t level = js.api_level();
    EXPECT_GE(level, 1u);  // the test server is 2.14
    natsio::Future<std::uint64_t> pending = js.api_level_async();
    EXPECT_EQ(pending.get(), level);
    // A context without a client: the argument error comes at once.
    natsio::JetStream none;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { none.api_level(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { none.api_level_async(); });
}

TEST(JetStream, PubAckCounterAndBatchFields) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_PLAIN","subjects":["cpp.plain.>"],"storage":"memory"})");
    natsio::PubAck plain = js.publish("cpp.plain.a", "x");
    EXPECT_EQ(plain.batch_size, 0u);
    EXPECT_FALSE(plain.val.has_value()) << *plain.val;
    EXPECT_FALSE(plain.batch_id.has_value()) << *plain.batch_id;
    natsio::PubAck plain_async = js.publish_async("cpp.plain.a", "y").get();
    EXPECT_EQ(plain_async.seq, 2u);
    EXPECT_EQ(plain_async.batch_size, 0u);
    EXPECT_FALSE(plain_async.val.has_value());
    EXPECT_FALSE(plain_async.batch_id.has_value());
    js.delete_stream("CPP_PLAIN");

    try {
        js.create_stream(
            R"({"name":"CPP_COUNTER","subjects":["cpp.counter.>"],"storage":"memory","allow_msg_counter":true})");
    } catch (const natsio::ApiError& e) {
        GTEST_SKIP() << "the server rejects allow_msg_counter: " << e.what();
    }
    natsio::Headers incr;
    incr.set("Nats-Incr", "5");
    natsio::PublishOptions add_five;
    add_five.headers = incr;
    natsio::PubAck first = js.publish("cpp.counter.hits", {}, add_five);
    ASSERT_TRUE(first.val.has_value());
    EXPECT_EQ(*first.val, "5");
    natsio::PubAck second = js.publish("cpp.counter.hits", {}, add_five);
    ASSERT_TRUE(second.val.has_value());
    EXPECT_EQ(*second.val, "10");
    EXPECT_EQ(second.seq, first.seq + 1);
    EXPECT_EQ(second.batch_size, 0u);
    EXPECT_FALSE(second.batch_id.has_value());
    // Through a future, and on another counter subject.
    natsio::PubAck third = js.publish_async("cpp.counter.hits", {}, add_five).get();
    ASSERT_TRUE(third.val.has_value());
    EXPECT_EQ(*third.val, "15");
    natsio::PubAck other = js.publish("cpp.counter.misses", {}, add_five);
    ASSERT_TRUE(other.val.has_value());
    EXPECT_EQ(*other.val, "5");
    js.delete_stream("CPP_COUNTER");
}

// ---------------------------------------------------------------------------
// get_last_msgs_for: one batch Direct Get, read through a StoredMsgs feed
// ---------------------------------------------------------------------------

static_assert(std::is_same_v<natsio::StoredMsgs, natsio::Feed<natsio::detail::StoredMsgsFeed>>);
static_assert(std::is_same_v<natsio::StoredMsgs::value_type, natsio::StoredMsg>);
static_assert(std::is_same_v<natsio::StoredMsgs::view_type, natsio::StoredMsgView>);
static_assert(!std::is_copy_constructible_v<natsio::StoredMsgs> &&
              std::is_nothrow_move_constructible_v<natsio::StoredMsgs>);
static_assert(std::is_convertible_v<const natsio::StoredMsg&, natsio::StoredMsgView>);

namespace {

/// A stream CPP_LASTS_<tag> on "cpp.lasts.<tag>.>" (with allow_direct unless
/// `direct` is false) holding a.1 b.1 a.2 b.2 a.3 (sequences 1 to 5), then
/// a.1 again (6); each payload is its subject's tail ("a.1", ..., "a.1
/// again"). Deleted when it goes out of scope, failed assertions included.
class LastsStream {
public:
    LastsStream(const natsio::JetStream& js, const std::string& tag, bool direct = true)
        : js_(js), name_("CPP_LASTS_" + tag), prefix_("cpp.lasts." + tag + ".") {
        js.create_stream(R"({"name":")" + name_ + R"(","subjects":[")" + prefix_ +
                         R"(>"],"storage":"memory","allow_direct":)" +
                         (direct ? "true" : "false") + "}");
        for (const char* tail : {"a.1", "b.1", "a.2", "b.2", "a.3"}) {
            js.publish(prefix_ + tail, tail);
        }
        js.publish(prefix_ + "a.1", "a.1 again");
    }
    LastsStream(const LastsStream&) = delete;
    LastsStream& operator=(const LastsStream&) = delete;
    ~LastsStream() {
        try {
            js_.delete_stream(name_);
        } catch (const std::exception& e) {
            ADD_FAILURE() << "deleting " << name_ << ": " << e.what();
        }
    }

    const std::string& name() const { return name_; }
    /// The full subject for `tail` ("a.*" -> "cpp.lasts.<tag>.a.*").
    std::string subject(const std::string& tail) const { return prefix_ + tail; }
    /// The tail of a subject of this stream.
    std::string tail(std::string_view subject) const {
        return std::string(subject.substr(prefix_.size()));
    }

private:
    const natsio::JetStream& js_;
    std::string name_;
    std::string prefix_;
};

/// The sequences a StoredMsgs yields through next() until its end (at most
/// 20, so a read that never ends fails instead of hanging).
std::vector<std::uint64_t> drain_seqs(const natsio::StoredMsgs& msgs) {
    std::vector<std::uint64_t> seqs;
    while (std::optional<natsio::StoredMsg> msg = msgs.next(5s)) {
        seqs.push_back(msg->seq());
        if (seqs.size() >= 20) {
            ADD_FAILURE() << "the batch read does not end";
            break;
        }
    }
    return seqs;
}

using Seqs = std::vector<std::uint64_t>;

}  // namespace

TEST(JetStream, LastMsgsForYieldsTheLastOfEachSubjectInStreamOrder) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    LastsStream stream(js, "order");

    // The last of each a.* subject, in stream order: a.2 (3), a.3 (5), a.1 (6).
    natsio::StoredMsgs msgs = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    ASSERT_TRUE(msgs);
    EXPECT_NE(msgs.c_handle(), nullptr);
    natsio::StoredMsg first = next_item(msgs);
    EXPECT_EQ(first.seq(), 3u);
    EXPECT_EQ(stream.tail(first.subject()), "a.2");
    EXPECT_EQ(first.data(), "a.2");
    EXPECT_TRUE(near_now(first.time()));
    // Direct Get's metadata comes along in the headers.
    EXPECT_EQ(first.headers().get("Nats-Sequence"), std::optional<std::string_view>("3"));
    natsio::StoredMsg second = next_item(msgs);
    EXPECT_EQ(second.seq(), 5u);
    EXPECT_EQ(stream.tail(second.subject()), "a.3");
    natsio::StoredMsg third = next_item(msgs);
    EXPECT_EQ(third.seq(), 6u);
    EXPECT_EQ(stream.tail(third.subject()), "a.1");
    EXPECT_EQ(third.data(), "a.1 again");
    // Then the end, and the end again on every later call.
    EXPECT_FALSE(msgs.next(5s).has_value());
    EXPECT_FALSE(msgs.next(natsio::no_wait).has_value());
    EXPECT_FALSE(msgs.next().has_value());
    EXPECT_EQ(msgs.stats().delivered, 3u);
    EXPECT_EQ(msgs.stats().pending_items, 0u);

    // Two filters, as a std::vector<std::string>: a.1 (6), b.1 (2), b.2 (4).
    const std::vector<std::string> two = {stream.subject("a.1"), stream.subject("b.>")};
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), two)), (Seqs{2, 4, 6}));
    // The same as a braced list and as a std::array of views.
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(),
                                              {stream.subject("a.1"), stream.subject("b.>")})),
              (Seqs{2, 4, 6}));
    const std::string b1 = stream.subject("b.1");
    const std::string a3 = stream.subject("a.3");
    const std::array<std::string_view, 2> views = {b1, a3};
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), views)), (Seqs{2, 5}));
    // Overlapping filters yield each subject's last message once.
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(),
                                              {stream.subject("a.*"), stream.subject(">")})),
              (Seqs{2, 3, 4, 5, 6}));

    // No subject matches: the read ends at once, empty.
    natsio::StoredMsgs none = js.get_last_msgs_for(stream.name(), stream.subject("zzz"));
    EXPECT_FALSE(none.next(5s).has_value());
    EXPECT_FALSE(none.next(natsio::no_wait).has_value());
    EXPECT_EQ(none.stats().delivered, 0u);
}

TEST(JetStream, LastMsgsForBatchAndUpToBounds) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    LastsStream stream(js, "bounds");
    const std::string a_any = stream.subject("a.*");

    // A batch cap: the first two in stream order.
    natsio::LastMsgsOptions capped;
    capped.batch = 2;
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), a_any, capped)), (Seqs{3, 5}));
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(
                  stream.name(), {stream.subject("a.1"), stream.subject("b.>")}, capped)),
              (Seqs{2, 4}));

    // As of sequence 4 (before a.3 and a.1 again): a.1 (1), a.2 (3). The
    // bound includes its own sequence.
    natsio::LastMsgsOptions as_of_4;
    as_of_4.up_to_seq = 4;
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), a_any, as_of_4)), (Seqs{1, 3}));
    natsio::LastMsgsOptions as_of_3;
    as_of_3.up_to_seq = 3;
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), a_any, as_of_3)), (Seqs{1, 3}));
    natsio::LastMsgsOptions as_of_4_one;
    as_of_4_one.up_to_seq = 4;
    as_of_4_one.batch = 1;
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), a_any, as_of_4_one)), (Seqs{1}));

    // As of a time: the messages stored before the time a.3 (5) was stored.
    natsio::LastMsgsOptions before_5;
    before_5.up_to_time = js.get_msg(stream.name(), 5).time();
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), a_any, before_5)), (Seqs{1, 3}));
    // A time after every message is the same as now; one before the stream
    // existed finds nothing.
    natsio::LastMsgsOptions later;
    later.up_to_time = std::chrono::system_clock::now() + std::chrono::hours(1);
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), a_any, later)), (Seqs{3, 5, 6}));
    natsio::LastMsgsOptions earlier;
    earlier.up_to_time = js.get_msg(stream.name(), 1).time() - std::chrono::hours(1);
    EXPECT_EQ(drain_seqs(js.get_last_msgs_for(stream.name(), a_any, earlier)), Seqs{});
}

TEST(JetStream, LastMsgsForRangeFor) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    LastsStream stream(js, "range");

    std::vector<std::string> tails;
    Seqs seqs;
    for (natsio::StoredMsg& msg : js.get_last_msgs_for(stream.name(), stream.subject("a.*"))) {
        seqs.push_back(msg.seq());
        tails.push_back(stream.tail(msg.subject()));
        // A view of an owned message reads the same.
        natsio::StoredMsgView view = msg;
        EXPECT_EQ(view.seq(), msg.seq());
        EXPECT_EQ(view.data(), msg.data());
        EXPECT_EQ(view.c_msg(), msg.c_msg());
    }
    EXPECT_EQ(seqs, (Seqs{3, 5, 6}));
    EXPECT_EQ(tails, (std::vector<std::string>{"a.2", "a.3", "a.1"}));

    // An empty read: the loop body never runs.
    int iterations = 0;
    for (natsio::StoredMsg& msg : js.get_last_msgs_for(stream.name(), stream.subject("zzz"))) {
        (void)msg;
        ++iterations;
    }
    EXPECT_EQ(iterations, 0);

    // The owned items can be moved out of the loop.
    std::vector<natsio::StoredMsg> kept;
    natsio::StoredMsgs msgs = js.get_last_msgs_for(stream.name(), stream.subject("b.*"));
    for (natsio::StoredMsg& msg : msgs) {
        kept.push_back(std::move(msg));
    }
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(kept[0].data(), "b.1");
    EXPECT_EQ(kept[1].data(), "b.2");
    EXPECT_EQ(msgs.stats().delivered, 2u);
}

TEST(JetStream, LastMsgsForCallbackGetsEveryMessageThenTheEnd) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    LastsStream stream(js, "callback");

    std::mutex mutex;
    Seqs seqs;
    std::vector<std::string> data;
    int ends = 0;
    std::promise<std::exception_ptr> ended;
    std::future<std::exception_ptr> end = ended.get_future();
    natsio::StoredMsgs msgs = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    msgs.set_callback(
        [&](natsio::StoredMsgView msg) {
            std::lock_guard<std::mutex> lock(mutex);
            seqs.push_back(msg.seq());
            data.emplace_back(msg.data());
        },
        [&](std::exception_ptr error) {
            {
                std::lock_guard<std::mutex> lock(mutex);
                ++ends;
            }
            ended.set_value(error);
        });
    ASSERT_EQ(end.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(end.get(), nullptr);
    {
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_EQ(seqs, (Seqs{3, 5, 6}));
        EXPECT_EQ(data, (std::vector<std::string>{"a.2", "a.3", "a.1 again"}));
        EXPECT_EQ(ends, 1);
    }
    EXPECT_EQ(msgs.stats().delivered, 3u);
    // A second callback is refused; so is an empty item handler.
    expect_throws<natsio::IllegalStateError>(
        NATSIO_ERR_ILLEGAL_STATE, [&] { msgs.set_callback([](natsio::StoredMsgView) {}); });
    natsio::StoredMsgs other = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { other.set_callback(nullptr); });

    // Items read with next() first: the callback gets the rest, in order.
    natsio::StoredMsgs partly = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    EXPECT_EQ(next_item(partly).seq(), 3u);
    std::promise<Seqs> rest_promise;
    std::future<Seqs> rest = rest_promise.get_future();
    auto collected = std::make_shared<Seqs>();
    partly.set_callback([collected](natsio::StoredMsgView msg) { collected->push_back(msg.seq()); },
                        [collected, &rest_promise](std::exception_ptr error) {
                            EXPECT_EQ(error, nullptr);
                            rest_promise.set_value(*collected);
                        });
    ASSERT_EQ(rest.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(rest.get(), (Seqs{5, 6}));

    // A throwing item handler goes to the client's error handler, naming
    // the message's subject; delivery goes on.
    auto reported = std::make_shared<std::vector<natsio::AsyncError>>();
    auto reported_mutex = std::make_shared<std::mutex>();
    natsio::Options options;
    options.set_url(server_url()).on_error([reported, reported_mutex](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(*reported_mutex);
        reported->push_back(e);
    });
    natsio::Client reporting = natsio::Client::connect(options);
    natsio::JetStream reporting_js(reporting);
    std::promise<Seqs> after_throw_promise;
    std::future<Seqs> after_throw = after_throw_promise.get_future();
    auto delivered = std::make_shared<Seqs>();
    natsio::StoredMsgs throwing =
        reporting_js.get_last_msgs_for(stream.name(), stream.subject("b.*"));
    throwing.set_callback(
        [delivered](natsio::StoredMsgView msg) {
            delivered->push_back(msg.seq());
            throw std::runtime_error("handler failure (expected by the test)");
        },
        [delivered, &after_throw_promise](std::exception_ptr) {
            after_throw_promise.set_value(*delivered);
        });
    ASSERT_EQ(after_throw.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(after_throw.get(), (Seqs{2, 4}));
    std::lock_guard<std::mutex> lock(*reported_mutex);
    ASSERT_EQ(reported->size(), 2u);
    for (std::size_t i = 0; i < reported->size(); ++i) {
        const natsio::AsyncError& e = (*reported)[i];
        EXPECT_EQ(e.source, natsio::AsyncError::Source::Handler);
        EXPECT_EQ(e.sid, 0u);
        EXPECT_EQ(e.subject, stream.subject(i == 0 ? "b.1" : "b.2"));
        EXPECT_TRUE(contains(e.text, "handler failure")) << e.text;
    }
}

TEST(JetStream, LastMsgsForNextAsync) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    LastsStream stream(js, "async");

    natsio::StoredMsgs msgs = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    // Pending futures are served in call order; the fourth sees the end.
    std::vector<natsio::Future<std::optional<natsio::StoredMsg>>> futures;
    for (int i = 0; i < 4; ++i) {
        futures.push_back(msgs.next_async());
    }
    Seqs seqs;
    for (int i = 0; i < 3; ++i) {
        std::optional<natsio::StoredMsg> msg = futures[static_cast<std::size_t>(i)].get();
        ASSERT_TRUE(msg.has_value()) << "future " << i;
        seqs.push_back(msg->seq());
    }
    EXPECT_EQ(seqs, (Seqs{3, 5, 6}));
    EXPECT_FALSE(futures[3].get().has_value());
    EXPECT_EQ(futures[3].status(), NATSIO_DONE);
    // After the end, a new future completes with the end too.
    EXPECT_FALSE(msgs.next_async().get().has_value());

    // A future can be turned into a std::future, and mixed with next().
    natsio::StoredMsgs mixed = js.get_last_msgs_for(stream.name(), stream.subject("b.*"));
    std::future<std::optional<natsio::StoredMsg>> first = mixed.next_async().to_std_future();
    ASSERT_EQ(first.wait_for(5s), std::future_status::ready);
    std::optional<natsio::StoredMsg> b1 = first.get();
    ASSERT_TRUE(b1.has_value());
    EXPECT_EQ(b1->seq(), 2u);
    EXPECT_EQ(next_item(mixed).seq(), 4u);
    EXPECT_FALSE(mixed.next_async().get().has_value());
}

TEST(JetStream, LastMsgsForStopsEarly) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    LastsStream stream(js, "stop");

    // After one message: the end, now and later; stop is idempotent.
    natsio::StoredMsgs msgs = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    EXPECT_EQ(next_item(msgs).seq(), 3u);
    msgs.stop();
    msgs.stop();
    EXPECT_FALSE(msgs.next(1s).has_value());
    EXPECT_FALSE(msgs.next(natsio::no_wait).has_value());
    EXPECT_FALSE(msgs.next_async().get().has_value());
    int iterations = 0;
    for (natsio::StoredMsg& msg : msgs) {
        (void)msg;
        ++iterations;
    }
    EXPECT_EQ(iterations, 0);

    // Before any message.
    natsio::StoredMsgs unread = js.get_last_msgs_for(stream.name(), stream.subject(">"));
    unread.stop();
    EXPECT_FALSE(unread.next(1s).has_value());

    // A pending future completes with the end.
    natsio::StoredMsgs waiting = js.get_last_msgs_for(stream.name(), stream.subject("zzz"));
    waiting.stop();
    EXPECT_FALSE(waiting.next_async().get().has_value());

    // In push mode, the end handler has run (once, without error) when
    // stop() returns.
    std::atomic<int> ends{0};
    std::atomic<bool> failed{false};
    natsio::StoredMsgs pushed = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    pushed.set_callback([](natsio::StoredMsgView) {},
                        [&](std::exception_ptr error) {
                            if (error) failed = true;
                            ++ends;
                        });
    pushed.stop();
    EXPECT_EQ(ends.load(), 1);
    EXPECT_FALSE(failed.load());
    pushed.stop();
    EXPECT_EQ(ends.load(), 1);

    // Destroying a running read stops it.
    {
        natsio::StoredMsgs dropped = js.get_last_msgs_for(stream.name(), stream.subject("a.*"));
    }
    // A moved-from owner holds nothing; the moved-to one reads on.
    natsio::StoredMsgs source = js.get_last_msgs_for(stream.name(), stream.subject("b.*"));
    natsio::StoredMsgs target = std::move(source);
    EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move): the point of the test
    EXPECT_EQ(drain_seqs(target), (Seqs{2, 4}));
}

TEST(JetStream, LastMsgsForWithoutDirectGetFailsWithNoResponders) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    LastsStream stream(js, "nodirect", /*direct=*/false);
    EXPECT_FALSE(contains(js.stream_info(stream.name()), R"("allow_direct":true)"));
    const std::string any = stream.subject(">");

    // next() throws the error that ended the read, again on every call.
    natsio::StoredMsgs msgs = js.get_last_msgs_for(stream.name(), any);
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS, [&] { msgs.next(5s); });
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS,
                                             [&] { msgs.next(natsio::no_wait); });
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS,
                                             [&] { msgs.next_async().get(); });

    // Range-for throws it too.
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS, [&] {
        for (natsio::StoredMsg& msg : js.get_last_msgs_for(stream.name(), any)) {
            ADD_FAILURE() << "a message from a stream without Direct Get: " << msg.seq();
        }
    });

    // In push mode the end handler gets it.
    std::promise<std::exception_ptr> ended;
    std::future<std::exception_ptr> end = ended.get_future();
    natsio::StoredMsgs pushed = js.get_last_msgs_for(stream.name(), any);
    pushed.set_callback(
        [](natsio::StoredMsgView msg) { ADD_FAILURE() << "unexpected message " << msg.seq(); },
        [&](std::exception_ptr error) { ended.set_value(error); });
    ASSERT_EQ(end.wait_for(5s), std::future_status::ready);
    std::exception_ptr error = end.get();
    ASSERT_NE(error, nullptr);
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS,
                                             [&] { std::rethrow_exception(error); });

    // No such stream: nobody answers either.
    natsio::StoredMsgs missing = js.get_last_msgs_for("CPP_LASTS_MISSING", any);
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS, [&] { missing.next(5s); });
}

TEST(JetStream, LastMsgsForRejectsBadArguments) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_LASTS_ARGS";  // never created: nothing is sent
    const std::string a_any = "cpp.lasts.args.a.*";
    using Invalid = natsio::InvalidArgumentError;

    // No subjects.
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT,
                           [&] { js.get_last_msgs_for(stream, std::vector<std::string>{}); });
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.get_last_msgs_for(stream, std::initializer_list<std::string_view>{});
    });
    // A malformed filter, alone or among good ones.
    expect_throws<natsio::BadSubjectError>(
        NATSIO_ERR_BAD_SUBJECT, [&] { js.get_last_msgs_for(stream, "cpp.lasts.args..a"); });
    expect_throws<natsio::BadSubjectError>(NATSIO_ERR_BAD_SUBJECT, [&] {
        js.get_last_msgs_for(stream, {std::string_view(a_any), "cpp.lasts.args.>.b"});
    });
    // A filter with an embedded NUL never reaches the library.
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.get_last_msgs_for(stream, std::string_view("cpp.lasts.a\0b", 13));
    });
    // Both bounds.
    natsio::LastMsgsOptions both;
    both.up_to_seq = 4;
    both.up_to_time = std::chrono::system_clock::now();
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT,
                           [&] { js.get_last_msgs_for(stream, a_any, both); });
    // Bounds the C ABI would read as unset.
    natsio::LastMsgsOptions seq_zero;
    seq_zero.up_to_seq = 0;
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT,
                           [&] { js.get_last_msgs_for(stream, a_any, seq_zero); });
    natsio::LastMsgsOptions epoch;
    epoch.up_to_time = std::chrono::system_clock::time_point();
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT,
                           [&] { js.get_last_msgs_for(stream, a_any, epoch); });
    // A bad stream name.
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT,
                           [&] { js.get_last_msgs_for("CPP.LASTS", a_any); });
    // No context; no iterator.
    natsio::JetStream none;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                           [&] { none.get_last_msgs_for(stream, a_any); });
    natsio::StoredMsgs empty;
    EXPECT_FALSE(empty);
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { empty.next(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { empty.next_async(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { empty.stop(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { empty.stats(); });
    // A default-built view reads as empty.
    natsio::StoredMsgView view;
    EXPECT_FALSE(view);
    EXPECT_EQ(view.subject(), "");
    EXPECT_EQ(view.data(), "");
    EXPECT_EQ(view.seq(), 0u);
    // A closed client.
    client.close();
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { js.get_last_msgs_for(stream, a_any); });
}
