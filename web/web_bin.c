/* web_bin.c: how the viewport answer writes its arrays: as JSON text, or in the compact form a
 * client asks for with format=bin (web/API.md, "The compact answer"): the data section, then a
 * small JSON header shaped like the JSON answer, in which each numeric array is a descriptor
 * {"@": type, "o": offset, "n": count, ...} of a little-endian typed array in the data section,
 * of the narrowest type that holds every value, so that the page wraps it with Uint16Array,
 * Int32Array, Float32Array... without parsing. Every value decodes to exactly the JSON answer's.
 * The arrays are written in place in the answer (the header, known last, goes after them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

/* SIMD_CLONES before a function: built twice, for AVX2 and for the baseline, the one to run chosen
 * once at load (GCC/Clang target_clones, an ifunc): the passes over whole arrays compare and
 * narrow four 64-bit values at a time where the CPU can. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef SIMD_CLONES
#define SIMD_CLONES
#endif

#define MAX_SAFE 9007199254740992.0 /* 2^53: integers up to this are exact in a double */

typedef enum bin_type { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_F64, T_I64 } bin_type;
static const char *const TYPE_NAME[] = {"u8",  "i8",  "u16", "i16", "u32",
                                        "i32", "f32", "f64", "i64"};
static const unsigned TYPE_SIZE[] = {1, 1, 2, 2, 4, 4, 4, 8, 8};

/* int_type: the narrowest integer type holding [lo, hi]; beyond 32 bits f64 while exact, else i64
 * (the page turns an i64 array into numbers; no run holds such values). */
static bin_type int_type(int64_t lo, int64_t hi)
{
    if (lo >= 0)
        return hi <= 0xff ? T_U8 : hi <= 0xffff ? T_U16 : hi <= 0xffffffffLL ? T_U32 : T_I64;
    if (lo >= -128 && hi <= 127)
        return T_I8;
    if (lo >= -32768 && hi <= 32767)
        return T_I16;
    if (lo >= INT32_MIN && hi <= INT32_MAX)
        return T_I32;
    return T_I64;
}

/* wide_type: T_F64 when every value of [lo, hi] is exact in a double, else T_I64. */
static bin_type wide_type(int64_t lo, int64_t hi)
{
    return (double)lo >= -MAX_SAFE && (double)hi <= MAX_SAFE ? T_F64 : T_I64;
}

