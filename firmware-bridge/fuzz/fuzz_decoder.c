/*
 * fuzz_decoder.c -- libFuzzer target for everything that parses bytes from the
 * other side: the streaming frame decoder, the msgpack reader and the payload
 * schemas, ISO-TP reassembly (and flow-control handling), and the whole MCU
 * endpoint (CALL dispatch included). Built by `make fuzz` with
 * clang -fsanitize=fuzzer,address,undefined; run by tools/fuzz-bridge-c.sh.
 *
 * One input drives all of them, so every mutation reaches each parser:
 *  1. the bytes, one at a time, into lgb_decoder_feed; every packet it yields is
 *     schema-checked (lgb_msg_validate) and its payload walked with lgb_mp_skip;
 *     and through the whole-buffer COBS decoder/encoder (round trips);
 *  2. the bytes as a msgpack payload of every message type, and as a sequence
 *     of msgpack values read with lgb_mp_read / lgb_mp_skip;
 *  3. the bytes as CAN frames ([len, id_lo, data...]) into an ISO-TP endpoint
 *     that is also sending a packet, so flow-control frames are exercised too;
 *  4. the bytes into an lgb_link_t (COBS mode) with a small function table,
 *     the clock advancing between chunks so retransmissions and timeouts run.
 * Invariants are checked with __builtin_trap() (a crash the fuzzer reports).
 */
#include <stdint.h>
#include <string.h>

#include "lgb_frame.h"
#include "lgb_isotp.h"
#include "lgb_link.h"
#include "lgb_mp.h"
#include "lgb_msg.h"

#define REQUIRE(c)                                                                                                   \
    do {                                                                                                             \
        if (!(c)) {                                                                                                  \
            __builtin_trap();                                                                                        \
        }                                                                                                            \
    } while (0)

static uint32_t clock_ms;
static size_t written;

static uint32_t now(void *ctx)
{
    (void)ctx;
    return clock_ms;
}

static size_t sink(void *ctx, const uint8_t *data, size_t n)
{
    (void)ctx;
    (void)data;
    written += n;
    return n;
}

static int can_sink(void *ctx, uint32_t id, const uint8_t *data, uint8_t len)
{
    (void)ctx;
    (void)id;
    (void)data;
    REQUIRE(len <= 8);
    return 0;
}

/* ------------------------------------------------------------------ 1 */

static void fuzz_decoder(const uint8_t *data, size_t size)
{
    static lgb_decoder_t d;
    size_t i;
    lgb_decoder_init(&d);
    for (i = 0; i < size; i++) {
        lgb_packet_t pk;
        lgb_ret_t r = lgb_decoder_feed(&d, data[i], &pk);
        if (r == LGB_OK) {
            lgb_mp_reader_t rd;
            REQUIRE(pk.len <= LGB_MAX_PAYLOAD);
            REQUIRE(pk.version == LGB_VERSION);
            (void)lgb_msg_validate(pk.type, pk.payload, pk.len);
            lgb_mp_reader_init(&rd, pk.payload, pk.len);
            if (lgb_mp_skip(&rd) == LGB_OK) {
                REQUIRE(rd.pos <= pk.len);
            }
        } else if (r != LGB_PENDING) {
            REQUIRE(r == LGB_ERR_CRC || r == LGB_ERR_COBS || r == LGB_ERR_TOO_LONG || r == LGB_ERR_LENGTH ||
                    r == LGB_ERR_VERSION);
            REQUIRE(data[i] == 0);
        }
    }
}

