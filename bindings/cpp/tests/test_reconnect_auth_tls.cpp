// Reconnect, auth and TLS: server restart with reconnect and lifecycle
// events, the reconnect buffer, force_reconnect, rtt and the server pool, and
// secured servers (TLS with the test CA, credentials in operator mode, NKeys,
// auth callbacks). Each test starts its own nats-server (tests that kill or
// reconfigure a server cannot share the suite's).
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace natsio_test;
using natsio::EventKind;

namespace {

/// A server owned by one test, stopped when the test ends.
using ServerPtr = std::unique_ptr<nt_server, void (*)(nt_server*)>;

ServerPtr start_server(const std::string& config = {}) {
    nt_server* s = nt_server_start(config.empty() ? nullptr : config.c_str());
    return ServerPtr(s, &nt_server_stop);
}

std::string fixture(const std::string& relative) {
    char buf[2048];
    return nt_fixture_path(buf, sizeof buf, relative.c_str());
}

std::string read_fixture(const std::string& relative) {
    char* text = nt_read_file(fixture(relative).c_str());
    std::string result = text != nullptr ? text : "";
    std::free(text);
    // Seeds and public keys are stored with a trailing newline.
    while (!result.empty() && (result.back() == '\n' || result.back() == '\r')) {
        result.pop_back();
    }
    return result;
}

/// The events a client reported, in order.
struct EventLog {
    std::mutex mutex;
    std::vector<EventKind> kinds;
    std::vector<natsio::Status> statuses;
    std::vector<std::string> texts;

    natsio::EventHandler handler() {
        return [this](EventKind kind, natsio::Status status, std::string_view text) {
            std::lock_guard<std::mutex> lock(mutex);
            kinds.push_back(kind);
            statuses.push_back(status);
            texts.emplace_back(text);
        };
    }
    std::vector<EventKind> snapshot() {
        std::lock_guard<std::mutex> lock(mutex);
        return kinds;
    }
    bool ends_with(EventKind kind) {
        std::lock_guard<std::mutex> lock(mutex);
        return !kinds.empty() && kinds.back() == kind;
    }
    bool has(EventKind kind) {
        std::lock_guard<std::mutex> lock(mutex);
        return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
    }
    /// The texts of the ReconnectFailed events (one per failed attempt),
    /// each checked to carry its error's status.
    std::vector<std::string> failed_attempts() {
        std::lock_guard<std::mutex> lock(mutex);
        std::vector<std::string> out;
        for (std::size_t i = 0; i < kinds.size(); ++i) {
            if (kinds[i] == EventKind::ReconnectFailed) {
                EXPECT_NE(statuses[i], NATSIO_OK)
                    << "RECONNECT_FAILED carries its cause: " << texts[i];
                out.push_back(texts[i]);
            }
        }
        return out;
    }
};

/// `kinds` without the ReconnectFailed events, which come once per failed
/// attempt (as many as attempts failed).
std::vector<EventKind> without_failed_attempts(std::vector<EventKind> kinds) {
    kinds.erase(std::remove(kinds.begin(), kinds.end(), EventKind::ReconnectFailed), kinds.end());
    return kinds;
}

/// Whether every ReconnectFailed of `kinds` comes after a Disconnected
/// and before the Reconnected (or Closed) that ends that outage.
bool failed_attempts_only_while_disconnected(const std::vector<EventKind>& kinds) {
    bool down = false;
    for (EventKind kind : kinds) {
        if (kind == EventKind::Disconnected) {
            down = true;
        } else if (kind == EventKind::Reconnected || kind == EventKind::Closed) {
            down = false;
        } else if (kind == EventKind::ReconnectFailed && !down) {
            return false;
        }
    }
    return true;
}

/// Text for a failed check: the kinds of `kinds` as numbers.
std::string kinds_text(const std::vector<EventKind>& kinds) {
    std::string text;
    for (EventKind kind : kinds) {
        text += std::to_string(static_cast<int>(kind));
        text += ' ';
    }
    return text;
}

/// The entry of `pool` whose URL is `url`, or nullptr.
const natsio::Server* pool_entry(const std::vector<natsio::Server>& pool, const std::string& url) {
    auto it = std::find_if(pool.begin(), pool.end(),
                           [&](const natsio::Server& s) { return s.url == url; });
    return it != pool.end() ? &*it : nullptr;
}

/// Whether `client` is connected (not reconnecting) to `url`.
bool connected_to(const natsio::Client& client, const std::string& url) {
    return client.status() == natsio::ConnStatus::Connected && client.connected_url() == url;
}

/// Options that reconnect within a few tens of milliseconds.
natsio::Options fast_reconnect(const std::string& url, EventLog& events) {
    natsio::Options options;
    options.set_url(url)
        .set_reconnect_wait(20ms, 100ms)
        .set_reconnect_jitter(5ms, 5ms)
        .set_max_reconnect_attempts(-1)
        .set_no_randomize(true)
        .on_event(events.handler());
    return options;
}

natsio::Options no_reconnect(const std::string& url) {
    natsio::Options options;
    options.set_url(url).set_allow_reconnect(false).set_connect_timeout(3s);
    return options;
}

std::string tls_server_config(bool verify_clients) {
    return "tls {\n  cert_file: \"" + fixture("tls/server-cert.pem") + "\"\n  key_file: \"" +
           fixture("tls/server-key.pem") + "\"\n  ca_file: \"" + fixture("tls/ca.pem") +
           "\"\n  verify: " + (verify_clients ? "true" : "false") + "\n  timeout: 2\n}\n";
}

std::string tls_url(nt_server* s) {
    return "tls://127.0.0.1:" + std::to_string(nt_server_port(s));
}

/// Publishes and receives one message through `client`.
void expect_round_trip(const natsio::Client& client, const std::string& subject) {
    natsio::Subscription sub = client.subscribe(subject);
    client.publish(subject, "ping");
    natsio::Msg msg = next_item(sub);
    EXPECT_EQ(msg.data(), "ping");
}

}  // namespace

