/*
 * harness.h - tiny test framework and nats-server launcher for the libnatsio
 * C and C++ test suites.
 *
 * C11 + POSIX (Linux first). The header compiles as C11 and as C++17, both
 * with -Wall -Wextra -Werror -pedantic.
 *
 * Writing a test program
 * ----------------------
 *
 *     #include "harness.h"
 *
 *     static void test_publish(void) {
 *         nt_server *s = nt_server_start(NULL);
 *         NT_CHECK(s != NULL);
 *         nt_cleanup(nt_server_stop_cb, s);   // runs when the case ends
 *         NT_CHECK_INT_EQ(do_something(nt_server_url(s)), 0);
 *         NT_CHECK_STR_EQ(got, "hello");
 *     }
 *
 *     int main(int argc, char **argv) {
 *         static const nt_case cases[] = {
 *             NT_CASE(test_publish),
 *             {"named differently", test_other},
 *         };
 *         return nt_main(argc, argv, cases, NT_COUNT(cases));
 *     }
 *
 * Output, one line each, flushed:  "[ RUN  ] name", "[  OK  ] name",
 * "[ FAIL ] name: file:line: message", and at the end exactly one line
 * "N passed, N failed" (parsed by CI). Exit status is non-zero on any failure.
 * Arguments: case names to run only those (in the table's order);
 * "--list" prints the case names, one a line.
 *
 * Every NT_CHECK* macro records the failure and `return`s from the enclosing
 * function, which must therefore return void. Helpers that return a value can
 * use nt_failed() after calling into checks, e.g. `NT_CHECK(!nt_failed())`.
 * Checks may be used from other threads (callbacks): the failure is recorded
 * against the running case.
 *
 * Each case runs under an alarm-based timeout (default 60 s, env
 * NT_CASE_TIMEOUT in seconds, or nt_set_case_timeout() inside a case). On
 * timeout the program prints "[ FAIL ] name: timed out after N s", kills every
 * nats-server it started, prints the summary line and exits with status 1
 * (remaining cases are not run). The harness uses SIGALRM: tests must not.
 *
 * nats-server launcher
 * --------------------
 *
 * nt_server_start() spawns
 *     nats-server -a 127.0.0.1 -p <free port> -js -sd <tmp>/store [-c <tmp>/server.conf]
 * Binary: env NATS_SERVER_BIN, else NT_REPO_ROOT/.tools/nats-server-<NT_NATS_SERVER_VERSION>/nats-server
 * (NT_REPO_ROOT is a compile definition set by CMake), else `nats-server` on PATH.
 * The temp dir (mkdtemp under $TMPDIR or /tmp) holds the store dir, the
 * config file and server.log (stdout+stderr of the server, appended across
 * restarts). On start failure the tail of the log is printed to stderr.
 *
 * The client port is always owned by the harness: nats-server lets the
 * command-line -a/-p override `listen`/`port` in a config file, so setting
 * them in extra_config has no effect. Other listeners a config declares
 * (cluster, leafnodes, websocket, http monitoring, ...) are owned by the
 * caller: use nt_free_port() to pick their ports.
 *
 * Every started server is SIGKILLed when the test process exits (atexit) or
 * dies from SIGINT/SIGTERM/SIGABRT/SIGSEGV/SIGBUS/SIGALRM-timeout; on Linux the
 * server also gets SIGKILL if the thread that started it dies
 * (PR_SET_DEATHSIG: start servers from the main thread, or from a thread that
 * outlives them). Temp dirs are removed by nt_server_stop(), at exit, on a
 * case timeout and on the signals above (Linux); only a SIGKILLed test process
 * leaves them behind.
 */
#ifndef NT_HARNESS_H
#define NT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NT_NATS_SERVER_VERSION
#define NT_NATS_SERVER_VERSION "2.14.3"
#endif

/* ------------------------------------------------------------------ */
/* nats-server launcher                                                */
/* ------------------------------------------------------------------ */

typedef struct nt_server nt_server;

/* Start a server and wait (up to 10 s) until its port accepts TCP
 * connections. extra_config: NULL, or nats-server config text written to
 * <tmp>/server.conf and passed with -c. Returns NULL (after printing why and
 * the log tail to stderr) on failure. */
nt_server *nt_server_start(const char *extra_config);

/* "nats://127.0.0.1:PORT" */
const char *nt_server_url(const nt_server *s);
int nt_server_port(const nt_server *s);
/* JetStream store dir (-sd); kept across restarts. */
const char *nt_server_store_dir(const nt_server *s);
/* The per-server temp dir (holds store/, server.conf, server.log). */
const char *nt_server_dir(const nt_server *s);
/* Path of the server's stdout/stderr log. */
const char *nt_server_log_path(const nt_server *s);
/* Pid of the running server process, or -1 if it is not running. */
int nt_server_pid(const nt_server *s);
/* True if the server process is running (reaps it if it exited). */
bool nt_server_running(nt_server *s);

