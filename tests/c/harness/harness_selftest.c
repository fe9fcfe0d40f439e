/*
 * Self-test of the harness: the nats-server launcher (start, INFO over a plain
 * TCP socket, config, kill/restart, lame duck signal) and the runner itself
 * (check macros, case filter, cleanups, timeout), the latter by re-running
 * this binary with NT_SELFTEST_INNER set and inspecting its output; and the
 * fixture helpers (nt_read_file, nt_nkey_sign).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- tiny socket helpers ------------------------------------------------ */

static int tcp_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read one CRLF-terminated line (without CRLF) into buf. Returns length, -1
 * on error/EOF/timeout. */
static int read_line(int fd, char *buf, size_t cap, int timeout_ms) {
    size_t n = 0;
    int64_t deadline = nt_now_ms() + timeout_ms;
    while (n + 1 < cap) {
        int64_t left = deadline - nt_now_ms();
        if (left <= 0) return -1;
        struct pollfd p;
        p.fd = fd;
        p.events = POLLIN;
        p.revents = 0;
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        char c;
        ssize_t got = read(fd, &c, 1);
        if (got <= 0) return -1;
        if (c == '\n') {
            if (n > 0 && buf[n - 1] == '\r') n--;
            buf[n] = '\0';
            return (int)n;
        }
        buf[n++] = c;
    }
    return -1;
}

static bool write_all(int fd, const char *s) {
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w <= 0) return false;
        s += w;
        len -= (size_t)w;
    }
    return true;
}

static bool port_refuses(void *arg) {
    int fd = tcp_connect(*(int *)arg);
    if (fd >= 0) {
        close(fd);
        return false;
    }
    return true;
}

static bool pid_gone(void *arg) { return kill(*(pid_t *)arg, 0) != 0 && errno == ESRCH; }

/* ---- launcher cases ----------------------------------------------------- */

static void test_start_and_info(void) {
    nt_server *s = nt_server_start(NULL);
    NT_CHECK(s != NULL);
    nt_cleanup(nt_server_stop_cb, s);

    char expect_url[64];
    snprintf(expect_url, sizeof(expect_url), "nats://127.0.0.1:%d", nt_server_port(s));
    NT_CHECK_STR_EQ(nt_server_url(s), expect_url);
    NT_CHECK(nt_server_port(s) > 0);
    NT_CHECK(nt_server_pid(s) > 0);
    NT_CHECK(nt_server_running(s));
    struct stat st;
    NT_CHECK(stat(nt_server_store_dir(s), &st) == 0 && S_ISDIR(st.st_mode));

    int fd = tcp_connect(nt_server_port(s));
    NT_CHECK_MSG(fd >= 0, "connect to %s: %s", nt_server_url(s), strerror(errno));
    char line[4096];
    int n = read_line(fd, line, sizeof(line), 5000);
    close(fd);
    NT_CHECK_MSG(n > 0, "no INFO line from server");
    NT_CHECK_MEM_EQ(line, 6, "INFO {", 6);
    char port_field[32];
    snprintf(port_field, sizeof(port_field), "\"port\":%d", nt_server_port(s));
    NT_CHECK_MSG(strstr(line, port_field) != NULL, "INFO lacks %s: %s", port_field, line);
    NT_CHECK_MSG(strstr(line, "\"jetstream\":true") != NULL, "JetStream not enabled: %s", line);
}

static void test_two_servers_distinct(void) {
    nt_server *a = nt_server_start(NULL);
    NT_CHECK(a != NULL);
    nt_cleanup(nt_server_stop_cb, a);
    nt_server *b = nt_server_start(NULL);
    NT_CHECK(b != NULL);
    nt_cleanup(nt_server_stop_cb, b);
    NT_CHECK(nt_server_port(a) != nt_server_port(b));
    NT_CHECK(strcmp(nt_server_store_dir(a), nt_server_store_dir(b)) != 0);
}

