/*
 * lgb_mp.h -- a small msgpack reader and writer for the payload types of
 * PROTOCOL.md §6: nil, bool, int/uint up to 64 bits, float32/64, str, bin,
 * array and map headers. No ext types.
 *
 * Why our own: the MCU needs a few hundred bytes of code that never allocates
 * and never recurses (mpack and msgpack-c are larger and built around trees or
 * callbacks). The reader hands out pointers into the payload (zero copy) and
 * reports containers as headers; lgb_mp_skip walks a whole nested value with a
 * counter instead of recursion, so hostile input cannot exhaust the stack.
 *
 * Writer: errors are sticky. After the first failure (LGB_ERR_BUFFER) every
 * further write is a no-op that returns the same error, so a sequence of writes
 * can be checked once at the end (w.err).
 *
 * Options used (lgb_config.h): LGB_ENABLE_FLOAT (0 removes the float functions;
 * float values are still parsed and skipped, as raw bits).
 */
#ifndef LGB_MP_H
#define LGB_MP_H

#include <stddef.h>
#include <stdint.h>

#include "lgb_config.h"
#include "lgb_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds of values the reader reports. */
typedef enum {
    LGB_MP_NIL = 0,
    LGB_MP_BOOL,
    LGB_MP_UINT,    /* a non-negative integer (any int format whose value >= 0) */
    LGB_MP_INT,     /* a negative integer */
    LGB_MP_FLOAT32,
    LGB_MP_FLOAT64,
    LGB_MP_STR,
    LGB_MP_BIN,
    LGB_MP_ARRAY,   /* header only: v.count elements follow */
    LGB_MP_MAP      /* header only: v.count key/value pairs follow */
} lgb_mp_kind_t;

/** One value (or container header) as read. */
typedef struct {
    lgb_mp_kind_t kind;
    union {
        uint8_t b;     /* BOOL: 0 or 1 */
        uint64_t u;    /* UINT */
        int64_t i;     /* INT (negative) */
        uint32_t f32;  /* FLOAT32: raw IEEE-754 bits */
        uint64_t f64;  /* FLOAT64: raw IEEE-754 bits */
        uint32_t count; /* ARRAY, MAP */
        struct {
            const uint8_t *ptr; /* STR, BIN: points into the reader's buffer */
            uint32_t len;
        } raw;
    } v;
} lgb_mp_obj_t;

typedef struct {
    const uint8_t *buf;
    size_t len;
    size_t pos;
} lgb_mp_reader_t;

typedef struct {
    uint8_t *buf;
    size_t cap;
    size_t len;
    lgb_ret_t err; /* LGB_OK until a write fails */
} lgb_mp_writer_t;

/* ------------------------------------------------------------------ reader */

/*
 * lgb_mp_reader_init
 *
 * Starts reading n bytes at buf. Cannot fail.
 */
void lgb_mp_reader_init(lgb_mp_reader_t *r, const uint8_t *buf, size_t n);

/*
 * lgb_mp_read
 *
 * Reads the next value; for an array or map only its header (then read its
 * elements one by one); for str/bin a pointer to the bytes, which are skipped.
 * On failure the position is unchanged.
 *
 * Returns LGB_OK and fills *o.
 * Returns LGB_ERR_PAYLOAD when the data ends inside the value or its format byte
 * is not supported (ext types, 0xc1).
 */
lgb_ret_t lgb_mp_read(lgb_mp_reader_t *r, lgb_mp_obj_t *o);

/*
 * lgb_mp_skip
 *
 * Skips one complete value, including everything inside containers, without
 * recursion.
 *
 * Returns LGB_OK when a whole value was skipped.
 * Returns LGB_ERR_PAYLOAD when the data is truncated or malformed (the position
 * is then unspecified).
 */
lgb_ret_t lgb_mp_skip(lgb_mp_reader_t *r);

/*
 * lgb_mp_read_array / lgb_mp_read_map
 *
 * Reads an array (map) header into *count.
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_PAYLOAD when the next value is something else or is malformed
 * (the position is then unchanged).
 */
