/*
 * harness.c - see harness.h.
 *
 * Compiles as C11 and as C++17 (g++ -x c++), warning-free with
 * -Wall -Wextra -Werror -pedantic. Linux first, POSIX otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* nftw, prctl; implies POSIX 2008 */
#endif

#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#define NT_MAX_SERVERS 256
#define NT_READY_TIMEOUT_MS 10000
#define NT_STOP_TIMEOUT_MS 10000
#define NT_PAUSE_TIMEOUT_MS 5000
#define NT_DEFAULT_CASE_TIMEOUT 60

/* ================================================================== */
/* Utilities                                                           */
/* ================================================================== */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

int64_t nt_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + (int64_t)(ts.tv_nsec / 1000000);
}

void nt_sleep_ms(int64_t ms) {
    if (ms <= 0) return;
    struct timespec req;
    struct timespec rem;
    req.tv_sec = (time_t)(ms / 1000);
    req.tv_nsec = (long)((ms % 1000) * 1000000);
    while (nanosleep(&req, &rem) != 0 && errno == EINTR) req = rem;
}

bool nt_wait_until(bool (*pred)(void *), void *arg, int64_t timeout_ms) {
    int64_t deadline = nt_now_ms() + timeout_ms;
    for (;;) {
        if (pred(arg)) return true;
        if (nt_now_ms() >= deadline) return pred(arg);
        nt_sleep_ms(2);
    }
}

static char *nt_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = (char *)malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static char *nt_path_join(const char *dir, const char *name) {
    size_t n = strlen(dir) + 1 + strlen(name) + 1;
    char *p = (char *)malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Async-signal-safe output helpers. */
static void sig_write(const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

static void sig_write_uint(unsigned long v) {
    char buf[32];
    int i = (int)sizeof(buf) - 1;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + (v % 10));
        v /= 10;
    } while (v > 0 && i > 0);
    sig_write(&buf[i]);
}

/* ================================================================== */
/* Server registry and process-exit cleanup                            */
/* ================================================================== */

struct nt_server {
    int slot;     /* index in g_servers / g_pids */
    pid_t pid;    /* -1 when not running */
    int port;
    char url[64];
    char *bin;
    char *dir;    /* temp dir */
    char *store;  /* dir/store */
    char *conf;   /* dir/server.conf or NULL */
    char *log;    /* dir/server.log */
    bool paused;  /* stopped by nt_server_pause, not yet resumed */
};

static nt_server *g_servers[NT_MAX_SERVERS];       /* guarded by g_lock */
static volatile sig_atomic_t g_pids[NT_MAX_SERVERS]; /* read by signal handlers */
static volatile sig_atomic_t g_owner_pid;           /* process that owns the servers */
static bool g_hooks_installed;                      /* guarded by g_lock */

static const int g_fatal_signals[] = {SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGBUS, SIGQUIT};
#define NT_NUM_FATAL ((int)(sizeof(g_fatal_signals) / sizeof(g_fatal_signals[0])))
static struct sigaction g_old_actions[NT_NUM_FATAL];

/* Temp dir of each registered server, for removal from signal handlers
 * (where nftw/malloc are off limits). Empty string: none. */
static char g_dirs[NT_MAX_SERVERS][512];

#ifdef __linux__
/* Async-signal-safe recursive removal of name (relative to dirfd): only raw
 * syscalls (openat, getdents64, unlinkat, close), no malloc. */