TEST(Reconnect, RestartMidStreamResumesWithEventsInOrder) {
    ServerPtr server = start_server();
    ASSERT_TRUE(server);
    EventLog events;
    natsio::Client client = natsio::Client::connect(fast_reconnect(nt_server_url(server.get()), events));
    natsio::Subscription sub = client.subscribe("survive.>");
    client.publish("survive.before", "b");
    client.flush(5s);
    EXPECT_EQ(next_item(sub).data(), "b");

    nt_server_kill(server.get());
    ASSERT_TRUE(wait_until([&] { return client.status() == natsio::ConnStatus::Reconnecting; }));
    // Accepted while disconnected: kept in the reconnect buffer.
    for (int i = 0; i < 50; ++i) {
        client.publish("survive.during", "d" + std::to_string(i));
    }
    ASSERT_EQ(nt_server_restart(server.get()), 0);
    ASSERT_TRUE(wait_until([&] { return client.status() == natsio::ConnStatus::Connected; }, 8s));
    client.flush(5s);
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(next_item(sub).data(), "d" + std::to_string(i));
    }
    // The subscription was re-established on the new connection.
    client.publish("survive.after", "a");
    EXPECT_EQ(next_item(sub).data(), "a");
    expect_quiet(sub, 100ms);
    EXPECT_EQ(client.stats().reconnects, 1u);

    client.close();
    ASSERT_TRUE(wait_until([&] { return events.ends_with(EventKind::Closed); }));
    // Each attempt that failed while the server restarted was told
    // (ReconnectFailed, as often as attempts failed), only during the outage.
    const std::vector<EventKind> kinds = events.snapshot();
    EXPECT_EQ(without_failed_attempts(kinds),
              (std::vector<EventKind>{EventKind::Connected, EventKind::Disconnected,
                                      EventKind::Reconnected, EventKind::Closed}))
        << kinds_text(kinds);
    EXPECT_TRUE(failed_attempts_only_while_disconnected(kinds)) << kinds_text(kinds);
    for (const std::string& text : events.failed_attempts()) {
        EXPECT_TRUE(contains(text, "reconnect to ")) << text;
    }
    std::lock_guard<std::mutex> lock(events.mutex);
    EXPECT_NE(events.texts[0].find(std::to_string(nt_server_port(server.get()))),
              std::string::npos)
        << "CONNECTED names the server URL: " << events.texts[0];
    EXPECT_NE(events.statuses[1], NATSIO_OK) << "DISCONNECTED carries its cause";
}