lgb_ret_t lgb_mp_read_array(lgb_mp_reader_t *r, uint32_t *count);
lgb_ret_t lgb_mp_read_map(lgb_mp_reader_t *r, uint32_t *count);

/*
 * lgb_mp_read_uint / lgb_mp_read_int / lgb_mp_read_bool / lgb_mp_read_nil
 *
 * Read one value of that type: uint accepts any integer >= 0; int accepts any
 * integer in int64 range.
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_PAYLOAD when the next value has another type, is out of range
 * or is malformed (the position is then unchanged).
 */
lgb_ret_t lgb_mp_read_uint(lgb_mp_reader_t *r, uint64_t *v);
lgb_ret_t lgb_mp_read_int(lgb_mp_reader_t *r, int64_t *v);
lgb_ret_t lgb_mp_read_bool(lgb_mp_reader_t *r, uint8_t *v);
lgb_ret_t lgb_mp_read_nil(lgb_mp_reader_t *r);

/*
 * lgb_mp_read_str / lgb_mp_read_bin
 *
 * Read a str (bin) and point *p at its bytes inside the reader's buffer (not
 * NUL-terminated), *n at its length.
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_PAYLOAD when the next value has another type or is malformed
 * (the position is then unchanged).
 */
lgb_ret_t lgb_mp_read_str(lgb_mp_reader_t *r, const uint8_t **p, uint32_t *n);
lgb_ret_t lgb_mp_read_bin(lgb_mp_reader_t *r, const uint8_t **p, uint32_t *n);

#if LGB_ENABLE_FLOAT
/*
 * lgb_mp_read_float / lgb_mp_read_double
 *
 * Read a float32, float64 or integer and convert it.
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_PAYLOAD when the next value is not a number or is malformed
 * (the position is then unchanged).
 */
lgb_ret_t lgb_mp_read_float(lgb_mp_reader_t *r, float *v);
lgb_ret_t lgb_mp_read_double(lgb_mp_reader_t *r, double *v);
#endif

/* ------------------------------------------------------------------ writer */

/*
 * lgb_mp_writer_init
 *
 * Starts writing into cap bytes at buf. Cannot fail.
 */
void lgb_mp_writer_init(lgb_mp_writer_t *w, uint8_t *buf, size_t cap);

/*
 * lgb_mp_write_nil, _bool, _uint, _int, _str, _bin, _array, _map, _raw
 *
 * Append one value (for _array/_map: a header; then write the elements) in the
 * shortest msgpack encoding. _int writes non-negative values as uints, as
 * msgpack libraries do. _raw copies n bytes that already are msgpack.
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_BUFFER when the value does not fit (or an earlier write
 * failed); nothing of the value is written.
 */
lgb_ret_t lgb_mp_write_nil(lgb_mp_writer_t *w);
lgb_ret_t lgb_mp_write_bool(lgb_mp_writer_t *w, int v);
lgb_ret_t lgb_mp_write_uint(lgb_mp_writer_t *w, uint64_t v);
lgb_ret_t lgb_mp_write_int(lgb_mp_writer_t *w, int64_t v);
lgb_ret_t lgb_mp_write_str(lgb_mp_writer_t *w, const char *s, size_t n);
lgb_ret_t lgb_mp_write_cstr(lgb_mp_writer_t *w, const char *s);
lgb_ret_t lgb_mp_write_bin(lgb_mp_writer_t *w, const void *p, size_t n);
lgb_ret_t lgb_mp_write_array(lgb_mp_writer_t *w, uint32_t count);
lgb_ret_t lgb_mp_write_map(lgb_mp_writer_t *w, uint32_t count);
lgb_ret_t lgb_mp_write_raw(lgb_mp_writer_t *w, const void *p, size_t n);

#if LGB_ENABLE_FLOAT
/*
 * lgb_mp_write_float / lgb_mp_write_double
 *
 * Append a float32 (float64).
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_BUFFER when it does not fit (or an earlier write failed).
 */
lgb_ret_t lgb_mp_write_float(lgb_mp_writer_t *w, float v);
lgb_ret_t lgb_mp_write_double(lgb_mp_writer_t *w, double v);
#endif

#ifdef __cplusplus
}
#endif

#endif /* LGB_MP_H */
