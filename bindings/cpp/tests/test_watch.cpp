// Continuous consumption (JetStream::consume -> natsio::Messages) and KV
// watches (KeyValue::watch -> natsio::KvWatcher) through
// natsio/jetstream.hpp: order, acks, timeouts that keep the consumption
// going, stop() from another thread, a consumer that goes away, the watch's
// initial values / initial-done marker / live changes, its options and
// patterns, its recovery, and use after the client is closed. Built into
// both the C++17 and the C++20 test programs (each has its own server).
#include "js_support.hpp"

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

using namespace natsio_test;

namespace {

natsio::ConsumeOptions consume_options(std::int64_t max_messages, natsio::milliseconds expires,
                                       natsio::milliseconds idle_heartbeat) {
    natsio::ConsumeOptions options;
    options.max_messages = max_messages;
    options.expires = expires;
    options.idle_heartbeat = idle_heartbeat;
    return options;
}

/// The (key, value, operation) of a watched entry.
using Change = std::tuple<std::string, std::string, natsio::KvOperation>;

Change change(const natsio::KvEntryView& entry) {
    return Change(std::string(entry.key()), std::string(entry.value()), entry.operation());
}

/// The next entry of `w`, which must be a revision (not the marker).
natsio::KvEntry next_entry(const natsio::KvWatcher& w) {
    natsio::KvEntry entry = next_item(w);
    EXPECT_FALSE(entry.initial_done()) << "the initial-done marker, expected an entry";
    return entry;
}

Change next_change(const natsio::KvWatcher& w) {
    natsio::KvEntry entry = next_entry(w);
    return entry ? change(entry) : Change();
}

/// The next entry of `w` must be the initial-values marker.
void expect_initial_done(const natsio::KvWatcher& w) {
    natsio::KvEntry entry = next_item(w);
    EXPECT_TRUE(entry.initial_done()) << "an entry for key " << entry.key();
    EXPECT_EQ(entry.operation(), natsio::KvOperation::InitialDone);
    EXPECT_EQ(entry.key(), "");
    EXPECT_EQ(entry.value(), "");
    EXPECT_EQ(entry.revision(), 0u);
}

constexpr natsio::KvOperation Put = natsio::KvOperation::Put;
constexpr natsio::KvOperation Del = natsio::KvOperation::Del;
constexpr natsio::KvOperation Purge = natsio::KvOperation::Purge;

}  // namespace

static_assert(!std::is_copy_constructible_v<natsio::Messages>);
static_assert(!std::is_copy_assignable_v<natsio::Messages>);
static_assert(std::is_nothrow_move_constructible_v<natsio::Messages>);
static_assert(std::is_nothrow_move_assignable_v<natsio::Messages>);
static_assert(!std::is_copy_constructible_v<natsio::KvWatcher>);
static_assert(std::is_nothrow_move_constructible_v<natsio::KvWatcher>);
static_assert(std::is_nothrow_move_assignable_v<natsio::KvWatcher>);
static_assert(std::is_same_v<decltype(std::declval<const natsio::Messages&>().next(1ms)),
                             std::optional<natsio::Msg>>);
static_assert(std::is_same_v<decltype(std::declval<const natsio::KvWatcher&>().next(1ms)),
                             std::optional<natsio::KvEntry>>);
static_assert(std::is_same_v<decltype(std::declval<const natsio::KvWatcher&>().next_async()),
                             natsio::Future<std::optional<natsio::KvEntry>>>);

// ---------------------------------------------------------------------------
// Consume
// ---------------------------------------------------------------------------

