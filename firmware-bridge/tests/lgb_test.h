/*
 * lgb_test.h -- a nanopb-style minimal test harness for the host unit tests.
 *
 * Why not Unity: one header, no vendored code, and the summary line
 * "N passed, N failed" that CI parsers read. TEST(name) defines a test;
 * RUN(name) runs it; CHECK* record failures with file:line and go on.
 * Also: hex parsing and a vector-file line reader shared by the tests.
 */
#ifndef LGB_TEST_H
#define LGB_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lgbt_failures;    /* failed checks in the current test */
static int lgbt_passed;
static int lgbt_failed;
static const char *lgbt_name;

#define TEST(name) static void name(void)

#define RUN(name)                                                                                                     \
    do {                                                                                                              \
        lgbt_failures = 0;                                                                                            \
        lgbt_name = #name;                                                                                            \
        name();                                                                                                       \
        if (lgbt_failures == 0) {                                                                                     \
            lgbt_passed++;                                                                                            \
        } else {                                                                                                      \
            lgbt_failed++;                                                                                            \
            printf("FAIL %s\n", #name);                                                                               \
        }                                                                                                             \
    } while (0)

#define CHECK(cond)                                                                                                   \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            lgbt_failures++;                                                                                          \
            if (lgbt_failures <= 20) {                                                                                \
                printf("  %s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, lgbt_name, #cond);                     \
            }                                                                                                         \
        }                                                                                                             \
    } while (0)

#define CHECK_EQ(a, b)                                                                                                \
    do {                                                                                                              \
        long long lgbt_a = (long long)(a);                                                                            \
        long long lgbt_b = (long long)(b);                                                                            \
        if (lgbt_a != lgbt_b) {                                                                                       \
            lgbt_failures++;                                                                                          \
            if (lgbt_failures <= 20) {                                                                                \
                printf("  %s:%d: %s: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, lgbt_name, #a, lgbt_a,   \
                       #b, lgbt_b);                                                                                   \
            }                                                                                                         \
        }                                                                                                             \
    } while (0)

#define CHECK_MEM(a, b, n) CHECK(memcmp((a), (b), (n)) == 0)

/* Prints the summary line and returns the process exit code. */
static inline int lgbt_summary(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, lgbt_passed, lgbt_failed);
    return lgbt_failed == 0 ? 0 : 1;
}

/* Parses hex (no separators; "-" = empty) into out; returns the length or -1. */
static inline long lgbt_hex(const char *s, unsigned char *out, size_t cap)
{
    size_t n = 0;
    if (strcmp(s, "-") == 0) {
        return 0;
    }
    while (s[0] != '\0') {
        unsigned v;
        if (s[1] == '\0' || n >= cap || sscanf(s, "%2x", &v) != 1) {
            return -1;
        }
        out[n++] = (unsigned char)v;
        s += 2;
    }
    return (long)n;
}

/* Splits a line into whitespace-separated fields (in place); returns the count. */
static inline int lgbt_split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    while (*p != '\0' && n < max) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            *p++ = '\0';
        }
        if (*p == '\0') {
            break;
        }
        fields[n++] = p;
        while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            p++;
        }
    }
    return n;
}

#endif /* LGB_TEST_H */