static void test_extra_config(void) {
    /* The harness owns the client port: `port` in the config is overridden. */
    nt_server *s = nt_server_start("max_payload: 4321\nport: 1\n");
    NT_CHECK(s != NULL);
    nt_cleanup(nt_server_stop_cb, s);
    int fd = tcp_connect(nt_server_port(s));
    NT_CHECK(fd >= 0);
    char line[4096];
    int n = read_line(fd, line, sizeof(line), 5000);
    close(fd);
    NT_CHECK(n > 0);
    NT_CHECK_MSG(strstr(line, "\"max_payload\":4321") != NULL, "config not applied: %s", line);
}

static void test_kill_restart(void) {
    nt_server *s = nt_server_start(NULL);
    NT_CHECK(s != NULL);
    nt_cleanup(nt_server_stop_cb, s);
    int port = nt_server_port(s);
    char store[1024];
    snprintf(store, sizeof(store), "%s", nt_server_store_dir(s));

    nt_server_kill(s);
    NT_CHECK(!nt_server_running(s));
    NT_CHECK_INT_EQ(nt_server_pid(s), -1);
    NT_CHECK(nt_wait_until(port_refuses, &port, 2000));

    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK_INT_EQ(nt_server_port(s), port);
    NT_CHECK_STR_EQ(nt_server_store_dir(s), store);
    int fd = tcp_connect(port);
    NT_CHECK(fd >= 0);
    char line[4096];
    int n = read_line(fd, line, sizeof(line), 5000);
    NT_CHECK_MSG(n > 0 && strncmp(line, "INFO {", 6) == 0, "bad greeting after restart");

    /* restart while running: graceful stop, then start again; the old
     * connection is closed by the server. */
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    n = read_line(fd, line, sizeof(line), 5000);
    close(fd);
    NT_CHECK_MSG(n < 0, "old connection still open after restart: %s", line);
    fd = tcp_connect(port);
    NT_CHECK(fd >= 0);
    close(fd);
}

static void test_stop_removes_dir(void) {
    nt_server *s = nt_server_start(NULL);
    NT_CHECK(s != NULL);
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", nt_server_dir(s));
    int port = nt_server_port(s);
    pid_t pid = (pid_t)nt_server_pid(s);
    nt_server_stop(s);
    struct stat st;
    NT_CHECK_MSG(stat(dir, &st) != 0, "%s still exists", dir);
    NT_CHECK(pid_gone(&pid));
    NT_CHECK(port_refuses(&port));
}