static void sig_remove_tree_at(int dirfd, const char *name, int depth) {
    if (unlinkat(dirfd, name, 0) == 0 || depth > 32) return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    /* Rescan until empty: removing entries while iterating may skip some. */
    for (int pass = 0; pass < 64; pass++) {
        bool removed_any = false;
        bool saw_any = false;
        lseek(fd, 0, SEEK_SET);
        for (;;) {
            char buf[4096];
            long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
            if (n <= 0) break;
            for (long off = 0; off < n;) {
                /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
                unsigned short reclen;
                memcpy(&reclen, buf + off + 16, sizeof(reclen));
                const char *ent = buf + off + 19;
                off += reclen;
                if (reclen == 0) break;
                if (strcmp(ent, ".") == 0 || strcmp(ent, "..") == 0) continue;
                saw_any = true;
                sig_remove_tree_at(fd, ent, depth + 1);
                removed_any = true;
            }
        }
        if (!saw_any || !removed_any) break;
    }
    close(fd);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}
#endif

/* Async-signal-safe: SIGKILL every running server of this process, reap it,
 * and (on Linux) remove its temp dir. */
static void kill_all_servers_now(void) {
    if (g_owner_pid != (sig_atomic_t)getpid()) return; /* a forked child */
    for (int i = 0; i < NT_MAX_SERVERS; i++) {
        pid_t p = (pid_t)g_pids[i];
        if (p > 0) kill(p, SIGKILL);
    }
    for (int i = 0; i < NT_MAX_SERVERS; i++) {
        pid_t p = (pid_t)g_pids[i];
        if (p > 0) {
            while (waitpid(p, NULL, 0) < 0 && errno == EINTR) {
            }
            g_pids[i] = 0;
        }
#ifdef __linux__
        if (g_dirs[i][0] == '/') {
            sig_remove_tree_at(AT_FDCWD, g_dirs[i], 0);
            g_dirs[i][0] = '\0';
        }
#endif
    }
}

static void fatal_signal_handler(int sig) {
    int saved = errno;
    kill_all_servers_now();
    for (int i = 0; i < NT_NUM_FATAL; i++) {
        if (g_fatal_signals[i] == sig) {
            sigaction(sig, &g_old_actions[i], NULL);
            break;
        }
    }
    errno = saved;
    raise(sig); /* delivered with the previous disposition once we return */
}

