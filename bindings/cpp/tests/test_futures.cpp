// The future-returning form of every operation family, against a real
// server: connect/close, requests, flush and drain, streams, pull consumers
// and acks, consume, KV buckets, KV keys and watch. For each family: the
// result, an error through the future, and cancel. Plus what every Future
// does: then() callbacks (also after the Future is gone, exceptions to the
// error handler), std::future, a client closed while an operation is
// pending. Built into both the C++17 and the C++20 test programs.
#include "js_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace natsio_test;

namespace {

/// A TCP port that accepts connections (the kernel completes the handshake
/// from the listen backlog) but never speaks: a connect to it stays pending
/// until the connect timeout.
class MuteListener {
public:
    MuteListener() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        socklen_t len = sizeof addr;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(fd_, 16) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            throw std::runtime_error("cannot listen");
        }
        port_ = ntohs(addr.sin_port);
    }
    MuteListener(const MuteListener&) = delete;
    MuteListener& operator=(const MuteListener&) = delete;
    ~MuteListener() { ::close(fd_); }
    std::string url() const { return numbered("nats://127.0.0.1:", port_); }

private:
    int fd_ = -1;
    int port_ = 0;
};

/// A JetStream API prefix served by this test: requests on
/// "<prefix>.<API subject>" are forwarded to "$JS.API.<API subject>" while
/// `forwarding`, and left unanswered otherwise, so an operation through a
/// context with this prefix can be made to stay pending (to cancel it).
class ApiProxy {
public:
    explicit ApiProxy(std::string prefix) : prefix_(std::move(prefix)) {
        const std::size_t skip = prefix_.size() + 1;
        sub_ = client_.subscribe(prefix_ + ".>", [this, skip](natsio::MsgView request) {
            if (!forwarding) {
                return;  // silent: the caller's operation waits
            }
            std::string api = "$JS.API." + std::string(request.subject().substr(skip));
            natsio::Msg reply = client_.request(api, request.data(), 5s, request.headers());
            request.respond(reply.headers(), reply.data());
        });
        client_.flush();
    }

    natsio::JetStream context(const natsio::Client& client) const {
        natsio::JetStreamOptions options;
        options.api_prefix = prefix_;
        return natsio::JetStream(client, options);
    }

    std::atomic<bool> forwarding{true};

private:
    std::string prefix_;
    natsio::Client client_ = connect();
    natsio::Subscription sub_;
};

/// Cancels a pending future and checks it then throws CancelledError.
template <class T>
void expect_cancelled(natsio::Future<T>& future) {
    EXPECT_FALSE(future.wait_for(natsio::no_wait)) << "the operation should still be pending";
    future.cancel();
    expect_throws<natsio::CancelledError>(NATSIO_ERR_CANCELLED, [&] { future.get(); });
    EXPECT_EQ(future.status(), NATSIO_ERR_CANCELLED);
}

}  // namespace

// ---------------------------------------------------------------------------
// Core
// ---------------------------------------------------------------------------

TEST(Futures, ConnectAndClose) {
    natsio::Future<natsio::Client> connecting = natsio::Client::connect_async(server_url());
    natsio::Client client = connecting.get();
    EXPECT_EQ(client.status(), natsio::ConnStatus::Connected);
    // The client is taken once.
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE, [&] { connecting.get(); });
    natsio::Subscription sub = client.subscribe(subject("c"));
    client.publish(subject("c"), "hello");
    EXPECT_EQ(next_item(sub).data(), "hello");

    natsio::Future<void> closing = client.close_async();
    closing.get();
    EXPECT_EQ(client.status(), natsio::ConnStatus::Closed);
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { client.publish(subject("c"), "x"); });

    // Error: nobody listens there.
    natsio::Options nowhere;
    nowhere.set_url(numbered("nats://127.0.0.1:", nt_free_port()))
        .set_connect_timeout(500ms);
    natsio::Future<natsio::Client> refused = natsio::Client::connect_async(nowhere);
    expect_throws<natsio::NoServersError>(NATSIO_ERR_NO_SERVERS, [&] { refused.get(); });

    // Cancel: a server that never sends INFO keeps the connect pending.
    MuteListener mute;
    natsio::Options slow;
    slow.set_url(mute.url()).set_connect_timeout(10s);
    natsio::Future<natsio::Client> pending = natsio::Client::connect_async(slow);
    std::this_thread::sleep_for(100ms);
    expect_cancelled(pending);
}

