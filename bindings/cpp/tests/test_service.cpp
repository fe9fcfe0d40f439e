// Services (natsio/service.hpp) against a real nats-server: requests and
// their stats, monitoring through discover_services, groups and queue
// groups, error replies and throwing handlers, pending limits (requests
// dropped over them reported as a slow consumer), late answers, stop,
// reset, refused configurations.
#include "support.hpp"

#include <natsio/service.hpp>

#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace natsio_test;

namespace {

// ---------------------------------------------------------------------------
// A small JSON reader for checking the monitoring documents field by field
// ---------------------------------------------------------------------------

struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Kind::Null;
    bool boolean = false;
    std::int64_t number = 0;
    std::string text;
    std::vector<Json> items;
    std::map<std::string, Json> fields;

    bool is_null() const { return kind == Kind::Null; }
    bool has(const std::string& key) const { return fields.count(key) == 1; }
    const Json& operator[](const std::string& key) const {
        static const Json null;
        auto it = fields.find(key);
        return it == fields.end() ? null : it->second;
    }
    const Json& operator[](std::size_t i) const { return items.at(i); }
};

class JsonReader {
public:
    explicit JsonReader(std::string_view text) : text_(text) {}

    Json document() {
        Json value = read();
        skip();
        if (at_ != text_.size()) fail();
        return value;
    }

private:
    [[noreturn]] void fail() const {
        throw std::runtime_error("bad JSON at " + std::to_string(at_) + ": " + std::string(text_));
    }
    void skip() {
        while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    }
    char peek() {
        skip();
        return at_ < text_.size() ? text_[at_] : '\0';
    }
    void expect(char c) {
        if (peek() != c) fail();
        ++at_;
    }
    bool literal(std::string_view word) {
        if (text_.substr(at_, word.size()) != word) return false;
        at_ += word.size();
        return true;
    }
    std::string string() {
        expect('"');
        std::string out;
        while (at_ < text_.size() && text_[at_] != '"') {
            char c = text_[at_++];
            if (c == '\\') {
                char e = text_.at(at_++);
                if (e == 'u') {
                    // The documents checked here are ASCII: keep the code
                    // point if it is one.
                    out += static_cast<char>(std::stoi(std::string(text_.substr(at_, 4)), nullptr, 16));
                    at_ += 4;
                } else {
                    out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
                }
            } else {
                out += c;
            }
        }
        expect('"');
        return out;
    }
    Json read() {
        Json v;
        char c = peek();
        if (c == '{') {
            ++at_;
            v.kind = Json::Kind::Object;
            if (peek() == '}') {
                ++at_;
                return v;
            }
            do {
                std::string key = string();
                expect(':');
                v.fields[key] = read();
            } while (peek() == ',' && ++at_);
            expect('}');
        } else if (c == '[') {
            ++at_;
            v.kind = Json::Kind::Array;
            if (peek() == ']') {
                ++at_;
                return v;
            }
            do {
                v.items.push_back(read());
            } while (peek() == ',' && ++at_);
            expect(']');
        } else if (c == '"') {
            v.kind = Json::Kind::String;
            v.text = string();
        } else if (literal("true") || literal("false")) {
            v.kind = Json::Kind::Bool;
            v.boolean = text_[at_ - 1] == 'e' && text_[at_ - 2] == 'u';
        } else if (literal("null")) {
            v.kind = Json::Kind::Null;
        } else {
            std::size_t start = at_;
            while (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) ||
                                          text_[at_] == '-')) {
                ++at_;
            }
            if (start == at_) fail();
            v.kind = Json::Kind::Number;
            v.number = std::stoll(std::string(text_.substr(start, at_ - start)));
        }
        return v;
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

Json parse(std::string_view text) { return JsonReader(text).document(); }

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// A service name unique to the running test (names are [A-Za-z0-9_-]+).
std::string service_name() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string("cpp_") + info->name();
}

natsio::ServiceConfig config_for(const std::string& name, const std::string& version = "1.2.3") {
    natsio::ServiceConfig config;
    config.name = name;
    config.version = version;
    return config;
}

/// The replies of a discovery, parsed: up to `expected` of them (0: all),
/// within 10 s; when nothing answers it ends at once (no responders), else
/// 1 s after the last reply.
std::vector<Json> discover(const natsio::Client& client, natsio::ServiceVerb verb,
                           std::optional<std::string_view> name = std::nullopt,
                           std::optional<std::string_view> id = std::nullopt,
                           std::int64_t expected = 0) {
    natsio::RequestManyOptions options;
    options.max_msgs = expected;
    options.stall = 1s;
    options.timeout = 10s;
    std::vector<Json> out;
    for (natsio::Msg& reply : natsio::discover_services(client, verb, name, id, options)) {
        out.push_back(parse(reply.data()));
    }
    return out;
}