static int remove_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *dir) {
    if (dir) nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void reap(pid_t pid) {
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

static void atexit_cleanup(void) {
    if (g_owner_pid != (sig_atomic_t)getpid()) return;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < NT_MAX_SERVERS; i++) {
        nt_server *s = g_servers[i];
        if (!s) continue;
        if (s->pid > 0) {
            kill(s->pid, SIGKILL);
            reap(s->pid);
            s->pid = -1;
        }
        g_pids[i] = 0;
        g_dirs[i][0] = '\0';
        remove_tree(s->dir);
        /* The handle is deliberately not freed: other atexit handlers or
         * threads may still hold it. The process is ending anyway. */
    }
    pthread_mutex_unlock(&g_lock);
}

/* Caller holds g_lock. */
static void install_hooks_locked(void) {
    if (g_hooks_installed) {
        if (g_owner_pid != (sig_atomic_t)getpid()) {
            /* We are a forked child: the parent's servers are not ours. */
            for (int i = 0; i < NT_MAX_SERVERS; i++) {
                g_servers[i] = NULL;
                g_pids[i] = 0;
                g_dirs[i][0] = '\0';
            }
            g_owner_pid = (sig_atomic_t)getpid();
        }
        return;
    }
    g_owner_pid = (sig_atomic_t)getpid();
    atexit(atexit_cleanup);
    g_hooks_installed = true;
    for (int i = 0; i < NT_NUM_FATAL; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = fatal_signal_handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;
        sigaction(g_fatal_signals[i], &sa, &g_old_actions[i]);
        if (g_old_actions[i].sa_handler == SIG_IGN && !(g_old_actions[i].sa_flags & SA_SIGINFO))
            sigaction(g_fatal_signals[i], &g_old_actions[i], NULL); /* keep it ignored */
    }
}

static void install_hooks(void) {
    pthread_mutex_lock(&g_lock);
    install_hooks_locked();
    pthread_mutex_unlock(&g_lock);
}

static int register_server(nt_server *s) {
    pthread_mutex_lock(&g_lock);
    install_hooks_locked();
    for (int i = 0; i < NT_MAX_SERVERS; i++) {
        if (!g_servers[i]) {
            g_servers[i] = s;
            s->slot = i;
            if (strlen(s->dir) < sizeof(g_dirs[i])) memcpy(g_dirs[i], s->dir, strlen(s->dir) + 1);
            pthread_mutex_unlock(&g_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&g_lock);
    fprintf(stderr, "nt_server: too many servers (max %d)\n", NT_MAX_SERVERS);
    return -1;
}

static void unregister_server(nt_server *s) {
    pthread_mutex_lock(&g_lock);
    if (s->slot >= 0 && s->slot < NT_MAX_SERVERS && g_servers[s->slot] == s) {
        g_servers[s->slot] = NULL;
        g_pids[s->slot] = 0;
        g_dirs[s->slot][0] = '\0';
    }
    pthread_mutex_unlock(&g_lock);
    s->slot = -1;
}

static void set_pid(nt_server *s, pid_t pid) {
    s->pid = pid;
    if (s->slot >= 0) g_pids[s->slot] = (sig_atomic_t)(pid > 0 ? pid : 0);
}

/* ================================================================== */
/* nats-server launcher                                                */
/* ================================================================== */

static bool is_executable_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static char *resolve_server_binary(void) {
    const char *env = getenv("NATS_SERVER_BIN");
    if (env && *env) {
        if (is_executable_file(env)) return nt_strdup(env);
        fprintf(stderr, "nt_server: NATS_SERVER_BIN=%s is not an executable file\n", env);
        return NULL;
    }
#ifdef NT_REPO_ROOT
    {
        const char *tool = NT_REPO_ROOT "/.tools/nats-server-" NT_NATS_SERVER_VERSION "/nats-server";
        if (is_executable_file(tool)) return nt_strdup(tool);
    }
#endif
    const char *path = getenv("PATH");
    if (path) {
        char *copy = nt_strdup(path);
        char *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
            char *cand = nt_path_join(*d ? d : ".", "nats-server");
            if (cand && is_executable_file(cand)) {
                free(copy);
                return cand;
            }
            free(cand);
        }
        free(copy);
    }
    fprintf(stderr,
            "nt_server: nats-server not found: set NATS_SERVER_BIN or run "
            "scripts/install-nats-server.sh\n");
    return NULL;
}

/* The kernel's ephemeral range (ports bind(0) and outgoing connections get),
 * from /proc on Linux, else Linux's default. */
static void ephemeral_range(int *low, int *high) {
    *low = 32768;
    *high = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (!f) return;
    int lo = 0, hi = 0;
    if (fscanf(f, "%d %d", &lo, &hi) == 2 && lo > 0 && hi >= lo) {
        *low = lo;
        *high = hi;
    }
    fclose(f);
}

static bool port_binds(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)port);
    bool ok = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
    close(fd);
    return ok;
}

/* A port for a server to listen on, picked below the ephemeral range: a port
 * from bind(0) lies inside it, where any outgoing connection (a test's own
 * client) may take it as its local port before the server binds it (a
 * cluster once failed to form that way). Each process walks its own stretch
 * of [NT_PORT_BASE, ephemeral low) from a pid-derived start, so ports never
 * repeat within a process and only another process's server can collide,
 * which the probe and nt_server_start's retry absorb. */