TEST(Consume, ThousandInOrderThroughASmallWindow) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CNS","subjects":["cpp.cns.>"],"storage":"memory"})");
    js.create_consumer("CPP_CNS", R"({"durable_name":"d","ack_policy":"explicit"})");
    for (int i = 0; i < 1000; ++i) {
        js.publish_async("cpp.cns.x", std::to_string(i));
    }
    js.publish_async_complete(10s);

    natsio::Messages msgs = js.consume("CPP_CNS", "d", consume_options(64, 2s, 500ms));
    EXPECT_TRUE(msgs);
    for (int i = 0; i < 1000; ++i) {
        std::optional<natsio::Msg> msg = msgs.next(5s);
        ASSERT_TRUE(msg.has_value()) << "message " << i << " did not come";
        ASSERT_EQ(msg->data(), std::to_string(i));
        natsio::JsMsgMetadata meta = msg->js_metadata();
        EXPECT_EQ(meta.stream_seq, static_cast<std::uint64_t>(i) + 1);
        EXPECT_EQ(meta.num_delivered, 1u);
        msg->ack();
    }
    // Every message acknowledged; nothing left for the consumer.
    EXPECT_TRUE(wait_until([&] {
        std::string info = js.consumer_info("CPP_CNS", "d");
        return contains(info, R"("num_ack_pending":0)") && contains(info, R"("num_pending":0)");
    })) << js.consumer_info("CPP_CNS", "d");
    expect_quiet(msgs, 100ms);
    natsio::IterStats stats = msgs.stats();
    EXPECT_EQ(stats.delivered, 1000u);
    EXPECT_EQ(stats.pending_items, 0u);
    msgs.stop();
    EXPECT_FALSE(msgs.next(100ms).has_value());
    js.delete_stream("CPP_CNS");
}

TEST(Consume, TimeoutThenLaterPublish) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CNT","subjects":["cpp.cnt"],"storage":"memory"})");
    js.create_consumer("CPP_CNT", R"({"durable_name":"d","ack_policy":"explicit"})");
    js.publish("cpp.cnt", "early");
    natsio::Messages msgs = js.consume("CPP_CNT", "d", consume_options(10, 1s, 500ms));
    std::optional<natsio::Msg> early = msgs.next(5s);
    ASSERT_TRUE(early.has_value());
    EXPECT_EQ(early->data(), "early");
    early->ack();

    // Nothing more: a bounded wait times out, across the expiry of the
    // first pull request (1 s), and the consumption goes on.
    auto t0 = std::chrono::steady_clock::now();
    expect_quiet(msgs, 1300ms);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 1250ms);
    js.publish("cpp.cnt", "late");
    std::optional<natsio::Msg> late = msgs.next(5s);
    ASSERT_TRUE(late.has_value());
    EXPECT_EQ(late->data(), "late");
    EXPECT_EQ(late->js_metadata().stream_seq, 2u);
    late->ack();
    // no_wait only looks.
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { msgs.next(natsio::no_wait); });
    js.delete_stream("CPP_CNT");
}

TEST(Consume, StopFromAnotherThreadUnblocksNext) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CNSTOP","subjects":["cpp.cnstop"],"storage":"memory"})");
    js.create_consumer("CPP_CNSTOP", R"({"durable_name":"d","ack_policy":"none"})");
    natsio::Messages msgs = js.consume("CPP_CNSTOP", "d");

    auto t0 = std::chrono::steady_clock::now();
    std::thread stopper([&msgs] {
        std::this_thread::sleep_for(200ms);
        msgs.stop();
    });
    // stop() ends the iteration: the blocked next() returns std::nullopt.
    EXPECT_FALSE(msgs.next(natsio::forever).has_value());
    stopper.join();
    auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 150ms);
    EXPECT_LT(waited, 3s);
    // Stopped for good, even with messages available; stop is idempotent.
    js.publish("cpp.cnstop", "after");
    msgs.stop();
    EXPECT_FALSE(msgs.next(1s).has_value());
    EXPECT_FALSE(msgs.next_async().get().has_value());
    js.delete_stream("CPP_CNSTOP");
}