/// The endpoint named `name` of an INFO or STATS document (a copy: the
/// document may be a temporary).
Json endpoint_of(const Json& doc, const std::string& name) {
    for (const Json& ep : doc["endpoints"].items) {
        if (ep["name"].text == name) return ep;
    }
    throw std::runtime_error("no endpoint " + name);
}

std::string echo_prefix(std::string_view data) { return "echo:" + std::string(data); }

natsio::RequestHandler echo() {
    return [](natsio::RequestView req) { req.respond(echo_prefix(req.data())); };
}

}  // namespace

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

TEST(Service, RequestsAreAnsweredAndCounted) {
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::Endpoint ep = svc.add_endpoint("echo", echo());
    EXPECT_EQ(ep.name(), "echo");
    EXPECT_EQ(ep.subject(), "echo");
    EXPECT_EQ(ep.queue_group(), std::optional<std::string_view>("q"));

    // Another client requests, as a user of the service would.
    natsio::Client requester = connect();
    for (int i = 0; i < 5; ++i) {
        natsio::Msg reply = requester.request("echo", numbered("m", i), 2s);
        EXPECT_EQ(reply.data(), echo_prefix(numbered("m", i)));
    }

    EXPECT_EQ(svc.name(), service_name());
    EXPECT_EQ(svc.version(), "1.2.3");
    EXPECT_EQ(svc.id().size(), 22u) << svc.id();  // a NUID
    Json stats = parse(svc.stats());
    EXPECT_EQ(stats["type"].text, "io.nats.micro.v1.stats_response");
    EXPECT_EQ(stats["id"].text, svc.id());
    const Json& counted = endpoint_of(stats, "echo");
    EXPECT_EQ(counted["num_requests"].number, 5);
    EXPECT_EQ(counted["num_errors"].number, 0);
    EXPECT_EQ(counted["last_error"].text, "");
    EXPECT_GT(counted["processing_time"].number, 0);
    EXPECT_EQ(counted["average_processing_time"].number, counted["processing_time"].number / 5);
    // The endpoint's own entry is the same one.
    EXPECT_EQ(parse(ep.stats_json())["num_requests"].number, 5);
    EXPECT_EQ(ep.stats().delivered, 5u);
}

TEST(Service, AnEndpointIsAFeedOfRequests) {
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "pull";
    config.subject = subject("pull");
    natsio::Endpoint ep = svc.add_endpoint(config);

    natsio::Headers headers;
    headers.set("X-Trace", "t1");
    natsio::Future<natsio::Msg> first = client.request_async(subject("pull"), "one", 2s, headers);
    natsio::Request req = next_item(ep);
    EXPECT_EQ(req.subject(), subject("pull"));
    EXPECT_EQ(req.data(), "one");
    EXPECT_EQ(req.headers().get("X-Trace"), std::optional<std::string_view>("t1"));
    ASSERT_TRUE(req.reply().has_value());
    natsio::Headers answer;
    answer.set("X-Answer", "yes");
    req.respond(answer, "ONE");
    natsio::Msg reply = first.get();
    EXPECT_EQ(reply.data(), "ONE");
    EXPECT_EQ(reply.headers().get("X-Answer"), std::optional<std::string_view>("yes"));

    // next_async: the Future of the next request.
    natsio::Future<std::optional<natsio::Request>> next = ep.next_async();
    natsio::Future<natsio::Msg> second = client.request_async(subject("pull"), "two", 2s);
    std::optional<natsio::Request> got = next.get();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->data(), "two");
    got->respond("TWO");
    EXPECT_EQ(second.get().data(), "TWO");

    // The service's stop ends the iteration.
    svc.stop(5s);
    EXPECT_FALSE(ep.next(2s).has_value());
}