TEST(Futures, ConnectAsyncKeepsTheOptionsErrorHandler) {
    std::atomic<int> reported{0};
    natsio::Future<natsio::Client> connecting = [&] {
        natsio::Options options;
        options.set_url(server_url()).on_error([&](const natsio::AsyncError& e) {
            if (e.source == natsio::AsyncError::Source::Handler) {
                ++reported;
            }
        });
        return natsio::Client::connect_async(options);
    }();  // the Options are gone
    natsio::Client client = connecting.get();
    natsio::Subscription sub = client.subscribe(
        subject("throw"), [](natsio::MsgView) { throw std::runtime_error("handler"); });
    client.flush();
    client.publish(subject("throw"), "x");
    EXPECT_TRUE(wait_until([&] { return reported == 1; }));
}

TEST(Futures, RequestFlushAndDrain) {
    natsio::Client client = connect();
    natsio::Subscription echo =
        client.subscribe(subject("echo"), [](natsio::MsgView msg) { msg.respond(msg.data()); });
    natsio::Subscription silent = client.subscribe(subject("silent"));
    client.flush_async().get();

    EXPECT_EQ(client.request_async(subject("echo"), "r").get().data(), "r");
    natsio::Future<natsio::Msg> nobody = client.request_async(subject("nobody"), "x");
    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS, [&] { nobody.get(); });
    natsio::Future<natsio::Msg> unanswered = client.request_async(subject("silent"), "x", 30s);
    expect_cancelled(unanswered);

    // A subscription's drain: the backlog is read, then it ends.
    natsio::Subscription backlog = client.subscribe(subject("backlog"));
    client.publish(subject("backlog"), "1");
    client.publish(subject("backlog"), "2");
    client.flush();
    ASSERT_TRUE(wait_until([&] { return backlog.stats().pending_items == 2; }));
    natsio::Future<void> sub_drained = backlog.drain_async();
    EXPECT_EQ(next_item(backlog).data(), "1");
    EXPECT_EQ(next_item(backlog).data(), "2");
    sub_drained.get();
    EXPECT_FALSE(backlog.next(1s).has_value());
    // Its timeout: nobody reads the backlog, so the future fails with
    // TimeoutError after it; the drain goes on and ends once it is read.
    natsio::Subscription unread = client.subscribe(subject("unread"));
    client.publish(subject("unread"), "1");
    client.flush();
    ASSERT_TRUE(wait_until([&] { return unread.stats().pending_items == 1; }));
    const auto drain_start = std::chrono::steady_clock::now();
    natsio::Future<void> bounded = unread.drain_async(100ms);
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { bounded.get(); });
    EXPECT_LT(std::chrono::steady_clock::now() - drain_start, 3s);
    EXPECT_EQ(next_item(unread).data(), "1");
    EXPECT_FALSE(unread.next(1s).has_value());
    // Error: a stopped subscription cannot drain.
    natsio::Subscription stopped = client.subscribe(subject("stopped"));
    stopped.stop();
    expect_throws<natsio::SubscriptionClosedError>(NATSIO_ERR_SUBSCRIPTION_CLOSED,
                                                   [&] { stopped.drain_async().get(); });

    // The client's drain (kept busy by a slow handler's backlog); a second
    // one while it runs is illegal; afterwards flush fails.
    silent.stop();
    std::atomic<int> handled{0};
    natsio::Subscription slow = client.subscribe(subject("slow"), [&](natsio::MsgView) {
        std::this_thread::sleep_for(50ms);
        ++handled;
    });
    for (int i = 0; i < 6; ++i) {
        client.publish(subject("slow"), "x");
    }
    client.flush();
    natsio::Future<void> drained = client.drain_async(5s);
    EXPECT_FALSE(drained.wait_for(natsio::no_wait));
    // (The drain starts on a library thread: wait until it has, or the
    // second call could be the one that starts it.)
    ASSERT_TRUE(wait_until([&] { return client.status() == natsio::ConnStatus::Draining; }));
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { client.drain_async().get(); });
    drained.get();
    EXPECT_EQ(handled, 6);
    EXPECT_EQ(client.status(), natsio::ConnStatus::Closed);
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { client.flush_async().get(); });
}