#define NT_PORT_BASE 10000
int nt_free_port(void) {
    int low, high;
    ephemeral_range(&low, &high);
    int span = low - NT_PORT_BASE;
    if (span >= 1000) {
        static unsigned next;
        unsigned start = (unsigned)getpid() * 2654435761u;
        for (int tries = 0; tries < 200; tries++) {
            unsigned n = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
            int port = NT_PORT_BASE + (int)((start + n) % (unsigned)span);
            if (port_binds(port)) return port;
        }
    }
    /* No room below the ephemeral range: let the kernel pick. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    int port = -1;
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    close(fd);
    return port;
}

static bool port_accepts(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)port);
    int rc;
    do {
        rc = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
    } while (rc != 0 && errno == EINTR);
    close(fd);
    return rc == 0;
}

static void print_log_tail(const nt_server *s, int max_lines) {
    FILE *f = fopen(s->log, "rb");
    if (!f) {
        fprintf(stderr, "nt_server: (no log at %s)\n", s->log);
        return;
    }
    char buf[8192];
    long size = 0;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    long start = size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0;
    fseek(f, start, SEEK_SET);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* find the start of the last max_lines lines */
    int lines = 0;
    size_t i = n;
    if (i > 0 && buf[i - 1] == '\n') i--;
    while (i > 0) {
        if (buf[i - 1] == '\n' && ++lines >= max_lines) break;
        i--;
    }
    fprintf(stderr, "---- tail of %s ----\n%s%s---- end of log ----\n", s->log, buf + i,
            (n > 0 && buf[n - 1] != '\n') ? "\n" : "");
}

/* Returns 0, or -1 if the log says the port was taken (to retry), -2 other failure. */
static int spawn_and_wait(nt_server *s) {
    char port_str[16];
    snprintf(port_str, sizeof(port_str), "%d", s->port);
    static char a_flag[] = "-a";
    static char a_val[] = "127.0.0.1";
    static char p_flag[] = "-p";
    static char js_flag[] = "-js";
    static char sd_flag[] = "-sd";
    static char c_flag[] = "-c";
    char *argv[12];
    int argc = 0;
    argv[argc++] = s->bin;
    argv[argc++] = a_flag;
    argv[argc++] = a_val;
    argv[argc++] = p_flag;
    argv[argc++] = port_str;
    argv[argc++] = js_flag;
    argv[argc++] = sd_flag;
    argv[argc++] = s->store;
    if (s->conf) {
        argv[argc++] = c_flag;
        argv[argc++] = s->conf;
    }
    argv[argc] = NULL;

    int logfd = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0) {
        fprintf(stderr, "nt_server: open %s: %s\n", s->log, strerror(errno));
        return -2;
    }
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t parent = getpid();

    /* Only async-signal-safe calls between fork and exec: the test process
     * may be multi-threaded (the library runs its own threads). */
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "nt_server: fork: %s\n", strerror(errno));
        close(logfd);
        if (nullfd >= 0) close(nullfd);
        return -2;
    }
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127); /* parent already gone */
#else
        (void)parent;
#endif
        if (nullfd >= 0) dup2(nullfd, STDIN_FILENO);
        dup2(logfd, STDOUT_FILENO);
        dup2(logfd, STDERR_FILENO);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        for (int sig = 1; sig < 32; sig++) {
            if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(s->bin, argv);
        static const char msg[] = "nt_server: execv of nats-server failed\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void)w;
        _exit(127);
    }
    close(logfd);
    if (nullfd >= 0) close(nullfd);
    set_pid(s, pid);

    int64_t deadline = nt_now_ms() + NT_READY_TIMEOUT_MS;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD)) {
            set_pid(s, -1);
            if (r == pid && WIFEXITED(status))
                fprintf(stderr, "nt_server: nats-server exited with status %d during start\n",
                        WEXITSTATUS(status));
            else if (r == pid && WIFSIGNALED(status))
                fprintf(stderr, "nt_server: nats-server killed by signal %d during start\n",
                        WTERMSIG(status));
            else
                fprintf(stderr, "nt_server: nats-server vanished during start\n");
            /* port race: somebody took the port between probe and bind */
            FILE *f = fopen(s->log, "rb");
            bool in_use = false;
            if (f) {
                char line[1024];
                while (fgets(line, sizeof(line), f))
                    if (strstr(line, "address already in use")) in_use = true;
                fclose(f);
            }
            if (in_use) return -1;
            print_log_tail(s, 30);
            return -2;
        }
        if (port_accepts(s->port)) return 0;
        if (nt_now_ms() >= deadline) {
            fprintf(stderr, "nt_server: nats-server not accepting on port %d after %d ms\n",
                    s->port, NT_READY_TIMEOUT_MS);
            print_log_tail(s, 30);
            kill(pid, SIGKILL);
            reap(pid);
            set_pid(s, -1);
            return -2;
        }
        nt_sleep_ms(10);
    }
}