TEST(Service, ARequestIsAnsweredLaterFromAnotherThread) {
    // What the handler uses outlives the service (destroyed first).
    std::mutex mutex;
    std::condition_variable ready;
    std::vector<natsio::Request> kept;
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));

    natsio::EndpointConfig config;
    config.name = "later";
    config.subject = subject("later");
    natsio::Endpoint ep = svc.add_endpoint(config, [&](natsio::RequestView req) {
        std::lock_guard<std::mutex> lock(mutex);
        kept.push_back(req.clone());  // the handler returns unanswered
        ready.notify_all();
    });

    natsio::Future<natsio::Msg> a = client.request_async(subject("later"), "a", 5s);
    natsio::Future<natsio::Msg> b = client.request_async(subject("later"), "b", 5s);
    std::thread answerer([&] {
        std::unique_lock<std::mutex> lock(mutex);
        ready.wait(lock, [&] { return kept.size() == 2; });
        // A copy is a second handle to the same request; either answers it.
        natsio::Request copy = kept[0];
        copy.respond("late " + std::string(copy.data()));
        natsio::Request moved = std::move(kept[1]);
        moved.respond("late " + std::string(moved.data()));
    });
    EXPECT_EQ(a.get().data(), "late a");
    EXPECT_EQ(b.get().data(), "late b");
    answerer.join();

    const Json& counted = endpoint_of(parse(svc.stats()), "later");
    EXPECT_EQ(counted["num_requests"].number, 2);
    EXPECT_EQ(counted["num_errors"].number, 0);
}

// ---------------------------------------------------------------------------
// Monitoring
// ---------------------------------------------------------------------------

TEST(Service, DiscoveryReadsPingInfoAndStats) {
    natsio::Client client = connect();
    natsio::ServiceConfig config = config_for(service_name(), "2.0.0-rc.1+build.5");
    config.description = "adds and echoes";
    config.metadata = {{"team", "cpp"}, {"region", "eu"}};
    natsio::Service svc = natsio::add_service(client, config);
    natsio::EndpointConfig with_meta;
    with_meta.name = "meta";
    with_meta.subject = subject("meta");
    with_meta.metadata = {{"kind", "echo"}};
    natsio::Endpoint e1 = svc.add_endpoint(with_meta, echo());
    natsio::EndpointConfig plain;
    plain.name = "plain";
    plain.subject = subject("plain");
    natsio::Endpoint e2 = svc.add_endpoint(plain, echo());
    client.request(subject("meta"), "x", 2s);
    client.request(subject("meta"), "y", 2s);

    natsio::Client monitor = connect();
    std::vector<Json> pings =
        discover(monitor, natsio::ServiceVerb::Ping, service_name(), std::nullopt, 1);
    ASSERT_EQ(pings.size(), 1u);
    EXPECT_EQ(pings[0]["type"].text, "io.nats.micro.v1.ping_response");
    EXPECT_EQ(pings[0]["name"].text, service_name());
    EXPECT_EQ(pings[0]["id"].text, svc.id());
    EXPECT_EQ(pings[0]["version"].text, "2.0.0-rc.1+build.5");
    EXPECT_EQ(pings[0]["metadata"]["team"].text, "cpp");

    // By name and id.
    std::vector<Json> infos =
        discover(monitor, natsio::ServiceVerb::Info, service_name(), svc.id(), 1);
    ASSERT_EQ(infos.size(), 1u);
    const Json& info = infos[0];
    EXPECT_EQ(info["type"].text, "io.nats.micro.v1.info_response");
    EXPECT_EQ(info["description"].text, "adds and echoes");
    EXPECT_EQ(info["metadata"]["region"].text, "eu");
    EXPECT_EQ(info["metadata"].fields.size(), 2u);
    ASSERT_EQ(info["endpoints"].items.size(), 2u);
    const Json& meta = endpoint_of(info, "meta");
    EXPECT_EQ(meta["subject"].text, subject("meta"));
    EXPECT_EQ(meta["queue_group"].text, "q");
    EXPECT_EQ(meta["metadata"]["kind"].text, "echo");
    EXPECT_TRUE(endpoint_of(info, "plain")["metadata"].is_null());
    // The service's own info() is the same document.
    EXPECT_EQ(parse(svc.info())["endpoints"].items.size(), 2u);

    std::vector<Json> stats =
        discover(monitor, natsio::ServiceVerb::Stats, service_name(), std::nullopt, 1);
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_EQ(stats[0]["type"].text, "io.nats.micro.v1.stats_response");
    EXPECT_EQ(stats[0]["version"].text, "2.0.0-rc.1+build.5");
    const std::string& started = stats[0]["started"].text;
    EXPECT_TRUE(started.size() >= 20 && started.back() == 'Z') << started;  // RFC 3339 UTC
    EXPECT_EQ(endpoint_of(stats[0], "meta")["num_requests"].number, 2);
    EXPECT_EQ(endpoint_of(stats[0], "plain")["num_requests"].number, 0);

    // Unfiltered discovery finds this service among any others.
    bool found = false;
    for (const Json& ping : discover(monitor, natsio::ServiceVerb::Ping)) {
        found = found || ping["id"].text == svc.id();
    }
    EXPECT_TRUE(found);
}