TEST(Reconnect, DisabledBufferingThrowsWhileDisconnected) {
    ServerPtr server = start_server();
    ASSERT_TRUE(server);
    EventLog events;
    natsio::Options options = fast_reconnect(nt_server_url(server.get()), events);
    options.set_reconnect_buf_size(-1);
    natsio::Client client = natsio::Client::connect(options);
    nt_server_kill(server.get());
    ASSERT_TRUE(wait_until([&] { return client.status() == natsio::ConnStatus::Reconnecting; }));
    EXPECT_THROW(client.publish("survive.nobuf", "x"), natsio::ReconnectBufExceededError);
}

TEST(Reconnect, ForceReconnectRttAndServers) {
    ServerPtr server = start_server();
    ASSERT_TRUE(server);
    const std::string url = nt_server_url(server.get());
    EventLog events;
    natsio::Client client = natsio::Client::connect(fast_reconnect(url, events));
    natsio::Subscription sub = client.subscribe("survive.force");
    client.flush(5s);

    std::chrono::microseconds rtt = client.rtt(5s);
    EXPECT_GT(rtt.count(), 0);
    EXPECT_LT(rtt, std::chrono::microseconds(5s));
    std::vector<std::string> servers = client.servers();
    const std::string port = std::to_string(nt_server_port(server.get()));
    EXPECT_TRUE(std::any_of(servers.begin(), servers.end(), [&](const std::string& s) {
        return s.find(port) != std::string::npos;
    })) << "pool lacks the configured server";

    client.force_reconnect();
    ASSERT_TRUE(wait_until([&] { return client.stats().reconnects == 1; }));
    client.publish("survive.force", "after");
    EXPECT_EQ(next_item(sub).data(), "after");
    // The event comes on the event thread, possibly after the counter.
    EXPECT_TRUE(wait_until([&] {
        std::vector<EventKind> kinds = events.snapshot();
        return std::find(kinds.begin(), kinds.end(), EventKind::Reconnected) != kinds.end();
    }));

    client.close();
    EXPECT_THROW(client.force_reconnect(), natsio::ConnectionClosedError);
}

// The shape of tests/c/test_cluster.c's
// test_set_server_pool_moves_on_the_next_reconnect: servers A and B, a dead
// URL D (a loopback port nobody listens on).
TEST(Reconnect, SetServerPoolMovesOnTheNextReconnect) {
    OwnedServer a = start_own_server();
    OwnedServer b = start_own_server();
    ASSERT_TRUE(a && b);
    const std::string url_a = nt_server_url(a.get());
    const std::string url_b = nt_server_url(b.get());
    const int dead_port = nt_free_port();
    const std::string dead = numbered("nats://127.0.0.1:", dead_port);
    EventLog events;
    natsio::Options options = fast_reconnect(url_a, events);
    options.set_connect_timeout(1s);
    natsio::Client client = natsio::Client::connect(options);

    std::vector<natsio::Server> pool = client.server_pool();
    ASSERT_EQ(pool.size(), 1u);
    EXPECT_EQ(pool[0].url, url_a);
    EXPECT_TRUE(pool[0].did_connect);
    EXPECT_FALSE(pool[0].discovered);
    EXPECT_EQ(pool[0].reconnects, 0u);

    client.set_server_pool({dead, url_b});
    // The connection to A stays up; the pool is the new list, in order.
    EXPECT_TRUE(connected_to(client, url_a));
    client.flush(2s);
    pool = client.server_pool();
    ASSERT_EQ(pool.size(), 2u);
    EXPECT_EQ(pool[0].url, dead);
    EXPECT_EQ(pool[1].url, url_b);
    EXPECT_FALSE(pool[0].did_connect);
    EXPECT_FALSE(pool[1].did_connect);
    EXPECT_FALSE(events.has(EventKind::ReconnectFailed));

    // The next reconnect: the dead server first, then B.
    client.force_reconnect();
    ASSERT_TRUE(wait_until([&] { return connected_to(client, url_b); }, 10s)) << "never moved to B";
    pool = client.server_pool();
    const natsio::Server* d = pool_entry(pool, dead);
    const natsio::Server* sb = pool_entry(pool, url_b);
    ASSERT_TRUE(d != nullptr && sb != nullptr);
    EXPECT_GE(d->reconnects, 1u);
    EXPECT_FALSE(d->did_connect);
    EXPECT_TRUE(sb->did_connect);
    EXPECT_EQ(sb->reconnects, 0u);
    const std::uint32_t dead_tries = d->reconnects;
    // Each failed attempt was told, naming the server, between the
    // disconnect and the reconnect (nats.go's ReconnectErrCB).
    ASSERT_TRUE(wait_until([&] { return events.has(EventKind::Reconnected); }));
    const std::vector<EventKind> kinds = events.snapshot();
    EXPECT_EQ(without_failed_attempts(kinds),
              (std::vector<EventKind>{EventKind::Connected, EventKind::Disconnected,
                                      EventKind::Reconnected}))
        << kinds_text(kinds);
    EXPECT_TRUE(failed_attempts_only_while_disconnected(kinds)) << kinds_text(kinds);
    const std::vector<std::string> failed = events.failed_attempts();
    EXPECT_EQ(failed.size(), dead_tries) << kinds_text(kinds);
    for (const std::string& text : failed) {
        EXPECT_TRUE(contains(text, "reconnect to " + dead)) << text;
    }

    // Kept servers keep their bookkeeping, whatever the order or spelling.
    const std::string dead_bare = numbered("127.0.0.1:", dead_port);
    client.set_server_pool({url_b, dead_bare, url_a});
    pool = client.server_pool();
    ASSERT_EQ(pool.size(), 3u);
    EXPECT_EQ(pool[0].url, url_b);
    EXPECT_TRUE(pool[0].did_connect);
    EXPECT_EQ(pool[1].url, dead_bare);
    EXPECT_GE(pool[1].reconnects, dead_tries);
    // A was dropped by the earlier replacement: it comes back new.
    EXPECT_EQ(pool[2].url, url_a);
    EXPECT_FALSE(pool[2].did_connect);
    client.flush(2s);
    EXPECT_TRUE(connected_to(client, url_b));
}