TEST(Consume, RangeForEndsOnStop) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CNRANGE","subjects":["cpp.cnrange"],"storage":"memory"})");
    js.create_consumer("CPP_CNRANGE", R"({"durable_name":"d","ack_policy":"explicit"})");
    for (int i = 0; i < 5; ++i) {
        js.publish("cpp.cnrange", "r" + std::to_string(i));
    }
    natsio::Messages msgs = js.consume("CPP_CNRANGE", "d", consume_options(2, 1s, 0ms));
    std::vector<std::string> bodies;
    for (natsio::Msg& msg : msgs) {
        bodies.emplace_back(msg.data());
        msg.ack();
        if (bodies.size() == 5) {
            msgs.stop();
        }
    }
    EXPECT_EQ(bodies, (std::vector<std::string>{"r0", "r1", "r2", "r3", "r4"}));

    // The same loop, stopped from another thread while it waits.
    natsio::Messages more = js.consume("CPP_CNRANGE", "d");
    std::thread stopper([&more] {
        std::this_thread::sleep_for(100ms);
        more.stop();
    });
    int extra = 0;
    for (natsio::Msg& msg : more) {
        (void)msg;
        ++extra;
    }
    stopper.join();
    EXPECT_EQ(extra, 0);
    js.delete_stream("CPP_CNRANGE");
}

TEST(Consume, ConsumerDeletedEndsConsumption) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CNDEL","subjects":["cpp.cndel"],"storage":"memory"})");
    js.create_consumer("CPP_CNDEL", R"({"durable_name":"d","ack_policy":"explicit"})");
    // A consumer deleted under an open pull request ends the consumption
    // with CONSUMER_DELETED (the server's 409 on that request). The
    // requests last 30 s with 5 s heartbeats, so the deletion meets the
    // open one: with 2 s requests one could expire just before the delete
    // and the next pull find no consumer (CONSUMER_NOT_FOUND).
    natsio::Messages msgs = js.consume("CPP_CNDEL", "d", consume_options(10, 30s, 5s));
    std::thread deleter([&js] {
        // Delete once the consume's pull request is waiting on the server.
        EXPECT_TRUE(wait_until(
            [&] { return !contains(js.consumer_info("CPP_CNDEL", "d"), R"("num_waiting":0)"); }, 10s));
        js.delete_consumer("CPP_CNDEL", "d");
    });
    try {
        msgs.next(20s);
        ADD_FAILURE() << "next went on after the consumer was deleted";
    } catch (const natsio::ConsumerDeletedError& e) {
        EXPECT_EQ(e.status(), NATSIO_ERR_CONSUMER_DELETED);
        EXPECT_EQ(e.detail(), R"(consumer "d" was deleted)");
    }
    deleter.join();

    // A consumer that does not exist cannot be consumed.
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.consume("CPP_CNDEL", "d"); });
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { js.consume("CPP_CNDEL", "never"); });
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { js.consume("CPP_CNDEL_NONE", "d"); });
    js.delete_stream("CPP_CNDEL");
}