TEST(Service, StatsDataComesFromTheHandlerOrTheEndpoint) {
    std::atomic<int> handler_errors{0};
    natsio::Options options;
    options.set_url(server_url()).on_error([&](const natsio::AsyncError& e) {
        if (e.source == natsio::AsyncError::Source::Handler && e.text == "stats broke") ++handler_errors;
    });
    natsio::Client client = natsio::Client::connect(options);
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "data";
    config.subject = subject("data");
    natsio::Endpoint ep = svc.add_endpoint(config);

    ep.set_stats_data(R"({"cache":"warm"})");
    EXPECT_EQ(endpoint_of(parse(svc.stats()), "data")["data"]["cache"].text, "warm");

    svc.set_stats_handler([](std::string_view name, std::string_view subj) -> std::optional<std::string> {
        return "{\"from\":\"" + std::string(name) + " " + std::string(subj) + "\"}";
    });
    std::vector<Json> stats =
        discover(client, natsio::ServiceVerb::Stats, service_name(), std::nullopt, 1);
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_EQ(endpoint_of(stats[0], "data")["data"]["from"].text, "data " + subject("data"));

    // A throwing stats handler leaves the field out and tells the client.
    svc.set_stats_handler([](std::string_view, std::string_view) -> std::optional<std::string> {
        throw std::runtime_error("stats broke");
    });
    EXPECT_FALSE(endpoint_of(parse(svc.stats()), "data").has("data"));
    EXPECT_EQ(handler_errors.load(), 1);
}

// ---------------------------------------------------------------------------
// Groups and queue groups
// ---------------------------------------------------------------------------

TEST(Service, GroupsPrefixSubjectsAndOverrideQueueGroups) {
    natsio::Client client = connect();
    natsio::ServiceConfig config = config_for(service_name());
    config.queue_group = "svcq";
    natsio::Service svc = natsio::add_service(client, config);
    const std::string prefix = subject("math");

    natsio::Endpoint top = svc.add_endpoint("top", echo());
    EXPECT_EQ(top.queue_group(), std::optional<std::string_view>("svcq"));

    natsio::GroupOptions group_queue;
    group_queue.queue_group = "mathq";
    natsio::Group math = svc.add_group(prefix, group_queue);
    natsio::Endpoint add = math.add_endpoint("add", [](natsio::RequestView req) {
        req.respond("sum of " + std::string(req.data()));
    });
    EXPECT_EQ(add.subject(), prefix + ".add");
    EXPECT_EQ(add.queue_group(), std::optional<std::string_view>("mathq"));

    natsio::EndpointConfig own;
    own.name = "sub";
    own.queue_group = "epq";
    natsio::Endpoint sub = math.add_endpoint(own, echo());
    EXPECT_EQ(sub.queue_group(), std::optional<std::string_view>("epq"));

    natsio::GroupOptions no_queue;
    no_queue.queue_group_disabled = true;
    natsio::Group v2 = math.add_group("v2", no_queue);
    natsio::Endpoint mul = v2.add_endpoint("mul", echo());
    EXPECT_EQ(mul.subject(), prefix + ".v2.mul");
    EXPECT_FALSE(mul.queue_group().has_value());

    EXPECT_EQ(client.request(prefix + ".add", "1,2", 2s).data(), "sum of 1,2");
    EXPECT_EQ(client.request(prefix + ".v2.mul", "3", 2s).data(), echo_prefix("3"));

    Json info = parse(svc.info());
    EXPECT_EQ(endpoint_of(info, "top")["queue_group"].text, "svcq");
    EXPECT_EQ(endpoint_of(info, "add")["queue_group"].text, "mathq");
    EXPECT_EQ(endpoint_of(info, "sub")["queue_group"].text, "epq");
    EXPECT_EQ(endpoint_of(info, "mul")["subject"].text, prefix + ".v2.mul");
    EXPECT_EQ(endpoint_of(info, "mul")["queue_group"].text, "");  // disabled
}