static void free_server(nt_server *s) {
    free(s->bin);
    free(s->dir);
    free(s->store);
    free(s->conf);
    free(s->log);
    free(s);
}

nt_server *nt_server_start(const char *extra_config) {
    install_hooks();
    nt_server *s = (nt_server *)calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->slot = -1;
    s->pid = -1;
    s->bin = resolve_server_binary();
    if (!s->bin) {
        free_server(s);
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    s->dir = nt_path_join(tmp, "natsio-nt-XXXXXX");
    if (!s->dir || !mkdtemp(s->dir)) {
        fprintf(stderr, "nt_server: mkdtemp under %s: %s\n", tmp, strerror(errno));
        free(s->dir);
        s->dir = NULL;
        free_server(s);
        return NULL;
    }
    s->store = nt_path_join(s->dir, "store");
    s->log = nt_path_join(s->dir, "server.log");
    if (!s->store || !s->log || mkdir(s->store, 0755) != 0) goto fail;
    if (extra_config) {
        s->conf = nt_path_join(s->dir, "server.conf");
        if (!s->conf) goto fail;
        FILE *f = fopen(s->conf, "wb");
        if (!f) {
            fprintf(stderr, "nt_server: write %s: %s\n", s->conf, strerror(errno));
            goto fail;
        }
        size_t len = strlen(extra_config);
        bool ok = fwrite(extra_config, 1, len, f) == len;
        ok = (fputc('\n', f) != EOF) && ok;
        if (fclose(f) != 0 || !ok) goto fail;
    }
    if (register_server(s) != 0) goto fail;

    for (int attempt = 0; attempt < 5; attempt++) {
        s->port = nt_free_port();
        if (s->port <= 0) {
            fprintf(stderr, "nt_server: no free port: %s\n", strerror(errno));
            break;
        }
        snprintf(s->url, sizeof(s->url), "nats://127.0.0.1:%d", s->port);
        int rc = spawn_and_wait(s);
        if (rc == 0) return s;
        if (rc != -1) break;
        fprintf(stderr, "nt_server: port %d taken, retrying\n", s->port);
    }
fail:
    unregister_server(s);
    remove_tree(s->dir);
    free_server(s);
    return NULL;
}

const char *nt_server_url(const nt_server *s) { return s ? s->url : NULL; }
int nt_server_port(const nt_server *s) { return s ? s->port : -1; }
const char *nt_server_store_dir(const nt_server *s) { return s ? s->store : NULL; }
const char *nt_server_dir(const nt_server *s) { return s ? s->dir : NULL; }
const char *nt_server_log_path(const nt_server *s) { return s ? s->log : NULL; }
int nt_server_pid(const nt_server *s) { return (s && s->pid > 0) ? (int)s->pid : -1; }

bool nt_server_running(nt_server *s) {
    if (!s || s->pid <= 0) return false;
    pid_t r = waitpid(s->pid, NULL, WNOHANG);
    if (r == s->pid || (r < 0 && errno == ECHILD)) {
        set_pid(s, -1);
        return false;
    }
    return true;
}

/* SIGTERM, wait up to NT_STOP_TIMEOUT_MS, then SIGKILL; reaps. */
static void terminate_process(nt_server *s) {
    if (s->pid <= 0) return;
    pid_t pid = s->pid;
    kill(pid, SIGTERM);
    /* A paused process acts on SIGTERM only once continued. */
    if (s->paused) kill(pid, SIGCONT);
    s->paused = false;
    int64_t deadline = nt_now_ms() + NT_STOP_TIMEOUT_MS;
    for (;;) {
        pid_t r = waitpid(pid, NULL, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD)) break;
        if (nt_now_ms() >= deadline) {
            fprintf(stderr, "nt_server: pid %d ignored SIGTERM for %d ms, killing\n", (int)pid,
                    NT_STOP_TIMEOUT_MS);
            kill(pid, SIGKILL);
            reap(pid);
            break;
        }
        nt_sleep_ms(5);
    }
    set_pid(s, -1);
}