TEST(Reconnect, SetServerPoolRefusesBadListsAndClosedClients) {
    natsio::Client client = connect();
    const std::vector<std::string> before = client.servers();
    auto unchanged = [&] {
        std::vector<natsio::Server> pool = client.server_pool();
        ASSERT_EQ(pool.size(), before.size());
        for (std::size_t i = 0; i < pool.size(); ++i) {
            EXPECT_EQ(pool[i].url, before[i]);
        }
        EXPECT_TRUE(pool[0].did_connect);
    };
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] { client.set_server_pool({}); });
    unchanged();
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        client.set_server_pool({server_url(), "nats://127.0.0.1:notaport"});
    });
    unchanged();
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        client.set_server_pool({std::string("nats://127.0.0.1:4222\0x", 23)});
    });
    unchanged();
    client.flush(2s);

    // Closed: the pool is still readable, no longer replaceable.
    client.close();
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { client.set_server_pool({server_url()}); });
    unchanged();
}

// The reconnect delay handler (nats.go's CustomReconnectDelay) paces the
// reconnect: with one server it is asked before every attempt, with 1, 2,
// ...; an exception it throws (the first call here) fails that attempt
// (reported as a failed attempt naming the callback, and to the error
// handler) and the client keeps going; it reconnects once the server is
// back, and each failed attempt had one call before it.
TEST(Reconnect, ReconnectDelayCallbackPacesTheAttempts) {
    ServerPtr server = start_server();
    ASSERT_TRUE(server);
    EventLog events;
    std::mutex mutex;
    std::vector<std::int64_t> args;
    std::vector<std::string> reported;
    natsio::Options options = fast_reconnect(nt_server_url(server.get()), events);
    options
        .set_reconnect_delay_callback([&](std::int64_t attempts) -> std::chrono::milliseconds {
            std::lock_guard<std::mutex> lock(mutex);
            args.push_back(attempts);
            if (args.size() == 1) {
                throw std::runtime_error("no delay today");
            }
            return 20ms;
        })
        .on_error([&](const natsio::AsyncError& e) {
            if (e.source == natsio::AsyncError::Source::Handler) {
                std::lock_guard<std::mutex> lock(mutex);
                reported.push_back(e.text);
            }
        });
    natsio::Client client = natsio::Client::connect(options);
    nt_server_kill(server.get());
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return args.size() >= 3;
    }, 10s));
    ASSERT_EQ(nt_server_restart(server.get()), 0);
    ASSERT_TRUE(wait_until([&] { return events.ends_with(EventKind::Reconnected); }, 10s));
    client.flush(5s);
    std::lock_guard<std::mutex> lock(mutex);
    for (std::size_t i = 0; i < args.size(); ++i) {
        EXPECT_EQ(args[i], static_cast<std::int64_t>(i + 1));
    }
    const std::vector<std::string> failed = events.failed_attempts();
    EXPECT_EQ(failed.size() + 1, args.size());
    ASSERT_FALSE(failed.empty());
    EXPECT_TRUE(contains(failed[0], "reconnect delay callback failed")) << failed[0];
    EXPECT_EQ(reported, std::vector<std::string>{"no delay today"});
}

