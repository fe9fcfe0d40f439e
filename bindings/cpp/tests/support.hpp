// Shared helpers of the C++ binding's GoogleTest suites: one nats-server per
// test program (started by main() on the main thread, as the harness asks),
// per-test subjects, and polling waits.
#ifndef NATSIO_CPP_TEST_SUPPORT_HPP
#define NATSIO_CPP_TEST_SUPPORT_HPP

#include <natsio/natsio.hpp>

#include "harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>

namespace natsio_test {

using namespace std::chrono_literals;

/// The server shared by the test program.
nt_server* shared_server();

inline std::string server_url() { return nt_server_url(shared_server()); }

inline natsio::Client connect() { return natsio::Client::connect(server_url()); }

/// A nats-server of one test alone, stopped when it goes out of scope.
using OwnedServer = std::unique_ptr<nt_server, void (*)(nt_server*)>;

/// Starts a server with the nats-server config text `config` ("" for
/// none); holds nullptr when it could not start (the harness printed why).
/// Start it from the test's own thread (the harness kills a server whose
/// starting thread ends).
inline OwnedServer start_own_server(const std::string& config = {}) {
    return OwnedServer(nt_server_start(config.empty() ? nullptr : config.c_str()), &nt_server_stop);
}

/// A subject unique to the running test, so tests never see each other's
/// traffic on the shared server.
inline std::string subject(const std::string& suffix) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string("cpp.") + info->test_suite_name() + "." + info->name() + "." + suffix;
}

/// Polls `done` every 2 ms for up to `timeout`; true once it holds.
inline bool wait_until(const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return done();
        }
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

/// Runs `call` and checks it throws exactly Expected with `status`; returns
/// the exception's what() ("" when the check failed).
template <class Expected, class Call>
std::string expect_throws(natsio::Status status, Call&& call) {
    try {
        call();
        ADD_FAILURE() << "no exception; expected status " << status;
    } catch (const Expected& e) {
        EXPECT_EQ(typeid(e), typeid(Expected)) << e.what();
        EXPECT_EQ(e.status(), status) << e.what();
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "wrong exception: " << typeid(e).name() << ": " << e.what();
    }
    return "";
}

/// The next item of a Feed (Subscription, Replies, Messages, KvWatcher)
/// within `timeout`; throws (failing the test) when the iteration ended,
/// and TimeoutError when nothing came.
template <class Feed>
typename Feed::value_type next_item(const Feed& feed, std::chrono::milliseconds timeout = 5s) {
    std::optional<typename Feed::value_type> item = feed.next(timeout);
    if (!item) {
        throw std::runtime_error("the iteration ended, an item was expected");
    }
    return std::move(*item);
}

/// Nothing more comes within `quiet`: next() times out.
template <class Feed>
void expect_quiet(const Feed& feed, std::chrono::milliseconds quiet = 200ms) {
    try {
        auto item = feed.next(quiet);
        ADD_FAILURE() << (item ? "an unexpected item" : "the iteration ended");
    } catch (const natsio::TimeoutError& e) {
        EXPECT_EQ(e.status(), NATSIO_ERR_TIMEOUT);
    }
}

/// `prefix` followed by `n` ("k" and 3: "k3"). (Built with +=: g++ 12 at
/// -O2 in C++20 mode reports a false -Wrestrict for "literal" +
/// std::to_string(n).)
inline std::string numbered(const std::string& prefix, long long n) {
    std::string text = prefix;
    text += std::to_string(n);
    return text;
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// Starts the shared server, runs the tests, stops the server.
int run_all(int argc, char** argv);

}  // namespace natsio_test

#endif