void nt_server_stop(nt_server *s) {
    if (!s) return;
    terminate_process(s);
    unregister_server(s);
    remove_tree(s->dir);
    free_server(s);
}

void nt_server_stop_cb(void *server) { nt_server_stop((nt_server *)server); }

void nt_server_kill(nt_server *s) {
    if (!s || s->pid <= 0) return;
    kill(s->pid, SIGKILL);
    reap(s->pid);
    set_pid(s, -1);
    s->paused = false;
}

int nt_server_restart(nt_server *s) {
    if (!s) return -1;
    terminate_process(s);
    int rc = spawn_and_wait(s);
    if (rc != 0) {
        if (rc == -1) print_log_tail(s, 30);
        fprintf(stderr, "nt_server: restart on port %d failed\n", s->port);
        return -1;
    }
    return 0;
}

int nt_server_signal(nt_server *s, int sig) {
    if (!s || s->pid <= 0) return -1;
    return kill(s->pid, sig) == 0 ? 0 : -1;
}

int nt_server_pause(nt_server *s) {
    if (!s || s->pid <= 0) return -1;
    if (s->paused) return 0;
    if (kill(s->pid, SIGSTOP) != 0) return -1;
    s->paused = true;
    /* kill() returns once one thread is told; the others run on until the
     * group stop completes, which waitpid reports (WUNTRACED). */
    int64_t deadline = nt_now_ms() + NT_PAUSE_TIMEOUT_MS;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(s->pid, &status, WUNTRACED | WNOHANG);
        if (r == s->pid && WIFSTOPPED(status)) return 0;
        if (r == s->pid || (r < 0 && errno == ECHILD)) {
            set_pid(s, -1);
            s->paused = false;
            fprintf(stderr, "nt_server: pid exited while being paused\n");
            return -1;
        }
        if (nt_now_ms() >= deadline) {
            fprintf(stderr, "nt_server: pid %d not stopped %d ms after SIGSTOP\n", (int)s->pid,
                    NT_PAUSE_TIMEOUT_MS);
            return -1;
        }
        nt_sleep_ms(1);
    }
}

int nt_server_resume(nt_server *s) {
    if (!s || s->pid <= 0) return -1;
    if (!s->paused) return 0;
    s->paused = false;
    return kill(s->pid, SIGCONT) == 0 ? 0 : -1;
}

/* ================================================================== */
/* Test runner                                                         */
/* ================================================================== */

typedef struct {
    void (*fn)(void *);
    void *arg;
} nt_cleanup_entry;

static const char *volatile g_case_name;      /* current case */
static volatile sig_atomic_t g_case_failed;   /* guarded by g_lock for writes */
static volatile sig_atomic_t g_n_passed;
static volatile sig_atomic_t g_n_failed;
static volatile sig_atomic_t g_case_timeout;  /* seconds armed for the current case */
static int g_outside_failures;                /* failures outside any case */
static nt_cleanup_entry *g_cleanups;          /* guarded by g_lock */
static size_t g_cleanups_len, g_cleanups_cap;

bool nt_failed(void) { return g_case_failed != 0; }
const char *nt_current_case(void) { return g_case_name; }

