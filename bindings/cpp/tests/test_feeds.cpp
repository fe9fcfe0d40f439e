// The iterator contract (natsio::Feed), the same typed cases for each kind:
// Subscription, Replies (request_many), Messages (consume) and KvWatcher.
// next, next_async (call order, cancel, withdraw), stop -> end, push mode
// with buffered items first and one final end call, no callback after stop
// returns, the error that ends an iteration, stats. Then consume and watch
// delivering what the library buffered while the reader was away. Built into
// both the C++17 and the C++20 test programs.
#include "js_support.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace natsio_test;

namespace {

/// A unique name per test and kind, for streams, buckets and subjects.
std::string unique_name(const std::string& kind) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("CPPF_") + kind + "_" + info->name();
    for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) {
            c = '_';
        }
    }
    return name;
}

/// What a client's error handler received.
struct Reported {
    std::mutex mutex;
    std::vector<natsio::AsyncError> errors;

    std::vector<natsio::AsyncError> snapshot() {
        std::lock_guard<std::mutex> lock(mutex);
        return errors;
    }
};

natsio::Client connect_reporting(const std::shared_ptr<Reported>& reported) {
    natsio::Options options;
    options.set_url(server_url()).on_error([reported](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(reported->mutex);
        reported->errors.push_back(e);
    });
    return natsio::Client::connect(options);
}

// Each kind: make() builds the feed and what produces its items;
// produce(text) makes one item whose payload is `text`; payload() reads an
// item or a view back. The feed's client reports to `reported`; items are
// produced through a second client, so closing the first one ends the feed
// with ConnectionClosedError.
struct KindBase {
    std::shared_ptr<Reported> reported = std::make_shared<Reported>();
    natsio::Client client = connect_reporting(reported);
    natsio::Client producer = connect();
};

struct SubscriptionKind : KindBase {
    using FeedType = natsio::Subscription;
    static constexpr const char* name = "sub";
    std::string subj;

    natsio::Subscription make() {
        subj = "cpp.feeds." + unique_name(name);
        natsio::Subscription sub = client.subscribe(subj);
        client.flush();
        return sub;
    }
    void produce(const std::string& text) {
        producer.publish(subj, text);
        producer.flush();
    }
    static std::string payload(natsio::MsgView msg) { return std::string(msg.data()); }
    void cleanup() {}
};

struct RepliesKind : KindBase {
    using FeedType = natsio::Replies;
    static constexpr const char* name = "replies";
    natsio::Subscription responder;
    std::promise<std::string> inbox_promise;
    std::string inbox;

    natsio::Replies make() {
        const std::string subj = "cpp.feeds." + unique_name(name);
        // The responder only learns the request's inbox; produce() then
        // answers on it as often as the test needs.
        responder = producer.subscribe(subj, [this](natsio::MsgView request) {
            inbox_promise.set_value(std::string(*request.reply()));
        });
        producer.flush();
        natsio::RequestManyOptions options;
        options.timeout = 60s;
        natsio::Replies replies = client.request_many(subj, "?", options);
        std::future<std::string> f = inbox_promise.get_future();
        if (f.wait_for(5s) != std::future_status::ready) {
            throw std::runtime_error("the responder got no request");
        }
        inbox = f.get();
        return replies;
    }
    void produce(const std::string& text) {
        producer.publish(inbox, text);
        producer.flush();
    }
    static std::string payload(natsio::MsgView msg) { return std::string(msg.data()); }
    void cleanup() {}
};

struct MessagesKind : KindBase {
    using FeedType = natsio::Messages;
    static constexpr const char* name = "consume";
    natsio::JetStream js{client};
    natsio::JetStream producer_js{producer};
    std::string stream;

    natsio::Messages make() {
        stream = unique_name(name);
        producer_js.create_stream(R"({"name":")" + stream + R"(","subjects":["cpp.feeds.)" +
                                  stream + R"("],"storage":"memory"})");
        producer_js.create_consumer(stream, R"({"durable_name":"d","ack_policy":"none"})");
        return js.consume(stream, "d");
    }
    void produce(const std::string& text) { producer_js.publish("cpp.feeds." + stream, text); }
    static std::string payload(natsio::MsgView msg) { return std::string(msg.data()); }
    void cleanup() { producer_js.delete_stream(stream); }
};