/* SIGTERM, wait (10 s, then SIGKILL), remove the temp dir, free. NULL-safe. */
void nt_server_stop(nt_server *s);
/* Same as nt_server_stop, with a signature for nt_cleanup(). */
void nt_server_stop_cb(void *server);
/* SIGKILL the process and reap it; the handle stays valid (for restart/stop). */
void nt_server_kill(nt_server *s);
/* Stop the process if running (SIGTERM, then SIGKILL after 10 s), start it
 * again on the same port, config and store dir, and wait until ready.
 * Returns 0 on success, -1 on failure (message printed). */
int nt_server_restart(nt_server *s);
/* Send a signal to the server process. Returns 0, or -1 if not running.
 * nats-server: SIGUSR2 = lame duck mode (same as `nats-server --signal ldm`),
 * SIGHUP = reload config, SIGUSR1 = reopen log, SIGINT/SIGTERM = graceful
 * stop. Lame duck mode lasts `lame_duck_duration` (default 2m) after a
 * `lame_duck_grace_period` (default 10s): set both in extra_config for tests. */
int nt_server_signal(nt_server *s, int sig);
/* SIGSTOP the server and wait (5 s at most) until every one of its threads
 * is stopped: kill() returns before that, and a thread still running would
 * answer. A paused server accepts TCP connections (the kernel does) but
 * sends nothing. Returns 0 when stopped (also when already paused), -1 if
 * not running or not stopped in time. Stop, kill and restart work on a
 * paused server. */
int nt_server_pause(nt_server *s);
/* SIGCONT a paused server. Returns 0 (also when not paused), -1 if not
 * running. */
int nt_server_resume(nt_server *s);

/* A currently free TCP port on 127.0.0.1 below the kernel's ephemeral range
 * (where no outgoing connection can take it), for a server's listeners;
 * never the same port twice in one process. -1 if none. */
int nt_free_port(void);

/* ------------------------------------------------------------------ */
/* Test runner                                                         */
/* ------------------------------------------------------------------ */

typedef struct {
    const char *name;
    void (*fn)(void);
} nt_case;

#define NT_CASE(fn) { #fn, fn }
#define NT_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* Run all cases (or only those named in argv), print results and the summary
 * line "N passed, N failed". Returns 0 if all passed, 1 otherwise (2 on a
 * usage error such as an unknown case name). */
int nt_main(int argc, char **argv, const nt_case *cases, size_t count);

/* True if the current case has recorded a failure. */
bool nt_failed(void);
/* Name of the running case, or NULL outside nt_main. */
const char *nt_current_case(void);
/* Register fn(arg) to run when the current case ends (pass or fail), in
 * reverse order of registration. Outside a case: runs at nt_main's end. */
void nt_cleanup(void (*fn)(void *), void *arg);
/* Re-arm the current case's timeout to `seconds` from now (0 disables). */
void nt_set_case_timeout(unsigned seconds);

/* Record a failure (printf-style message) against the running case.
 * Used by the macros; may be called directly. Thread-safe. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
void nt_fail_at(const char *file, int line, const char *fmt, ...);

/* Helpers used by the macros. */
bool nt_str_eq_(const char *a, const char *b);
void nt_fail_str_(const char *file, int line, const char *ea, const char *eb,
                  const char *a, const char *b);
bool nt_mem_eq_(const void *a, size_t alen, const void *b, size_t blen);
void nt_fail_mem_(const char *file, int line, const char *ea, const char *eb,
                  const void *a, size_t alen, const void *b, size_t blen);

/* Unconditional failure; returns from the test. NT_FAIL("fmt", args...) */
#define NT_FAIL(...)                                                           \
    do {                                                                       \
        nt_fail_at(__FILE__, __LINE__, __VA_ARGS__);                           \
        return;                                                                \
    } while (0)