void nt_fail_at(const char *file, int line, const char *fmt, ...) {
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_lock);
    const char *name = g_case_name;
    if (!name) {
        g_outside_failures++;
        fprintf(stdout, "[ FAIL ] (outside a case): %s:%d: %s\n", file, line, msg);
    } else if (!g_case_failed) {
        g_case_failed = 1;
        fprintf(stdout, "[ FAIL ] %s: %s:%d: %s\n", name, file, line, msg);
    } else {
        fprintf(stdout, "         also: %s:%d: %s\n", file, line, msg);
    }
    fflush(stdout);
    pthread_mutex_unlock(&g_lock);
}

bool nt_str_eq_(const char *a, const char *b) {
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

void nt_fail_str_(const char *file, int line, const char *ea, const char *eb, const char *a,
                  const char *b) {
    nt_fail_at(file, line, "%s == %s: %s%s%s != %s%s%s", ea, eb, a ? "\"" : "", a ? a : "NULL",
               a ? "\"" : "", b ? "\"" : "", b ? b : "NULL", b ? "\"" : "");
}

bool nt_mem_eq_(const void *a, size_t alen, const void *b, size_t blen) {
    if (alen != blen) return false;
    if (alen == 0) return true;
    if (!a || !b) return a == b;
    return memcmp(a, b, alen) == 0;
}

/* Escape up to 64 bytes of p into out. */
static void escape_bytes(char *out, size_t outsz, const void *p, size_t len) {
    const unsigned char *s = (const unsigned char *)p;
    size_t o = 0;
    if (!p) {
        snprintf(out, outsz, "NULL");
        return;
    }
    size_t lim = len < 64 ? len : 64;
    out[o++] = '"';
    for (size_t i = 0; i < lim && o + 8 < outsz; i++) {
        unsigned char c = s[i];
        if (c == '\r') o += (size_t)snprintf(out + o, outsz - o, "\\r");
        else if (c == '\n') o += (size_t)snprintf(out + o, outsz - o, "\\n");
        else if (c == '\t') o += (size_t)snprintf(out + o, outsz - o, "\\t");
        else if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, outsz - o, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f) out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", c);
    }
    snprintf(out + o, outsz - o, "\"%s", len > lim ? "..." : "");
}

void nt_fail_mem_(const char *file, int line, const char *ea, const char *eb, const void *a,
                  size_t alen, const void *b, size_t blen) {
    char sa[512];
    char sb[512];
    escape_bytes(sa, sizeof(sa), a, alen);
    escape_bytes(sb, sizeof(sb), b, blen);
    size_t diff = 0;
    if (a && b) {
        const unsigned char *pa = (const unsigned char *)a;
        const unsigned char *pb = (const unsigned char *)b;
        size_t m = alen < blen ? alen : blen;
        while (diff < m && pa[diff] == pb[diff]) diff++;
    }
    nt_fail_at(file, line, "%s == %s: %s (len %zu) != %s (len %zu), first difference at offset %zu",
               ea, eb, sa, alen, sb, blen, diff);
}

void nt_cleanup(void (*fn)(void *), void *arg) {
    pthread_mutex_lock(&g_lock);
    if (g_cleanups_len == g_cleanups_cap) {
        size_t cap = g_cleanups_cap ? g_cleanups_cap * 2 : 16;
        nt_cleanup_entry *n =
            (nt_cleanup_entry *)realloc(g_cleanups, cap * sizeof(nt_cleanup_entry));
        if (!n) {
            pthread_mutex_unlock(&g_lock);
            fprintf(stderr, "nt_cleanup: out of memory; running cleanup now\n");
            fn(arg);
            return;
        }
        g_cleanups = n;
        g_cleanups_cap = cap;
    }
    g_cleanups[g_cleanups_len].fn = fn;
    g_cleanups[g_cleanups_len].arg = arg;
    g_cleanups_len++;
    pthread_mutex_unlock(&g_lock);
}

