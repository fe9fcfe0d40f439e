/*
 * fixtures.c - locating and reading the committed test fixtures
 * (tests/fixtures/) from the C and C++ suites.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

const char *nt_repo_root(void) {
    const char *env = getenv("NT_REPO_ROOT");
    if (env && *env) return env;
#ifdef NT_REPO_ROOT
    return NT_REPO_ROOT;
#else
    return ".";
#endif
}

const char *nt_fixture_path(char *buf, size_t cap, const char *relative) {
    snprintf(buf, cap, "%s/tests/fixtures/%s", nt_repo_root(), relative);
    return buf;
}

char *nt_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "nt_read_file: cannot open %s\n", path);
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *data = (char *)malloc(cap);
    while (data) {
        if (len + 1 == cap) {
            char *bigger = (char *)realloc(data, cap * 2);
            if (!bigger) {
                free(data);
                data = NULL;
                break;
            }
            data = bigger;
            cap *= 2;
        }
        size_t got = fread(data + len, 1, cap - len - 1, f);
        if (got == 0) break;
        len += got;
    }
    if (data && ferror(f)) {
        free(data);
        data = NULL;
    }
    fclose(f);
    if (data) data[len] = '\0';
    return data;
}
