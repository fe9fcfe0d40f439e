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
#include <string>
#include <thread>
#include <typeinfo>

namespace natsio_test {

using namespace std::chrono_literals;

/// The server shared by the test program.
nt_server* shared_server();

inline std::string server_url() { return nt_server_url(shared_server()); }

inline natsio::Client connect() { return natsio::Client::connect(server_url()); }

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

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// Starts the shared server, runs the tests, stops the server.
int run_all(int argc, char** argv);

}  // namespace natsio_test

#endif
