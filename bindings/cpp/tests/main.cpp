// Entry point of the C++ binding's test programs.
#include "support.hpp"

#include <cstdio>

namespace natsio_test {

namespace {
nt_server* g_server = nullptr;
}

nt_server* shared_server() { return g_server; }

int run_all(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    g_server = nt_server_start(nullptr);
    if (g_server == nullptr) {
        std::fprintf(stderr, "could not start nats-server\n");
        return 1;
    }
    int result = RUN_ALL_TESTS();
    nt_server_stop(g_server);
    g_server = nullptr;
    return result;
}

}  // namespace natsio_test

int main(int argc, char** argv) { return natsio_test::run_all(argc, argv); }