/* Whole-buffer COBS: decoding never overruns; encode -> decode is the identity. */
static void fuzz_cobs(const uint8_t *data, size_t size)
{
    static uint8_t dec[2048], enc[2100], back[2100];
    size_t dn = 0, en = 0, bn = 0;
    if (size > 1024) {
        return;
    }
    if (lgb_cobs_decode(data, size, dec, sizeof(dec), &dn) == LGB_OK) {
        REQUIRE(dn <= size);
        REQUIRE(lgb_cobs_encode(dec, dn, enc, sizeof(enc), &en) == LGB_OK);
        REQUIRE(lgb_cobs_decode(enc, en, back, sizeof(back), &bn) == LGB_OK);
        REQUIRE(bn == dn && memcmp(back, dec, dn) == 0);
    }
    REQUIRE(lgb_frame_encode(data, size, enc, sizeof(enc), &en) == LGB_OK);
    REQUIRE(en <= LGB_FRAME_ENCODED_MAX(size) && enc[en - 1] == 0 && memchr(enc, 0, en - 1) == NULL);
    REQUIRE(lgb_cobs_decode(enc, en - 1, back, sizeof(back), &bn) == LGB_OK);
    REQUIRE(bn == size && memcmp(back, data, size) == 0);
}

/* ------------------------------------------------------------------ 2 */

static void fuzz_msgpack(const uint8_t *data, size_t size)
{
    static const uint8_t types[] = {LGB_MSG_HELLO, LGB_MSG_HELLO_REQ, LGB_MSG_PING, LGB_MSG_PONG, LGB_MSG_CALL,
                                    LGB_MSG_RESULT, LGB_MSG_EVENT, LGB_MSG_ACK, LGB_MSG_NAK, 0x7F};
    lgb_mp_reader_t r;
    lgb_mp_obj_t o;
    size_t i;
    int guard = 0;
    for (i = 0; i < sizeof(types); i++) {
        lgb_ret_t v = lgb_msg_validate(types[i], data, size);
        REQUIRE(v == LGB_OK || v == LGB_ERR_PAYLOAD || v == LGB_ERR_LENGTH || v == LGB_ERR_TYPE);
    }
    lgb_mp_reader_init(&r, data, size);
    while (r.pos < r.len && guard++ < 100000) {
        size_t before = r.pos;
        if (lgb_mp_read(&r, &o) != LGB_OK) {
            REQUIRE(r.pos == before); /* a failed read leaves the position */
            break;
        }
        REQUIRE(r.pos > before && r.pos <= r.len);
        if (o.kind == LGB_MP_STR || o.kind == LGB_MP_BIN) {
            REQUIRE(o.v.raw.ptr >= data && o.v.raw.ptr + o.v.raw.len <= data + size);
        }
    }
    lgb_mp_reader_init(&r, data, size);
    while (r.pos < r.len && lgb_mp_skip(&r) == LGB_OK) {
        REQUIRE(r.pos <= r.len);
    }
    /* A re-encoding of the first value, read back, is well-formed. */
    {
        uint8_t out[64];
        lgb_mp_writer_t w;
        int64_t iv;
        lgb_mp_reader_init(&r, data, size);
        lgb_mp_writer_init(&w, out, sizeof(out));
        if (lgb_mp_read_int(&r, &iv) == LGB_OK && lgb_mp_write_int(&w, iv) == LGB_OK) {
            int64_t back;
            lgb_mp_reader_init(&r, out, w.len);
            REQUIRE(lgb_mp_read_int(&r, &back) == LGB_OK && back == iv && r.pos == w.len);
        }
    }
}

/* ------------------------------------------------------------------ 3 */