TEST(Consume, BadOptionsMovesAndEmptyHandles) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_CNBAD","subjects":["cpp.cnbad"],"storage":"memory"})");
    js.create_consumer("CPP_CNBAD", R"({"durable_name":"d","ack_policy":"none"})");
    using Invalid = natsio::InvalidArgumentError;
    // A heartbeat over half the request's lifetime, a lifetime under 1 s,
    // negative values, bad names: rejected before anything is sent.
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.consume("CPP_CNBAD", "d", consume_options(10, 2s, 2s));
    });
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.consume("CPP_CNBAD", "d", consume_options(10, 500ms, 0ms));
    });
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        js.consume("CPP_CNBAD", "d", consume_options(-1, 0ms, 0ms));
    });
    expect_throws<Invalid>(NATSIO_ERR_INVALID_ARGUMENT, [&] { js.consume("CPP_CNBAD", "a.b"); });

    // A moved consumption keeps running; the moved-from one has no handle.
    js.publish("cpp.cnbad", "one");
    natsio::Messages first = js.consume("CPP_CNBAD", "d");
    natsio::Messages moved = std::move(first);
    EXPECT_FALSE(first);  // NOLINT(bugprone-use-after-move): the point
    std::optional<natsio::Msg> one = moved.next(5s);
    ASSERT_TRUE(one.has_value());
    EXPECT_EQ(one->data(), "one");
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { first.next(10ms); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { first.stop(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { first.next_async(); });
    // Move-assigning over a running consumption stops and frees it.
    natsio::Messages other = js.consume("CPP_CNBAD", "d");
    other = std::move(moved);
    js.publish("cpp.cnbad", "two");
    std::optional<natsio::Msg> two = other.next(5s);
    ASSERT_TRUE(two.has_value());
    EXPECT_EQ(two->data(), "two");

    natsio::Messages none;
    EXPECT_FALSE(none);
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { none.next(10ms); });
    natsio::JetStream no_js;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { no_js.consume("CPP_CNBAD", "d"); });
    js.delete_stream("CPP_CNBAD");
}

// ---------------------------------------------------------------------------
// KV watch
// ---------------------------------------------------------------------------

TEST(KvWatch, InitialValuesThenMarkerThenLiveChanges) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"CPP_W","history":5,"storage":"memory"})");
    kv.put("a.1", "x1");
    std::uint64_t a1 = kv.put("a.1", "x2");
    std::uint64_t b1 = kv.put("b.1", "y");
    kv.put("gone", "g");
    kv.del("gone");

    natsio::KvWatcher w = kv.watch();
    EXPECT_TRUE(w);
    // The latest revision of each key (a delete marker included), oldest
    // first; the last initial value has no newer one.
    natsio::KvEntry first = next_entry(w);
    EXPECT_EQ(change(first), Change("a.1", "x2", Put));
    EXPECT_EQ(first.revision(), a1);
    EXPECT_EQ(first.bucket(), "CPP_W");
    natsio::KvEntry second = next_entry(w);
    EXPECT_EQ(change(second), Change("b.1", "y", Put));
    EXPECT_EQ(second.revision(), b1);
    natsio::KvEntry third = next_entry(w);
    EXPECT_EQ(change(third), Change("gone", "", Del));
    EXPECT_EQ(third.delta(), 0u);
    expect_initial_done(w);
    expect_quiet(w);

    // Live: put, delete, purge, each once and in order.
    std::uint64_t c = kv.put("c", "z");
    natsio::KvEntry put = next_entry(w);
    EXPECT_EQ(change(put), Change("c", "z", Put));
    EXPECT_EQ(put.revision(), c);
    kv.del("a.1");
    EXPECT_EQ(next_change(w), Change("a.1", "", Del));
    kv.purge("b.1");
    EXPECT_EQ(next_change(w), Change("b.1", "", Purge));
    expect_quiet(w);
    // Stopping a watcher ends it and deletes its server consumer.
    EXPECT_EQ(js.consumer_names("KV_CPP_W").size(), 1u);
    w.stop();
    EXPECT_FALSE(w.next(1s).has_value());
    EXPECT_TRUE(wait_until([&] { return js.consumer_names("KV_CPP_W").empty(); }));
    // So does destroying one.
    natsio::KvWatchOptions updates;
    updates.updates_only = true;
    natsio::KvWatcher other = kv.watch(updates);
    expect_initial_done(other);
    EXPECT_EQ(js.consumer_names("KV_CPP_W").size(), 1u);
    other = natsio::KvWatcher();
    EXPECT_TRUE(wait_until([&] { return js.consumer_names("KV_CPP_W").empty(); }));
    js.delete_key_value("CPP_W");
}

