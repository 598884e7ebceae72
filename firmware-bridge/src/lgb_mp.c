/*
 * lgb_mp.c -- msgpack subset reader/writer (PROTOCOL.md §6). See lgb_mp.h.
 *
 * Strategy: one table-free switch decodes every format byte into a kind, a
 * header size and an immediate value; the typed readers are thin filters on
 * lgb_mp_read that commit the position only on success.
 */
#include <string.h>

#include "lgb_mp.h"

/* ------------------------------------------------------------------ reader */

void lgb_mp_reader_init(lgb_mp_reader_t *r, const uint8_t *buf, size_t n)
{
    r->buf = buf;
    r->len = (buf == NULL) ? 0u : n;
    r->pos = 0;
}

/* Big-endian unsigned integer of n (0..4) bytes. */
static uint32_t be32(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    while (n-- > 0u) {
        v = (v << 8) | *p++;
    }
    return v;
}

/* Format bytes 0xc0..0xdf: (kind << 4) | bytes of the big-endian field that
 * follows (the value, or for str/bin/array/map the length or count); 0xFF =
 * not supported (0xc1 is never used, 0xc7..0xc9 and 0xd4..0xd8 are ext). */
#define F(kind, n) (uint8_t)(((unsigned)(kind) << 4) | (n))
#define BAD 0xFFu
static const uint8_t formats[32] = {
    F(LGB_MP_NIL, 0),     BAD,                  F(LGB_MP_BOOL, 0),    F(LGB_MP_BOOL, 0),
    F(LGB_MP_BIN, 1),     F(LGB_MP_BIN, 2),     F(LGB_MP_BIN, 4),     BAD,
    BAD,                  BAD,                  F(LGB_MP_FLOAT32, 4), F(LGB_MP_FLOAT64, 8),
    F(LGB_MP_UINT, 1),    F(LGB_MP_UINT, 2),    F(LGB_MP_UINT, 4),    F(LGB_MP_UINT, 8),
    F(LGB_MP_INT, 1),     F(LGB_MP_INT, 2),     F(LGB_MP_INT, 4),     F(LGB_MP_INT, 8),
    BAD,                  BAD,                  BAD,                  BAD,
    BAD,                  F(LGB_MP_STR, 1),     F(LGB_MP_STR, 2),     F(LGB_MP_STR, 4),
    F(LGB_MP_ARRAY, 2),   F(LGB_MP_ARRAY, 4),   F(LGB_MP_MAP, 2),     F(LGB_MP_MAP, 4),
};
#undef F