TEST(Futures, ClientClosedWhilePending) {
    natsio::Client client = connect();
    natsio::Subscription silent = client.subscribe(subject("silent"));
    client.flush();
    natsio::Future<natsio::Msg> pending = client.request_async(subject("silent"), "x", 30s);
    std::promise<natsio::Status> via_then;
    natsio::Future<natsio::Msg> watched = client.request_async(subject("silent"), "y", 30s);
    watched.then([&via_then](natsio::Future<natsio::Msg> done) { via_then.set_value(done.status()); });
    client.close();
    ASSERT_TRUE(pending.wait_for(2s));
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { pending.get(); });
    std::future<natsio::Status> status = via_then.get_future();
    ASSERT_EQ(status.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(status.get(), NATSIO_ERR_CONNECTION_CLOSED);
}

TEST(Futures, ThenRunsAfterTheFutureIsGoneAndReportsWhatItThrows) {
    std::mutex mutex;
    std::vector<natsio::AsyncError> reported;
    natsio::Options options;
    options.set_url(server_url()).on_error([&](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        reported.push_back(e);
    });
    natsio::Client client = natsio::Client::connect(options);
    natsio::Subscription echo = client.subscribe(
        subject("slow"), [](natsio::MsgView msg) {
            std::this_thread::sleep_for(100ms);
            msg.respond(msg.data());
        });
    client.flush();

    std::promise<std::string> result;
    std::thread::id caller = std::this_thread::get_id();
    std::promise<bool> other_thread;
    {
        natsio::Future<natsio::Msg> scoped = client.request_async(subject("slow"), "later", 5s);
        scoped.then([&](natsio::Future<natsio::Msg> done) {
            other_thread.set_value(std::this_thread::get_id() != caller);
            EXPECT_TRUE(done.ready());
            result.set_value(std::string(done.get().data()));
        });
    }  // destroyed while pending: the callback still comes
    std::future<std::string> got = result.get_future();
    ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(got.get(), "later");
    EXPECT_TRUE(other_thread.get_future().get()) << "then() runs on a library thread";

    // What a then() callback throws goes to the error handler.
    client.request_async(subject("slow"), "x", 5s).then([](natsio::Future<natsio::Msg>) {
        throw std::runtime_error("then failed");
    });
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !reported.empty();
    }));
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(reported[0].source, natsio::AsyncError::Source::Handler);
    EXPECT_EQ(reported[0].text, "then failed");

    // A Future destroyed pending without a callback lets the request run
    // on (nothing to observe but that nothing breaks).
    { natsio::Future<natsio::Msg> dropped = client.request_async(subject("slow"), "gone"); }
}

// ---------------------------------------------------------------------------
// JetStream: streams and publishing
// ---------------------------------------------------------------------------