/* put_le: v as `size` little-endian bytes at p (the compiler merges the stores). */
static inline void put_le(unsigned char *p, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* array_begin: room for n values of type t in the data section, at an offset that is a multiple of
 * 8, and its descriptor in the header (left open: the caller may add keys, then closes it with
 * '}'). NULL when out of memory (the buffers are then marked failed). */
static unsigned char *array_begin(web_out *o, bin_type t, uint32_t n)
{
    size_t at = o->data->len - o->data0, pad = (8 - at % 8) % 8;
    char *p = web_buf_reserve(o->data, pad + (size_t)n * TYPE_SIZE[t]);
    if (!p) {
        o->b->failed = 1;
        return NULL;
    }
    memset(p, 0, pad);
    web_buf_str(o->b, "{\"@\":\"");
    web_buf_str(o->b, TYPE_NAME[t]);
    web_buf_str(o->b, "\",\"o\":");
    web_buf_i64(o->b, (int64_t)(at + pad));
    web_buf_str(o->b, ",\"n\":");
    web_buf_i64(o->b, n);
    return (unsigned char *)p + pad;
}

/* put_ints: v[i] - base into a typed array of type t (every difference fits t). */
SIMD_CLONES static void put_ints(unsigned char *p, bin_type t, const int64_t *v, uint32_t n,
                                 int64_t base)
{
    unsigned size = TYPE_SIZE[t];
    if (t == T_F64) {
        for (uint32_t i = 0; i < n; i++) {
            double d = (double)(v[i] - base);
            uint64_t u;
            memcpy(&u, &d, 8);
            put_le(p + 8 * (size_t)i, u, 8);
        }
        return;
    }
    switch (size) {
    case 1:
        for (uint32_t i = 0; i < n; i++)
            p[i] = (unsigned char)(uint64_t)(v[i] - base);
        break;
    case 2:
        for (uint32_t i = 0; i < n; i++)
            put_le(p + 2 * (size_t)i, (uint64_t)(v[i] - base), 2);
        break;
    case 4:
        for (uint32_t i = 0; i < n; i++)
            put_le(p + 4 * (size_t)i, (uint64_t)(v[i] - base), 4);
        break;
    default:
        for (uint32_t i = 0; i < n; i++)
            put_le(p + 8 * (size_t)i, (uint64_t)(v[i] - base), 8);
    }
}

/* json_ints: [v0,v1,...] */
static void json_ints(web_buf *b, const int64_t *v, uint32_t n)
{
    web_buf_ch(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            web_buf_ch(b, ',');
        web_buf_i64(b, v[i]);
    }
    web_buf_ch(b, ']');
}

/* The extremes of an integer array (ints_stats()). */
typedef struct int_span {
    int64_t lo, hi;   /* of the values */
    int64_t dlo, dhi; /* of the steps v[i] - v[i-1], and 0 (the first element of a delta array) */
    int wrap;         /* a step may leave int64: the values span more than it */
} int_span;

/* ints_stats: the int_span of v[0..n) (all 0 when n is 0). One pass, whose loop carries nothing
 * but the four extremes: the steps are taken modulo 2^64 and are exact whenever the span fits. */
SIMD_CLONES static int_span ints_stats(const int64_t *v, uint32_t n)
{
    if (!n)
        return (int_span){0};
    int64_t lo = v[0], hi = v[0], dlo = 0, dhi = 0;
    for (uint32_t i = 1; i < n; i++) {
        int64_t x = v[i], d = (int64_t)((uint64_t)x - (uint64_t)v[i - 1]);
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        dlo = d < dlo ? d : dlo;
        dhi = d > dhi ? d : dhi;
    }
    return (int_span){lo, hi, dlo, dhi, (__int128)hi - lo > INT64_MAX};
}

/* put_steps: v[0] - v[0] (0), then v[i] - v[i-1] into a typed array of type t (every step fits
 * it). */
SIMD_CLONES static void put_steps(unsigned char *p, bin_type t, const int64_t *v, uint32_t n)
{
    unsigned size = TYPE_SIZE[t];
    if (n)
        memset(p, 0, size);
    switch (size) {
    case 1:
        for (uint32_t i = 1; i < n; i++)
            p[i] = (unsigned char)(uint64_t)(v[i] - v[i - 1]);
        break;
    case 2:
        for (uint32_t i = 1; i < n; i++)
            put_le(p + 2 * (size_t)i, (uint64_t)(v[i] - v[i - 1]), 2);
        break;
    default:
        for (uint32_t i = 1; i < n; i++)
            put_le(p + 4 * (size_t)i, (uint64_t)(v[i] - v[i - 1]), 4);
    }
}

/* ESC_MAX: the largest step (in magnitude) a signed type of `size` bytes holds besides its least
 * value, which marks an escaped step. */
static int64_t esc_max(unsigned size)
{
    return size == 1 ? INT8_MAX : size == 2 ? INT16_MAX : INT32_MAX;
}

/* big_steps: how many steps of v[0..n) leave [-m, m]. */
SIMD_CLONES static uint32_t big_steps(const int64_t *v, uint32_t n, int64_t m)
{
    uint32_t big = 0;
    for (uint32_t i = 1; i < n; i++)
        big += (uint64_t)(v[i] - v[i - 1]) + (uint64_t)m > 2 * (uint64_t)m;
    return big;
}

/* out_escaped: v as a delta array of signed type t whose steps beyond [-m, m] (nbig of them)
 * are escaped: the element is t's least value and the step is the next one of an f64 array "esc".
 */
static void out_escaped(web_out *o, const int64_t *v, uint32_t n, bin_type t, uint32_t nbig)
{
    unsigned size = TYPE_SIZE[t];
    int64_t m = esc_max(size);
    unsigned char *p = array_begin(o, t, n);
    if (!p)
        return;
    memset(p, 0, size);
#define ESC_STEP(i)                                                                                \
    (uint64_t)(v[i] - v[i - 1] < -m || v[i] - v[i - 1] > m ? -m - 1 : v[i] - v[i - 1])
    switch (size) {
    case 1:
        for (uint32_t i = 1; i < n; i++)
            p[i] = (unsigned char)ESC_STEP(i);
        break;
    case 2:
        for (uint32_t i = 1; i < n; i++)
            put_le(p + 2 * (size_t)i, ESC_STEP(i), 2);
        break;
    default:
        for (uint32_t i = 1; i < n; i++)
            put_le(p + 4 * (size_t)i, ESC_STEP(i), 4);
    }
#undef ESC_STEP
    web_buf_str(o->b, ",\"delta\":1,\"base\":");
    web_buf_i64(o->b, v[0]);
    web_buf_str(o->b, ",\"esc\":");
    unsigned char *x = array_begin(o, T_F64, nbig); /* p is not used after: it may move */
    if (!x)
        return;
    for (uint32_t i = 1, k = 0; i < n && k < nbig; i++) {
        int64_t d = v[i] - v[i - 1];
        if (d < -m || d > m) {
            double f = (double)d; /* exact: |d| <= 2^53 */
            uint64_t u;
            memcpy(&u, &f, 8);
            put_le(x + 8 * (size_t)k++, u, 8);
        }
    }
    web_buf_str(o->b, "}}");
}

/* out_steps: v as a delta array (element i is v[i] - v[i-1], the first 0, "base": v[0]) when that
 * takes fewer bytes than the values in their type t: the steps in the narrowest type that holds
 * them all, else, when few steps are large, the steps in a narrower signed type `esc` (T_I32 for
 * the starts of listed records beyond 32 bits of the query's t0, which go back at each level's
 * first; T_U8: none tried) with those escaped (out_escaped()). Measured at 10M kernels: escapes
 * in i8 for the busy permille of binned rows cost 5% more CPU at 0.1 of the run for 4% fewer
 * bytes, so they are not tried; in i32 for the starts of NVTX ranges at 0.01 of the run, 17%
 * fewer bytes for <1% more CPU. Only when every
 * value is within +-2^52: the page's running sum in doubles then meets each value exactly and
 * every step is exact in a double. Returns 1 when written. */
static int out_steps(web_out *o, const int64_t *v, uint32_t n, bin_type t, const int_span *sp,
                     bin_type esc)
{
    if (n < 2 || sp->wrap || sp->lo < -(INT64_C(1) << 52) || sp->hi > (INT64_C(1) << 52))
        return 0;
    bin_type td = int_type(sp->dlo, sp->dhi);
    if (TYPE_SIZE[td] < TYPE_SIZE[t]) {
        unsigned char *p = array_begin(o, td, n);
        if (p) {
            put_steps(p, td, v, n);
            web_buf_str(o->b, ",\"delta\":1,\"base\":");
            web_buf_i64(o->b, v[0]);
            web_buf_ch(o->b, '}');
        }
        return 1;
    }
    if (esc == T_U8 || TYPE_SIZE[esc] >= TYPE_SIZE[t])
        return 0;
    /* escaped steps: worth it while the escapes (8 B each and a descriptor) take less than the
     * narrower type saves */
    uint32_t big = big_steps(v, n, esc_max(TYPE_SIZE[esc]));
    if ((size_t)n * TYPE_SIZE[esc] + 8 * (size_t)big + 64 >= (size_t)n * TYPE_SIZE[t])
        return 0;
    out_escaped(o, v, n, esc, big);
    return 1;
}

/* out_values: v (of int_span *sp) as the values themselves in the narrowest type that holds them,
 * or as their steps where those are narrower (escaped ones no narrower than `esc`:
 * out_steps()). */
static void out_values(web_out *o, const int64_t *v, uint32_t n, const int_span *sp, bin_type esc)
{
    bin_type t = int_type(sp->lo, sp->hi);
    if (t == T_I64)
        t = wide_type(sp->lo, sp->hi);
    if (out_steps(o, v, n, t, sp, esc))
        return;
    unsigned char *p = array_begin(o, t, n);
    if (!p)
        return;
    put_ints(p, t, v, n, 0);
    web_buf_ch(o->b, '}');
}

void web_out_ints(web_out *o, const int64_t *v, uint32_t n)
{
    if (!o->compact) {
        json_ints(o->b, v, n);
        return;
    }
    int_span sp = ints_stats(v, n);
    out_values(o, v, n, &sp, T_U8);
}

void web_out_times(web_out *o, const int64_t *v, uint32_t n, int64_t base)
{
    if (!o->compact) {
        json_ints(o->b, v, n);
        return;
    }
    int_span sp = ints_stats(v, n);
    /* v[i] - base may overflow int64 (|t| <= 4e18 on both sides) */
    __int128 rlo = (__int128)sp.lo - base, rhi = (__int128)sp.hi - base;
    if (rlo < INT32_MIN || rhi > INT32_MAX) { /* the values themselves, or their steps */
        out_values(o, v, n, &sp, T_I32);
        return;
    }
    bin_type t = int_type((int64_t)rlo, (int64_t)rhi);
    if (out_steps(o, v, n, t, &sp, T_U8))
        return;
    unsigned char *p = array_begin(o, t, n);
    if (!p)
        return;
    put_ints(p, t, v, n, base);
    web_buf_str(o->b, ",\"base\":");
    web_buf_i64(o->b, base);
    web_buf_ch(o->b, '}');
}

/* round_pos: llround(x) for 0 <= x <= 1e17 (x - trunc(x) is exact below 2^52; above, a double
 * is an integer), inline: the lanes' arrays round two values per pixel, twice each. */
static inline int64_t round_pos(double x)
{
    int64_t r = (int64_t)x;
    return x < 4503599627370496.0 ? r + (x - (double)r >= 0.5) : r;
}

/* fixed2_ok: v is written by web_buf_fixed2() as a multiple of 0.01 (else as web_buf_num()). */
static int fixed2_ok(double v)
{
    return isfinite(v) && v >= 0 && v <= 1e15;
}

/* text_value: the value of the JSON number that print(v) writes (NaN for null). */
static double text_value(void (*print)(web_buf *, double), double v)
{
    web_buf t = {0};
    print(&t, v);
    double d = t.failed || strcmp(t.s, "null") == 0 ? NAN : strtod(t.s, NULL);
    free(t.s);
    return d;
}

/* put_doubles: values as f64 (NaN for null), with "nulls":1 in the descriptor. */
static void put_doubles(web_out *o, const double *v, uint32_t n, void (*print)(web_buf *, double))
{
    unsigned char *p = array_begin(o, T_F64, n);
    if (!p)
        return;
    for (uint32_t i = 0; i < n; i++) {
        double d = text_value(print, v[i]);
        uint64_t u;
        memcpy(&u, &d, 8);
        put_le(p + 8 * (size_t)i, u, 8);
    }
    web_buf_str(o->b, ",\"nulls\":1}");
}

void web_out_fixed2(web_out *o, const double *v, uint32_t n)
{
    if (!o->compact) {
        web_buf_ch(o->b, '[');
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                web_buf_ch(o->b, ',');
            web_buf_fixed2(o->b, v[i]);
        }
        web_buf_ch(o->b, ']');
        return;
    }
    int64_t hi = 0, lo = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (isnan(v[i])) {
            lo = -1;
            continue;
        }
        if (!fixed2_ok(v[i])) { /* never in practice: the exact value of the JSON text */
            put_doubles(o, v, n, web_buf_fixed2);
            return;
        }
        int64_t c = round_pos(v[i] * 100); /* as web_buf_fixed2() rounds it */
        if (c > hi)
            hi = c;
    }
    bin_type t = int_type(lo, hi);
    if (t == T_I64)
        t = wide_type(lo, hi);
    unsigned char *p = array_begin(o, t, n);
    if (!p)
        return;
    unsigned size = TYPE_SIZE[t];
    for (uint32_t i = 0; i < n; i++) {
        int64_t c = isnan(v[i]) ? -1 : round_pos(v[i] * 100);
        if (t == T_F64) {
            double d = (double)c;
            uint64_t u;
            memcpy(&u, &d, 8);
            put_le(p + 8 * (size_t)i, u, 8);
        } else {
            put_le(p + size * (size_t)i, (uint64_t)c, size);
        }
    }
    web_buf_str(o->b, ",\"scale\":100");
    if (lo < 0)
        web_buf_str(o->b, ",\"null\":-1");
    web_buf_ch(o->b, '}');
}