lgb_ret_t lgb_mp_read(lgb_mp_reader_t *r, lgb_mp_obj_t *o)
{
    /* Why 32-bit halves: 64-bit shifts and compares are library calls or long
     * sequences on Cortex-M0+; only 8-byte fields need the high half. */
    size_t left;
    const uint8_t *p;
    uint8_t b;
    unsigned n = 0;    /* bytes of the field after the format byte */
    unsigned kind;
    uint32_t lo;       /* the field (the low 4 bytes of an 8-byte one) */
    uint32_t hi = 0;   /* the high 4 bytes of an 8-byte field */

    if (r->pos >= r->len) {
        return LGB_ERR_PAYLOAD;
    }
    p = r->buf + r->pos;
    left = r->len - r->pos - 1u;
    b = *p;

    if (b <= 0x7Fu) {
        kind = LGB_MP_UINT;
        lo = b;
    } else if (b <= 0x8Fu) {
        kind = LGB_MP_MAP;
        lo = b & 0x0Fu;
    } else if (b <= 0x9Fu) {
        kind = LGB_MP_ARRAY;
        lo = b & 0x0Fu;
    } else if (b <= 0xBFu) {
        kind = LGB_MP_STR;
        lo = b & 0x1Fu;
    } else if (b >= 0xE0u) {
        o->kind = LGB_MP_INT;
        o->v.i = (int32_t)b - 256;
        r->pos += 1u;
        return LGB_OK;
    } else {
        uint8_t e = formats[b - 0xC0u];
        if (e == BAD) {
            return LGB_ERR_PAYLOAD;
        }
        kind = e >> 4;
        n = e & 0x0Fu;
        if (left < n) {
            return LGB_ERR_PAYLOAD;
        }
        left -= n;
        if (n == 8u) {
            hi = be32(p + 1, 4);
            lo = be32(p + 5, 4);
        } else {
            lo = (n == 0u) ? (uint32_t)(b & 1u) : be32(p + 1, n); /* n == 0: bool c2/c3, nil */
        }
        if (kind == LGB_MP_INT) {
            if ((p[1] & 0x80u) == 0u) {
                kind = LGB_MP_UINT; /* a signed format holding a value >= 0 */
            } else if (n < 8u) {
                /* Negative n-byte two's complement: -1 - (~lo within n bytes). */
                uint32_t mask = (n == 4u) ? 0xFFFFFFFFu : ((1u << (8u * n)) - 1u);
                o->kind = LGB_MP_INT;
                o->v.i = -1 - (int64_t)(~lo & mask);
                r->pos += 1u + n;
                return LGB_OK;
            }
            /* int64 < 0: the bits as they are (int64_t is two's complement). */
        }
    }
    o->kind = (lgb_mp_kind_t)kind;
    if (kind == LGB_MP_STR || kind == LGB_MP_BIN) {
        if (left < lo) {
            return LGB_ERR_PAYLOAD;
        }
        o->v.raw.ptr = p + 1 + n;
        o->v.raw.len = lo;
        r->pos += lo;
    } else if (kind == LGB_MP_BOOL) {
        o->v.b = (uint8_t)lo;
    } else if (kind == LGB_MP_ARRAY || kind == LGB_MP_MAP || kind == LGB_MP_FLOAT32) {
        o->v.count = lo; /* FLOAT32 bits share the slot (f32) */
    } else {
        o->v.u = ((uint64_t)hi << 32) | lo; /* UINT, FLOAT64, INT (8-byte, < 0) */
    }
    r->pos += 1u + n;
    return LGB_OK;
}

lgb_ret_t lgb_mp_skip(lgb_mp_reader_t *r)
{
    /* Why a counter: nested containers are skipped without recursion. Every
     * value takes at least one byte, so `pending` never exceeds the bytes left. */
    size_t pending = 1;
    lgb_mp_obj_t o;

    while (pending > 0u) {
        size_t left;
        if (lgb_mp_read(r, &o) != LGB_OK) {
            return LGB_ERR_PAYLOAD;
        }
        pending--;
        left = r->len - r->pos;
        if (o.kind == LGB_MP_ARRAY || o.kind == LGB_MP_MAP) {
            size_t items = (size_t)o.v.count;
            if (items > left || (o.kind == LGB_MP_MAP && items > left / 2u)) {
                return LGB_ERR_PAYLOAD;
            }
            pending += (o.kind == LGB_MP_MAP) ? 2u * items : items;
        }
        if (pending > left) {
            return LGB_ERR_PAYLOAD;
        }
    }
    return LGB_OK;
}

/* Reads the next object and commits the position only when its kind is one of
 * k1/k2 (pass the same kind twice for one). */
static lgb_ret_t read_kind(lgb_mp_reader_t *r, lgb_mp_obj_t *o, lgb_mp_kind_t k1, lgb_mp_kind_t k2)
{
    size_t pos = r->pos;
    if (lgb_mp_read(r, o) != LGB_OK || (o->kind != k1 && o->kind != k2)) {
        r->pos = pos;
        return LGB_ERR_PAYLOAD;
    }
    return LGB_OK;
}

lgb_ret_t lgb_mp_read_array(lgb_mp_reader_t *r, uint32_t *count)
{
    lgb_mp_obj_t o;
    lgb_ret_t ret = read_kind(r, &o, LGB_MP_ARRAY, LGB_MP_ARRAY);
    if (ret == LGB_OK) {
        *count = o.v.count;
    }
    return ret;
}

