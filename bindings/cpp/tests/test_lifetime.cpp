// Callback lifetime, exceptions at the C boundary, and move semantics.
#include "support.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

using namespace natsio_test;
using natsio::MsgView;

namespace {

/// Counts handler entries and exits, so a test can see whether a handler
/// is running or ran after a given point.
struct HandlerProbe {
    std::atomic<int> entered{0};
    std::atomic<int> running{0};

    natsio::MsgHandler slow_handler(std::chrono::milliseconds work) {
        return [this, work](MsgView) {
            ++entered;
            ++running;
            std::this_thread::sleep_for(work);
            --running;
        };
    }
};

}  // namespace

TEST(Lifetime, NoHandlerRunsAfterSubscriptionIsDestroyed) {
    natsio::Client client = connect();
    HandlerProbe probe;
    auto sub = std::make_unique<natsio::Subscription>(
        client.subscribe(subject("l"), probe.slow_handler(20ms)));
    client.flush();
    for (int i = 0; i < 50; ++i) {
        client.publish(subject("l"), "x");
    }
    client.flush();
    ASSERT_TRUE(wait_until([&] { return probe.entered >= 2; }));

    sub.reset();  // destroy while a handler is (likely) mid-call
    EXPECT_EQ(probe.running, 0) << "destruction waited for the running handler";
    int after_destroy = probe.entered;
    EXPECT_LT(after_destroy, 50);
    for (int i = 0; i < 10; ++i) {
        client.publish(subject("l"), "x");
    }
    client.flush();
    std::this_thread::sleep_for(100ms); // an absence: no call within 100 ms
    EXPECT_EQ(probe.entered, after_destroy);
}

TEST(Lifetime, NoHandlerRunsAfterClientIsDestroyed) {
    HandlerProbe probe;
    natsio::Subscription sub;
    {
        natsio::Client client = connect();
        sub = client.subscribe(subject("l"), probe.slow_handler(20ms));
        client.flush();
        natsio::Client publisher = connect();
        for (int i = 0; i < 50; ++i) {
            publisher.publish(subject("l"), "x");
        }
        publisher.flush();
        ASSERT_TRUE(wait_until([&] { return probe.entered >= 2; }));
    }  // the client is destroyed, the Subscription owner lives on
    EXPECT_EQ(probe.running, 0);
    int after_destroy = probe.entered;
    natsio::Client publisher = connect();
    for (int i = 0; i < 10; ++i) {
        publisher.publish(subject("l"), "x");
    }
    publisher.flush();
    std::this_thread::sleep_for(100ms); // an absence: no call within 100 ms
    EXPECT_EQ(probe.entered, after_destroy);
    EXPECT_TRUE(sub.is_closed());
}

TEST(Lifetime, HandlerStateIsReleasedAfterTheSubscription) {
    natsio::Client client = connect();
    auto state = std::make_shared<int>(0);
    std::weak_ptr<int> watch = state;
    natsio::Subscription sub =
        client.subscribe(subject("r"), [state](MsgView) { ++*state; });
    state.reset();
    client.publish(subject("r"), "x");
    client.flush();
    EXPECT_FALSE(watch.expired()) << "the handler holds its captures while subscribed";
    sub = natsio::Subscription();
    EXPECT_TRUE(wait_until([&] { return watch.expired(); }))
        << "the handler (and its captures) is freed once the subscription is gone";
}