/* num4: the value of "%.4g" of a finite v, as strtod() reads the text back: the decimal rounded to
 * 4 significant digits (half to even on v's exact binary value, as printf does). A product of
 * exact integers and powers of ten is correctly rounded, so m / 10^k is that very double; when
 * v * 10^k lies too near a rounding tie to tell, or outside the fast range, printf decides. From 1
 * on, the power of ten is found by comparisons (a stretch is most often between 1 and 100: one
 * or two), not by log10(), which cost as much as the rest of writing the stretches. */
static double num4(double v)
{
    static const double P10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
    double a = fabs(v);
    if (a >= 1e-12 && a < 1e15) {
        int e = 0; /* floor(log10(a)): the powers of ten up to 10^18 are exact doubles */
        if (a >= 1)
            while (a >= P10[e + 1])
                e++;
        else
            e = (int)floor(log10(a));
        int k = 3 - e; /* a * 10^k in [1000, 10000), when e is right */
        double p = k >= 0 ? a * P10[k] : a / P10[-k];
        double m = nearbyint(p);
        if (k >= -15 && k <= 18 && p >= 1000 && p < 10000 && fabs(fabs(p - m) - 0.5) > 1e-6) {
            double r = k >= 0 ? m / P10[k] : m * P10[-k];
            return v < 0 ? -r : r;
        }
    }
    return text_value(web_buf_num, v);
}

