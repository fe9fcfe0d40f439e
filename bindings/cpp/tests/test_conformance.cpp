// The conformance table (tests/conformance/cases.txt, read at run time from
// NATSIO_CONFORMANCE_CASES) run against the C++ binding and a real server:
// one test per kind of line (error, data, default, behaviour), each line
// under its own SCOPED_TRACE. A line this file has no check for fails, so a
// case added to the table must be added here too.
#include "js_support.hpp"

#include <natsio/service.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#ifndef NATSIO_CONFORMANCE_CASES
#error "NATSIO_CONFORMANCE_CASES (the path of tests/conformance/cases.txt) must be defined"
#endif
#ifndef NATSIO_C_HEADER
#error "NATSIO_C_HEADER (the path of include/natsio.h) must be defined"
#endif

using namespace natsio_test;

namespace {

/// One line of the table: its kind, its other fields, and where it is.
struct Case {
    int line = 0;
    std::string kind;
    std::vector<std::string> fields;
    std::string text;
};

std::string read_text(const char* path) {
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error(std::string("cannot read ") + path);
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

const std::vector<Case>& cases() {
    static const std::vector<Case> all = [] {
        std::vector<Case> out;
        std::istringstream in(read_text(NATSIO_CONFORMANCE_CASES));
        std::string raw;
        int number = 0;
        while (std::getline(in, raw)) {
            ++number;
            std::string text = raw.substr(0, raw.find('#'));
            std::istringstream words(text);
            Case c;
            c.line = number;
            c.text = raw;
            if (!(words >> c.kind)) {
                continue;  // blank or comment
            }
            std::string word;
            while (words >> word) {
                c.fields.push_back(word);
            }
            out.push_back(std::move(c));
        }
        return out;
    }();
    return all;
}

std::vector<Case> cases_of(const std::string& kind) {
    std::vector<Case> out;
    for (const Case& c : cases()) {
        if (c.kind == kind) {
            out.push_back(c);
        }
    }
    return out;
}

std::string where(const Case& c) {
    return "cases.txt:" + std::to_string(c.line) + ": " + c.text;
}

// ---------------------------------------------------------------------------
// The error classes, from the header's one status-to-class list
// ---------------------------------------------------------------------------

template <class E>
bool caught_as(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const E&) {
        return true;
    } catch (...) {
        return false;
    }
}

struct ErrorClass {
    std::int32_t code;
    const char* name;
    bool (*catches)(const std::exception_ptr&);
    const std::type_info* type;
};

#define CONFORMANCE_CLASS(Code, Class) \
    ErrorClass{Code, #Class, &caught_as<natsio::Class>, &typeid(natsio::Class)},
const ErrorClass kClasses[] = {NATSIO_CPP_ERRORS(CONFORMANCE_CLASS)};
#undef CONFORMANCE_CLASS

const ErrorClass* class_of(std::int32_t code) {
    for (const ErrorClass& c : kClasses) {
        if (c.code == code) {
            return &c;
        }
    }
    return nullptr;
}

/// The dynamic type of what `error` holds.
const std::type_info& type_of(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return typeid(e);
    } catch (...) {
        return typeid(void);
    }
}

/// Runs `call`, which must throw a natsio::Error; returns a copy of what it
/// threw as the exception_ptr and the Error (status, data).
template <class Call>
std::exception_ptr thrown_by(Call&& call) {
    try {
        call();
    } catch (const natsio::Error&) {
        return std::current_exception();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not a natsio::Error: " << e.what();
        return nullptr;
    }
    ADD_FAILURE() << "no exception";
    return nullptr;
}

/// The natsio::Error inside `error` (fails the test and returns a blank
/// one when there is none).
natsio::Error error_in(const std::exception_ptr& error) {
    try {
        if (error) {
            std::rethrow_exception(error);
        }
    } catch (const natsio::Error& e) {
        return e;
    } catch (...) {
    }
    ADD_FAILURE() << "no natsio::Error";
    return natsio::Error(NATSIO_OK, "");
}

// ---------------------------------------------------------------------------
// error lines
// ---------------------------------------------------------------------------

TEST(Conformance, EveryLineHasAKind) {
    ASSERT_FALSE(cases().empty()) << NATSIO_CONFORMANCE_CASES;
    const std::set<std::string> kinds = {"error", "data", "default", "behaviour"};
    for (const Case& c : cases()) {
        SCOPED_TRACE(where(c));
        if (c.kind == "facade") {
            // Go's and Node's facades only: C++ has none to check.
            EXPECT_TRUE(c.fields.size() == 2 && (c.fields[0] == "go" || c.fields[0] == "node"));
            continue;
        }
        EXPECT_EQ(kinds.count(c.kind), 1u) << "no C++ check for kind '" << c.kind << "'";
    }
}

TEST(Conformance, Errors) {
    // The table: status -> (name, ancestors).
    std::map<std::int32_t, std::string> names;
    std::map<std::int32_t, std::set<std::int32_t>> ancestors;
    for (const Case& c : cases_of("error")) {
        SCOPED_TRACE(where(c));
        ASSERT_GE(c.fields.size(), 2u);
        const std::int32_t status = std::stoi(c.fields[0]);
        EXPECT_EQ(names.count(status), 0u) << "status listed twice";
        names[status] = c.fields[1];
        std::set<std::int32_t>& up = ancestors[status];
        for (std::size_t i = 2; i < c.fields.size(); ++i) {
            up.insert(std::stoi(c.fields[i]));
        }
    }
    ASSERT_FALSE(names.empty());

    // Every NATSIO_ERR_ of the header has a line, with its name.
    const std::string header = read_text(NATSIO_C_HEADER);
    const std::regex code_re(R"(NATSIO_ERR_([A-Z0-9_]+) = (\d+),)");
    std::set<std::int32_t> header_codes;
    for (auto it = std::sregex_iterator(header.begin(), header.end(), code_re);
         it != std::sregex_iterator(); ++it) {
        const std::int32_t code = std::stoi((*it)[2].str());
        header_codes.insert(code);
        SCOPED_TRACE("natsio.h: NATSIO_ERR_" + (*it)[1].str());
        ASSERT_EQ(names.count(code), 1u) << "not in the table";
        EXPECT_EQ(names[code], (*it)[1].str());
    }
    EXPECT_GT(header_codes.size(), 50u);
    // ... and every status of the table is one of the header's, with a
    // class in natsio::make_error's list (NATSIO_CPP_ERRORS), and nothing
    // else is in that list.
    for (const auto& [status, name] : names) {
        SCOPED_TRACE("status " + std::to_string(status) + " " + name);
        EXPECT_EQ(header_codes.count(status), 1u) << "not a NATSIO_ERR_ of natsio.h";
        EXPECT_NE(class_of(status), nullptr) << "no C++ class";
        EXPECT_EQ(natsio_status_name(status), name);
    }
    EXPECT_EQ(std::size(kClasses), names.size());

    // Every pair (S, T): make_error(S) is caught by T's class exactly when
    // the table says T is S or an ancestor of S, and exactly when the core
    // says so (natsio_status_is).
    for (const auto& [status, name] : names) {
        SCOPED_TRACE("make_error(" + std::to_string(status) + " " + name + ")");
        const ErrorClass* own = class_of(status);
        if (own == nullptr) {
            continue;  // reported above
        }
        const natsio::ErrorData data{404, 10059, 7};
        std::exception_ptr error = natsio::make_error(static_cast<natsio::Status>(status), "text", data);
        EXPECT_EQ(type_of(error), *own->type) << "not exactly " << own->name;
        natsio::Error e = error_in(error);
        EXPECT_EQ(e.status(), status);
        EXPECT_EQ(e.detail(), "text");
        EXPECT_EQ(e.api_code(), 404);
        EXPECT_EQ(e.err_code(), 10059);
        EXPECT_EQ(e.revision(), 7u);
        for (const auto& [other, other_name] : names) {
            const ErrorClass* their = class_of(other);
            if (their == nullptr) {
                continue;
            }
            const bool table = other == status || ancestors[status].count(other) == 1;
            const bool core = natsio_status_is(status, other);
            const bool cpp = their->catches(error);
            EXPECT_EQ(core, table) << "natsio_status_is(" << status << ", " << other << ")";
            EXPECT_EQ(cpp, table) << "catch (const natsio::" << their->name << "&) of " << name
                                  << (table ? " misses it" : " catches it");
        }
        // Every error is a natsio::Error and a std::exception.
        EXPECT_TRUE(caught_as<natsio::Error>(error));
        EXPECT_TRUE(caught_as<std::exception>(error));
    }
    // Codes outside the table stay plain natsio::Error.
    EXPECT_EQ(type_of(natsio::make_error(static_cast<natsio::Status>(999), "")),
              typeid(natsio::Error));
}

// ---------------------------------------------------------------------------
// data lines
// ---------------------------------------------------------------------------

void check_api_error() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_CONF_API";
    js.create_stream(R"({"name":")" + stream + R"(","subjects":["cpp.conf.api.a"],"storage":"memory"})");
    std::exception_ptr in_use = thrown_by([&] {
        js.create_stream(R"({"name":")" + stream +
                         R"(","subjects":["cpp.conf.api.b"],"storage":"memory"})");
    });
    EXPECT_TRUE(caught_as<natsio::StreamNameInUseError>(in_use));
    natsio::Error e = error_in(in_use);
    EXPECT_EQ(e.status(), NATSIO_ERR_STREAM_NAME_IN_USE);
    EXPECT_EQ(e.api_code(), 400);
    EXPECT_EQ(e.err_code(), 10058);
    EXPECT_EQ(e.revision(), 0u);

    std::exception_ptr missing = thrown_by([&] { js.stream_info("CPP_CONF_NO_SUCH"); });
    EXPECT_TRUE(caught_as<natsio::StreamNotFoundError>(missing));
    e = error_in(missing);
    EXPECT_EQ(e.status(), NATSIO_ERR_STREAM_NOT_FOUND);
    EXPECT_EQ(e.api_code(), 404);
    EXPECT_EQ(e.err_code(), 10059);
    // The future form carries the same data (read from the token).
    std::exception_ptr missing_async =
        thrown_by([&] { js.stream_info_async("CPP_CONF_NO_SUCH").get(); });
    e = error_in(missing_async);
    EXPECT_EQ(e.status(), NATSIO_ERR_STREAM_NOT_FOUND);
    EXPECT_EQ(e.api_code(), 404);
    EXPECT_EQ(e.err_code(), 10059);
    // A failure that is no API rejection carries none.
    e = error_in(thrown_by([&] { client.publish("a..b", "x"); }));
    EXPECT_EQ(e.api_code(), 0);
    EXPECT_EQ(e.err_code(), 0);
    js.delete_stream(stream);
}