TEST(Reconnect, ThrowingEventHandlerIsReportedToTheErrorHandler) {
    ServerPtr server = start_server();
    ASSERT_TRUE(server);
    std::mutex mutex;
    std::vector<std::string> reported;
    natsio::Options options;
    options.set_url(nt_server_url(server.get()))
        .on_event([](EventKind kind, natsio::Status, std::string_view) {
            if (kind == EventKind::Connected) {
                throw std::runtime_error("event handler failed");
            }
        })
        .on_error([&](const natsio::AsyncError& e) {
            if (e.source == natsio::AsyncError::Source::Handler) {
                std::lock_guard<std::mutex> lock(mutex);
                reported.push_back(e.text);
            }
        });
    natsio::Client client = natsio::Client::connect(options);
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return !reported.empty();
    }));
    {
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_EQ(reported.front(), "event handler failed");
    }
    client.flush(5s);  // the client carries on
}

TEST(Secured, TlsWithTheFixtureCa) {
    ServerPtr server = start_server(tls_server_config(false));
    ASSERT_TRUE(server);
    natsio::Options options = no_reconnect(tls_url(server.get()));
    options.set_tls(fixture("tls/ca.pem"));
    natsio::Client client = natsio::Client::connect(options);
    EXPECT_NE(client.server_info().find("\"tls_required\":true"), std::string::npos);
    expect_round_trip(client, "secured.tls");

    natsio::Options wrong_ca = no_reconnect(tls_url(server.get()));
    wrong_ca.set_tls(fixture("tls/other-ca.pem"));
    EXPECT_THROW(natsio::Client::connect(wrong_ca), natsio::IoError);
}

TEST(Secured, MutualTlsWithHostnameOverride) {
    ServerPtr server = start_server(tls_server_config(true));
    ASSERT_TRUE(server);
    natsio::Options options = no_reconnect(tls_url(server.get()));
    options.set_tls(fixture("tls/ca.pem"), fixture("tls/client-cert.pem"),
                    fixture("tls/client-key.pem"))
        .set_tls_hostname("localhost");
    natsio::Client client = natsio::Client::connect(options);
    expect_round_trip(client, "secured.mtls");

    natsio::Options without_cert = no_reconnect(tls_url(server.get()));
    without_cert.set_tls(fixture("tls/ca.pem"));
    EXPECT_THROW(natsio::Client::connect(without_cert), natsio::Error);

    natsio::Options cert_without_key;
    EXPECT_THROW(cert_without_key.set_tls(fixture("tls/ca.pem"), fixture("tls/client-cert.pem")),
                 natsio::ConfigError);
}

TEST(Secured, MutualTlsFromMemory) {
    ServerPtr server = start_server(tls_server_config(true));
    ASSERT_TRUE(server);
    const std::string ca = read_fixture("tls/ca.pem");
    natsio::Options options = no_reconnect(tls_url(server.get()));
    options.set_tls_pem(ca, read_fixture("tls/client-cert.pem"), read_fixture("tls/client-key.pem"));
    natsio::Client client = natsio::Client::connect(options);
    expect_round_trip(client, "secured.mtls.memory");

    natsio::Options without_cert = no_reconnect(tls_url(server.get()));
    without_cert.set_tls_pem(ca);
    EXPECT_THROW(natsio::Client::connect(without_cert), natsio::IoError);
    natsio::Options wrong_ca = no_reconnect(tls_url(server.get()));
    wrong_ca.set_tls_pem(read_fixture("tls/other-ca.pem"));
    EXPECT_THROW(natsio::Client::connect(wrong_ca), natsio::IoError);

    natsio::Options bad_key;
    EXPECT_THROW(bad_key.set_tls_pem(ca, read_fixture("tls/client-cert.pem"), "not a key"), natsio::ConfigError);
}

