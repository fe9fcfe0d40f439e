// README fragments that use `client` (a connected natsio::Client) and the
// helpers the text leaves to the reader: handle(data) takes a message's
// payload (true: done with it), `bytes` is some data to store, `part1` and
// `part2` two pieces of one. Afterwards some message was handled and
// nothing reached the client's on_error handler.
#include <natsio/natsio.hpp>
#include <natsio/jetstream.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>
#include "readme_harness.hpp"
using namespace std::chrono_literals;
/*@TOP@*/

static std::atomic<int> handled{0}, async_errors{0};

static bool handle(std::string_view data) {
    (void)data;
    ++handled;
    return true;
}

int main() {
    try {
        natsio::Client client = connect_counting_errors(async_errors);
        const std::string bytes(300 * 1024, 'x');
        const std::string part1 = "first line\n", part2 = "second line\n";

        /*@BODY@*/

        if (handled == 0 || async_errors != 0) {
            std::cerr << "handled " << handled << " messages, " << async_errors
                      << " async errors\n";
            return 1;
        }
    } catch (const std::exception& e) {
        std::cerr << "uncaught: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