struct WatcherKind : KindBase {
    using FeedType = natsio::KvWatcher;
    static constexpr const char* name = "watch";
    natsio::JetStream js{client};
    natsio::JetStream producer_js{producer};
    std::string bucket;
    natsio::KeyValue producer_kv;
    int puts = 0;

    natsio::KvWatcher make() {
        bucket = unique_name(name);
        producer_kv = producer_js.create_key_value(R"({"bucket":")" + bucket +
                                                   R"(","storage":"memory"})");
        natsio::KeyValue kv = js.key_value(bucket);
        natsio::KvWatchOptions options;
        options.updates_only = true;
        natsio::KvWatcher w = kv.watch(options);
        // The marker comes first (at once with updates_only): take it, so
        // that the items of the contract are the puts.
        natsio::KvEntry marker = next_item(w);
        if (!marker.initial_done()) {
            throw std::runtime_error("expected the initial-done marker first");
        }
        return w;
    }
    void produce(const std::string& text) {
        producer_kv.put(numbered("k.", puts++), text);
    }
    static std::string payload(natsio::KvEntryView entry) { return std::string(entry.value()); }
    void cleanup() { producer_js.delete_key_value(bucket); }
};

template <class Kind>
class FeedContract : public ::testing::Test {
protected:
    void TearDown() override {
        try {
            kind.cleanup();
        } catch (const std::exception& e) {
            ADD_FAILURE() << "cleanup: " << e.what();
        }
    }

    /// The payload of the next item within 5 s.
    std::string next_payload(const typename Kind::FeedType& feed) {
        return Kind::payload(next_item(feed));
    }

    Kind kind;
};

using Kinds = ::testing::Types<SubscriptionKind, RepliesKind, MessagesKind, WatcherKind>;

class KindNames {
public:
    template <class T>
    static std::string GetName(int) {
        return T::name;
    }
};

TYPED_TEST_SUITE(FeedContract, Kinds, KindNames);

/// Records a push-mode feed's calls.
struct PushLog {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::string> items;
    int ends = 0;
    std::exception_ptr end_error;
    std::atomic<bool> after_end{false};  // an item after the end call

    void item(std::string payload) {
        std::lock_guard<std::mutex> lock(mutex);
        if (ends > 0) {
            after_end = true;
        }
        items.push_back(std::move(payload));
        changed.notify_all();
    }
    void end(std::exception_ptr error) {
        std::lock_guard<std::mutex> lock(mutex);
        ++ends;
        end_error = error;
        changed.notify_all();
    }
    bool wait_items(std::size_t n, std::chrono::milliseconds timeout = 5s) {
        std::unique_lock<std::mutex> lock(mutex);
        return changed.wait_for(lock, timeout, [&] { return items.size() >= n; });
    }
    bool wait_end(std::chrono::milliseconds timeout = 5s) {
        std::unique_lock<std::mutex> lock(mutex);
        return changed.wait_for(lock, timeout, [&] { return ends > 0; });
    }
    std::vector<std::string> snapshot() {
        std::lock_guard<std::mutex> lock(mutex);
        return items;
    }
};

}  // namespace

TYPED_TEST(FeedContract, NextDeliversInOrderThenTimesOut) {
    auto feed = this->kind.make();
    const std::uint64_t before = feed.stats().delivered;  // the watcher's marker
    for (int i = 0; i < 3; ++i) {
        this->kind.produce(numbered("n", i));
    }
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(this->next_payload(feed), numbered("n", i));
    }
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { feed.next(50ms); });
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { feed.next(natsio::no_wait); });
    // A timeout does not end it.
    this->kind.produce("n3");
    EXPECT_EQ(this->next_payload(feed), "n3");
    natsio::IterStats stats = feed.stats();
    EXPECT_EQ(stats.delivered - before, 4u);
    EXPECT_EQ(stats.pending_items, 0u);
    EXPECT_EQ(stats.dropped, 0u);
}