void check_key_revision() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string bucket = "cppconf_rev";
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":")" + bucket + R"(","storage":"memory"})");
    ASSERT_EQ(kv.put("k", "v1"), 1u);
    std::exception_ptr exists = thrown_by([&] { kv.create("k", "again"); });
    EXPECT_TRUE(caught_as<natsio::KeyExistsError>(exists));
    natsio::Error e = error_in(exists);
    EXPECT_EQ(e.status(), NATSIO_ERR_KEY_EXISTS);
    EXPECT_EQ(e.revision(), 1u);

    ASSERT_EQ(kv.del("k"), 2u);
    std::exception_ptr deleted = thrown_by([&] { kv.get("k"); });
    EXPECT_TRUE(caught_as<natsio::KeyDeletedError>(deleted));
    e = error_in(deleted);
    EXPECT_EQ(e.status(), NATSIO_ERR_KEY_DELETED);
    EXPECT_EQ(e.revision(), 2u);
    // The future form too.
    e = error_in(thrown_by([&] { kv.get_async("k").get(); }));
    EXPECT_EQ(e.status(), NATSIO_ERR_KEY_DELETED);
    EXPECT_EQ(e.revision(), 2u);
    js.delete_key_value(bucket);
}

TEST(Conformance, Data) {
    const std::vector<Case> lines = cases_of("data");
    EXPECT_FALSE(lines.empty());
    for (const Case& c : lines) {
        SCOPED_TRACE(where(c));
        ASSERT_EQ(c.fields.size(), 1u);
        const std::string& name = c.fields[0];
        if (name == "api_error") {
            check_api_error();
        } else if (name == "key_revision") {
            check_key_revision();
        } else {
            ADD_FAILURE() << "no C++ check for data '" << name << "'";
        }
    }
}