void web_out_num4(web_out *o, const double *v, uint32_t n)
{
    if (!o->compact) {
        web_buf_ch(o->b, '[');
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                web_buf_ch(o->b, ',');
            web_buf_num(o->b, v[i]);
        }
        web_buf_ch(o->b, ']');
        return;
    }
    unsigned char *p = array_begin(o, T_F32, n);
    if (!p)
        return;
    for (uint32_t i = 0; i < n; i++) {
        float f = isfinite(v[i]) ? (float)num4(v[i]) : NAN;
        uint32_t u;
        memcpy(&u, &f, 4);
        put_le(p + 4 * (size_t)i, u, 4);
    }
    web_buf_str(o->b, ",\"digits\":4}");
}

void web_out_tuples(web_out *o, const int64_t *const *cols, const int *is_time, unsigned ncol,
                    uint32_t n, int64_t base)
{
    if (!o->compact) {
        web_buf_ch(o->b, '[');
        for (uint32_t i = 0; i < n; i++) {
            web_buf_str(o->b, i ? ",[" : "[");
            for (unsigned c = 0; c < ncol; c++) {
                if (c)
                    web_buf_ch(o->b, ',');
                web_buf_i64(o->b, cols[c][i]);
            }
            web_buf_ch(o->b, ']');
        }
        web_buf_ch(o->b, ']');
        return;
    }
    web_buf_str(o->b, "{\"@\":\"tuples\",\"n\":");
    web_buf_i64(o->b, n);
    web_buf_str(o->b, ",\"cols\":[");
    for (unsigned c = 0; c < ncol; c++) {
        if (c)
            web_buf_ch(o->b, ',');
        if (is_time[c])
            web_out_times(o, cols[c], n, base);
        else
            web_out_ints(o, cols[c], n);
    }
    web_buf_str(o->b, "]}");
}