TYPED_TEST(FeedContract, NextAsyncIsServedInCallOrder) {
    auto feed = this->kind.make();
    auto first = feed.next_async();
    auto second = feed.next_async();
    EXPECT_FALSE(first.wait_for(natsio::no_wait));
    EXPECT_EQ(first.status(), NATSIO_PENDING);
    this->kind.produce("a0");
    this->kind.produce("a1");
    ASSERT_TRUE(first.wait_for(5s));
    ASSERT_TRUE(second.wait_for(5s));
    auto item0 = first.get();
    auto item1 = second.get();
    ASSERT_TRUE(item0.has_value());
    ASSERT_TRUE(item1.has_value());
    EXPECT_EQ(TypeParam::payload(*item0), "a0");
    EXPECT_EQ(TypeParam::payload(*item1), "a1");

    // An item already buffered completes the next future at once, and a
    // then() callback runs with the ready future.
    this->kind.produce("a2");
    std::promise<std::string> via_then;
    feed.next_async().then([&via_then](auto done) {
        auto item = done.get();
        via_then.set_value(item ? TypeParam::payload(*item) : std::string("<end>"));
    });
    std::future<std::string> got = via_then.get_future();
    ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(got.get(), "a2");
}

TYPED_TEST(FeedContract, CancelledOrDroppedNextAsyncLeavesTheItem) {
    auto feed = this->kind.make();
    const std::uint64_t before = feed.stats().delivered;
    auto cancelled = feed.next_async();
    cancelled.cancel();
    expect_throws<natsio::CancelledError>(NATSIO_ERR_CANCELLED, [&] { cancelled.get(); });
    {
        auto dropped = feed.next_async();  // destroyed pending: withdrawn
    }
    this->kind.produce("kept");
    EXPECT_EQ(this->next_payload(feed), "kept");
    EXPECT_EQ(feed.stats().delivered - before, 1u);
}

TYPED_TEST(FeedContract, StopEndsEveryWaiterAndLaterCall) {
    auto feed = this->kind.make();
    auto pending = feed.next_async();
    std::promise<bool> blocked_result;
    std::thread reader([&] {
        try {
            blocked_result.set_value(feed.next(natsio::forever).has_value());
        } catch (...) {
            blocked_result.set_exception(std::current_exception());
        }
    });
    std::this_thread::sleep_for(100ms);
    const auto t0 = std::chrono::steady_clock::now();
    feed.stop();
    reader.join();
    EXPECT_FALSE(blocked_result.get_future().get()) << "the blocked next() ended";
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
    ASSERT_TRUE(pending.wait_for(2s));
    EXPECT_EQ(pending.status(), NATSIO_DONE);
    EXPECT_FALSE(pending.get().has_value());
    // Ended for good, even with new items; stop is idempotent.
    this->kind.produce("late");
    EXPECT_FALSE(feed.next(200ms).has_value());
    feed.stop();
    EXPECT_FALSE(feed.next(natsio::no_wait).has_value());
    EXPECT_FALSE(feed.next_async().get().has_value());
    int count = 0;
    for (auto& item : feed) {
        (void)item;
        ++count;
    }
    EXPECT_EQ(count, 0);
}

TYPED_TEST(FeedContract, RangeForReadsUntilStopped) {
    auto feed = this->kind.make();
    for (int i = 0; i < 4; ++i) {
        this->kind.produce(numbered("r", i));
    }
    std::vector<std::string> got;
    for (auto& item : feed) {
        got.push_back(TypeParam::payload(item));
        if (got.size() == 4) {
            feed.stop();
        }
    }
    EXPECT_EQ(got, (std::vector<std::string>{"r0", "r1", "r2", "r3"}));
}

TYPED_TEST(FeedContract, CallbackGetsBufferedItemsFirstThenOneEnd) {
    auto feed = this->kind.make();
    const std::uint64_t before = feed.stats().delivered;
    this->kind.produce("c0");
    this->kind.produce("c1");
    // Wait until both are buffered, so they are there before the callback.
    ASSERT_TRUE(wait_until([&] { return feed.stats().pending_items == 2; }))
        << feed.stats().pending_items;
    auto log = std::make_shared<PushLog>();
    std::weak_ptr<PushLog> watch = log;
    feed.set_callback([log](auto view) { log->item(TypeParam::payload(view)); },
                      [log](std::exception_ptr error) { log->end(error); });
    std::shared_ptr<PushLog> keep = log;
    log.reset();
    this->kind.produce("c2");
    ASSERT_TRUE(keep->wait_items(3));
    EXPECT_EQ(keep->snapshot(), (std::vector<std::string>{"c0", "c1", "c2"}));
    // Iterator calls are refused in push mode, and so is a second callback.
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE, [&] { feed.next(10ms); });
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { feed.set_callback([](auto) {}); });

    // stop(): the end call has been made when it returns, once, without
    // an error; then nothing more, and the handlers are released.
    feed.stop();
    {
        std::lock_guard<std::mutex> lock(keep->mutex);
        EXPECT_EQ(keep->ends, 1);
        EXPECT_FALSE(keep->end_error);
    }
    this->kind.produce("c3");
    std::this_thread::sleep_for(200ms); // an absence: no call within 200 ms
    EXPECT_EQ(keep->snapshot().size(), 3u) << "no callback after stop returned";
    EXPECT_FALSE(keep->after_end);
    {
        std::lock_guard<std::mutex> lock(keep->mutex);
        EXPECT_EQ(keep->ends, 1);
    }
    keep.reset();
    EXPECT_TRUE(wait_until([&] { return watch.expired(); })) << "handlers released";
    EXPECT_EQ(feed.stats().delivered - before, 3u);
}

