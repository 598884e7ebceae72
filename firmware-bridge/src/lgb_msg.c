/*
 * lgb_msg.c -- payload schema checks for every message type (PROTOCOL.md §7) and
 * lgb_strerror().
 *
 * Why separate from lgb_link.c: the MCU endpoint parses only what it receives
 * (CALL, PING, ACK, NAK, HELLO_REQ) inline; this full validator serves the
 * tests, the fuzzer and any host written in C, and costs the firmware nothing
 * unless it is linked.
 */
#include "lgb_mp.h"
#include "lgb_msg.h"

/* Skips the elements of an array beyond the `used` ones the schema defines
 * (PROTOCOL.md §11: extra trailing elements are allowed). */
static lgb_ret_t skip_extra(lgb_mp_reader_t *r, uint32_t count, uint32_t used)
{
    while (count-- > used) {
        if (lgb_mp_skip(r) != LGB_OK) {
            return LGB_ERR_PAYLOAD;
        }
    }
    return LGB_OK;
}

static int read_str(lgb_mp_reader_t *r)
{
    const uint8_t *p;
    uint32_t n;
    return lgb_mp_read_str(r, &p, &n) == LGB_OK;
}

static int read_uint_max(lgb_mp_reader_t *r, uint64_t max, uint64_t *out)
{
    uint64_t v;
    if (lgb_mp_read_uint(r, &v) != LGB_OK || v > max) {
        return 0;
    }
    if (out != NULL) {
        *out = v;
    }
    return 1;
}

static lgb_ret_t check_hello(lgb_mp_reader_t *r)
{
    uint32_t n, nf, ne, i;
    if (lgb_mp_read_array(r, &n) != LGB_OK || n < 5u || !read_str(r) || !read_str(r) ||
        !read_uint_max(r, 0xFFFFu, NULL) || lgb_mp_read_array(r, &nf) != LGB_OK) {
        return LGB_ERR_PAYLOAD;
    }
    for (i = 0; i < nf; i++) {
        uint32_t m;
        if (lgb_mp_read_array(r, &m) != LGB_OK || m < 3u || !read_str(r) || !read_str(r) || !read_str(r) ||
            skip_extra(r, m, 3) != LGB_OK) {
            return LGB_ERR_PAYLOAD;
        }
    }
    if (lgb_mp_read_array(r, &ne) != LGB_OK) {
        return LGB_ERR_PAYLOAD;
    }
    for (i = 0; i < ne; i++) {
        if (!read_str(r)) {
            return LGB_ERR_PAYLOAD;
        }
    }
    return skip_extra(r, n, 5);
}

static lgb_ret_t check_triple(lgb_mp_reader_t *r, uint8_t type)
{
    uint32_t n;
    uint64_t status = 0;
    uint64_t max2 = (type == LGB_MSG_EVENT) ? 0xFFFFFFFFu : UINT64_MAX;
    uint64_t max1 = (type == LGB_MSG_EVENT) ? UINT64_MAX : 0xFFFFu;

    if (lgb_mp_read_array(r, &n) != LGB_OK || n < 3u || !read_uint_max(r, max1, NULL) ||
        !read_uint_max(r, max2, &status)) {
        return LGB_ERR_PAYLOAD;
    }
    if (type == LGB_MSG_CALL) {
        uint32_t nargs;
        size_t pos = r->pos;
        if (lgb_mp_read_array(r, &nargs) != LGB_OK) {
            return LGB_ERR_PAYLOAD;
        }
        r->pos = pos;
    } else if (type == LGB_MSG_RESULT && status != 0u) {
        size_t pos = r->pos;
        if (!read_str(r)) {
            return LGB_ERR_PAYLOAD;
        }
        r->pos = pos;
    }
    if (lgb_mp_skip(r) != LGB_OK) {
        return LGB_ERR_PAYLOAD;
    }
    return skip_extra(r, n, 3);
}

lgb_ret_t lgb_msg_validate(uint8_t type, const uint8_t *payload, size_t n)
{
    lgb_mp_reader_t r;
    lgb_ret_t ret;

    switch (type) {
    case LGB_MSG_HELLO_REQ:
        return n == 0u ? LGB_OK : LGB_ERR_LENGTH;
    case LGB_MSG_PING:
    case LGB_MSG_PONG:
        return n <= LGB_PING_MAX ? LGB_OK : LGB_ERR_LENGTH;
    case LGB_MSG_ACK:
        return n == 1u ? LGB_OK : LGB_ERR_LENGTH;
    case LGB_MSG_NAK:
        return n == 2u ? LGB_OK : LGB_ERR_LENGTH;
    case LGB_MSG_HELLO:
    case LGB_MSG_CALL:
    case LGB_MSG_RESULT:
    case LGB_MSG_EVENT:
        break;
    default:
        return LGB_ERR_TYPE;
    }
    lgb_mp_reader_init(&r, payload, n);
    ret = (type == LGB_MSG_HELLO) ? check_hello(&r) : check_triple(&r, type);
    if (ret == LGB_OK && r.pos != r.len) {
        ret = LGB_ERR_PAYLOAD; /* trailing bytes */
    }
    return ret;
}

#if LGB_ENABLE_ERRTEXT
static const char *const names[] = {
    "LGB_OK",           "LGB_ERR_CRC",     "LGB_ERR_COBS",   "LGB_ERR_TOO_LONG",
    "LGB_ERR_VERSION",  "LGB_ERR_TYPE",    "LGB_ERR_LENGTH", "LGB_ERR_PAYLOAD",
    "LGB_ERR_NO_FUNCTION", "LGB_ERR_ARGS", "LGB_ERR_BUSY",   "LGB_ERR_FUNCTION",
    "LGB_ERR_BUFFER",   "LGB_ERR_TIMEOUT", "LGB_ERR_STATE",  "LGB_ERR_ISOTP",
};
#endif

const char *lgb_strerror(lgb_ret_t ret)
{
#if LGB_ENABLE_ERRTEXT
    if (ret >= 0 && ret < (lgb_ret_t)(sizeof(names) / sizeof(names[0]))) {
        return names[ret];
    }
    return ret == LGB_PENDING ? "LGB_PENDING" : "?";
#else
    (void)ret;
    return "";
#endif
}
