// Shared by the C++ harnesses (the runner puts tests/readme on the include
// path).
#pragma once
#include <natsio/natsio.hpp>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

// Connects to the runner's server ($NATS_URL: this header is included, not
// substituted like the harness text); what reaches the client's on_error is
// printed and counted in async_errors, which must outlive the client.
inline natsio::Client connect_counting_errors(std::atomic<int>& async_errors) {
    const char* url = std::getenv("NATS_URL");
    if (url == nullptr) throw std::runtime_error("NATS_URL is not set (run by scripts/readme_blocks.py)");
    natsio::Options options;
    options.set_url(url).on_error([&async_errors](const natsio::AsyncError& e) {
        std::cerr << "on_error: " << e.text << "\n";
        ++async_errors;
    });
    return natsio::Client::connect(options);
}