TYPED_TEST(FeedContract, CallbackRefusedWhileNextAsyncIsPending) {
    auto feed = this->kind.make();
    auto pending = feed.next_async();
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { feed.set_callback([](auto) {}); });
    pending.cancel();
    (void)pending.wait_for(2s);
    // An empty handler is refused before reaching the library.
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { feed.set_callback({}); });
}

TYPED_TEST(FeedContract, ThrowingCallbackIsReportedAndDeliveryGoesOn) {
    auto feed = this->kind.make();
    std::atomic<int> calls{0};
    std::promise<std::exception_ptr> ended;
    feed.set_callback(
        [&calls](auto) {
            if (++calls == 1) {
                throw std::runtime_error("first item fails");
            }
        },
        [&ended](std::exception_ptr error) { ended.set_value(error); });
    this->kind.produce("t0");
    this->kind.produce("t1");
    EXPECT_TRUE(wait_until([&] { return calls == 2; }));
    // The exception went to the client's error handler.
    ASSERT_TRUE(wait_until([&] { return !this->kind.reported->snapshot().empty(); }));
    std::vector<natsio::AsyncError> errors = this->kind.reported->snapshot();
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].source, natsio::AsyncError::Source::Handler);
    EXPECT_EQ(errors[0].text, "first item fails");
    EXPECT_THROW(errors[0].rethrow(), std::runtime_error);
    feed.stop();
    std::future<std::exception_ptr> end = ended.get_future();
    ASSERT_EQ(end.wait_for(1s), std::future_status::ready);
    EXPECT_FALSE(end.get());
}

TYPED_TEST(FeedContract, ClientCloseEndsWithItsError) {
    auto feed = this->kind.make();
    auto pending = feed.next_async();
    this->kind.client.close();
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { feed.next(2s); });
    // Every later call says it again; the pending future too.
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { feed.next(natsio::no_wait); });
    ASSERT_TRUE(pending.wait_for(2s));
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { pending.get(); });
    // Range-for throws it too.
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED, [&] {
        for (auto& item : feed) {
            (void)item;
        }
    });
    feed.stop();  // fine after the end
}

TYPED_TEST(FeedContract, CallbackEndCarriesTheError) {
    auto feed = this->kind.make();
    std::promise<std::exception_ptr> ended;
    feed.set_callback([](auto) {}, [&ended](std::exception_ptr error) { ended.set_value(error); });
    this->kind.client.close();
    std::future<std::exception_ptr> end = ended.get_future();
    ASSERT_EQ(end.wait_for(5s), std::future_status::ready);
    std::exception_ptr error = end.get();
    ASSERT_TRUE(error);
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { std::rethrow_exception(error); });
}

// ---------------------------------------------------------------------------
// Consume and watch deliver what the library buffered while nobody read
// ---------------------------------------------------------------------------