TEST(KvWatch, EmptyBucketAndUpdatesOnly) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_WUPD","storage":"memory"})");
    // An empty bucket: the marker right away.
    natsio::KvWatcher all = kv.watch();
    expect_initial_done(all);

    kv.put("old", "1");
    EXPECT_EQ(next_change(all), Change("old", "1", Put));
    natsio::KvWatchOptions updates;
    updates.updates_only = true;
    natsio::KvWatcher w = kv.watch(updates);
    // No initial values: the marker first, then only new changes.
    expect_initial_done(w);
    expect_quiet(w);
    kv.put("new", "2");
    EXPECT_EQ(next_change(w), Change("new", "2", Put));
    kv.put("old", "3");
    EXPECT_EQ(next_change(w), Change("old", "3", Put));
    expect_quiet(w);
    js.delete_key_value("CPP_WUPD");
}

TEST(KvWatch, IncludeHistoryIgnoreDeletesMetaOnly) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"CPP_WOPT","history":10,"storage":"memory"})");
    kv.put("k", "v1");
    kv.put("k", "v2");
    kv.put("k", "v3");
    kv.del("k");
    kv.put("other", "o");
    kv.put("dropped", "d");
    kv.del("dropped");

    // Every kept revision, oldest first, with the number of newer ones.
    natsio::KvWatchOptions history;
    history.include_history = true;
    natsio::KvWatcher h = kv.watch("k", history);
    std::vector<Change> got;
    std::vector<std::uint64_t> deltas;
    for (int i = 0; i < 4; ++i) {
        natsio::KvEntry entry = next_entry(h);
        got.push_back(change(entry));
        deltas.push_back(entry.delta());
    }
    EXPECT_EQ(got, (std::vector<Change>{{"k", "v1", Put}, {"k", "v2", Put}, {"k", "v3", Put},
                                         {"k", "", Del}}));
    EXPECT_EQ(deltas, (std::vector<std::uint64_t>{3, 2, 1, 0}));
    expect_initial_done(h);
    // Without include_history: only the latest.
    natsio::KvWatcher latest = kv.watch("k");
    EXPECT_EQ(next_change(latest), Change("k", "", Del));
    expect_initial_done(latest);

    // ignore_deletes: deleted keys are not among the initial values, and
    // live delete/purge markers are left out.
    natsio::KvWatchOptions no_deletes;
    no_deletes.ignore_deletes = true;
    natsio::KvWatcher nd = kv.watch(no_deletes);
    EXPECT_EQ(next_change(nd), Change("other", "o", Put));
    expect_initial_done(nd);
    kv.del("other");
    kv.purge("k");
    kv.put("k", "back");
    EXPECT_EQ(next_change(nd), Change("k", "back", Put));
    expect_quiet(nd);

    // meta_only: key, revision and operation without the value.
    natsio::KvWatchOptions meta;
    meta.meta_only = true;
    natsio::KvWatcher m = kv.watch("k", meta);
    natsio::KvEntry entry = next_entry(m);
    EXPECT_EQ(entry.key(), "k");
    EXPECT_EQ(entry.operation(), Put);
    EXPECT_EQ(entry.value(), "");
    EXPECT_EQ(entry.revision(), kv.get("k").revision());
    expect_initial_done(m);
    js.delete_key_value("CPP_WOPT");
}