static void test_lame_duck_signal(void) {
    /* lame_duck_duration has a 30 s minimum; the grace period does not. */
    nt_server *s = nt_server_start("lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"");
    NT_CHECK(s != NULL);
    nt_cleanup(nt_server_stop_cb, s);
    int fd = tcp_connect(nt_server_port(s));
    NT_CHECK(fd >= 0);
    char line[4096];
    NT_CHECK(read_line(fd, line, sizeof(line), 5000) > 0);
    NT_CHECK(write_all(fd, "CONNECT {\"verbose\":false,\"protocol\":1}\r\nPING\r\n"));
    NT_CHECK(read_line(fd, line, sizeof(line), 5000) > 0);
    NT_CHECK_STR_EQ(line, "PONG");

    NT_CHECK_INT_EQ(nt_server_signal(s, SIGUSR2), 0);
    bool saw_ldm = false;
    while (read_line(fd, line, sizeof(line), 5000) > 0) {
        if (strncmp(line, "INFO ", 5) == 0 && strstr(line, "\"ldm\":true")) saw_ldm = true;
    }
    close(fd); /* server closes clients after the grace period, then exits */
    NT_CHECK_MSG(saw_ldm, "no INFO with \"ldm\":true after SIGUSR2");
    int64_t deadline = nt_now_ms() + 5000;
    while (nt_server_running(s) && nt_now_ms() < deadline) nt_sleep_ms(10);
    NT_CHECK_MSG(!nt_server_running(s), "server still running after lame duck");
}

/* ---- runner cases (run this binary again as a child) -------------------- */

static int run_self(const char *mode, const char *args, char *out, size_t cap) {
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0) return -1;
    exe[len] = '\0';
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "exec env NT_SELFTEST_INNER=%s '%s' %s", mode, exe, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

#define CHECK_HAS(hay, needle)                                                           \
    NT_CHECK_MSG(strstr((hay), (needle)) != NULL, "output lacks <%s>:\n%s", (needle), (hay))

static void test_runner_reports_failures(void) {
    static char out[16384];
    int rc = run_self("checks", "", out, sizeof(out));
    NT_CHECK_INT_EQ(rc, 1);
    CHECK_HAS(out, "[ RUN  ] inner_pass\n[  OK  ] inner_pass\n");
    CHECK_HAS(out, "[ FAIL ] inner_check: ");
    CHECK_HAS(out, "check failed: 1 + 1 == 3");
    CHECK_HAS(out, "2 + 2 == 5: 4 != 5");
    CHECK_HAS(out, "\"abc\" != NULL");
    CHECK_HAS(out, "\"a\\r\\nb\" (len 4) != \"a\\r\\nc\" (len 4), first difference at offset 3");
    CHECK_HAS(out, "value was 7");
    CHECK_HAS(out, "[ FAIL ] inner_msg_plain: ");
    CHECK_HAS(out, "cleanup 2\ncleanup 1\n");
    NT_CHECK_MSG(strstr(out, "NOT REACHED") == NULL, "check did not return:\n%s", out);
    CHECK_HAS(out, "\n1 passed, 6 failed\n");
}

static void test_runner_filter(void) {
    static char out[16384];
    NT_CHECK_INT_EQ(run_self("checks", "inner_pass", out, sizeof(out)), 0);
    NT_CHECK_STR_EQ(out, "[ RUN  ] inner_pass\n[  OK  ] inner_pass\n1 passed, 0 failed\n");
    NT_CHECK_INT_EQ(run_self("checks", "no_such_case 2>/dev/null", out, sizeof(out)), 2);
    NT_CHECK_INT_EQ(run_self("checks", "--list", out, sizeof(out)), 0);
    CHECK_HAS(out, "inner_pass\ninner_check\n");
}

static void test_runner_timeout_kills_servers(void) {
    static char out[16384];
    int rc = run_self("timeout", "", out, sizeof(out));
    NT_CHECK_INT_EQ(rc, 1);
    CHECK_HAS(out, "[ FAIL ] inner_hang: timed out after 1 s");
    CHECK_HAS(out, "\n0 passed, 1 failed\n");
    NT_CHECK_MSG(strstr(out, "inner_never_run") == NULL, "ran past the timeout:\n%s", out);
    const char *p = strstr(out, "server pid ");
    NT_CHECK_MSG(p != NULL, "inner did not report its server pid:\n%s", out);
    pid_t pid = 0;
    char dir[1024];
    NT_CHECK(sscanf(p, "server pid %d dir %1023s", &pid, dir) == 2);
    NT_CHECK(pid > 0);
    NT_CHECK_MSG(pid_gone(&pid), "server pid %d survived the timeout", (int)pid);
    struct stat st;
    NT_CHECK_MSG(stat(dir, &st) != 0, "temp dir %s survived the timeout", dir);
}

static void test_fatal_signal_kills_servers(void) {
    static char out[16384];
    int rc = run_self("sigterm", "", out, sizeof(out));
    NT_CHECK_MSG(rc != 0, "inner exited 0:\n%s", out);
    NT_CHECK_MSG(strstr(out, "NOT REACHED") == NULL, "survived SIGTERM:\n%s", out);
    const char *p = strstr(out, "server pid ");
    NT_CHECK_MSG(p != NULL, "inner did not report its server pid:\n%s", out);
    pid_t pid = 0;
    char dir[1024];
    NT_CHECK(sscanf(p, "server pid %d dir %1023s", &pid, dir) == 2);
    NT_CHECK_MSG(pid_gone(&pid), "server pid %d survived SIGTERM", (int)pid);
    struct stat st;
    NT_CHECK_MSG(stat(dir, &st) != 0, "temp dir %s survived SIGTERM", dir);
}

/* ---- inner programs ------------------------------------------------------ */

/* ---- fixtures and NKey signing -------------------------------------------- */

static void test_fixtures_and_nkey_sign(void) {
    char path[1024];
    char *ca = nt_read_file(nt_fixture_path(path, sizeof path, "tls/ca.pem"));
    NT_CHECK_MSG(ca != NULL, "cannot read %s", path);
    bool pem = strncmp(ca, "-----BEGIN CERTIFICATE-----", 27) == 0;
    free(ca);
    NT_CHECK(pem);
    NT_CHECK(nt_read_file(nt_fixture_path(path, sizeof path, "no/such/file")) == NULL);

    char *seed = nt_read_file(nt_fixture_path(path, sizeof path, "auth/nkey-user.nk"));
    char *pub = nt_read_file(nt_fixture_path(path, sizeof path, "auth/nkey-user.pub"));
    if (!seed || !pub) {
        free(seed);
        free(pub);
        NT_FAIL("NKey fixtures missing");
    }
    uint8_t a[64], b[64], c[64];
    /* Ed25519 is deterministic: same key and message, same signature. The
     * trailing newline of the file is ignored. */
    bool signed_all = nt_nkey_sign(seed, "nonce-1", 7, a) && nt_nkey_sign(seed, "nonce-1", 7, b) &&
                      nt_nkey_sign(seed, "nonce-2", 7, c);
    bool deterministic = memcmp(a, b, 64) == 0;
    bool message_bound = memcmp(a, c, 64) != 0;
    /* Not seeds: a public key, garbage, a broken checksum. */
    uint8_t unused[64];
    bool pub_refused = !nt_nkey_sign(pub, "x", 1, unused);
    char corrupted[128];
    snprintf(corrupted, sizeof corrupted, "%s", seed);
    corrupted[20] = corrupted[20] == 'A' ? 'B' : 'A';
    bool corrupted_refused = !nt_nkey_sign(corrupted, "x", 1, unused);
    free(seed);
    free(pub);
    NT_CHECK(signed_all);
    NT_CHECK(deterministic);
    NT_CHECK(message_bound);
    NT_CHECK(pub_refused);
    NT_CHECK(corrupted_refused);
    NT_CHECK(!nt_nkey_sign("SUnotaseed", "x", 1, unused));
    NT_CHECK(!nt_nkey_sign(NULL, "x", 1, unused));
}

/* Minted keys: public keys match the fixtures made by the Go nkeys module,
 * new seeds have the asked type, and a JWT is header.claims.signature
 * (test_auth.c proves a server accepts the signatures). */
static void test_nkey_and_jwt_minting(void) {
    char path[1024];
    char *seed = nt_read_file(nt_fixture_path(path, sizeof path, "auth/nkey-user.nk"));
    char *pub = nt_read_file(nt_fixture_path(path, sizeof path, "auth/nkey-user.pub"));
    char derived[NT_NKEY_PUBLIC_CAP];
    bool derived_ok = seed && pub && nt_nkey_public(seed, derived);
    bool same = derived_ok && strncmp(derived, pub, strlen(derived)) == 0 && strlen(derived) == 56;
    free(seed);
    free(pub);
    NT_CHECK(derived_ok);
    NT_CHECK_MSG(same, "derived public key %s differs from the fixture's", derived);

    static const char types[] = {'O', 'A', 'U'};
    for (size_t i = 0; i < sizeof types; i++) {
        char s1[NT_NKEY_SEED_CAP], s2[NT_NKEY_SEED_CAP], p1[NT_NKEY_PUBLIC_CAP];
        NT_CHECK(nt_nkey_create(types[i], s1) && nt_nkey_create(types[i], s2));
        NT_CHECK_INT_EQ(strlen(s1), 58);
        NT_CHECK(s1[0] == 'S' && s1[1] == types[i]);
        NT_CHECK(strcmp(s1, s2) != 0);
        NT_CHECK(nt_nkey_public(s1, p1));
        NT_CHECK_INT_EQ(strlen(p1), 56);
        NT_CHECK(p1[0] == types[i]);
    }
    char unused[NT_NKEY_SEED_CAP];
    NT_CHECK(!nt_nkey_create('X', unused));
    NT_CHECK(!nt_nkey_public("SUnotaseed", unused));

    char account[NT_NKEY_SEED_CAP];
    NT_CHECK(nt_nkey_create('A', account));
    char *jwt = nt_jwt_encode("{\"sub\":\"x\"}", account);
    NT_CHECK(jwt != NULL);
    char copy[512];
    snprintf(copy, sizeof copy, "%s", jwt);
    free(jwt);
    /* eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ is the header every
     * NATS JWT starts with; eyJzdWIiOiJ4In0 is {"sub":"x"}. */
    const char *dot2 = strrchr(copy, '.');
    NT_CHECK(dot2 != NULL);
    NT_CHECK(strncmp(copy, "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJ4In0.",
                     (size_t)(dot2 - copy) + 1) == 0);
    NT_CHECK_INT_EQ(strlen(dot2 + 1), 86); /* 64 bytes, unpadded */
    NT_CHECK(nt_jwt_encode("{}", "SUnotaseed") == NULL);
}

static void inner_pass(void) { NT_CHECK(1); }
static void inner_check(void) {
    NT_CHECK(1 + 1 == 3);
    printf("NOT REACHED\n");
}
static void inner_int(void) { NT_CHECK_INT_EQ(2 + 2, 5); }
static void inner_str(void) {
    const char *null_str = NULL;
    NT_CHECK_STR_EQ(null_str, null_str);
    NT_CHECK_STR_EQ("abc", null_str);
}
static void inner_mem(void) { NT_CHECK_MEM_EQ("a\r\nb", 4, "a\r\nc", 4); }
static void inner_msg(void) { NT_CHECK_MSG(0, "value was %d", 7); }
static void print_cleanup(void *arg) { printf("cleanup %s\n", (const char *)arg); }
static void inner_msg_plain(void) {
    static char one[] = "1";
    static char two[] = "2";
    nt_cleanup(print_cleanup, one);
    nt_cleanup(print_cleanup, two);
    NT_CHECK_MSG(false, "plain message");
}

static void inner_hang(void) {
    nt_server *s = nt_server_start(NULL);
    NT_CHECK(s != NULL);
    printf("server pid %d dir %s\n", nt_server_pid(s), nt_server_dir(s));
    fflush(stdout);
    nt_sleep_ms(30000);
}
static void inner_sigterm(void) {
    nt_server *s = nt_server_start(NULL);
    NT_CHECK(s != NULL);
    printf("server pid %d dir %s\n", nt_server_pid(s), nt_server_dir(s));
    fflush(stdout);
    raise(SIGTERM);
    printf("NOT REACHED\n");
}
static void inner_never_run(void) {}

int main(int argc, char **argv) {
    const char *inner = getenv("NT_SELFTEST_INNER");
    if (inner && strcmp(inner, "checks") == 0) {
        static const nt_case cases[] = {
            NT_CASE(inner_pass), NT_CASE(inner_check), NT_CASE(inner_int),
            NT_CASE(inner_str),  NT_CASE(inner_mem),   NT_CASE(inner_msg),
            NT_CASE(inner_msg_plain),
        };
        return nt_main(argc, argv, cases, NT_COUNT(cases));
    }
    if (inner && strcmp(inner, "timeout") == 0) {
        setenv("NT_CASE_TIMEOUT", "1", 1);
        static const nt_case cases[] = {NT_CASE(inner_hang), NT_CASE(inner_never_run)};
        return nt_main(argc, argv, cases, NT_COUNT(cases));
    }
    if (inner && strcmp(inner, "sigterm") == 0) {
        static const nt_case cases[] = {NT_CASE(inner_sigterm)};
        return nt_main(argc, argv, cases, NT_COUNT(cases));
    }
    static const nt_case cases[] = {
        NT_CASE(test_nkey_and_jwt_minting),
        NT_CASE(test_start_and_info),
        NT_CASE(test_two_servers_distinct),
        NT_CASE(test_extra_config),
        NT_CASE(test_kill_restart),
        NT_CASE(test_stop_removes_dir),
        NT_CASE(test_lame_duck_signal),
        NT_CASE(test_runner_reports_failures),
        NT_CASE(test_runner_filter),
        NT_CASE(test_runner_timeout_kills_servers),
        NT_CASE(test_fatal_signal_kills_servers),
        NT_CASE(test_fixtures_and_nkey_sign),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