#define NT_CHECK(cond)                                                         \
    do {                                                                       \
        if (!(cond)) {                                                         \
            nt_fail_at(__FILE__, __LINE__, "check failed: %s", #cond);         \
            return;                                                            \
        }                                                                      \
    } while (0)

/* NT_CHECK_MSG(cond, "fmt", args...): the format string is the first variadic
 * argument, so the macro is -pedantic clean with or without further args. */
#define NT_CHECK_MSG(cond, ...)                                                \
    do {                                                                       \
        if (!(cond)) {                                                         \
            nt_fail_at(__FILE__, __LINE__, __VA_ARGS__);                       \
            return;                                                            \
        }                                                                      \
    } while (0)

/* Both sides are evaluated once and compared as int64_t. */
#define NT_CHECK_INT_EQ(a, b)                                                  \
    do {                                                                       \
        int64_t nt_a_ = (int64_t)(a);                                          \
        int64_t nt_b_ = (int64_t)(b);                                          \
        if (nt_a_ != nt_b_) {                                                  \
            nt_fail_at(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b,   \
                       (long long)nt_a_, (long long)nt_b_);                    \
            return;                                                            \
        }                                                                      \
    } while (0)

/* NULL-safe: NULL equals only NULL. */
#define NT_CHECK_STR_EQ(a, b)                                                  \
    do {                                                                       \
        const char *nt_a_ = (a);                                               \
        const char *nt_b_ = (b);                                               \
        if (!nt_str_eq_(nt_a_, nt_b_)) {                                       \
            nt_fail_str_(__FILE__, __LINE__, #a, #b, nt_a_, nt_b_);            \
            return;                                                            \
        }                                                                      \
    } while (0)

/* Equal lengths and bytes; on failure prints both (escaped, truncated) and
 * the first differing offset. */
#define NT_CHECK_MEM_EQ(a, alen, b, blen)                                      \
    do {                                                                       \
        const void *nt_a_ = (a);                                               \
        size_t nt_alen_ = (size_t)(alen);                                      \
        const void *nt_b_ = (b);                                               \
        size_t nt_blen_ = (size_t)(blen);                                      \
        if (!nt_mem_eq_(nt_a_, nt_alen_, nt_b_, nt_blen_)) {                   \
            nt_fail_mem_(__FILE__, __LINE__, #a, #b, nt_a_, nt_alen_, nt_b_,   \
                         nt_blen_);                                            \
            return;                                                            \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------------ */
/* Time helpers                                                        */
/* ------------------------------------------------------------------ */

/* Monotonic clock, milliseconds. */
int64_t nt_now_ms(void);
void nt_sleep_ms(int64_t ms);
/* Poll pred(arg) every 2 ms until it returns true (-> true) or timeout_ms
 * elapses (-> false; pred is evaluated one last time at the deadline). */
bool nt_wait_until(bool (*pred)(void *), void *arg, int64_t timeout_ms);

/* ------------------------------------------------------------------ */
/* Fixtures (tests/fixtures/: TLS certificates, NKeys, JWTs, configs)  */
/* ------------------------------------------------------------------ */

/* The repository root: env NT_REPO_ROOT, else the compile-time NT_REPO_ROOT
 * (set by CMake), else ".". */
const char *nt_repo_root(void);
/* Writes "<repo root>/tests/fixtures/<relative>" into buf; returns buf. */
const char *nt_fixture_path(char *buf, size_t cap, const char *relative);
/* The whole file as a NUL-terminated string (malloc'd; free() it), or NULL
 * (with a message on stderr). */
char *nt_read_file(const char *path);
/* Ed25519-signs `len` bytes of `msg` with the key of an NKey seed ("S...",
 * trailing whitespace ignored) into sig_out, as NKeys do: what a NATS
 * client sends as the signature of the server's nonce. False on a malformed
 * seed (bad base32, prefix or checksum). Uses OpenSSL's libcrypto. */
bool nt_nkey_sign(const char *seed, const void *msg, size_t len, uint8_t sig_out[64]);
/* The same signature as CONNECT's `sig` carries it: base64url without
 * padding (86 characters and a NUL). */
#define NT_NKEY_SIG_B64_CAP 88
bool nt_nkey_sign_base64url(const char *seed, const void *msg, size_t len, char sig_out[NT_NKEY_SIG_B64_CAP]);

/* Minting operator-mode credentials at run time (for claims a committed
 * fixture cannot hold, such as an expiry a few seconds from now). */

/* Seeds are 58 characters, public keys 56; with the NUL these fit. */
#define NT_NKEY_SEED_CAP 64
#define NT_NKEY_PUBLIC_CAP 64
/* A fresh random NKey seed of `type`: 'O' operator, 'A' account, 'U' user.
 * False on another type or if the system has no randomness. */
bool nt_nkey_create(char type, char seed_out[NT_NKEY_SEED_CAP]);
/* The public key ("O...", "A...", "U...") of a seed; false on a malformed
 * seed. */
bool nt_nkey_public(const char *seed, char pub_out[NT_NKEY_PUBLIC_CAP]);
/* A NATS JWT: header {"typ":"JWT","alg":"ed25519-nkey"}, `claims_json`
 * as the payload (the caller writes iss, sub, iat, exp, nats...), signed
 * with `issuer_seed`. malloc'd (free() it), or NULL on a malformed seed. */
char *nt_jwt_encode(const char *claims_json, const char *issuer_seed);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NT_HARNESS_H */