// ---------------------------------------------------------------------------
// default lines
// ---------------------------------------------------------------------------

/// The outcome of a connect: "ok", or the status it failed with.
template <class Connect>
std::string connect_outcome(Connect&& connect_call) {
    try {
        natsio::Client client = connect_call();
        return "ok";
    } catch (const natsio::Error& e) {
        return std::string(natsio_status_name(e.status()));
    }
}

void check_default_url(const std::string& value) {
    EXPECT_EQ(natsio::default_url, value);
    EXPECT_EQ(std::string(NATSIO_DEFAULT_URL), value);
    const auto with_url = [](std::string_view url) {
        natsio::Options options;
        options.set_url(url).set_connect_timeout(1s);
        return natsio::Client::connect(options);
    };
    const std::string to_default = connect_outcome([&] { return with_url(natsio::default_url); });
    const std::string to_empty = connect_outcome([&] { return with_url(""); });
    EXPECT_TRUE(to_default == "ok" || to_default == "NO_SERVERS") << to_default;
    EXPECT_EQ(to_empty, to_default);
    // Client::connect("") is the same as connecting to natsio::default_url.
    EXPECT_EQ(connect_outcome([] { return natsio::Client::connect(""); }), to_default);
}

/// True when a $JS.API.STREAM.MSG.DELETE request asks not to erase.
bool asks_no_erase(std::string_view request) {
    std::string compact;
    for (char ch : request) {
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
            compact += ch;
        }
    }
    return contains(compact, R"("no_erase":true)");
}

void check_delete_msg_erase(const std::string& value) {
    ASSERT_TRUE(value == "true" || value == "false") << value;
    const bool erase_by_default = value == "true";
    natsio::Client client = connect();
    natsio::Client spy_client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_CONF_DEL";
    js.create_stream(R"({"name":")" + stream + R"(","subjects":["cpp.conf.del"],"storage":"memory"})");
    for (int i = 0; i < 4; ++i) {
        js.publish("cpp.conf.del", "m");
    }
    natsio::Subscription spy = spy_client.subscribe("$JS.API.STREAM.MSG.DELETE." + stream);
    spy_client.flush();

    // Unsaid: the default.
    js.delete_msg(stream, 1);
    EXPECT_EQ(asks_no_erase(next_item(spy).data()), !erase_by_default) << "delete_msg";
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { js.get_msg(stream, 1); });
    js.delete_msg_async(stream, 2).get();
    EXPECT_EQ(asks_no_erase(next_item(spy).data()), !erase_by_default) << "delete_msg_async";
    expect_throws<natsio::MessageNotFoundError>(NATSIO_ERR_MESSAGE_NOT_FOUND,
                                                [&] { js.get_msg(stream, 2); });
    // Said: asking not to erase sends "no_erase": true; erasing does not.
    js.delete_msg(stream, 3, false);
    EXPECT_TRUE(asks_no_erase(next_item(spy).data()));
    js.delete_msg(stream, 4, true);
    EXPECT_FALSE(asks_no_erase(next_item(spy).data()));
    js.delete_stream(stream);
}

void check_sub_pending_limit_zero(const std::string& value) {
    ASSERT_EQ(value, "disabled") << "this check knows only 'disabled'";
    natsio::Options options;
    options.set_url(server_url()).set_pending_limits(10, 64 * 1024 * 1024);
    natsio::Client client = natsio::Client::connect(options);
    const std::string subj = subject("pending");
    natsio::SubscribeOptions zero;
    zero.pending_msgs_limit = 0;
    natsio::Subscription unlimited = client.subscribe(subj, zero);
    // The client's default (10) still applies when the limit is unset.
    natsio::Subscription defaulted = client.subscribe(subj);
    client.flush();
    for (int i = 0; i < 50; ++i) {
        client.publish(subj, "x");
    }
    client.flush();
    EXPECT_TRUE(wait_until([&] { return unlimited.stats().pending_items == 50; }))
        << unlimited.stats().pending_items;
    EXPECT_TRUE(wait_until([&] { return defaulted.stats().dropped == 40; }))
        << defaulted.stats().dropped;
    natsio::IterStats stats = unlimited.stats();
    EXPECT_EQ(stats.pending_items, 50u);
    EXPECT_EQ(stats.dropped, 0u);
    EXPECT_EQ(defaulted.stats().pending_items, 10u);
}