static void run_cleanups(void) {
    for (;;) {
        pthread_mutex_lock(&g_lock);
        if (g_cleanups_len == 0) {
            pthread_mutex_unlock(&g_lock);
            return;
        }
        nt_cleanup_entry e = g_cleanups[--g_cleanups_len];
        pthread_mutex_unlock(&g_lock);
        e.fn(e.arg);
    }
}

static void timeout_handler(int sig) {
    (void)sig;
    const char *name = g_case_name;
    sig_write("[ FAIL ] ");
    sig_write(name ? name : "(unknown)");
    sig_write(": timed out after ");
    sig_write_uint((unsigned long)g_case_timeout);
    sig_write(" s (remaining cases not run)\n");
    kill_all_servers_now();
    sig_write_uint((unsigned long)g_n_passed);
    sig_write(" passed, ");
    sig_write_uint((unsigned long)g_n_failed + 1);
    sig_write(" failed\n");
    _exit(1);
}

void nt_set_case_timeout(unsigned seconds) {
    g_case_timeout = (sig_atomic_t)seconds;
    alarm(seconds);
}

static unsigned default_case_timeout(void) {
    const char *env = getenv("NT_CASE_TIMEOUT");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end && *end == '\0' && v >= 0 && v < 100000) return (unsigned)v;
        fprintf(stderr, "nt_main: ignoring bad NT_CASE_TIMEOUT=%s\n", env);
    }
    return NT_DEFAULT_CASE_TIMEOUT;
}

int nt_main(int argc, char **argv, const nt_case *cases, size_t count) {
    bool *selected = (bool *)calloc(count ? count : 1, sizeof(bool));
    if (!selected) return 2;
    bool any_named = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            for (size_t c = 0; c < count; c++) printf("%s\n", cases[c].name);
            free(selected);
            return 0;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s [--list] [case-name...]\n", argv[0]);
            free(selected);
            return 0;
        }
        bool found = false;
        for (size_t c = 0; c < count; c++) {
            if (strcmp(cases[c].name, argv[i]) == 0) {
                selected[c] = true;
                found = true;
            }
        }
        if (!found) {
            fprintf(stderr, "%s: unknown case '%s' (use --list)\n", argv[0], argv[i]);
            free(selected);
            return 2;
        }
        any_named = true;
    }

    install_hooks();
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = timeout_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    unsigned timeout = default_case_timeout();

    /* Cleanups registered outside a case run after the last case. */
    for (size_t c = 0; c < count; c++) {
        if (any_named && !selected[c]) continue;
        printf("[ RUN  ] %s\n", cases[c].name);
        fflush(stdout);
        pthread_mutex_lock(&g_lock);
        g_case_name = cases[c].name;
        g_case_failed = 0;
        nt_cleanup_entry *saved = g_cleanups;
        size_t saved_len = g_cleanups_len;
        size_t saved_cap = g_cleanups_cap;
        g_cleanups = NULL; /* fresh stack for this case */
        g_cleanups_len = g_cleanups_cap = 0;
        pthread_mutex_unlock(&g_lock);

        nt_set_case_timeout(timeout);
        cases[c].fn();
        run_cleanups();
        alarm(0);

        pthread_mutex_lock(&g_lock);
        free(g_cleanups);
        g_cleanups = saved;
        g_cleanups_len = saved_len;
        g_cleanups_cap = saved_cap;
        bool failed = g_case_failed != 0;
        if (failed) g_n_failed = g_n_failed + 1;
        else g_n_passed = g_n_passed + 1;
        if (!failed) printf("[  OK  ] %s\n", cases[c].name);
        fflush(stdout);
        g_case_name = NULL;
        pthread_mutex_unlock(&g_lock);
    }
    run_cleanups();
    free(selected);

    int failed = (int)g_n_failed + g_outside_failures;
    printf("%d passed, %d failed\n", (int)g_n_passed, failed);
    fflush(stdout);
    return failed ? 1 : 0;
}