/* str_index: the index of string id sid in the answer's table, added when new; UINT32_MAX when
 * out of memory. */
static uint32_t str_index(web_out *o, uint32_t sid)
{
    if (2 * (o->nstr + 1) >= o->scap) { /* grow: rehash into twice the room */
        uint32_t cap = o->scap ? 2 * o->scap : 256;
        uint32_t *key = malloc(sizeof *key * cap), *val = calloc(cap, sizeof *val);
        uint32_t *sids = realloc(o->sids, sizeof *sids * (cap / 2));
        if (sids)
            o->sids = sids;
        if (!key || !val || !sids) {
            free(key), free(val);
            return UINT32_MAX;
        }
        for (uint32_t i = 0; i < o->nstr; i++) {
            uint32_t at = (o->sids[i] * 0x9E3779B1u) & (cap - 1);
            while (val[at])
                at = (at + 1) & (cap - 1);
            key[at] = o->sids[i];
            val[at] = i + 1;
        }
        free(o->skey), free(o->sval);
        o->skey = key, o->sval = val, o->scap = cap;
    }
    uint32_t at = (sid * 0x9E3779B1u) & (o->scap - 1);
    while (o->sval[at] && o->skey[at] != sid)
        at = (at + 1) & (o->scap - 1);
    if (!o->sval[at]) {
        o->skey[at] = sid;
        o->sval[at] = o->nstr + 1;
        o->sids[o->nstr++] = sid;
    }
    return o->sval[at] - 1;
}