TEST(Lifetime, ThrowingHandlerIsReportedNotFatal) {
    std::mutex mutex;
    std::vector<natsio::AsyncError> reported;
    natsio::Options options;
    options.set_url(server_url()).on_error([&](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        reported.push_back(e);
    });
    natsio::Client client = natsio::Client::connect(options);
    std::atomic<int> handled{0};
    natsio::Subscription sub = client.subscribe(subject("throw"), [&](MsgView msg) {
        ++handled;
        if (msg.data() == "std") {
            throw std::runtime_error("boom");
        }
        if (msg.data() == "int") {
            throw 42;
        }
    });
    client.flush();
    client.publish(subject("throw"), "std");
    client.publish(subject("throw"), "int");
    client.publish(subject("throw"), "fine");
    client.flush();
    ASSERT_TRUE(wait_until([&] { return handled == 3; })) << "delivery goes on after a throw";
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return reported.size() == 2;
    }));
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(reported[0].source, natsio::AsyncError::Source::Handler);
    EXPECT_EQ(reported[0].text, "boom");
    EXPECT_EQ(reported[0].subject, subject("throw"));
    EXPECT_EQ(reported[0].sid, sub.sid());
    EXPECT_THROW(reported[0].rethrow(), std::runtime_error);
    EXPECT_EQ(reported[1].text, "unknown exception");
    EXPECT_THROW(reported[1].rethrow(), int);
    // The client is still healthy.
    EXPECT_EQ(client.status(), natsio::ConnStatus::Connected);
}

TEST(Lifetime, ThrowingHandlerWithoutErrorHandlerIsNotFatal) {
    natsio::Client client = connect();
    std::atomic<int> handled{0};
    natsio::Subscription sub = client.subscribe(subject("throw"), [&](MsgView) {
        ++handled;
        throw std::logic_error("reported on stderr");
    });
    client.flush();
    client.publish(subject("throw"), "a");
    client.publish(subject("throw"), "b");
    client.flush();
    EXPECT_TRUE(wait_until([&] { return handled == 2; }));
}

TEST(Lifetime, ThrowingErrorHandlerIsNotFatal) {
    natsio::Options options;
    std::atomic<int> calls{0};
    options.set_url(server_url()).on_error([&](const natsio::AsyncError&) {
        ++calls;
        throw std::runtime_error("the error handler fails too");
    });
    natsio::Client client = natsio::Client::connect(options);
    natsio::Subscription sub = client.subscribe(
        subject("throw"), [](MsgView) { throw std::runtime_error("handler"); });
    client.flush();
    client.publish(subject("throw"), "a");
    client.flush();
    EXPECT_TRUE(wait_until([&] { return calls == 1; }));
    EXPECT_EQ(client.status(), natsio::ConnStatus::Connected);
}

TEST(Lifetime, ErrorHandlerOutlivesTheOptions) {
    std::atomic<int> calls{0};
    natsio::Client client = [&] {
        natsio::Options options;
        options.set_url(server_url()).on_error([&](const natsio::AsyncError&) { ++calls; });
        return natsio::Client::connect(options);
    }();  // the Options are gone; the client keeps its handler
    natsio::Subscription sub = client.subscribe(
        subject("throw"), [](MsgView) { throw std::runtime_error("x"); });
    client.flush();
    client.publish(subject("throw"), "a");
    client.flush();
    EXPECT_TRUE(wait_until([&] { return calls == 1; }));
}

TEST(Lifetime, HandlerMayUnsubscribeItsOwnSubscription) {
    natsio::Client client = connect();
    std::atomic<int> handled{0};
    natsio::Subscription sub;
    std::promise<void> ready;
    std::shared_future<void> ready_future = ready.get_future().share();
    sub = client.subscribe(subject("self"), [&](MsgView) {
        ready_future.wait();
        if (++handled == 3) {
            sub.stop();  // from its own callback: returns at once
        }
    });
    ready.set_value();
    client.flush();
    for (int i = 0; i < 10; ++i) {
        client.publish(subject("self"), "x");
    }
    client.flush();
    ASSERT_TRUE(wait_until([&] { return sub.is_closed(); }));
    std::this_thread::sleep_for(50ms); // an absence: no call within 50 ms
    EXPECT_EQ(handled, 3);
}

// ---------------------------------------------------------------------------
// Move semantics
// ---------------------------------------------------------------------------

template <class T>
constexpr bool move_only_v = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                             std::is_nothrow_move_constructible_v<T> &&
                             std::is_nothrow_move_assignable_v<T>;