TEST(Futures, StreamCalls) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    EXPECT_TRUE(contains(js.account_info_async().get(), R"("streams")"));

    const std::string config =
        R"({"name":"CPP_FS","subjects":["cpp.fs.>"],"storage":"memory"})";
    std::string info = js.create_stream_async(config).get();
    EXPECT_TRUE(contains(info, R"("name":"CPP_FS")")) << info;
    natsio::Future<std::string> in_use = js.create_stream_async(
        R"({"name":"CPP_FS","subjects":["cpp.other.>"],"storage":"memory"})");
    expect_throws<natsio::StreamNameInUseError>(NATSIO_ERR_STREAM_NAME_IN_USE,
                                                [&] { in_use.get(); });
    info = js.create_stream_async(
                 R"({"name":"CPP_FS","subjects":["cpp.fs.>"],"storage":"memory","max_msgs":50})",
                 natsio::CreateAction::Update)
               .get();
    EXPECT_TRUE(contains(info, R"("max_msgs":50)")) << info;
    EXPECT_TRUE(contains(js.stream_info_async("CPP_FS").get(), R"("max_msgs":50)"));
    natsio::Future<std::string> missing = js.stream_info_async("CPP_FS_NONE");
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { missing.get(); });
    std::vector<std::string> names = js.stream_names_async().get();
    EXPECT_NE(std::find(names.begin(), names.end(), "CPP_FS"), names.end());
    EXPECT_EQ(js.stream_names_async(std::string_view("cpp.fs.x")).get(),
              std::vector<std::string>{"CPP_FS"});

    // Publishing: three acks, then everything is complete.
    std::vector<natsio::Future<natsio::PubAck>> acks;
    for (int i = 0; i < 3; ++i) {
        acks.push_back(js.publish_async(numbered("cpp.fs.", i), numbered("m", i)));
    }
    js.publish_async_complete_async().get();
    for (int i = 0; i < 3; ++i) {
        natsio::PubAck ack = acks[static_cast<std::size_t>(i)].get();
        EXPECT_EQ(ack.stream, "CPP_FS");
        EXPECT_EQ(ack.seq, static_cast<std::uint64_t>(i) + 1);
    }
    natsio::PublishOptions wrong;
    wrong.expected_last_seq = 1;
    natsio::Future<natsio::PubAck> rejected = js.publish_async("cpp.fs.x", "x", wrong);
    expect_throws<natsio::WrongLastSequenceError>(NATSIO_ERR_WRONG_LAST_SEQUENCE,
                                                  [&] { rejected.get(); });

    // Reading and deleting messages.
    natsio::StoredMsg first = js.get_msg_async("CPP_FS", 1).get();
    EXPECT_EQ(first.data(), "m0");
    EXPECT_EQ(js.get_last_msg_async("CPP_FS", "cpp.fs.2").get().seq(), 3u);
    natsio::Future<natsio::StoredMsg> none = js.get_msg_async("CPP_FS", 99);
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND, [&] { none.get(); });
    js.delete_msg_async("CPP_FS", 1).get();
    natsio::Future<void> again = js.delete_msg_async("CPP_FS", 1);
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { again.get(); });
    EXPECT_EQ(js.purge_stream_async("CPP_FS").get(), 2u);
    js.delete_stream_async("CPP_FS").get();
    natsio::Future<void> gone = js.delete_stream_async("CPP_FS");
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND, [&] { gone.get(); });
    // Argument errors come from the call itself, before any future.
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                       [&] { js.create_stream_async("not json"); });

    // Cancel: through an API prefix nobody answers.
    ApiProxy silent("cpp.silent.fs");
    silent.forwarding = false;
    natsio::JetStream muted = silent.context(client);
    natsio::Future<std::string> pending = muted.stream_info_async("CPP_FS");
    expect_cancelled(pending);
    natsio::Future<std::string> creating = muted.create_stream_async(config);
    expect_cancelled(creating);
    natsio::Future<std::vector<std::string>> listing = muted.stream_names_async();
    expect_cancelled(listing);
}

TEST(Futures, PublishAsyncCompleteTimesOut) {
    natsio::Client client = connect();
    natsio::Subscription stuck = client.subscribe(subject("stuck"));  // never acks
    client.flush();
    natsio::JetStreamOptions options;
    options.publish_async_timeout = 5s;
    natsio::JetStream js(client, options);
    natsio::Future<natsio::PubAck> ack = js.publish_async(subject("stuck"), "x");
    natsio::Future<void> complete = js.publish_async_complete_async(100ms);
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { complete.get(); });
    expect_cancelled(ack);
    js.publish_async_complete_async().get();
    EXPECT_EQ(js.publish_async_pending(), 0u);
}

// ---------------------------------------------------------------------------
// JetStream: pull consumers, acks and consume
// ---------------------------------------------------------------------------