TEST(Conformance, Defaults) {
    const std::vector<Case> lines = cases_of("default");
    EXPECT_FALSE(lines.empty());
    for (const Case& c : lines) {
        SCOPED_TRACE(where(c));
        ASSERT_EQ(c.fields.size(), 2u);
        const std::string& name = c.fields[0];
        const std::string& value = c.fields[1];
        if (name == "default_url") {
            check_default_url(value);
        } else if (name == "delete_msg_erase") {
            check_delete_msg_erase(value);
        } else if (name == "sub_pending_limit_zero") {
            check_sub_pending_limit_zero(value);
        } else {
            ADD_FAILURE() << "no C++ check for default '" << name << "'";
        }
    }
}

// ---------------------------------------------------------------------------
// behaviour lines
// ---------------------------------------------------------------------------

/// A server of this test alone, stopped on exit.
struct OwnServer {
    nt_server* server = nt_server_start(nullptr);
    OwnServer() = default;
    OwnServer(const OwnServer&) = delete;
    OwnServer& operator=(const OwnServer&) = delete;
    /// SIGSTOP, and every thread of the server stopped (a thread still
    /// running would answer).
    bool pause() { return nt_server_pause(server) == 0; }
    void resume() { nt_server_resume(server); }
    ~OwnServer() {
        nt_server_stop(server);
    }
};

template <class Call>
std::chrono::milliseconds time_to_timeout(Call&& call) {
    const auto start = std::chrono::steady_clock::now();
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, call);
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
}

void check_flush_bound() {
    OwnServer own;
    ASSERT_NE(own.server, nullptr);
    natsio::Options options;
    options.set_url(nt_server_url(own.server)).set_flush_timeout(300ms);
    natsio::Client client = natsio::Client::connect(options);
    client.flush();  // the server answers while it runs
    ASSERT_TRUE(own.pause());
    const auto blocking = time_to_timeout([&] { client.flush(); });
    EXPECT_GE(blocking, 250ms);
    EXPECT_LT(blocking, 2s);
    const auto async = time_to_timeout([&] { client.flush_async().get(); });
    EXPECT_GE(async, 250ms);
    EXPECT_LT(async, 2s);
    own.resume();
    client.flush();  // and again once it runs
    client.close();
}

void check_callback_error() {
    std::mutex mutex;
    std::vector<natsio::AsyncError> errors;
    std::vector<std::string> delivered;
    natsio::Options options;
    options.set_url(server_url()).on_error([&](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back(e);
    });
    natsio::Client client = natsio::Client::connect(options);
    const std::string pattern = subject("cb") + ".*";
    natsio::Subscription sub = client.subscribe(pattern, [&](natsio::MsgView msg) {
        if (msg.data() == "throw") {
            throw std::runtime_error("thrown by the callback");
        }
        std::lock_guard<std::mutex> lock(mutex);
        delivered.emplace_back(msg.data());
    });
    client.flush();
    client.publish(subject("cb") + ".one", "throw");
    client.publish(subject("cb") + ".two", "next");
    client.flush();
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !delivered.empty() && !errors.empty();
    }));
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(delivered, std::vector<std::string>{"next"});
    ASSERT_EQ(errors.size(), 1u);
    const natsio::AsyncError& e = errors[0];
    EXPECT_EQ(e.source, natsio::AsyncError::Source::Handler);
    EXPECT_EQ(e.subject, pattern);
    EXPECT_EQ(e.sid, sub.sid());
    EXPECT_EQ(e.text, "thrown by the callback");
    try {
        e.rethrow();
        ADD_FAILURE() << "nothing to rethrow";
    } catch (const std::runtime_error& thrown) {
        EXPECT_STREQ(thrown.what(), "thrown by the callback");
    } catch (...) {
        ADD_FAILURE() << "another exception";
    }
    EXPECT_FALSE(sub.is_closed());
}

void check_last_by_wildcard() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    for (const bool direct : {false, true}) {
        const std::string stream = direct ? "CPP_CONF_WILD_D" : "CPP_CONF_WILD_L";
        const std::string prefix = direct ? "cpp.conf.wild.d" : "cpp.conf.wild.l";
        js.create_stream(R"({"name":")" + stream + R"(","subjects":[")" + prefix +
                         R"(.>"],"storage":"memory","allow_direct":)" + (direct ? "true" : "false") +
                         "}");
        for (const char* tail : {"a", "b.c", "b", "a.x"}) {
            js.publish(prefix + "." + tail, "m");
        }
        EXPECT_EQ(js.get_last_msg(stream, prefix + ".*").seq(), 3u) << stream;
        EXPECT_EQ(js.get_last_msg(stream, prefix + ".>").seq(), 4u) << stream;
        js.delete_stream(stream);
    }
}

