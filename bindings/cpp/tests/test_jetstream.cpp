// JetStream and Key-Value through natsio/jetstream.hpp: streams, publish
// acks and expectations, asynchronous publishes as futures, KV buckets and
// keys, and one exception class per JetStream/KV status. Built into both the
// C++17 and the C++20 test programs (each has its own server).
#include "js_support.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

using namespace natsio_test;

namespace {

natsio::JetStream jetstream(const natsio::Client& client) { return natsio::JetStream(client); }

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

    js.delete_msg("CPP_PUB", 3);
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { js.get_msg("CPP_PUB", 3); });
    js.delete_msg("CPP_PUB", 1, true);
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
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { js.account_info(); });
    EXPECT_EQ(js.publish_async_pending(), 0u);
    natsio::KeyValue kv;
    EXPECT_EQ(kv.bucket(), "");
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
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