TEST(KvWatch, Patterns) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_WPAT","storage":"memory"})");
    kv.put("a.1", "a1");
    kv.put("a.2.deep", "no");
    kv.put("b.1.x", "b1x");
    kv.put("c", "c");

    auto initial = [](const natsio::KvWatcher& w) {
        std::vector<std::string> keys;
        for (;;) {
            natsio::KvEntry entry = next_item(w);
            if (entry.initial_done()) {
                break;
            }
            keys.emplace_back(entry.key());
        }
        return keys;
    };
    using Keys = std::vector<std::string>;
    // A list: `*` one token, `>` the rest.
    natsio::KvWatcher s = kv.watch(std::vector<std::string>{"a.*", "b.>"});
    EXPECT_EQ(initial(s), (Keys{"a.1", "b.1.x"}));
    // One pattern.
    natsio::KvWatcher v = kv.watch("a.*");
    EXPECT_EQ(initial(v), (Keys{"a.1"}));
    natsio::KvWatcher l = kv.watch({"c", "a.*.deep"});
    EXPECT_EQ(initial(l), (Keys{"a.2.deep", "c"}));
    // ">" and an empty list: every key.
    EXPECT_EQ(initial(kv.watch(">")), (Keys{"a.1", "a.2.deep", "b.1.x", "c"}));
    EXPECT_EQ(initial(kv.watch(std::vector<std::string>{})),
              (Keys{"a.1", "a.2.deep", "b.1.x", "c"}));

    // Live changes outside the patterns are not delivered.
    kv.put("c", "c2");
    kv.put("a.3", "a3");
    kv.put("b.2", "b2");
    EXPECT_EQ(next_change(s), Change("a.3", "a3", Put));
    EXPECT_EQ(next_change(s), Change("b.2", "b2", Put));
    expect_quiet(s);
    EXPECT_EQ(next_change(l), Change("c", "c2", Put));
    expect_quiet(l);
    js.delete_key_value("CPP_WPAT");
}

TEST(KvWatch, InvalidPatternThrowsInvalidKey) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_WBAD","storage":"memory"})");
    using Bad = natsio::InvalidKeyError;
    // A comma is no separator: it is not allowed in a key.
    for (const char* bad : {"", "a..b", "a.>.b", "a*", "*x", "a b", "a,", ",a", "a.*,b.>"}) {
        SCOPED_TRACE(bad);
        expect_throws<Bad>(NATSIO_ERR_INVALID_KEY, [&] { kv.watch(bad); });
    }
    // Nor in a list; an empty pattern is bad too.
    expect_throws<Bad>(NATSIO_ERR_INVALID_KEY,
                       [&] { kv.watch(std::vector<std::string>{"a", "b,c"}); });
    expect_throws<Bad>(NATSIO_ERR_INVALID_KEY, [&] { kv.watch({"a", ""}); });
    expect_throws<Bad>(NATSIO_ERR_INVALID_KEY, [&] { kv.watch({"a.>.b"}); });
    // InvalidKeyError is a ConfigError; an embedded NUL is an argument error.
    EXPECT_THROW(kv.watch("a b"), natsio::ConfigError);
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { kv.watch(std::string_view("a\0b", 3)); });
    // Nothing was left running on the server.
    EXPECT_TRUE(js.consumer_names("KV_CPP_WBAD").empty());

    natsio::KeyValue none;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { none.watch(); });
    natsio::KvWatcher empty;
    EXPECT_FALSE(empty);
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { empty.next(10ms); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { empty.stop(); });
    js.delete_key_value("CPP_WBAD");
}

TEST(KvWatch, RecoversAfterItsConsumerIsDeleted) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_WREC","storage":"memory"})");
    kv.put("a", "1");
    natsio::KvWatcher w = kv.watch();
    EXPECT_EQ(next_change(w), Change("a", "1", Put));
    expect_initial_done(w);
    kv.put("b", "2");
    EXPECT_EQ(next_change(w), Change("b", "2", Put));

    // The consumer vanishes (as after a server restart): the watch
    // recreates it after the last revision seen, without repeating any.
    std::vector<std::string> consumers = js.consumer_names("KV_CPP_WREC");
    ASSERT_EQ(consumers.size(), 1u);
    js.delete_consumer("KV_CPP_WREC", consumers[0]);
    kv.put("c", "3");
    EXPECT_EQ(next_change(w), Change("c", "3", Put));
    kv.del("a");
    EXPECT_EQ(next_change(w), Change("a", "", Del));
    expect_quiet(w, 300ms);
    js.delete_key_value("CPP_WREC");
}