lgb_ret_t lgb_mp_read_map(lgb_mp_reader_t *r, uint32_t *count)
{
    lgb_mp_obj_t o;
    lgb_ret_t ret = read_kind(r, &o, LGB_MP_MAP, LGB_MP_MAP);
    if (ret == LGB_OK) {
        *count = o.v.count;
    }
    return ret;
}

lgb_ret_t lgb_mp_read_uint(lgb_mp_reader_t *r, uint64_t *v)
{
    lgb_mp_obj_t o;
    lgb_ret_t ret = read_kind(r, &o, LGB_MP_UINT, LGB_MP_UINT);
    if (ret == LGB_OK) {
        *v = o.v.u;
    }
    return ret;
}

lgb_ret_t lgb_mp_read_int(lgb_mp_reader_t *r, int64_t *v)
{
    lgb_mp_obj_t o;
    size_t pos = r->pos;
    lgb_ret_t ret = read_kind(r, &o, LGB_MP_UINT, LGB_MP_INT);
    if (ret != LGB_OK) {
        return ret;
    }
    if (o.kind == LGB_MP_UINT) {
        if (o.v.u > (uint64_t)INT64_MAX) {
            r->pos = pos;
            return LGB_ERR_PAYLOAD;
        }
        *v = (int64_t)o.v.u;
    } else {
        *v = o.v.i;
    }
    return LGB_OK;
}

lgb_ret_t lgb_mp_read_bool(lgb_mp_reader_t *r, uint8_t *v)
{
    lgb_mp_obj_t o;
    lgb_ret_t ret = read_kind(r, &o, LGB_MP_BOOL, LGB_MP_BOOL);
    if (ret == LGB_OK) {
        *v = o.v.b;
    }
    return ret;
}

lgb_ret_t lgb_mp_read_nil(lgb_mp_reader_t *r)
{
    lgb_mp_obj_t o;
    return read_kind(r, &o, LGB_MP_NIL, LGB_MP_NIL);
}

lgb_ret_t lgb_mp_read_str(lgb_mp_reader_t *r, const uint8_t **p, uint32_t *n)
{
    lgb_mp_obj_t o;
    lgb_ret_t ret = read_kind(r, &o, LGB_MP_STR, LGB_MP_STR);
    if (ret == LGB_OK) {
        *p = o.v.raw.ptr;
        *n = o.v.raw.len;
    }
    return ret;
}

lgb_ret_t lgb_mp_read_bin(lgb_mp_reader_t *r, const uint8_t **p, uint32_t *n)
{
    lgb_mp_obj_t o;
    lgb_ret_t ret = read_kind(r, &o, LGB_MP_BIN, LGB_MP_BIN);
    if (ret == LGB_OK) {
        *p = o.v.raw.ptr;
        *n = o.v.raw.len;
    }
    return ret;
}

#if LGB_ENABLE_FLOAT
lgb_ret_t lgb_mp_read_double(lgb_mp_reader_t *r, double *v)
{
    lgb_mp_obj_t o;
    size_t pos = r->pos;
    if (lgb_mp_read(r, &o) != LGB_OK) {
        return LGB_ERR_PAYLOAD;
    }
    switch (o.kind) {
    case LGB_MP_FLOAT32: {
        float f;
        memcpy(&f, &o.v.f32, sizeof(f));
        *v = (double)f;
        return LGB_OK;
    }
    case LGB_MP_FLOAT64:
        memcpy(v, &o.v.f64, sizeof(*v));
        return LGB_OK;
    case LGB_MP_UINT:
        *v = (double)o.v.u;
        return LGB_OK;
    case LGB_MP_INT:
        *v = (double)o.v.i;
        return LGB_OK;
    default:
        r->pos = pos;
        return LGB_ERR_PAYLOAD;
    }
}

