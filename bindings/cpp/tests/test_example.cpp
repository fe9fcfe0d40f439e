// Runs examples/cpp/pubsub against the suite's server: it must succeed and
// print the replies it got.
#include "support.hpp"

#include <cstdio>
#include <string>
#include <sys/wait.h>

using namespace natsio_test;

#ifdef NATSIO_CPP_EXAMPLE_PUBSUB

namespace {

/// Runs `command`, returning its exit status and standard output.
std::pair<int, std::string> run(const std::string& command) {
    std::string output;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) {
        return {-1, output};
    }
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
        output.append(buffer, n);
    }
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace

TEST(Example, PubsubRunsAgainstALiveServer) {
    auto [code, output] = run(std::string("'") + NATSIO_CPP_EXAMPLE_PUBSUB + "' " + server_url());
    EXPECT_EQ(code, 0) << output;
    EXPECT_NE(output.find("reply: hello, world"), std::string::npos) << output;
    EXPECT_NE(output.find("async reply: hello, future"), std::string::npos) << output;
    EXPECT_NE(output.find("one of many: hello, everyone"), std::string::npos) << output;
    EXPECT_NE(output.find("as expected: "), std::string::npos) << output;
}

TEST(Example, PubsubFailsClearlyWithoutAServer) {
    auto [code, output] = run(std::string("'") + NATSIO_CPP_EXAMPLE_PUBSUB +
                              "' nats://127.0.0.1:" + std::to_string(nt_free_port()) + " 2>&1");
    EXPECT_EQ(code, 1) << output;
    EXPECT_NE(output.find("pubsub: "), std::string::npos) << output;
}

#endif