void check_fetch_refused() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_CONF_REFUSED";
    js.create_stream(R"({"name":")" + stream + R"(","subjects":["cpp.conf.refused"],"storage":"memory"})");
    js.create_consumer(stream, R"({"durable_name":"c","max_batch":10})");
    natsio::FetchOptions options;
    options.max_messages = 20;
    options.expires = 500ms;
    const std::string what = expect_throws<natsio::JetStreamError>(
        NATSIO_ERR_JETSTREAM, [&] { js.fetch(stream, "c", options); });
    EXPECT_TRUE(contains(what, "Exceeded MaxRequestBatch")) << what;
    js.delete_stream(stream);
}


void check_consume_budget() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_CONF_BUDGET";
    js.create_stream(R"({"name":")" + stream + R"(","subjects":["cpp.conf.budget"],"storage":"memory"})");
    for (int i = 0; i < 100; ++i) {
        js.publish("cpp.conf.budget", "m");
    }
    js.create_consumer(stream, R"({"durable_name":"c","ack_policy":"explicit"})");
    natsio::ConsumeOptions options;
    options.max_messages = 10;
    natsio::Messages msgs = js.consume(stream, "c", options);
    next_item(msgs).ack_sync();
    long long most = -1;
    for (const auto until = std::chrono::steady_clock::now() + 1500ms;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(50ms)) {
        most = std::max(most, json_number(js.consumer_info(stream, "c"), "num_ack_pending"));
    }
    EXPECT_GE(most, 5);
    EXPECT_LE(most, 10);
    msgs.stop();
    js.delete_stream(stream);
}

void check_iterator_closed() {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("closed"));
    client.flush();
    client.close();
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED, [&] { sub.next(1s); });
}

void check_purge_deletes_zero() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string bucket = "cppconf_purge";
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":")" + bucket + R"(","storage":"memory","history":5})");
    kv.put("k", "v1");
    kv.put("k", "v2");
    kv.del("k");
    // 0: the default age (30 minutes): the young marker stays, the values go.
    EXPECT_EQ(kv.purge_deletes(0ms), 2u);
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("k"); });
    // Below 0: every marker, whatever its age.
    EXPECT_EQ(kv.purge_deletes(natsio::all_markers), 1u);
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { kv.get("k"); });
    js.delete_key_value(bucket);
}

void check_sync_publish() {
    natsio::Client client = connect();
    // A plain subscriber takes the asynchronous publish and never acks.
    const std::string held = subject("held");
    natsio::Subscription holder = client.subscribe(held);
    client.flush();
    natsio::JetStreamOptions options;
    options.publish_async_max_pending = 1;
    options.publish_async_stall_wait = 100ms;
    natsio::JetStream js(client, options);
    const std::string stream = "CPPCONF_SYNC";
    const std::string stored = subject("stored");
    js.create_stream(R"({"name":")" + stream + R"(","subjects":[")" + stored + R"("],"storage":"memory"})");
    natsio::Future<natsio::PubAck> pending = js.publish_async(held, "a");
    EXPECT_EQ(js.publish_async_pending(), 1u);
    expect_throws<natsio::TooManyStalledMsgsError>(NATSIO_ERR_TOO_MANY_STALLED,
                                                   [&] { js.publish_async(stored, "x"); });
    natsio::PubAck ack = js.publish(stored, "s");
    EXPECT_EQ(ack.stream, stream);
    EXPECT_EQ(ack.seq, 1u);
    EXPECT_EQ(js.publish_async_pending(), 1u);
    js.delete_stream(stream);
}

void check_ack_bodies() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_CONF_ACKS";
    js.create_stream(R"({"name":")" + stream + R"(","subjects":["cpp.conf.acks"],"storage":"memory"})");
    for (int i = 0; i < 4; ++i) js.publish("cpp.conf.acks", "m");
    js.create_consumer(stream, R"({"durable_name":"c","ack_policy":"explicit","ack_wait":"30s"})");
    natsio::Client spy_client = connect();
    natsio::Subscription spy = spy_client.subscribe("$JS.ACK." + stream + ".>");
    spy_client.flush();
    natsio::FetchOptions options;
    options.max_messages = 4;
    options.expires = 5s;
    natsio::MsgList batch = js.fetch(stream, "c", options);
    ASSERT_EQ(batch.size(), 4u);
    batch[0].in_progress();
    batch[1].nak(2s);
    batch[2].term(std::string_view("bad"));
    batch[3].ack();
    for (const char* want : {"+WPI", R"(-NAK {"delay":2000000000})", "+TERM bad", "+ACK"}) {
        EXPECT_EQ(next_item(spy, 10s).data(), want);
    }
    js.delete_stream(stream);
}

// The number after `"key":` in a flat part of `json` (enough for one
// endpoint's stats); -1 if there is none.
long long json_number(const std::string& json, const std::string& key) {
    const std::string needle = "\"" + key + "\":";
    const std::size_t at = json.find(needle);
    return at == std::string::npos ? -1 : std::atoll(json.c_str() + at + needle.size());
}