TEST(Futures, ConsumerCalls) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_FC","subjects":["cpp.fc"],"storage":"memory"})");
    const std::string config = R"({"durable_name":"w","ack_policy":"explicit","ack_wait":"30s"})";
    std::string info = js.create_consumer_async("CPP_FC", config).get();
    EXPECT_TRUE(contains(info, R"("name":"w")")) << info;
    natsio::Future<std::string> no_stream = js.create_consumer_async("CPP_FC_NONE", config);
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { no_stream.get(); });
    natsio::Future<std::string> update_missing = js.create_consumer_async(
        "CPP_FC", R"({"durable_name":"nope","ack_policy":"explicit"})",
        natsio::CreateAction::Update);
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { update_missing.get(); });
    EXPECT_TRUE(contains(js.consumer_info_async("CPP_FC", "w").get(), R"("num_pending":0)"));
    EXPECT_EQ(js.consumer_names_async("CPP_FC").get(), std::vector<std::string>{"w"});
    natsio::Future<std::string> no_consumer = js.consumer_info_async("CPP_FC", "none");
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { no_consumer.get(); });

    for (int i = 0; i < 4; ++i) {
        js.publish("cpp.fc", numbered("m", i));
    }
    natsio::FetchOptions batch;
    batch.max_messages = 2;
    batch.expires = 2s;
    natsio::MsgList list = js.fetch_async("CPP_FC", "w", batch).get();
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].data(), "m0");
    for (natsio::MsgView m : list) {
        m.ack_sync_async().get();
    }
    // A second ack through the same handle is refused.
    expect_throws<natsio::MessageAlreadyAckedError>(NATSIO_ERR_MESSAGE_ALREADY_ACKED,
                                                    [&] { list[0].ack_sync_async().get(); });

    natsio::Msg third = js.next_async("CPP_FC", "w", 2s).get();
    EXPECT_EQ(third.data(), "m2");
    natsio::Future<void> acked = third.ack_sync_async(2s);
    third = natsio::Msg();  // the ack goes on without the message
    acked.get();
    natsio::Msg fourth = js.next_async("CPP_FC", "w").get();
    EXPECT_EQ(fourth.data(), "m3");
    fourth.ack_sync();

    // Nothing left: NoMessagesError through the future; cancel a long wait.
    natsio::Future<natsio::Msg> empty = js.next_async("CPP_FC", "w", 200ms);
    expect_throws<natsio::NoMessagesError>(NATSIO_ERR_NO_MESSAGES, [&] { empty.get(); });
    natsio::Future<natsio::Msg> waiting = js.next_async("CPP_FC", "w", 2s);
    std::this_thread::sleep_for(50ms);
    expect_cancelled(waiting);
    natsio::FetchOptions long_fetch;
    long_fetch.expires = 2s;
    natsio::Future<natsio::MsgList> fetching = js.fetch_async("CPP_FC", "w", long_fetch);
    std::this_thread::sleep_for(50ms);
    expect_cancelled(fetching);
    // A cancel ends the client's side only: the server keeps the pull
    // requests until they expire, and a message it gave one would come back
    // only after the ack wait. Let them expire before pulling again.
    ASSERT_TRUE(wait_until(
        [&] { return contains(js.consumer_info("CPP_FC", "w"), R"("num_waiting":0)"); }, 5s));
    js.publish("cpp.fc", "m4");
    natsio::Msg fifth = js.next_async("CPP_FC", "w", 5s).get();
    EXPECT_EQ(fifth.data(), "m4");
    fifth.ack();

    // consume_async: the Messages, taken once.
    js.publish("cpp.fc", "m5");
    natsio::Future<natsio::Messages> consuming = js.consume_async("CPP_FC", "w");
    natsio::Messages msgs = consuming.get();
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE, [&] { consuming.get(); });
    natsio::Msg sixth = next_item(msgs);
    EXPECT_EQ(sixth.data(), "m5");
    sixth.ack();
    msgs.stop();
    natsio::Future<natsio::Messages> no_such = js.consume_async("CPP_FC", "none");
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { no_such.get(); });

    js.delete_consumer_async("CPP_FC", "w").get();
    natsio::Future<void> deleted_again = js.delete_consumer_async("CPP_FC", "w");
    expect_throws<natsio::ConsumerNotFoundError>(NATSIO_ERR_CONSUMER_NOT_FOUND,
                                                 [&] { deleted_again.get(); });

    // Cancel the management calls through a silent API prefix.
    ApiProxy silent("cpp.silent.fc");
    silent.forwarding = false;
    natsio::JetStream muted = silent.context(client);
    natsio::Future<std::string> creating = muted.create_consumer_async("CPP_FC", config);
    expect_cancelled(creating);
    natsio::Future<natsio::Messages> consume_pending = muted.consume_async("CPP_FC", "w");
    expect_cancelled(consume_pending);
    js.delete_stream("CPP_FC");
}