// The user/password callback is called again at a reconnect, and its new
// value is what the restarted server (with a changed password) accepts.
TEST(Secured, UserPasswordCallbackAtEveryConnect) {
    ServerPtr server = start_server("authorization { user: alice, password: \"s3cret\" }");
    ASSERT_TRUE(server);
    std::atomic<int> calls{0};
    EventLog events;
    natsio::Options options = fast_reconnect(nt_server_url(server.get()), events);
    options.set_user_password_callback([&] {
        return std::pair<std::string, std::string>("alice", calls++ == 0 ? "s3cret" : "changed");
    });
    natsio::Client client = natsio::Client::connect(options);
    EXPECT_EQ(calls.load(), 1);
    expect_round_trip(client, "cpp.rotate.before");

    const std::string conf = std::string(nt_server_dir(server.get())) + "/server.conf";
    std::ofstream(conf) << "authorization { user: alice, password: \"changed\" }\n";
    ASSERT_EQ(nt_server_restart(server.get()), 0);
    ASSERT_TRUE(wait_until([&] { return client.status() == natsio::ConnStatus::Connected && calls.load() >= 2; }, 8s));
    expect_round_trip(client, "cpp.rotate.after");
    EXPECT_EQ(client.stats().reconnects, 1u);

    natsio::Options token;
    EXPECT_THROW(token.set_token_callback(nullptr), natsio::NullArgumentError);
    token.set_user_password("alice", "x");
    EXPECT_THROW(token.set_token_callback([] { return std::string("t"); }), natsio::ConfigError);
}

TEST(Secured, CredentialsFileInOperatorMode) {
    ServerPtr server = start_server(read_fixture("auth/operator.conf"));
    ASSERT_TRUE(server);
    const std::string url = nt_server_url(server.get());
    natsio::Options options = no_reconnect(url);
    options.set_credentials_file(fixture("auth/user.creds"));
    natsio::Client client = natsio::Client::connect(options);
    expect_round_trip(client, "secured.creds");

    natsio::Options stranger = no_reconnect(url);
    stranger.set_credentials_file(fixture("auth/stranger.creds"));
    EXPECT_THROW(natsio::Client::connect(stranger), natsio::AuthorizationError);

    natsio::Options missing;
    EXPECT_THROW(missing.set_credentials_file(fixture("auth/missing.creds")), natsio::ConfigError);
}

TEST(Secured, AuthCallbacksSignTheNonce) {
    ServerPtr server = start_server(read_fixture("auth/operator.conf"));
    ASSERT_TRUE(server);
    const std::string jwt = read_fixture("auth/user.jwt");
    const std::string seed = read_fixture("auth/user.nk");
    std::atomic<int> signatures{0};
    natsio::Options options = no_reconnect(nt_server_url(server.get()));
    options.set_auth_callbacks([&] { return jwt; },
                               [&](natsio::ByteView nonce) {
                                   std::array<std::uint8_t, 64> signature{};
                                   if (!nt_nkey_sign(seed.c_str(), nonce.data(), nonce.size(),
                                                     signature.data())) {
                                       throw std::runtime_error("bad seed");
                                   }
                                   ++signatures;
                                   return signature;
                               });
    natsio::Client client = natsio::Client::connect(options);
    expect_round_trip(client, "secured.callbacks");
    EXPECT_EQ(signatures.load(), 1);

    // A throwing signer fails the connection attempt, not the process, and
    // its exception reaches the error handler (set after the callbacks).
    natsio::Options failing = no_reconnect(nt_server_url(server.get()));
    failing.set_auth_callbacks([&] { return jwt; },
                               [](natsio::ByteView) -> std::array<std::uint8_t, 64> {
                                   throw std::runtime_error("HSM unavailable");
                               });
    std::mutex mutex;
    std::vector<std::string> thrown;
    failing.on_error([&](const natsio::AsyncError& e) {
        if (e.source == natsio::AsyncError::Source::Handler) {
            std::lock_guard<std::mutex> lock(mutex);
            thrown.push_back(e.text);
        }
    });
    // The connect fails as the C API's does: CONFIG naming the callback and
    // the status the binding returned for the exception (INTERNAL, 109).
    const std::string what = expect_throws<natsio::ConfigError>(
        NATSIO_ERR_CONFIG, [&] { natsio::Client::connect(failing); });
    EXPECT_TRUE(contains(what, "signature callback failed with status 109")) << what;
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_FALSE(thrown.empty());
    EXPECT_EQ(thrown[0], "HSM unavailable");
}