void check_service_handler_failure() {
    natsio::Client client = connect();
    std::mutex mutex;
    std::vector<natsio::ServiceError> errors;
    natsio::ServiceConfig config;
    config.name = "cppconf";
    config.version = "1.0.0";
    config.on_error = [&](const natsio::ServiceError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back(e);
    };
    natsio::Service svc = natsio::add_service(client, config);
    natsio::EndpointConfig ep_config;
    ep_config.name = "op";
    ep_config.subject = subject("svc");
    natsio::Endpoint ep = svc.add_endpoint(ep_config, [](natsio::RequestView req) {
        if (req.data() == "fail") throw std::runtime_error("failing handler");
        req.respond(req.data());
    });
    client.flush();
    natsio::Msg failed = client.request(subject("svc"), "fail", 5s);
    EXPECT_EQ(failed.headers().get("Nats-Service-Error-Code"), std::optional<std::string_view>("500"));
    EXPECT_EQ(client.request(subject("svc"), "next", 5s).data(), "next");
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !errors.empty();
    }));
    const std::string stats = ep.stats_json();
    EXPECT_EQ(json_number(stats, "num_requests"), 2);
    EXPECT_EQ(json_number(stats, "num_errors"), 1);
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].endpoint, "op");
    EXPECT_EQ(errors[0].code, 500);
}

void check_kv_bind_subjects() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"KV_CPPCONF_PLAIN","subjects":["cpp.conf.plain.>"],"storage":"memory"})");
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND, [&] { js.key_value("CPPCONF_PLAIN"); });
    js.create_stream(R"({"name":"KV_CPPCONF_WIDE","subjects":["$KV.CPPCONF_WIDE.>"],"storage":"memory"})");
    EXPECT_EQ(js.key_value("CPPCONF_WIDE").bucket(), "CPPCONF_WIDE");
    js.delete_stream("KV_CPPCONF_PLAIN");
    js.delete_stream("KV_CPPCONF_WIDE");
}

void check_kv_codec() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue plain = js.create_key_value(R"({"bucket":"CPPCONF_CODEC","storage":"memory"})");
    const natsio::KeyCodec key = natsio::KeyCodec::base64();
    const natsio::ValueCodec value = natsio::ValueCodec::zlib();
    natsio::KeyValue kv = plain.with_codecs(&key, &value);
    kv.put("a.b c", "v");
    natsio::KvEntry stored = plain.get("YQ==.YiBj");
    ASSERT_FALSE(stored.value().empty());
    EXPECT_EQ(static_cast<unsigned char>(stored.value()[0]), 0x78);
    natsio::KvEntry e = kv.get("a.b c");
    EXPECT_EQ(e.key(), "a.b c");
    EXPECT_EQ(e.value(), "v");
    EXPECT_EQ(kv.keys(), std::vector<std::string>{"a.b c"});
    js.delete_key_value("CPPCONF_CODEC");
}

void check_kv_mirror() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue origin = js.create_key_value(R"({"bucket":"CPPCONF_O","storage":"memory"})");
    natsio::KeyValue mirror = js.create_key_value(
        R"({"bucket":"CPPCONF_M","storage":"memory","mirror":{"name":"CPPCONF_O"}})");
    const std::string config = js.stream_info("KV_CPPCONF_M");
    EXPECT_TRUE(contains(config, R"("mirror":{"name":"KV_CPPCONF_O")")) << config;
    EXPECT_TRUE(contains(config, R"("mirror_direct":true)")) << config;
    EXPECT_FALSE(contains(config, R"("subjects")")) << config;
    origin.put("k", "v1");
    EXPECT_TRUE(eventually_reads(mirror, "k", "v1"));
    // Polled as well: the mirror answers the origin's Direct Gets too
    // (mirror_direct), and may not have "w" yet.
    const std::uint64_t rev = mirror.put("w", "v2");
    std::optional<natsio::KvEntry> written = read_when(origin, "w", "v2");
    ASSERT_TRUE(written.has_value());
    EXPECT_EQ(written->revision(), rev);

    natsio::KeyValue sourced = js.create_key_value(
        R"({"bucket":"CPPCONF_S","storage":"memory","sources":[{"name":"CPPCONF_O"}]})");
    EXPECT_TRUE(eventually_reads(sourced, "k", "v1"));
    sourced.put("s", "v3");
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { origin.get("s"); });
    js.delete_key_value("CPPCONF_S");
    js.delete_key_value("CPPCONF_M");
    js.delete_key_value("CPPCONF_O");
}

void check_prioritized_pull() {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    const std::string stream = "CPP_CONF_PRIO";
    js.create_stream(R"({"name":")" + stream + R"(","subjects":["cpp.conf.prio"],"storage":"memory"})");
    js.create_consumer(stream,
                       R"({"durable_name":"c","priority_groups":["P"],"priority_policy":"prioritized"})");
    auto at = [](std::int32_t priority) {
        natsio::FetchOptions options;
        options.max_messages = 1;
        options.expires = 10s;
        options.group = "P";
        options.priority = priority;
        return options;
    };
    auto waiting = [&](long long want) {
        return wait_until([&] { return json_number(js.consumer_info(stream, "c"), "num_waiting") >= want; },
                          10s);
    };
    natsio::Future<natsio::MsgList> five = js.fetch_async(stream, "c", at(5));
    ASSERT_TRUE(waiting(1));
    natsio::Future<natsio::MsgList> one = js.fetch_async(stream, "c", at(1));
    ASSERT_TRUE(waiting(2));
    js.publish("cpp.conf.prio", "first");
    natsio::MsgList got_one = one.get();
    ASSERT_EQ(got_one.size(), 1u);
    EXPECT_EQ(got_one[0].data(), "first");
    js.publish("cpp.conf.prio", "second");
    natsio::MsgList got_five = five.get();
    ASSERT_EQ(got_five.size(), 1u);
    EXPECT_EQ(got_five[0].data(), "second");
    natsio::FetchOptions ten = at(10);
    ten.no_wait = true;
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { js.fetch(stream, "c", ten); });
    js.delete_stream(stream);
}

