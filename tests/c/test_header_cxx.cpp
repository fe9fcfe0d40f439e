// Proves include/natsio.h is usable from C++17: the tree compiles this file
// with -Wall -Wextra -Werror -pedantic, so any C-only construct in the
// generated header (designated initializers, implicit void* conversions,
// enum underlying types that differ from C) fails the build. It also links and
// calls a few functions so a missing `extern "C"` shows up as a link error.
// No server is needed; the output ends with the harness-style summary line.

#include "natsio.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace {

int failures = 0;
int checks = 0;

void check(bool ok, const char *what) {
    ++checks;
    if (!ok) {
        ++failures;
        std::printf("[ FAIL ] %s\n", what);
    }
}

// In C++ the enums are real enum types with a fixed int32_t underlying type,
// which is what makes them ABI-compatible with the int32_t typedefs C sees.
static_assert(std::is_same<std::underlying_type<natsio_status>::type, std::int32_t>::value,
              "natsio_status must be int32_t-based in C++");
static_assert(std::is_same<std::underlying_type<natsio_conn_status>::type, std::int32_t>::value,
              "natsio_conn_status must be int32_t-based in C++");
static_assert(std::is_same<std::underlying_type<natsio_pending_policy>::type, std::int32_t>::value,
              "natsio_pending_policy must be int32_t-based in C++");
static_assert(std::is_standard_layout<struct natsio_sub_options>::value, "plain C struct");
static_assert(std::is_trivially_copyable<struct natsio_client_stats>::value, "plain C struct");

// A message callback as a C++ user would write it.
void on_message(void *user_data, natsio_sub *sub, const natsio_msg *msg) {
    (void)user_data;
    (void)sub;
    (void)msg;
}

}  // namespace

int main() {
    std::printf("[ RUN  ] header_compiles_and_links_as_cxx17\n");

    const char *version = natsio_version();
    check(version != nullptr && std::strlen(version) > 0, "natsio_version() is a non-empty string");

    check(std::strcmp(natsio_status_str(NATSIO_OK), natsio_status_str(NATSIO_ERR_TIMEOUT)) != 0,
          "natsio_status_str distinguishes codes");

    natsio_sub_options sub_opts;
    std::memset(&sub_opts, 0xff, sizeof sub_opts);
    check(natsio_sub_options_init(&sub_opts) == NATSIO_OK, "natsio_sub_options_init succeeds");
    check(sub_opts.policy == NATSIO_POLICY_DROP_NEW, "default policy is DROP_NEW");

    natsio_headers *headers = nullptr;
    check(natsio_headers_new(&headers) == NATSIO_OK && headers != nullptr, "natsio_headers_new");
    check(natsio_headers_add(headers, "X-Lang", "C++17") == NATSIO_OK, "natsio_headers_add");
    const char *value = nullptr;
    check(natsio_headers_get(headers, "X-Lang", &value) == NATSIO_OK && value != nullptr &&
              std::strcmp(value, "C++17") == 0,
          "natsio_headers_get returns the added value");
    natsio_headers_free(headers);

    // Callback types accept a plain function pointer without casts.
    natsio_msg_cb cb = on_message;
    check(cb != nullptr, "natsio_msg_cb accepts a plain function");

    // NULL handles behave the same from C++.
    natsio_status st = natsio_client_publish(nullptr, "subject", nullptr, 0);
    check(st == NATSIO_ERR_NULL_ARGUMENT, "NULL client is rejected with NATSIO_ERR_NULL_ARGUMENT");
    check(natsio_client_status(nullptr) == NATSIO_CONN_CLOSED, "status of NULL client is CLOSED");
    check(std::strlen(natsio_last_error()) > 0, "natsio_last_error() explains the failure");

    if (failures == 0) {
        std::printf("[  OK  ] header_compiles_and_links_as_cxx17 (%d checks)\n", checks);
        std::printf("1 passed, 0 failed\n");
        return 0;
    }
    std::printf("0 passed, 1 failed\n");
    return 1;
}