// ---------------------------------------------------------------------------
// Key-Value
// ---------------------------------------------------------------------------

TEST(Futures, KvBucketCalls) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string config = R"({"bucket":"CPP_FKV","history":5,"storage":"memory"})";
    natsio::KeyValue kv = js.create_key_value_async(config).get();
    EXPECT_EQ(kv.bucket(), "CPP_FKV");
    natsio::Future<natsio::KeyValue> exists =
        js.create_key_value_async(R"({"bucket":"CPP_FKV","history":2,"storage":"memory"})");
    expect_throws<natsio::BucketExistsError>(NATSIO_ERR_BUCKET_EXISTS, [&] { exists.get(); });
    natsio::KeyValue updated =
        js.create_key_value_async(R"({"bucket":"CPP_FKV","history":7,"storage":"memory"})",
                                  natsio::CreateAction::Update)
            .get();
    EXPECT_TRUE(contains(updated.status_async().get(), R"("max_msgs_per_subject":7)"));
    natsio::KeyValue bound = js.key_value_async("CPP_FKV").get();
    EXPECT_EQ(bound.bucket(), "CPP_FKV");
    natsio::Future<natsio::KeyValue> missing = js.key_value_async("CPP_FKV_NONE");
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND, [&] { missing.get(); });
    expect_throws<natsio::InvalidBucketNameError>(NATSIO_ERR_INVALID_BUCKET_NAME,
                                                  [&] { js.key_value_async("bad.name"); });
    js.delete_key_value_async("CPP_FKV").get();
    natsio::Future<void> gone = js.delete_key_value_async("CPP_FKV");
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND, [&] { gone.get(); });

    ApiProxy silent("cpp.silent.fkv");
    silent.forwarding = false;
    natsio::JetStream muted = silent.context(client);
    natsio::Future<natsio::KeyValue> creating = muted.create_key_value_async(config);
    expect_cancelled(creating);
    natsio::Future<natsio::KeyValue> binding = muted.key_value_async("CPP_FKV");
    expect_cancelled(binding);
    natsio::Future<void> deleting = muted.delete_key_value_async("CPP_FKV");
    expect_cancelled(deleting);
}