TEST(FeedBuffering, LaggingKvWatcherInPushModeGetsTheBacklogFirst) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"CPPF_LAGPUSH","history":10,"storage":"memory"})");
    for (int i = 0; i < 5; ++i) {
        kv.put(numbered("init.", i), "i");
    }
    natsio::KvWatcher w = kv.watch();
    for (int i = 0; i < 50; ++i) {
        kv.put(numbered("k", i % 7), numbered("v", i));
    }
    ASSERT_TRUE(wait_until([&] { return w.stats().pending_items == 56; }))
        << w.stats().pending_items;  // 5 initial values, the marker, 50 changes
    std::mutex mutex;
    std::vector<std::string> seen;
    std::promise<void> ended;
    w.set_callback(
        [&](natsio::KvEntryView entry) {
            std::lock_guard<std::mutex> lock(mutex);
            seen.push_back(entry.initial_done() ? std::string("<initial-done>")
                                                : std::string(entry.value()));
        },
        [&](std::exception_ptr) { ended.set_value(); });
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return seen.size() == 56;
    }));
    w.stop();
    EXPECT_EQ(ended.get_future().wait_for(0s), std::future_status::ready);
    std::lock_guard<std::mutex> lock(mutex);
    // The 5 initial values first, the 50 changes in order; the marker once,
    // after the initial values (changes that raced with them may come
    // before it, as in nats.go: it follows the last message pending when
    // the initial delivery caught up).
    auto marker = std::find(seen.begin(), seen.end(), "<initial-done>");
    ASSERT_NE(marker, seen.end());
    EXPECT_GE(marker - seen.begin(), 5);
    seen.erase(marker);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "<initial-done>"), 0);
    ASSERT_EQ(seen.size(), 55u);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(seen[static_cast<std::size_t>(i)], "i");
    }
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(seen[static_cast<std::size_t>(5 + i)], numbered("v", i));
    }
    js.delete_key_value("CPPF_LAGPUSH");
}

TEST(FeedBuffering, ConsumeBuffersWhileTheReaderIsAway) {
    natsio::Client client = connect();
    natsio::Client writer = connect();
    natsio::JetStream js(client);
    natsio::JetStream writer_js(writer);
    js.create_stream(R"({"name":"CPPF_CNLAG","subjects":["cpp.cnlag"],"storage":"memory"})");
    js.create_consumer("CPPF_CNLAG", R"({"durable_name":"d","ack_policy":"explicit"})");
    natsio::ConsumeOptions options;
    options.max_messages = 500;
    natsio::Messages msgs = js.consume("CPPF_CNLAG", "d", options);
    for (int i = 0; i < 300; ++i) {
        writer_js.publish_async("cpp.cnlag", std::to_string(i));
    }
    writer_js.publish_async_complete();
    // Nobody reads; the library pulls them into the buffer anyway.
    ASSERT_TRUE(wait_until([&] { return msgs.stats().pending_items == 300; }, 10s))
        << msgs.stats().pending_items;
    for (int i = 0; i < 300; ++i) {
        natsio::Msg msg = next_item(msgs);
        ASSERT_EQ(msg.data(), std::to_string(i));
        ASSERT_EQ(msg.js_metadata().stream_seq, static_cast<std::uint64_t>(i) + 1);
        msg.ack();
    }
    expect_quiet(msgs);
    EXPECT_EQ(msgs.stats().delivered, 300u);
    EXPECT_TRUE(wait_until([&] {
        return contains(js.consumer_info("CPPF_CNLAG", "d"), R"("num_ack_pending":0)");
    }));
    msgs.stop();
    js.delete_stream("CPPF_CNLAG");
}

// A consume whose buffer fills and empties many times loses nothing (a
// message handed to the pull engine just as the buffer regained room used
// to be dropped).
TEST(FeedBuffering, ConsumeBufferIsBoundedAndLosesNothing) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    try {
        js.delete_stream("CPPF_CNSTALL");  // left over by a failed repetition
    } catch (const natsio::StreamNotFoundError&) {
    }
    js.create_stream(R"({"name":"CPPF_CNSTALL","subjects":["cpp.cnstall"],"storage":"memory"})");
    js.create_consumer("CPPF_CNSTALL", R"({"durable_name":"d","ack_policy":"none"})");
    for (int i = 0; i < 40; ++i) {
        js.publish_async("cpp.cnstall", std::to_string(i));
    }
    js.publish_async_complete();
    natsio::ConsumeOptions options;
    options.max_messages = 10;
    natsio::Messages msgs = js.consume("CPPF_CNSTALL", "d", options);
    // The buffer fills up to the window and pulling pauses.
    ASSERT_TRUE(wait_until([&] { return msgs.stats().pending_items == 10; }));
    std::this_thread::sleep_for(300ms); // an absence: no more pulled within 300 ms
    EXPECT_EQ(msgs.stats().pending_items, 10u) << "bounded by max_messages";
    for (int i = 0; i < 40; ++i) {
        ASSERT_EQ(next_item(msgs).data(), std::to_string(i));
    }
    expect_quiet(msgs);
    msgs.stop();
    js.delete_stream("CPPF_CNSTALL");
}