// The general authenticator: an NKey user's signature of every nonce (a
// new one after the server restarts), a wrong key refused, user/password
// with quotes and CR LF sent intact as JSON, a throw failing the attempt.
TEST(Secured, AuthenticatorSignsEveryNonce) {
    const std::string pub = read_fixture("auth/nkey-user.pub");
    const std::string seed = read_fixture("auth/nkey-user.nk");
    ServerPtr server = start_server("authorization { users = [ { nkey: " + pub + " } ] }");
    ASSERT_TRUE(server);
    std::mutex mutex;
    std::vector<std::string> nonces;
    auto signer = [&](const std::string& key_seed) {
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
    EventLog events;
    natsio::Options options = fast_reconnect(nt_server_url(server.get()), events);
    options.set_authenticator(signer(seed));
    natsio::Client client = natsio::Client::connect(options);
    expect_round_trip(client, "cpp.authenticator.before");
    ASSERT_TRUE(wait_until([&] { return client.status() == natsio::ConnStatus::Connected; }, 8s));
    ASSERT_EQ(nt_server_restart(server.get()), 0);
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return client.status() == natsio::ConnStatus::Connected && nonces.size() >= 2;
    }, 8s));
    expect_round_trip(client, "cpp.authenticator.after");
    {
        std::lock_guard<std::mutex> lock(mutex);
        ASSERT_GE(nonces.size(), 2u);
        EXPECT_FALSE(nonces[0].empty());
        EXPECT_NE(nonces[0], nonces[1]);
    }

    natsio::Options stranger = no_reconnect(nt_server_url(server.get()));
    stranger.set_authenticator(signer(read_fixture("auth/nkey-other.nk")));
    EXPECT_THROW(natsio::Client::connect(stranger), natsio::AuthorizationError);

    natsio::Options throwing = no_reconnect(nt_server_url(server.get()));
    throwing.set_authenticator([](std::string_view) -> natsio::AuthFields {
        throw std::runtime_error("HSM unavailable");
    });
    const std::string what = expect_throws<natsio::ConfigError>(
        NATSIO_ERR_CONFIG, [&] { natsio::Client::connect(throwing); });
    EXPECT_TRUE(contains(what, "authenticator callback failed with status 109")) << what;

    natsio::Options bad;
    EXPECT_THROW(bad.set_authenticator(nullptr), natsio::NullArgumentError);
    bad.set_token("t");
    EXPECT_THROW(bad.set_authenticator([](std::string_view) { return natsio::AuthFields{}; }),
                 natsio::ConfigError);
}

// nkey_sign: the library's signer, for an authenticator holding its seed:
// the same signature as the harness's (OpenSSL), and a server accepts it.
TEST(Secured, NkeySignSignsAsAnIndependentSignerAndTheServerAccepts) {
    const std::string pub = read_fixture("auth/nkey-user.pub");
    const std::string seed = read_fixture("auth/nkey-user.nk");
    const std::string nonce = "a server nonce";
    natsio::NkeySignature signed_nonce = natsio::nkey_sign(seed, nonce);
    EXPECT_EQ(signed_nonce.public_key, pub);
    char want[NT_NKEY_SIG_B64_CAP];
    ASSERT_TRUE(nt_nkey_sign_base64url(seed.c_str(), nonce.data(), nonce.size(), want));
    EXPECT_EQ(signed_nonce.sig, want);

    ServerPtr server = start_server("authorization { users = [ { nkey: " + pub + " } ] }");
    ASSERT_TRUE(server);
    natsio::Options options = no_reconnect(nt_server_url(server.get()));
    options.set_authenticator([&](std::string_view server_nonce) {
        natsio::NkeySignature s = natsio::nkey_sign(seed, server_nonce);
        natsio::AuthFields fields;
        fields.nkey = s.public_key;
        fields.sig = s.sig;
        return fields;
    });
    natsio::Client client = natsio::Client::connect(options);
    expect_round_trip(client, "cpp.nkey_sign");

    EXPECT_THROW((void)natsio::nkey_sign("SUnotaseed", "x"), natsio::ConfigError);
    EXPECT_THROW((void)natsio::nkey_sign(std::string_view("S\0U", 3), "x"), natsio::InvalidArgumentError);
}