lgb_ret_t lgb_mp_read_float(lgb_mp_reader_t *r, float *v)
{
    lgb_mp_obj_t o;
    size_t pos = r->pos;
    if (lgb_mp_read(r, &o) != LGB_OK) {
        return LGB_ERR_PAYLOAD;
    }
    switch (o.kind) {
    case LGB_MP_FLOAT32:
        memcpy(v, &o.v.f32, sizeof(*v));
        return LGB_OK;
    case LGB_MP_FLOAT64: {
        double d;
        memcpy(&d, &o.v.f64, sizeof(d));
        *v = (float)d;
        return LGB_OK;
    }
    case LGB_MP_UINT:
        *v = (float)o.v.u;
        return LGB_OK;
    case LGB_MP_INT:
        *v = (float)o.v.i;
        return LGB_OK;
    default:
        r->pos = pos;
        return LGB_ERR_PAYLOAD;
    }
}
#endif

/* ------------------------------------------------------------------ writer */

void lgb_mp_writer_init(lgb_mp_writer_t *w, uint8_t *buf, size_t cap)
{
    w->buf = buf;
    w->cap = (buf == NULL) ? 0u : cap;
    w->len = 0;
    w->err = LGB_OK;
}

/* Reserves n bytes; on failure makes the error sticky. */
static int reserve(lgb_mp_writer_t *w, size_t n)
{
    if (w->err != LGB_OK) {
        return 0;
    }
    if (w->cap - w->len < n) {
        w->err = LGB_ERR_BUFFER;
        return 0;
    }
    return 1;
}

/* Appends the n (0..4) low bytes of v, big-endian; the room was reserved. */
static void put_be(lgb_mp_writer_t *w, uint32_t v, unsigned n)
{
    while (n-- > 0u) {
        w->buf[w->len++] = (uint8_t)(v >> (8u * n));
    }
}

/* Format byte `tag` followed by the n-byte (0..4) big-endian v, with `extra`
 * more bytes reserved for what the caller appends (str/bin data). */
static lgb_ret_t put_tag(lgb_mp_writer_t *w, uint8_t tag, uint32_t v, unsigned n, size_t extra)
{
    if (!reserve(w, 1u + n + extra)) {
        return w->err;
    }
    w->buf[w->len++] = tag;
    put_be(w, v, n);
    return LGB_OK;
}

/* Format byte `tag` followed by the 8-byte big-endian v. */
static lgb_ret_t put_tag64(lgb_mp_writer_t *w, uint8_t tag, uint64_t v)
{
    lgb_ret_t ret = put_tag(w, tag, (uint32_t)(v >> 32), 4, 4);
    if (ret == LGB_OK) {
        put_be(w, (uint32_t)v, 4);
    }
    return ret;
}

/* Why one function for uint, str, bin, array and map headers: they share a
 * shape. A value v <= fix_max fits the fix form (fix | v) when fix != 0;
 * otherwise `tag` carries a `width`-byte field, and each next tag doubles the
 * width (uint cc..ce: 1..4, str d9..db / bin c4..c6: 1..4, array dc..dd and
 * map de..df: 2..4). `extra` bytes are reserved after the header. */
static lgb_ret_t put_sized(lgb_mp_writer_t *w, uint8_t fix, uint8_t fix_max, uint8_t tag, unsigned width, uint32_t v,
                           size_t extra)
{
    if (fix != 0u && v <= fix_max) {
        return put_tag(w, (uint8_t)(fix | (uint8_t)v), 0, 0, extra);
    }
    while (width < 4u && (v >> (8u * width)) != 0u) {
        width *= 2u;
        tag++;
    }
    return put_tag(w, tag, v, width, extra);
}

lgb_ret_t lgb_mp_write_nil(lgb_mp_writer_t *w)
{
    return put_tag(w, 0xC0, 0, 0, 0);
}

