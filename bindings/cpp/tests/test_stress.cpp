// The binding's own machinery under stress: Future (a shared token handle,
// then() callbacks that outlive their Future, cancel() racing completion)
// and Feed (next() from several threads, push mode, stop() racing
// delivery), with the client closed while operations are in flight. Each
// test counts what must happen exactly once; the ASan run of this program
// (scripts/sanitize.sh) sees what would be freed twice or used after free.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace natsio_test;

namespace {

/// What one request's Future ended with.
enum class Outcome { Pending, Reply, Cancelled, Closed, Wrong };

}  // namespace

// Many requests in flight, each with a then() callback; a third of the
// Futures dropped at once (the callback must still run), a third cancelled
// from another thread while replies arrive, and the client closed part-way
// through. Every callback runs exactly once, with the request's own reply,
// CancelledError or ConnectionClosedError. Every fifth request goes to a
// subscriber that never answers: those are still in flight at the close
// however the threads are scheduled, so some must end closed.
TEST(Stress, FutureCallbacksRunOnceWhileCancelAndCloseRace) {
    constexpr int kRequests = 3000;
    natsio::Client responder = connect();
    natsio::Subscription echo =
        responder.subscribe(subject("echo"), [](natsio::MsgView msg) { msg.respond(msg.data()); });
    natsio::Subscription silent = responder.subscribe(subject("silent"), [](natsio::MsgView) {});
    responder.flush();
    natsio::Client client = connect();

    std::vector<std::atomic<int>> calls(kRequests);
    std::vector<std::atomic<Outcome>> outcomes(kRequests);
    std::atomic<int> replies{0};
    std::vector<natsio::Future<natsio::Msg>> kept;
    kept.reserve(kRequests);
    std::mutex kept_mutex;

    std::atomic<bool> started_all{false};
    std::string cancel_failure;
    std::thread closer;
    std::thread canceller([&] {
        std::mt19937 rng(46);
        while (!started_all.load()) {
            std::vector<const natsio::Future<natsio::Msg>*> some;
            {
                std::lock_guard<std::mutex> lock(kept_mutex);
                for (std::size_t i = rng() % 3; i < kept.size(); i += 3) some.push_back(&kept[i]);
            }
            for (const auto* future : some) {
                try {
                    future->cancel();
                } catch (const natsio::IllegalStateError&) {
                    // Completed first: cancel() lost the race, as it may.
                } catch (const std::exception& e) {
                    cancel_failure = e.what();
                }
            }
            std::this_thread::yield();
        }
    });

    for (int i = 0; i < kRequests; ++i) {
        std::string payload = numbered("r", i);
        natsio::Future<natsio::Msg> future;
        try {
            future = client.request_async(subject(i % 5 == 4 ? "silent" : "echo"), payload, 120s);
        } catch (const natsio::ConnectionClosedError&) {
            calls[i] = 1;
            outcomes[i] = Outcome::Closed;
            continue;
        }
        future.then([&, i, payload](natsio::Future<natsio::Msg> done) {
            try {
                outcomes[i] = done.get().data() == payload ? Outcome::Reply : Outcome::Wrong;
                replies.fetch_add(1);
            } catch (const natsio::CancelledError&) {
                outcomes[i] = Outcome::Cancelled;
            } catch (const natsio::ConnectionClosedError&) {
                outcomes[i] = Outcome::Closed;
            } catch (...) {
                outcomes[i] = Outcome::Wrong;
            }
            calls[i].fetch_add(1);  // last: the outcome is in place once counted
        });
        if (i % 3 != 0) {
            // Kept (and maybe cancelled); every third is dropped at once.
            std::lock_guard<std::mutex> lock(kept_mutex);
            kept.push_back(std::move(future));
        }
        if (i == kRequests / 2) {
            // Close once replies are coming in, with the rest in flight.
            EXPECT_TRUE(wait_until([&] { return replies.load() > 0; }, 30s)) << "no reply came";
            closer = std::thread([&client] { client.close(); });
        }
    }
    started_all = true;
    canceller.join();
    closer.join();
    EXPECT_EQ(cancel_failure, "");

    ASSERT_TRUE(wait_until(
        [&] {
            for (const auto& c : calls) {
                if (c.load() == 0) return false;
            }
            return true;
        },
        60s))
        << "a then() callback never ran";
    int counts[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < kRequests; ++i) {
        EXPECT_EQ(calls[i].load(), 1) << "request " << i;
        counts[static_cast<int>(outcomes[i].load())]++;
    }
    EXPECT_EQ(counts[static_cast<int>(Outcome::Wrong)], 0);
    EXPECT_EQ(counts[static_cast<int>(Outcome::Pending)], 0);
    EXPECT_GT(counts[static_cast<int>(Outcome::Reply)], 0);
    EXPECT_GT(counts[static_cast<int>(Outcome::Closed)], 0);
    std::printf("# replies %d, cancelled %d, closed %d\n", counts[1], counts[2], counts[3]);
    // A kept Future is ready and agrees with what its callback saw.
    for (const auto& future : kept) {
        EXPECT_TRUE(future.ready());
    }
}