void check_endpoint_pending_limits() {
    natsio::Client client = connect();
    std::mutex mutex;
    std::vector<natsio::ServiceError> errors;
    natsio::ServiceConfig config;
    config.name = "cppconflimits";
    config.version = "1.0.0";
    config.on_error = [&](const natsio::ServiceError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back(e);
    };
    natsio::Service svc = natsio::add_service(client, config);
    natsio::EndpointConfig ep_config;
    ep_config.name = "held";
    ep_config.subject = subject("limits");
    ep_config.pending_msgs_limit = 2;
    ep_config.pending_bytes_limit = -1;
    natsio::Endpoint ep = svc.add_endpoint(ep_config);
    client.flush();
    for (int i = 0; i < 5; ++i) {
        client.publish_with(subject("limits"), subject("limits.reply"), {}, numbered("r", i));
    }
    client.flush();
    ASSERT_TRUE(wait_until([&] {
        natsio::IterStats stats = ep.stats();
        return stats.dropped == 3 && stats.pending_items == 2;
    })) << "dropped " << ep.stats().dropped << ", queued " << ep.stats().pending_items;
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !errors.empty();
    }));
    {
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_EQ(errors[0].endpoint, "held");
        EXPECT_EQ(errors[0].code, 0);
        EXPECT_TRUE(contains(errors[0].description, "slow consumer")) << errors[0].description;
    }
    const std::string stats = ep.stats_json();
    EXPECT_GE(json_number(stats, "num_errors"), 1);
    EXPECT_TRUE(contains(stats, R"("last_error":"slow consumer)")) << stats;
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(next_item(ep).data(), numbered("r", i));
    }
}

void check_reconnect_delay_callback() {
    OwnServer s;
    ASSERT_TRUE(s.server != nullptr);
    std::mutex mutex;
    std::vector<std::int64_t> args;
    std::size_t failed = 0;
    bool reconnected = false;
    natsio::Options options;
    options.set_url(nt_server_url(s.server))
        .set_connect_timeout(2s)
        .set_max_reconnect_attempts(-1)
        .set_reconnect_delay_callback([&](std::int64_t attempts) {
            std::lock_guard<std::mutex> lock(mutex);
            args.push_back(attempts);
            return std::chrono::milliseconds(20);
        })
        .on_event([&](natsio::EventKind kind, natsio::Status, std::string_view) {
            std::lock_guard<std::mutex> lock(mutex);
            if (kind == natsio::EventKind::ReconnectFailed) {
                ++failed;
            } else if (kind == natsio::EventKind::Reconnected) {
                reconnected = true;
            }
        });
    natsio::Client client = natsio::Client::connect(options);
    nt_server_kill(s.server);
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return args.size() >= 2;
    }, 10s));
    ASSERT_EQ(nt_server_restart(s.server), 0);
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return reconnected;
    }, 10s));
    std::lock_guard<std::mutex> lock(mutex);
    for (std::size_t i = 0; i < args.size(); ++i) {
        EXPECT_EQ(args[i], static_cast<std::int64_t>(i + 1));
    }
    EXPECT_EQ(failed + 1, args.size());
}

void check_server_pool() {
    OwnServer a;
    OwnServer b;
    ASSERT_TRUE(a.server != nullptr && b.server != nullptr);
    const std::string url_a = nt_server_url(a.server);
    const std::string url_b = nt_server_url(b.server);
    const std::string dead = numbered("nats://127.0.0.1:", nt_free_port());
    std::mutex mutex;
    std::vector<std::pair<natsio::Status, std::string>> failed;
    bool reconnected = false;
    natsio::Options options;
    options.set_url(url_a).set_connect_timeout(2s).on_event(
        [&](natsio::EventKind kind, natsio::Status status, std::string_view text) {
            std::lock_guard<std::mutex> lock(mutex);
            if (kind == natsio::EventKind::ReconnectFailed) {
                failed.emplace_back(status, std::string(text));
            } else if (kind == natsio::EventKind::Reconnected) {
                reconnected = true;
            }
        });
    natsio::Client client = natsio::Client::connect(options);
    auto connected_to = [&](const std::string& url) {
        return client.status() == natsio::ConnStatus::Connected && client.connected_url() == url;
    };

    std::vector<natsio::Server> pool = client.server_pool();
    ASSERT_EQ(pool.size(), 1u);
    EXPECT_EQ(pool[0].url, url_a);
    EXPECT_TRUE(pool[0].did_connect);
    EXPECT_FALSE(pool[0].discovered);
    EXPECT_EQ(pool[0].reconnects, 0u);

    client.set_server_pool({dead, url_b});
    client.flush(2s);
    EXPECT_TRUE(connected_to(url_a));
    pool = client.server_pool();
    ASSERT_EQ(pool.size(), 2u);
    EXPECT_EQ(pool[0].url, dead);
    EXPECT_EQ(pool[1].url, url_b);

    client.force_reconnect();
    ASSERT_TRUE(wait_until([&] { return connected_to(url_b); }, 10s));
    // The events come on the event thread, the failed attempt before the
    // reconnect.
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return reconnected;
    }));
    {
        std::lock_guard<std::mutex> lock(mutex);
        ASSERT_EQ(failed.size(), 1u);
        EXPECT_NE(failed[0].first, NATSIO_OK);
        EXPECT_TRUE(contains(failed[0].second, dead)) << failed[0].second;
    }
    pool = client.server_pool();
    ASSERT_EQ(pool.size(), 2u);
    EXPECT_EQ(pool[0].url, dead);
    EXPECT_EQ(pool[0].reconnects, 1u);
    EXPECT_FALSE(pool[0].did_connect);
    EXPECT_EQ(pool[1].url, url_b);
    EXPECT_TRUE(pool[1].did_connect);
    EXPECT_EQ(pool[1].reconnects, 0u);

    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] { client.set_server_pool({}); });
    EXPECT_EQ(client.server_pool().size(), 2u);
    client.close();
}