lgb_ret_t lgb_mp_write_bool(lgb_mp_writer_t *w, int v)
{
    return put_tag(w, v ? 0xC3 : 0xC2, 0, 0, 0);
}

lgb_ret_t lgb_mp_write_uint(lgb_mp_writer_t *w, uint64_t v)
{
    if (v > 0xFFFFFFFFu) {
        return put_tag64(w, 0xCF, v);
    }
    /* Positive fixint: the value is its own format byte. */
    if (v <= 0x7Fu) {
        return put_tag(w, (uint8_t)v, 0, 0, 0);
    }
    return put_sized(w, 0, 0, 0xCC, 1, (uint32_t)v, 0);
}

lgb_ret_t lgb_mp_write_int(lgb_mp_writer_t *w, int64_t v)
{
    uint32_t low = (uint32_t)(uint64_t)v; /* two's complement low bytes */
    if (v >= 0) {
        return lgb_mp_write_uint(w, (uint64_t)v);
    }
    if (v >= -32) {
        return put_tag(w, (uint8_t)low, 0, 0, 0); /* negative fixint 0xe0..0xff */
    }
    if (v >= -128) {
        return put_tag(w, 0xD0, low, 1, 0);
    }
    if (v >= -32768) {
        return put_tag(w, 0xD1, low, 2, 0);
    }
    if (v >= INT32_MIN) {
        return put_tag(w, 0xD2, low, 4, 0);
    }
    return put_tag64(w, 0xD3, (uint64_t)v);
}

/* A str (fix 0xA0, tag 0xD9) or bin (no fix form, tag 0xC4) of n bytes. */
static lgb_ret_t put_bytes(lgb_mp_writer_t *w, uint8_t fix, uint8_t tag, const void *p, size_t n)
{
    lgb_ret_t ret;
    if ((p == NULL && n > 0u) || ((uint64_t)n >> 16) >> 16 != 0u) {
        if (w->err == LGB_OK) {
            w->err = LGB_ERR_BUFFER;
        }
        return w->err;
    }
    ret = put_sized(w, fix, 31, tag, 1, (uint32_t)n, n);
    if (ret == LGB_OK && n > 0u) {
        memcpy(w->buf + w->len, p, n);
        w->len += n;
    }
    return ret;
}

lgb_ret_t lgb_mp_write_str(lgb_mp_writer_t *w, const char *s, size_t n)
{
    return put_bytes(w, 0xA0, 0xD9, s, n);
}

lgb_ret_t lgb_mp_write_cstr(lgb_mp_writer_t *w, const char *s)
{
    return put_bytes(w, 0xA0, 0xD9, s, (s == NULL) ? 0u : strlen(s));
}

lgb_ret_t lgb_mp_write_bin(lgb_mp_writer_t *w, const void *p, size_t n)
{
    return put_bytes(w, 0, 0xC4, p, n);
}

lgb_ret_t lgb_mp_write_array(lgb_mp_writer_t *w, uint32_t count)
{
    return put_sized(w, 0x90, 15, 0xDC, 2, count, 0);
}

lgb_ret_t lgb_mp_write_map(lgb_mp_writer_t *w, uint32_t count)
{
    return put_sized(w, 0x80, 15, 0xDE, 2, count, 0);
}

lgb_ret_t lgb_mp_write_raw(lgb_mp_writer_t *w, const void *p, size_t n)
{
    if (p == NULL && n > 0u) {
        return LGB_ERR_BUFFER;
    }
    if (!reserve(w, n)) {
        return w->err;
    }
    if (n > 0u) {
        memcpy(w->buf + w->len, p, n);
        w->len += n;
    }
    return LGB_OK;
}

#if LGB_ENABLE_FLOAT
lgb_ret_t lgb_mp_write_float(lgb_mp_writer_t *w, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return put_tag(w, 0xCA, bits, 4, 0);
}

lgb_ret_t lgb_mp_write_double(lgb_mp_writer_t *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return put_tag64(w, 0xCB, bits);
}
#endif
