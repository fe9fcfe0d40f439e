// Proves include/natsio.h and include/natsio_sys.h (which includes it) are
// usable from C++17: the tree compiles this file
// with -Wall -Wextra -Werror -pedantic, so any C-only construct in the
// generated header (designated initializers, implicit void* conversions,
// enum underlying types that differ from C) fails the build. It also links and
// calls a few functions so a missing `extern "C"` shows up as a link error.
// No server is needed; the output ends with the harness-style summary line.

#include "natsio_sys.h"

#include <cstddef>
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
static_assert(std::is_same<std::underlying_type<natsio_kv_operation>::type, std::int32_t>::value,
              "natsio_kv_operation must be int32_t-based in C++");
static_assert(std::is_same<std::underlying_type<natsio_create_action>::type, std::int32_t>::value,
              "natsio_create_action must be int32_t-based in C++");
static_assert(std::is_same<std::underlying_type<natsio_event_kind>::type, std::int32_t>::value,
              "natsio_event_kind must be int32_t-based in C++");
static_assert(std::is_standard_layout<struct natsio_sub_options>::value, "plain C struct");
static_assert(std::is_trivially_copyable<struct natsio_client_stats>::value, "plain C struct");
static_assert(std::is_trivially_copyable<struct natsio_iter_stats>::value, "plain C struct");
// Every versioned options struct starts with its uint32_t version.
static_assert(offsetof(natsio_sub_options, version) == 0, "version first");
static_assert(offsetof(natsio_request_many_options, version) == 0, "version first");
static_assert(offsetof(natsio_js_options, version) == 0, "version first");
static_assert(offsetof(natsio_js_publish_options, version) == 0, "version first");
static_assert(offsetof(natsio_fetch_options, version) == 0, "version first");
static_assert(offsetof(natsio_consume_options, version) == 0, "version first");
static_assert(offsetof(natsio_kv_watch_options, version) == 0, "version first");
static_assert(std::is_same<decltype(natsio_sub_options::version), std::uint32_t>::value, "uint32_t version");
// The timeout constants are plain integer constants.
static_assert(NATSIO_NO_WAIT == 0 && NATSIO_TIMEOUT_DEFAULT == -1 && NATSIO_WAIT_FOREVER == -2,
              "the timeout rule's constants");

// Callbacks as a C++ user would write them.
void on_message(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)msg;
    (void)status;
}

void on_entry(void *user_data, const natsio_kv_entry *entry, natsio_status status) {
    (void)user_data;
    (void)entry;
    (void)status;
}

void on_complete(void *user_data, natsio_token *token) {
    (void)user_data;
    (void)token;
}

}  // namespace

int main() {
    std::printf("[ RUN  ] header_compiles_and_links_as_cxx17\n");

    const char *version = natsio_version();
    check(version != nullptr && std::strlen(version) > 0, "natsio_version() is a non-empty string");
    natsio_spin_result declined = natsio_runtime_spin_until_set(nullptr, 1);
    check(declined == NATSIO_SPIN_DECLINED, "natsio_sys.h: spinning on no flag is declined");

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

    // Options structs are initialised by their _init functions from C++ too.
    natsio_js_options js_opts;
    std::memset(&js_opts, 0xff, sizeof js_opts);
    check(natsio_js_options_init(&js_opts) == NATSIO_OK && js_opts.version == NATSIO_JS_OPTIONS_VERSION &&
              js_opts.domain == nullptr && js_opts.timeout_ms == 0,
          "natsio_js_options_init");
    natsio_kv_watch_options watch_opts{};
    check(natsio_kv_watch_options_init(&watch_opts) == NATSIO_OK &&
              watch_opts.version == NATSIO_KV_WATCH_OPTIONS_VERSION,
          "natsio_kv_watch_options_init");

    // Callback types accept a plain function pointer without casts.
    natsio_msg_cb cb = on_message;
    check(cb != nullptr, "natsio_msg_cb accepts a plain function");
    natsio_kv_entry_cb entry_cb = on_entry;
    check(entry_cb != nullptr, "natsio_kv_entry_cb accepts a plain function");
    natsio_token_cb token_cb = on_complete;
    check(token_cb != nullptr, "natsio_token_cb accepts a plain function");

    // String lists: the NULL list is empty.
    check(natsio_string_list_count(nullptr) == 0 && natsio_string_list_get(nullptr, 0) == nullptr,
          "natsio_string_list of NULL is empty");

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