TEST(Secured, AuthenticatorUserPasswordIsSentAsJson) {
    ServerPtr server = start_server(
        "authorization { user: alice, password: \"p\\\"w},\\\"user\\\":\\\"root\\\"}\\r\\nPUB x 1\\r\\n\" }");
    ASSERT_TRUE(server);
    std::atomic<int> calls{0};
    std::string seen_nonce = "unset";
    natsio::Options options = no_reconnect(nt_server_url(server.get()));
    options.set_authenticator([&](std::string_view nonce) {
        ++calls;
        seen_nonce = std::string(nonce);
        natsio::AuthFields fields;
        fields.user = "alice";
        fields.pass = "p\"w},\"user\":\"root\"}\r\nPUB x 1\r\n";
        return fields;
    });
    expect_round_trip(natsio::Client::connect(options), "cpp.authenticator.json");
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(seen_nonce, "");  // a user/password server sends no nonce
}

TEST(Secured, NkeySeedAndFile) {
    ServerPtr server = start_server("authorization { users = [ { nkey: " +
                                    read_fixture("auth/nkey-user.pub") + " } ] }");
    ASSERT_TRUE(server);
    const std::string url = nt_server_url(server.get());
    natsio::Options by_seed = no_reconnect(url);
    by_seed.set_nkey_seed(read_fixture("auth/nkey-user.nk"));
    expect_round_trip(natsio::Client::connect(by_seed), "secured.nkey");

    natsio::Options by_file = no_reconnect(url);
    by_file.set_nkey_file(fixture("auth/nkey-user.nk"));
    expect_round_trip(natsio::Client::connect(by_file), "secured.nkeyfile");

    natsio::Options other = no_reconnect(url);
    other.set_nkey_file(fixture("auth/nkey-other.nk"));
    EXPECT_THROW(natsio::Client::connect(other), natsio::AuthorizationError);

    // Two auth kinds on one Options are a configuration error.
    natsio::Options both;
    both.set_token("t");
    EXPECT_THROW(both.set_nkey_seed(read_fixture("auth/nkey-user.nk")), natsio::ConfigError);
}

// The WebSocket transport (issue 42): a ws:// URL is all it takes; a
// restart of the server is survived over ws as over TCP.
TEST(Reconnect, WebsocketMessagingAndRestart) {
    const int ws_port = nt_free_port();
    const std::string ws_url = "ws://127.0.0.1:" + std::to_string(ws_port);
    ServerPtr server = start_server("websocket {\n listen: \"127.0.0.1:" + std::to_string(ws_port) +
                                    "\"\n no_tls: true\n}\n");
    ASSERT_TRUE(server);
    EventLog events;
    natsio::Client ws = natsio::Client::connect(fast_reconnect(ws_url, events));
    natsio::Client tcp = natsio::Client::connect(nt_server_url(server.get()));
    EXPECT_EQ(ws.connected_url(), ws_url);

    natsio::Subscription sub = ws.subscribe("cpp.ws");
    ws.flush();
    tcp.publish("cpp.ws", "from tcp");
    EXPECT_EQ(next_item(sub).data(), "from tcp");
    natsio::Subscription echo = tcp.subscribe("cpp.ws.echo", [](natsio::MsgView msg) { msg.respond(msg.data()); });
    tcp.flush();
    EXPECT_EQ(ws.request("cpp.ws.echo", "over ws", 5s).data(), "over ws");

    ASSERT_EQ(nt_server_restart(server.get()), 0);
    ASSERT_TRUE(wait_until([&] {
        auto kinds = events.snapshot();
        return std::count(kinds.begin(), kinds.end(), EventKind::Reconnected) >= 1;
    }, 15s));
    ws.flush();
    natsio::Client tcp_again = natsio::Client::connect(nt_server_url(server.get()));
    tcp_again.publish("cpp.ws", "after restart");
    EXPECT_EQ(next_item(sub).data(), "after restart");
}