TEST(KvWatch, StopFromAnotherThreadUnblocksNext) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_WSTOP","storage":"memory"})");
    natsio::KvWatcher w = kv.watch();
    expect_initial_done(w);

    auto t0 = std::chrono::steady_clock::now();
    std::future<void> stopper = std::async(std::launch::async, [&w] {
        std::this_thread::sleep_for(200ms);
        w.stop();
    });
    EXPECT_FALSE(w.next(natsio::forever).has_value());
    stopper.get();
    auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 150ms);
    EXPECT_LT(waited, 3s);
    kv.put("after", "x");
    w.stop();
    EXPECT_FALSE(w.next(1s).has_value());
    js.delete_key_value("CPP_WSTOP");
}

// ---------------------------------------------------------------------------
// Both, after the client is closed
// ---------------------------------------------------------------------------

TEST(ConsumeAndWatch, UseAfterClientClose) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_WCLOSE","subjects":["cpp.wclose"],"storage":"memory"})");
    js.create_consumer("CPP_WCLOSE", R"({"durable_name":"d","ack_policy":"none"})");
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_WCLOSE","storage":"memory"})");
    natsio::Messages msgs = js.consume("CPP_WCLOSE", "d", consume_options(10, 1s, 500ms));
    natsio::KvWatcher w = kv.watch();
    expect_initial_done(w);
    expect_quiet(msgs, 50ms);
    client.close();

    const natsio::Status closed = NATSIO_ERR_CONNECTION_CLOSED;
    using Closed = natsio::ConnectionClosedError;
    expect_throws<Closed>(closed, [&] { js.consume("CPP_WCLOSE", "d"); });
    expect_throws<Closed>(closed, [&] { kv.watch(); });
    expect_throws<Closed>(closed, [&] { kv.watch("a.*"); });
    // The running consumption and watch end too, at once.
    auto expect_ended_by_close = [](auto&& call) {
        auto t0 = std::chrono::steady_clock::now();
        try {
            call();
            ADD_FAILURE() << "no exception after the client was closed";
        } catch (const natsio::ConnectionClosedError& e) {
            EXPECT_EQ(e.status(), NATSIO_ERR_CONNECTION_CLOSED);
        }
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
    };
    {
        SCOPED_TRACE("msgs.next");
        expect_ended_by_close([&] { msgs.next(2s); });
    }
    {
        SCOPED_TRACE("w.next");
        expect_ended_by_close([&] { w.next(2s); });
    }
    // Stopping and destroying after the close is fine.
    msgs.stop();
    w.stop();
    msgs = natsio::Messages();
    w = natsio::KvWatcher();

    delete_through_new_client("CPP_WCLOSE", "CPP_WCLOSE");
}

#if __cplusplus >= 202002L
TEST(ConsumeAndWatch, DesignatedOptions) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_WDESIG","subjects":["cpp.wdesig"],"storage":"memory"})");
    js.create_consumer("CPP_WDESIG", R"({"durable_name":"d","ack_policy":"none"})");
    js.publish("cpp.wdesig", "a");
    natsio::Messages msgs =
        js.consume("CPP_WDESIG", "d", {.max_messages = 8, .expires = 1s});
    std::optional<natsio::Msg> a = msgs.next(5s);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->data(), "a");

    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_WDESIG","storage":"memory"})");
    kv.put("x.1", "1");
    natsio::KvWatcher updates = kv.watch({.updates_only = true});
    expect_initial_done(updates);
    natsio::KvWatcher hist = kv.watch("x.*", {.include_history = true, .ignore_deletes = true});
    EXPECT_EQ(next_change(hist), Change("x.1", "1", Put));
    expect_initial_done(hist);
    kv.put("x.2", "2");
    EXPECT_EQ(next_change(updates), Change("x.2", "2", Put));
    EXPECT_EQ(next_change(hist), Change("x.2", "2", Put));
    js.delete_stream("CPP_WDESIG");
    js.delete_key_value("CPP_WDESIG");
}
#endif