void web_out_names(web_out *o, const uint32_t *sid, uint32_t n,
                   const char *(*text)(const void *ctx, uint32_t sid), const void *ctx)
{
    if (!o->compact) {
        web_buf_ch(o->b, '[');
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                web_buf_ch(o->b, ',');
            web_buf_json_str(o->b, text(ctx, sid[i]));
        }
        web_buf_ch(o->b, ']');
        return;
    }
    uint32_t hi = 0, *k = malloc(sizeof *k * (n ? n : 1)); /* their indexes in the table */
    int ok = k != NULL;
    for (uint32_t i = 0; ok && i < n; i++) {
        ok = (k[i] = str_index(o, sid[i])) != UINT32_MAX;
        hi = k[i] > hi ? k[i] : hi;
    }
    bin_type t = int_type(0, hi);
    unsigned char *p = ok ? array_begin(o, t, n) : NULL;
    if (!p) {
        o->b->failed = 1;
        free(k);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        put_le(p + TYPE_SIZE[t] * (size_t)i, k[i], TYPE_SIZE[t]);
    free(k);
    web_buf_str(o->b, ",\"strings\":1}");
}

void web_out_strings(web_out *o, const char *(*text)(const void *ctx, uint32_t sid),
                     const void *ctx)
{
    if (!o->compact || !o->nstr)
        return;
    web_buf_str(o->b, ",\"strings\":[");
    for (uint32_t i = 0; i < o->nstr; i++) {
        if (i)
            web_buf_ch(o->b, ',');
        web_buf_json_str(o->b, text(ctx, o->sids[i]));
    }
    web_buf_ch(o->b, ']');
}

void web_out_free(web_out *o)
{
    free(o->sids), free(o->skey), free(o->sval);
    o->sids = o->skey = o->sval = NULL;
    o->nstr = o->scap = 0;
}

void web_out_begin(web_out *o, web_buf *answer, web_buf *header, int compact)
{
    *o = (web_out){.b = compact ? header : answer, .compact = compact};
    if (!compact)
        return;
    o->data = answer;
    o->start = answer->len;
    char *p = web_buf_reserve(answer, 8); /* the magic and the header's offset, set at the end */
    if (p)
        memcpy(p, WEB_BIN_MAGIC "\0\0\0\0", 8);
    o->data0 = answer->len;
}

int web_out_finish(web_out *o)
{
    if (o->b->failed || (o->data && o->data->failed))
        return WEB_ENOMEM;
    if (!o->compact)
        return WEB_OK; /* o->b is the answer */
    size_t pad = (8 - (o->data->len - o->data0) % 8) % 8, at = o->data->len + pad - o->start;
    if (at > UINT32_MAX)
        return WEB_ENOMEM; /* 4 GiB: not an answer of at most 8192 pixels per row */
    char *p = web_buf_reserve(o->data, pad + o->b->len);
    if (!p)
        return WEB_ENOMEM;
    memset(p, 0, pad);
    memcpy(p + pad, o->b->s, o->b->len);
    put_le((unsigned char *)o->data->s + o->start + 4, at, 4);
    return WEB_OK;
}