static void fuzz_isotp(const uint8_t *data, size_t size)
{
    static lgb_isotp_t t;
    static const uint8_t pkt[40] = {1, 2, 3};
    lgb_can_io_t io = {can_sink, now, NULL};
    size_t i = 0;
    lgb_isotp_init(&t, &io, 0x7E8, 0x7E0);
    lgb_isotp_send(&t, pkt, sizeof(pkt));
    while (i < size) {
        uint8_t ctl = data[i];
        uint8_t len = (uint8_t)(ctl & 0x0F);
        uint32_t id = (ctl & 0x10) ? 0x7E1u : 0x7E0u; /* mostly ours */
        const uint8_t *m = NULL;
        size_t mn = 0;
        lgb_ret_t r;
        if (len > 8) {
            len = 8;
        }
        i++;
        if (size - i < len) {
            len = (uint8_t)(size - i);
        }
        r = lgb_isotp_on_frame(&t, id, data + i, len, &m, &mn);
        if (r == LGB_OK) {
            REQUIRE(m != NULL && mn > 0 && mn <= LGB_PACKET_MAX);
            {
                lgb_packet_t pk;
                (void)lgb_packet_parse(m, mn, &pk);
            }
        } else {
            REQUIRE(r == LGB_PENDING || r == LGB_ERR_ISOTP || r == LGB_ERR_TOO_LONG);
        }
        i += len;
        clock_ms += (ctl & 0x20) ? 300u : 1u;
        (void)lgb_isotp_poll(&t);
        if (lgb_isotp_idle(&t)) {
            lgb_isotp_send(&t, pkt, sizeof(pkt));
        }
    }
}

/* ------------------------------------------------------------------ 4 */

static lgb_ret_t fn_bool(lgb_call_t *c)
{
    uint8_t b = 0;
    (void)lgb_mp_read_bool(&c->args, &b);
    return lgb_mp_write_bool(&c->result, b);
}

static lgb_ret_t fn_echo(lgb_call_t *c)
{
    const uint8_t *p = NULL;
    uint32_t n = 0;
    (void)lgb_mp_read_bin(&c->args, &p, &n);
    return lgb_mp_write_bin(&c->result, p, n);
}

static lgb_ret_t fn_mixed(lgb_call_t *c)
{
    int64_t i = 0;
    uint64_t u = 0;
    float f = 0;
    const uint8_t *s = NULL;
    uint32_t n = 0;
    (void)lgb_mp_read_int(&c->args, &i);
    (void)lgb_mp_read_uint(&c->args, &u);
    (void)lgb_mp_read_float(&c->args, &f);
    (void)lgb_mp_read_str(&c->args, &s, &n);
    if (i < 0) {
        c->error = "negative";
        return LGB_ERR_FUNCTION;
    }
    return lgb_mp_write_float(&c->result, f);
}

static const lgb_function_t functions[] = {
    {"set", "b", "b", fn_bool}, {"echo", "y", "y", fn_echo}, {"mixed", "iufs", "f", fn_mixed}};
static const char *const events[] = {"e"};
static const lgb_device_t device = {"fuzz", "0", functions, 3, events, 1, NULL, NULL};

static void fuzz_link(const uint8_t *data, size_t size)
{
    static lgb_link_t l;
    lgb_io_t io = {sink, now, NULL};
    size_t i = 0;
    REQUIRE(lgb_link_init(&l, &io, &device, LGB_LINK_COBS) == LGB_OK);
    (void)lgb_link_start(&l);
    while (i < size) {
        size_t chunk = 1u + (data[i] % 23u);
        if (chunk > size - i) {
            chunk = size - i;
        }
        (void)lgb_link_input(&l, data + i, chunk);
        i += chunk;
        clock_ms += (uint32_t)(data[i - 1] & 0x7F);
        (void)lgb_link_poll(&l);
        if ((data[i - 1] & 0x0F) == 0x0F) {
            (void)lgb_link_send_event_bool(&l, 0, 1);
        }
    }
    /* the line goes quiet: every timer ends */
    for (i = 0; i < 40; i++) {
        clock_ms += 1000;
        (void)lgb_link_poll(&l);
    }
    REQUIRE(!lgb_link_busy(&l)); /* nothing can stay in flight forever */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    clock_ms = 1000;
    fuzz_decoder(data, size);
    fuzz_cobs(data, size);
    fuzz_msgpack(data, size);
    fuzz_isotp(data, size);
    fuzz_link(data, size);
    return 0;
}
