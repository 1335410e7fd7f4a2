/* Unit-test helpers shared by every tests/<module>/test_<module>.c.
 * A case is `int test_<module>_<case>(void)` returning 0 on success, 1 on failure and
 * TEST_SKIP (77) when it cannot run here. The assertion macros print file:line and both sides,
 * then return 1 from the case. Cases are found by CMake (tests/CMakeLists.txt) and each runs in
 * its own process, so a crash fails one case only. */
#ifndef TEST_HELP_H
#define TEST_HELP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TEST_SKIP 77

struct test_case {
    const char *name; /* case name without the test_<module>_ prefix */
    int (*fn)(void);  /* the case */
};

#define TEST_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond);           \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define TEST_EQ_INT(a, b)                                                                          \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        if (va_ != vb_) {                                                                          \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,  \
                    va_, vb_);                                                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define TEST_EQ_STR(a, b)                                                                          \
    do {                                                                                           \
        const char *sa_ = (a), *sb_ = (b);                                                         \
        if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                                               \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* |a - b| <= tol */
#define TEST_NEAR(a, b, tol)                                                                       \
    do {                                                                                           \
        double da_ = (double)(a), db_ = (double)(b);                                               \
        if (!(da_ - db_ <= (tol) && db_ - da_ <= (tol))) {                                         \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %g != %g (tol %g)\n", __FILE__, __LINE__, #a, \
                    #b, da_, db_, (double)(tol));                                                  \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* A fresh empty directory for the case (under TLVIEW_BINARY_DIR/testtmp); returns its path in a
 * static buffer. */
const char *test_tmpdir(void);

/* The whole content of file `path`, malloc'd with a NUL after it (the caller frees it), its size in
 * *pLen (may be NULL); NULL (and 0) when it cannot be read. */
char *test_slurp(const char *path, size_t *pLen);

/* What a case returns when it cannot run here (a tool, a permission or a corpus missing): prints
 * "skip: <why>" (printf-style; line breaks in what is formatted become "; ", so the reason is one
 * line, which scripts/skips.py shows) as its last line, then returns TEST_SKIP, or 1 under
 * CI=true, where every test must run. */
__attribute__((format(printf, 1, 2))) int test_cannot_run(const char *why, ...);

/* What a case returns when it has nothing to test on this machine or build, CI included (a GPU
 * present hides the no-GPU path; a build without CUDA has no collector): prints "skip: <why>" as
 * test_cannot_run() does and returns TEST_SKIP. */
__attribute__((format(printf, 1, 2))) int test_skip(const char *why, ...);

#endif