TEST(Service, InstancesShareTheQueueGroupUnlessItIsDisabled) {
    natsio::Client client = connect();
    // Two instances in the default queue group "q": one answer per request.
    natsio::Service a = natsio::add_service(client, config_for(service_name()));
    natsio::Service b = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig shared;
    shared.name = "shared";
    shared.subject = subject("shared");
    natsio::Endpoint ea = a.add_endpoint(shared, echo());
    natsio::Endpoint eb = b.add_endpoint(shared, echo());

    // Two more with no queue group: both answer.
    natsio::ServiceConfig every = config_for(service_name() + "_all");
    every.queue_group_disabled = true;
    natsio::Service c = natsio::add_service(client, every);
    natsio::Service d = natsio::add_service(client, every);
    natsio::EndpointConfig fan;
    fan.name = "fan";
    fan.subject = subject("fan");
    natsio::Endpoint ec = c.add_endpoint(fan, echo());
    natsio::Endpoint ed = d.add_endpoint(fan, echo());
    EXPECT_FALSE(ec.queue_group().has_value());
    client.flush();

    natsio::RequestManyOptions gather;
    gather.stall = 300ms;
    gather.timeout = 3s;
    for (int i = 0; i < 10; ++i) {
        int replies = 0;
        for (natsio::Msg& reply : client.request_many(subject("shared"), "s", gather)) {
            EXPECT_EQ(reply.data(), echo_prefix("s"));
            ++replies;
        }
        EXPECT_EQ(replies, 1);
    }
    natsio::RequestManyOptions both;
    both.max_msgs = 2;
    both.timeout = 10s;
    int fanned = 0;
    for (natsio::Msg& reply : client.request_many(subject("fan"), "f", both)) {
        EXPECT_EQ(reply.data(), echo_prefix("f"));
        ++fanned;
    }
    EXPECT_EQ(fanned, 2);

    // 1,000 more, all in flight at once: each answered once.
    std::vector<natsio::Future<natsio::Msg>> pending;
    for (int i = 0; i < 1000; ++i) {
        pending.push_back(client.request_async(subject("shared"), numbered("r", i), 10s));
    }
    for (int i = 0; i < 1000; ++i) {
        EXPECT_EQ(pending[static_cast<std::size_t>(i)].get().data(), echo_prefix(numbered("r", i)));
    }

    // The queue group's requests add up across its instances.
    std::int64_t total = 0;
    for (const Json& stats :
         discover(client, natsio::ServiceVerb::Stats, service_name(), std::nullopt, 2)) {
        total += endpoint_of(stats, "shared")["num_requests"].number;
    }
    EXPECT_EQ(total, 1010);
    EXPECT_EQ(
        discover(client, natsio::ServiceVerb::Ping, service_name() + "_all", std::nullopt, 2).size(),
        2u);
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

TEST(Service, RespondErrorSetsTheServiceErrorHeaders) {
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "lookup";
    config.subject = subject("lookup");
    natsio::Endpoint ep = svc.add_endpoint(config, [](natsio::RequestView req) {
        req.respond_error(404, "no such key", "key=" + std::string(req.data()));
    });

    natsio::Client requester = connect();
    natsio::Msg reply = requester.request(subject("lookup"), "k1", 2s);
    EXPECT_EQ(reply.headers().get("Nats-Service-Error"), std::optional<std::string_view>("no such key"));
    EXPECT_EQ(reply.headers().get("Nats-Service-Error-Code"), std::optional<std::string_view>("404"));
    EXPECT_EQ(reply.data(), "key=k1");

    const Json& counted = endpoint_of(parse(svc.stats()), "lookup");
    EXPECT_EQ(counted["num_requests"].number, 1);
    EXPECT_EQ(counted["num_errors"].number, 1);
    EXPECT_EQ(counted["last_error"].text, "404:no such key");
}

TEST(Service, AThrowingHandlerAnswers500AndTheServiceGoesOn) {
    natsio::Client client = connect();
    std::mutex mutex;
    std::vector<natsio::ServiceError> errors;
    natsio::ServiceConfig config = config_for(service_name());
    config.on_error = [&](const natsio::ServiceError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back(e);
    };
    natsio::Service svc = natsio::add_service(client, config);
    natsio::EndpointConfig ep_config;
    ep_config.name = "fragile";
    ep_config.subject = subject("fragile");
    natsio::Endpoint ep = svc.add_endpoint(ep_config, [](natsio::RequestView req) {
        if (req.data() == "bad") throw std::runtime_error("cannot handle bad");
        req.respond(echo_prefix(req.data()));
    });

    natsio::Msg failed = client.request(subject("fragile"), "bad", 2s);
    EXPECT_EQ(failed.headers().get("Nats-Service-Error-Code"), std::optional<std::string_view>("500"));
    EXPECT_EQ(failed.headers().get("Nats-Service-Error"),
              std::optional<std::string_view>("cannot handle bad"));
    // The error handler runs on the endpoint's thread, around the reply.
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !errors.empty();
    }));
    {
        std::lock_guard<std::mutex> lock(mutex);
        ASSERT_EQ(errors.size(), 1u);
        EXPECT_EQ(errors[0].endpoint, "fragile");
        EXPECT_EQ(errors[0].subject, subject("fragile"));
        EXPECT_EQ(errors[0].code, 500);
        EXPECT_EQ(errors[0].description, "cannot handle bad");
    }

    // The next request is served.
    EXPECT_EQ(client.request(subject("fragile"), "good", 2s).data(), echo_prefix("good"));
    const Json& counted = endpoint_of(parse(svc.stats()), "fragile");
    EXPECT_EQ(counted["num_requests"].number, 2);
    EXPECT_EQ(counted["num_errors"].number, 1);
    EXPECT_EQ(counted["last_error"].text, "500:cannot handle bad");
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(errors.size(), 1u);
}