TEST(Futures, KvKeyCalls) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"CPP_FKEY","history":5,"storage":"memory"})");

    std::uint64_t r1 = kv.put_async("a", "1").get();
    std::uint64_t r2 = kv.update_async("a", "2", r1).get();
    EXPECT_GT(r2, r1);
    natsio::Future<std::uint64_t> stale = kv.update_async("a", "3", r1);
    expect_throws<natsio::WrongLastSequenceError>(NATSIO_ERR_WRONG_LAST_SEQUENCE,
                                                  [&] { stale.get(); });
    std::uint64_t rb = kv.create_async("b", "x").get();
    natsio::Future<std::uint64_t> twice = kv.create_async("b", "y");
    expect_throws<natsio::KeyExistsError>(NATSIO_ERR_KEY_EXISTS, [&] { twice.get(); });

    natsio::KvEntry a = kv.get_async("a").get();
    EXPECT_EQ(a.value(), "2");
    EXPECT_EQ(a.revision(), r2);
    EXPECT_EQ(kv.get_revision_async("a", r1).get().value(), "1");
    natsio::Future<natsio::KvEntry> nothing = kv.get_async("none");
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { nothing.get(); });
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY, [&] { kv.get_async("a b"); });

    std::uint64_t deleted = kv.del_async("b").get();
    EXPECT_GT(deleted, rb);
    natsio::Future<natsio::KvEntry> deleted_get = kv.get_async("b");
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { deleted_get.get(); });
    natsio::Future<std::uint64_t> wrong_last = kv.purge_async("a", r1);
    expect_throws<natsio::WrongLastSequenceError>(NATSIO_ERR_WRONG_LAST_SEQUENCE,
                                                  [&] { wrong_last.get(); });
    kv.put("c", "3");
    std::uint64_t purged = kv.purge_async("a").get();
    EXPECT_GT(purged, deleted);

    EXPECT_EQ(kv.keys_async().get(), std::vector<std::string>{"c"});
    natsio::KvEntryList history = kv.history_async("b").get();
    ASSERT_EQ(history.size(), 2u);
    EXPECT_EQ(history[1].operation(), natsio::KvOperation::Del);
    natsio::Future<natsio::KvEntryList> no_history = kv.history_async("none");
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { no_history.get(); });
    EXPECT_TRUE(contains(kv.status_async().get(), R"("name":"KV_CPP_FKEY")"));

    natsio::Future<natsio::KvWatcher> watching = kv.watch_async("c");
    natsio::KvWatcher w = watching.get();
    natsio::KvEntry c = next_item(w);
    EXPECT_EQ(c.key(), "c");
    EXPECT_TRUE(next_item(w).initial_done());
    kv.put_async("c", "4").get();
    EXPECT_EQ(next_item(w).value(), "4");
    natsio::Future<std::optional<natsio::KvEntry>> next = w.next_async();
    kv.put("c", "5");
    std::optional<natsio::KvEntry> five = next.get();
    ASSERT_TRUE(five.has_value());
    EXPECT_EQ(five->value(), "5");
    w.stop();
    js.delete_key_value("CPP_FKEY");

    // A deleted bucket: the key calls fail through their futures.
    EXPECT_THROW(kv.put_async("a", "x").get(), natsio::JetStreamError);
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { kv.watch_async().get(); });

    // Cancel: a bucket bound through the proxy, then the proxy goes silent.
    js.create_key_value(R"({"bucket":"CPP_FKEY2","storage":"memory"})").put("k", "v");
    ApiProxy proxy("cpp.proxy.fkey");
    natsio::JetStream proxied = proxy.context(client);
    natsio::KeyValue through = proxied.key_value("CPP_FKEY2");
    proxy.forwarding = false;
    natsio::Future<natsio::KvEntry> getting = through.get_async("k");
    expect_cancelled(getting);
    natsio::Future<std::string> status = through.status_async();
    expect_cancelled(status);
    natsio::Future<natsio::KvWatcher> watch_pending = through.watch_async();
    expect_cancelled(watch_pending);
    js.delete_key_value("CPP_FKEY2");
}

// ---------------------------------------------------------------------------
// std::future for every kind of result
// ---------------------------------------------------------------------------

TEST(Futures, StdFuturesOfEveryResultKind) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"CPP_FSTD","storage":"memory"})");
    std::future<std::uint64_t> revision = kv.put_async("k", "v").to_std_future();
    ASSERT_EQ(revision.wait_for(5s), std::future_status::ready);
    std::uint64_t rev = revision.get();
    EXPECT_GT(rev, 0u);
    std::future<natsio::KvEntry> entry = kv.get_async("k").to_std_future();
    EXPECT_EQ(entry.get().revision(), rev);
    std::future<std::vector<std::string>> keys = kv.keys_async().to_std_future();
    EXPECT_EQ(keys.get(), std::vector<std::string>{"k"});
    std::future<std::string> status = kv.status_async().to_std_future();
    EXPECT_TRUE(contains(status.get(), "CPP_FSTD"));
    std::future<void> flushed = client.flush_async().to_std_future();
    flushed.get();
    // Errors arrive as the mapped exception.
    std::future<natsio::KvEntry> missing = kv.get_async("none").to_std_future();
    EXPECT_THROW(missing.get(), natsio::KeyNotFoundError);
    std::future<natsio::KeyValue> bucket = js.key_value_async("CPP_FSTD").to_std_future();
    EXPECT_EQ(bucket.get().bucket(), "CPP_FSTD");
    js.delete_key_value("CPP_FSTD");
}