// next() from four threads while messages pour in, then stop() from the
// main thread: no message is taken twice, each thread sees its messages in
// publish order, and every thread's next() returns (std::nullopt) after
// stop(); none hangs.
TEST(Stress, FeedNextFromManyThreadsWhileStopRaces) {
    constexpr int kMessages = 20000;
    constexpr int kReaders = 4;
    natsio::Client client = connect();
    const std::string subj = subject("many");
    natsio::Subscription sub = client.subscribe(subj);
    client.flush();
    natsio::Client publisher = connect();

    std::atomic<int> taken{0};
    std::vector<std::vector<int>> seen(kReaders);
    std::vector<std::string> failures(kReaders);
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r) {
        readers.emplace_back([&, r] {
            try {
                for (;;) {
                    std::optional<natsio::Msg> msg = sub.next(60s);
                    if (!msg) return;  // stopped
                    seen[r].push_back(std::stoi(std::string(msg->data())));
                    taken.fetch_add(1);
                }
            } catch (const std::exception& e) {
                failures[r] = e.what();
            }
        });
    }
    std::thread publishing([&] {
        for (int i = 0; i < kMessages; ++i) publisher.publish(subj, std::to_string(i));
        publisher.flush(30s);
    });
    EXPECT_TRUE(wait_until([&] { return taken.load() >= kMessages / 4; }, 60s)) << taken.load();
    sub.stop();
    for (auto& t : readers) t.join();  // each next() ended: none hangs
    publishing.join();

    std::set<int> all;
    for (int r = 0; r < kReaders; ++r) {
        EXPECT_EQ(failures[r], "") << "reader " << r;
        for (std::size_t k = 1; k < seen[r].size(); ++k) {
            EXPECT_LT(seen[r][k - 1], seen[r][k]) << "reader " << r << " out of order";
        }
        for (int id : seen[r]) {
            EXPECT_TRUE(all.insert(id).second) << "message " << id << " taken twice";
        }
    }
    EXPECT_EQ(static_cast<int>(all.size()), taken.load());
    EXPECT_FALSE(sub.next(natsio::no_wait).has_value()) << "stopped: the end, at once";
}

// Push mode with stop() racing delivery, over and over: on_end runs
// exactly once per subscription and no on_item runs after stop() returns;
// the client closed with callbacks mid-flight ends the rest the same way.
TEST(Stress, FeedCallbacksEndOnceWhenStopRacesDelivery) {
    constexpr int kRounds = 40;
    natsio::Client client = connect();
    natsio::Client publisher = connect();
    for (int round = 0; round < kRounds; ++round) {
        const std::string subj = subject(numbered("push.", round));
        natsio::Subscription sub = client.subscribe(subj);
        client.flush();
        auto items = std::make_shared<std::atomic<int>>(0);
        auto ends = std::make_shared<std::atomic<int>>(0);
        auto after_stop = std::make_shared<std::atomic<int>>(0);
        auto stopped = std::make_shared<std::atomic<bool>>(false);
        sub.set_callback(
            [items, after_stop, stopped](natsio::MsgView) {
                if (stopped->load()) after_stop->fetch_add(1);
                items->fetch_add(1);
            },
            [ends](std::exception_ptr) { ends->fetch_add(1); });
        for (int i = 0; i < 500; ++i) publisher.publish(subj, "x");
        publisher.flush(10s);
        ASSERT_TRUE(wait_until([&] { return items->load() > 0; }, 30s)) << "round " << round;
        sub.stop();  // mid-delivery: on_end has run when this returns
        stopped->store(true);
        EXPECT_EQ(ends->load(), 1) << "round " << round;
        publisher.publish(subj, "after");
        publisher.flush(10s);
        sub.stop();  // idempotent
        EXPECT_EQ(ends->load(), 1) << "round " << round;
        EXPECT_EQ(after_stop->load(), 0) << "round " << round << ": an item after stop() returned";
    }

    // Closing the client with callback subscriptions mid-delivery: each
    // ends once (with ConnectionClosedError) and none runs after close().
    constexpr int kSubs = 8;
    std::vector<natsio::Subscription> subs;
    auto ends = std::make_shared<std::atomic<int>>(0);
    auto items = std::make_shared<std::atomic<int>>(0);
    auto closed = std::make_shared<std::atomic<bool>>(false);
    auto after_close = std::make_shared<std::atomic<int>>(0);
    const std::string closing = subject("closing");
    for (int s = 0; s < kSubs; ++s) {
        subs.push_back(client.subscribe(closing));
        subs.back().set_callback(
            [items, closed, after_close](natsio::MsgView) {
                if (closed->load()) after_close->fetch_add(1);
                items->fetch_add(1);
            },
            [ends](std::exception_ptr) { ends->fetch_add(1); });
    }
    client.flush();
    std::thread firehose([&] {
        for (int i = 0; i < 20000; ++i) publisher.publish(closing, "x");
    });
    EXPECT_TRUE(wait_until([&] { return items->load() > kSubs; }, 30s));
    client.close();
    closed->store(true);
    firehose.join();
    EXPECT_EQ(ends->load(), kSubs);
    EXPECT_EQ(after_close->load(), 0) << "a handler ran after close() returned";
}