// An endpoint's pending limits (nats.go's WithEndpointPendingLimits): with
// nobody reading, the requests over them are dropped, counted as the
// endpoint's errors and told to the service's error handler (code 0) and
// to the client's; the ones that fit are read in order; 0 is refused.
TEST(Service, PendingLimitsDropRequestsAndReportASlowConsumer) {
    std::mutex mutex;
    std::vector<natsio::ServiceError> errors;
    std::vector<natsio::AsyncError> async_errors;
    natsio::Options options;
    options.set_url(server_url()).on_error([&](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        async_errors.push_back(e);
    });
    natsio::Client client = natsio::Client::connect(options);
    natsio::ServiceConfig config = config_for(service_name());
    config.on_error = [&](const natsio::ServiceError& e) {
        std::lock_guard<std::mutex> lock(mutex);
        errors.push_back(e);
    };
    natsio::Service svc = natsio::add_service(client, config);
    natsio::EndpointConfig held_config;
    held_config.name = "held";
    held_config.subject = subject("held");
    held_config.pending_msgs_limit = 2;
    held_config.pending_bytes_limit = -1;
    natsio::Endpoint held = svc.add_endpoint(held_config);
    natsio::EndpointConfig open_config;
    open_config.name = "open";
    open_config.subject = subject("open");
    natsio::Endpoint open = svc.add_endpoint(open_config);
    client.flush();

    // Nobody reads: of 5 requests 2 queue and 3 are dropped; the endpoint
    // with the client's defaults keeps all 5.
    natsio::Client requester = connect();
    for (int i = 0; i < 5; ++i) {
        requester.publish_with(subject("held"), subject("reply"), {}, numbered("r", i));
        requester.publish_with(subject("open"), subject("reply"), {}, numbered("r", i));
    }
    requester.flush();
    auto counts_are = [](const natsio::Endpoint& ep, std::uint64_t dropped, std::uint64_t queued) {
        return wait_until([&] {
            natsio::IterStats stats = ep.stats();
            return stats.dropped == dropped && stats.pending_items == queued;
        });
    };
    ASSERT_TRUE(counts_are(held, 3, 2)) << "dropped " << held.stats().dropped << ", queued "
                                        << held.stats().pending_items;
    ASSERT_TRUE(counts_are(open, 0, 5)) << "dropped " << open.stats().dropped << ", queued "
                                        << open.stats().pending_items;

    // The service's error handler and the client's are told.
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !errors.empty() && !async_errors.empty();
    }));
    {
        std::lock_guard<std::mutex> lock(mutex);
        const natsio::ServiceError& e = errors[0];
        EXPECT_EQ(e.endpoint, "held");
        EXPECT_EQ(e.subject, subject("held"));
        EXPECT_EQ(e.code, 0);
        EXPECT_EQ(e.description.rfind("slow consumer", 0), 0u) << e.description;
        const natsio::AsyncError& a = async_errors[0];
        EXPECT_EQ(a.status, NATSIO_ERR_SLOW_CONSUMER) << a.text;
        EXPECT_EQ(a.subject, subject("held"));
    }
    // STATS counts it: last_error is the slow-consumer text.
    const Json counted = endpoint_of(parse(svc.stats()), "held");
    EXPECT_GE(counted["num_errors"].number, 1);
    EXPECT_EQ(counted["last_error"].text.rfind("slow consumer", 0), 0u) << counted["last_error"].text;
    EXPECT_EQ(counted["num_requests"].number, 0);
    EXPECT_EQ(parse(held.stats_json())["last_error"].text, counted["last_error"].text);
    EXPECT_EQ(endpoint_of(parse(svc.stats()), "open")["num_errors"].number, 0);

    // The two that fit are there, the first two, in order.
    for (int i = 0; i < 2; ++i) {
        natsio::Request req = next_item(held);
        EXPECT_EQ(req.data(), numbered("r", i));
    }
    EXPECT_EQ(held.stats().pending_items, 0u);

    // 0 is not a limit.
    natsio::EndpointConfig zero;
    zero.name = "zero";
    zero.pending_msgs_limit = 0;
    expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG,
                                              [&] { svc.add_endpoint(zero); });
    zero.pending_msgs_limit = std::nullopt;
    zero.pending_bytes_limit = 0;
    expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG,
                                              [&] { svc.add_endpoint(zero); });
    EXPECT_EQ(parse(svc.info())["endpoints"].items.size(), 2u);
}