/// A fixture's text, trimmed (seeds and keys end with a newline).
std::string auth_fixture(const char* relative) {
    char path[2048];
    char* text = nt_read_file(nt_fixture_path(path, sizeof path, relative));
    std::string result = text != nullptr ? text : "";
    std::free(text);
    while (!result.empty() && (result.back() == '\n' || result.back() == '\r')) {
        result.pop_back();
    }
    return result;
}

void check_authenticator_callback() {
    const std::string pub = auth_fixture("auth/nkey-user.pub");
    const std::string seed = auth_fixture("auth/nkey-user.nk");
    const std::string other = auth_fixture("auth/nkey-other.nk");
    const std::string config = "authorization { users = [ { nkey: " + pub + " } ] }";
    nt_server* raw = nt_server_start(config.c_str());
    ASSERT_TRUE(raw != nullptr);
    std::unique_ptr<nt_server, void (*)(nt_server*)> server(raw, &nt_server_stop);
    const std::string url = nt_server_url(raw);
    std::mutex mutex;
    std::vector<std::string> nonces;
    auto signer = [&](std::string key_seed) {
        return [&, key_seed](std::string_view nonce) {
            {
                std::lock_guard<std::mutex> lock(mutex);
                nonces.emplace_back(nonce);
            }
            char sig[NT_NKEY_SIG_B64_CAP];
            if (!nt_nkey_sign_base64url(key_seed.c_str(), nonce.data(), nonce.size(), sig)) {
                throw std::runtime_error("bad seed");
            }
            natsio::AuthFields fields;
            fields.nkey = pub;
            fields.sig = sig;
            return fields;
        };
    };
    natsio::Options options;
    options.set_url(url).set_connect_timeout(2s).set_reconnect_wait(20ms, 100ms).set_authenticator(signer(seed));
    natsio::Client client = natsio::Client::connect(options);
    {
        std::lock_guard<std::mutex> lock(mutex);
        ASSERT_EQ(nonces.size(), 1u);
        EXPECT_FALSE(nonces[0].empty());
    }
    client.force_reconnect();
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return nonces.size() >= 2 && client.status() == natsio::ConnStatus::Connected;
    }, 10s));
    client.flush(2s);
    {
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_FALSE(nonces[1].empty());
        EXPECT_NE(nonces[0], nonces[1]);
    }
    client.close();

    natsio::Options wrong;
    wrong.set_url(url).set_connect_timeout(2s).set_allow_reconnect(false).set_authenticator(signer(other));
    expect_throws<natsio::AuthorizationError>(NATSIO_ERR_AUTHORIZATION, [&] { natsio::Client::connect(wrong); });
    natsio::Options throwing;
    throwing.set_url(url).set_connect_timeout(2s).set_authenticator(
        [](std::string_view) -> natsio::AuthFields { throw std::runtime_error("no key"); });
    const std::string what = expect_throws<natsio::ConfigError>(
        NATSIO_ERR_CONFIG, [&] { natsio::Client::connect(throwing); });
    EXPECT_TRUE(contains(what, "authenticator callback")) << what;
}

TEST(Conformance, Behaviours) {
    const std::vector<Case> lines = cases_of("behaviour");
    EXPECT_FALSE(lines.empty());
    for (const Case& c : lines) {
        SCOPED_TRACE(where(c));
        ASSERT_EQ(c.fields.size(), 1u);
        const std::string& name = c.fields[0];
        if (name == "flush_bound") {
            check_flush_bound();
        } else if (name == "callback_error") {
            check_callback_error();
        } else if (name == "last_by_wildcard") {
            check_last_by_wildcard();
        } else if (name == "fetch_refused") {
            check_fetch_refused();
        } else if (name == "consume_budget") {
            check_consume_budget();
        } else if (name == "iterator_closed") {
            check_iterator_closed();
        } else if (name == "purge_deletes_zero") {
            check_purge_deletes_zero();
        } else if (name == "sync_publish") {
            check_sync_publish();
        } else if (name == "ack_bodies") {
            check_ack_bodies();
        } else if (name == "service_handler_failure") {
            check_service_handler_failure();
        } else if (name == "kv_bind_subjects") {
            check_kv_bind_subjects();
        } else if (name == "kv_codec") {
            check_kv_codec();
        } else if (name == "prioritized_pull") {
            check_prioritized_pull();
        } else if (name == "kv_mirror") {
            check_kv_mirror();
        } else if (name == "endpoint_pending_limits") {
            check_endpoint_pending_limits();
        } else if (name == "server_pool") {
            check_server_pool();
        } else if (name == "reconnect_delay_callback") {
            check_reconnect_delay_callback();
        } else if (name == "authenticator_callback") {
            check_authenticator_callback();
        } else {
            ADD_FAILURE() << "no C++ check for behaviour '" << name << "'";
        }
    }
}

}  // namespace