static_assert(move_only_v<natsio::Client>);
static_assert(move_only_v<natsio::Options>);
static_assert(move_only_v<natsio::Subscription>);
static_assert(move_only_v<natsio::Msg>);
static_assert(move_only_v<natsio::Headers>);
static_assert(move_only_v<natsio::Replies>);
static_assert(move_only_v<natsio::Future<natsio::Msg>>);
static_assert(move_only_v<natsio::Future<void>>);
static_assert(move_only_v<natsio::Future<std::optional<natsio::Msg>>>);

TEST(Move, MovedClientWorksAndMovedFromIsEmpty) {
    natsio::Client original = connect();
    natsio::Client moved = std::move(original);
    EXPECT_TRUE(moved);
    EXPECT_FALSE(original);  // NOLINT(bugprone-use-after-move): testing it
    natsio::Subscription sub = moved.subscribe(subject("m"));
    moved.flush();
    moved.publish(subject("m"), "after move");
    EXPECT_EQ(next_item(sub).data(), "after move");

    // A moved-from owner holds no handle: the library rejects it.
    try {
        original.publish(subject("m"), "x");
        FAIL() << "no exception";
    } catch (const natsio::InvalidArgumentError& e) {
        EXPECT_EQ(e.status(), NATSIO_ERR_NULL_ARGUMENT);
    }
    EXPECT_EQ(original.status(), natsio::ConnStatus::Closed);

    // Move assignment closes the client it replaces.
    natsio::Client replaced = connect();
    natsio::Subscription on_replaced = replaced.subscribe(subject("gone"));
    replaced = std::move(moved);
    EXPECT_TRUE(on_replaced.is_closed());
    replaced.publish(subject("m"), "still open");
    EXPECT_EQ(next_item(sub).data(), "still open");
}

TEST(Move, SubscriptionMovesWhileDelivering) {
    natsio::Client client = connect();
    std::atomic<int> handled{0};
    std::vector<natsio::Subscription> subs;
    subs.push_back(client.subscribe(subject("a"), [&](MsgView) { ++handled; }));
    client.flush();
    client.publish(subject("a"), "1");
    for (int i = 0; i < 20; ++i) {  // vector growth moves the first owner
        subs.push_back(client.subscribe(subject("other") + std::to_string(i)));
    }
    client.publish(subject("a"), "2");
    client.flush();
    EXPECT_TRUE(wait_until([&] { return handled == 2; }));

    // Move assignment frees the subscription it replaces.
    natsio::Subscription target = client.subscribe(subject("replaced"));
    natsio::Subscription source = client.subscribe(subject("kept"));
    target = std::move(source);
    EXPECT_FALSE(source);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(target.subject(), subject("kept"));
    client.flush();
    client.publish(subject("kept"), "k");
    EXPECT_EQ(next_item(target).data(), "k");
}

TEST(Move, MessagesHeadersAndRepliesMove) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("msg"));
    client.flush();
    natsio::Headers headers;
    headers.set("K", "V");
    natsio::Headers moved_headers = std::move(headers);
    EXPECT_FALSE(headers);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved_headers.get("K"), std::optional<std::string_view>("V"));
    client.publish_with(subject("msg"), std::nullopt, moved_headers, "m");

    natsio::Msg first = next_item(sub);
    natsio::Msg second = std::move(first);
    EXPECT_FALSE(first);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(second.data(), "m");
    EXPECT_EQ(second.headers().get("K"), std::optional<std::string_view>("V"));
    natsio::Msg third;
    third = std::move(second);
    EXPECT_EQ(third.subject(), subject("msg"));

    natsio::Subscription responder =
        client.subscribe(subject("svc"), [](MsgView msg) { msg.respond("r"); });
    client.flush();
    natsio::RequestManyOptions options;
    options.max_msgs = 1;
    natsio::Replies replies = client.request_many(subject("svc"), "x", options);
    natsio::Replies moved_replies = std::move(replies);
    auto reply = moved_replies.next();
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->data(), "r");
    EXPECT_FALSE(moved_replies.next().has_value());
}