TEST(Service, AHandlerThrowingAfterItAnsweredOnlyCountsTheError) {
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "odd";
    config.subject = subject("odd");
    natsio::Endpoint ep = svc.add_endpoint(config, [](natsio::RequestView req) {
        if (req.data() == "answered") {
            req.respond("fine");
            throw std::runtime_error("after the answer");
        }
        throw 7;  // not a std::exception
    });

    // The answer stands: no second (500) reply follows it.
    natsio::Client requester = connect();
    natsio::Subscription replies = requester.subscribe(subject("replies"));
    requester.publish_with(subject("odd"), subject("replies"), {}, "answered");
    natsio::Msg answer = next_item(replies);
    EXPECT_EQ(answer.data(), "fine");
    EXPECT_FALSE(answer.headers().get("Nats-Service-Error-Code").has_value());

    natsio::Msg unknown = requester.request(subject("odd"), "other", 2s);
    EXPECT_EQ(unknown.headers().get("Nats-Service-Error-Code"), std::optional<std::string_view>("500"));
    EXPECT_EQ(unknown.headers().get("Nats-Service-Error"),
              std::optional<std::string_view>("unknown exception"));
    expect_quiet(replies);

    const Json& counted = endpoint_of(parse(svc.stats()), "odd");
    EXPECT_EQ(counted["num_requests"].number, 2);
    EXPECT_EQ(counted["num_errors"].number, 2);
    EXPECT_EQ(counted["last_error"].text, "500:unknown exception");
}

TEST(Service, AnUnansweredRequestCountsWhenItsLastHandleGoes) {
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "drop";
    config.subject = subject("drop");
    natsio::Endpoint ep = svc.add_endpoint(config);
    auto requests = [&] {
        return endpoint_of(parse(svc.stats()), "drop")["num_requests"].number;
    };

    client.publish_with(subject("drop"), subject("nobody"), {}, "never answered");
    std::optional<natsio::Request> req = ep.next(5s);
    ASSERT_TRUE(req.has_value());
    EXPECT_EQ(req->reply(), std::optional<std::string_view>(subject("nobody")));
    EXPECT_EQ(requests(), 0);

    // A copy is a second handle: the request ends with the last one.
    natsio::Request copy = *req;
    req.reset();
    EXPECT_EQ(requests(), 0);
    copy = natsio::Request();
    EXPECT_EQ(requests(), 1);
    EXPECT_EQ(endpoint_of(parse(svc.stats()), "drop")["num_errors"].number, 0);
}

TEST(Service, BadNamesAndVersionsAreRefusedBeforeAnythingIsSent) {
    natsio::Client client = connect();
    for (const char* name : {"", "has space", "dotted.name", "star*", "gt>"}) {
        SCOPED_TRACE(name);
        expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG, [&] {
            natsio::add_service(client, config_for(name));
        });
    }
    for (const char* version : {"", "1.0", "v1.0.0", "1.0.0-", "01.0.0"}) {
        SCOPED_TRACE(version);
        expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG, [&] {
            natsio::add_service(client, config_for(service_name(), version));
        });
    }
    // Nothing of the refused services answers.
    EXPECT_TRUE(discover(client, natsio::ServiceVerb::Ping, service_name()).empty());

    // A ServiceConfigError is a ConfigError.
    try {
        natsio::ServiceConfig bad = config_for(service_name());
        bad.queue_group = "has space";
        natsio::add_service(client, bad);
        ADD_FAILURE() << "a queue group with a space was accepted";
    } catch (const natsio::ConfigError& e) {
        EXPECT_EQ(e.status(), NATSIO_ERR_SERVICE_CONFIG);
    }

    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG, [&] {
        svc.add_endpoint("bad name", echo());
    });
    natsio::EndpointConfig bad_subject;
    bad_subject.name = "ok";
    bad_subject.subject = "a.>.b";
    expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG,
                                              [&] { svc.add_endpoint(bad_subject); });
    expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG,
                                              [&] { svc.add_group("a.>"); });
    EXPECT_EQ(parse(svc.info())["endpoints"].items.size(), 0u);
    // A discovery filter is checked as a name too.
    expect_throws<natsio::ServiceConfigError>(NATSIO_ERR_SERVICE_CONFIG, [&] {
        natsio::discover_services(client, natsio::ServiceVerb::Ping, "bad name");
    });
}

// ---------------------------------------------------------------------------
// Stop, reset, close
// ---------------------------------------------------------------------------

TEST(Service, StopFinishesInFlightRequestsThenNoResponders) {
    std::atomic<bool> entered{false};
    std::atomic<bool> release{false};
    std::atomic<bool> ended{false};
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "slow";
    config.subject = subject("slow");
    natsio::Endpoint ep = svc.add_endpoint(config);
    ep.set_callback(
        [&](natsio::RequestView req) {
            entered = true;
            while (!release) std::this_thread::sleep_for(1ms);
            req.respond("finished " + std::string(req.data()));
        },
        [&](std::exception_ptr error) { ended = error == nullptr; });

    natsio::Client requester = connect();
    natsio::Future<natsio::Msg> in_flight = requester.request_async(subject("slow"), "a", 5s);
    ASSERT_TRUE(wait_until([&] { return entered.load(); }));
    natsio::Future<void> stopped = svc.stopped_async();
    natsio::Future<void> stopping = svc.stop_async();
    EXPECT_FALSE(stopping.ready());  // the handler still holds a request
    release = true;
    EXPECT_EQ(in_flight.get().data(), "finished a");
    stopping.get();
    stopped.get();
    EXPECT_TRUE(svc.stopped());
    EXPECT_TRUE(wait_until([&] { return ended.load(); }));

    expect_throws<natsio::NoRespondersError>(NATSIO_ERR_NO_RESPONDERS,
                                             [&] { requester.request(subject("slow"), "b", 2s); });
    EXPECT_TRUE(discover(requester, natsio::ServiceVerb::Ping, service_name()).empty());
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { svc.add_endpoint("late", echo()); });
    svc.stop(1s);  // stopped already: returns at once
}

TEST(Service, ResetZeroesTheCounters) {
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "count";
    config.subject = subject("count");
    natsio::Endpoint ep = svc.add_endpoint(config, [](natsio::RequestView req) {
        if (req.data() == "err") {
            req.respond_error(400, "bad input");
        } else {
            req.respond("ok");
        }
    });
    client.request(subject("count"), "a", 2s);
    client.request(subject("count"), "err", 2s);
    Json before = parse(svc.stats());
    EXPECT_EQ(endpoint_of(before, "count")["num_requests"].number, 2);
    EXPECT_EQ(endpoint_of(before, "count")["num_errors"].number, 1);

    svc.reset();
    Json after = parse(svc.stats());
    const Json& counted = endpoint_of(after, "count");
    EXPECT_EQ(counted["num_requests"].number, 0);
    EXPECT_EQ(counted["num_errors"].number, 0);
    EXPECT_EQ(counted["last_error"].text, "");
    EXPECT_EQ(counted["processing_time"].number, 0);
    EXPECT_FALSE(after["started"].text.empty());

    // It goes on counting.
    client.request(subject("count"), "b", 2s);
    EXPECT_EQ(endpoint_of(parse(svc.stats()), "count")["num_requests"].number, 1);
}

TEST(Service, TheServiceStopsWhenItsClientCloses) {
    natsio::Client client = connect();
    natsio::Service svc = natsio::add_service(client, config_for(service_name()));
    natsio::EndpointConfig config;
    config.name = "gone";
    config.subject = subject("gone");
    natsio::Endpoint ep = svc.add_endpoint(config);
    natsio::Future<void> stopped = svc.stopped_async();
    EXPECT_FALSE(svc.stopped());

    client.close();
    stopped.get();
    EXPECT_TRUE(svc.stopped());
    natsio::Client other = connect();
    EXPECT_TRUE(discover(other, natsio::ServiceVerb::Ping, service_name()).empty());
}
