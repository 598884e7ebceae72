/*
 * test_link.c -- the MCU endpoint's state machine (PROTOCOL.md §7-§9) driven by
 * a fake transport and a fake clock: HELLO and its retransmissions with backoff,
 * ACK/NAK, CALL dispatch and its errors, duplicate detection, the RESULT cache,
 * BUSY, HELLO_REQ resets, EVENTs, sequence numbers, write faults after every
 * byte, and the whole link over ISO-TP.
 *
 * Why one file over 600 lines: every test uses the same fake transport, fake
 * clock, device table and host-side helpers defined at the top; splitting it
 * would duplicate them or need a second shared header.
 */
#include <stdio.h>
#include <string.h>

#include "lgb_frame.h"
#include "lgb_isotp.h"
#include "lgb_link.h"
#include "lgb_mp.h"
#include "lgb_test.h"

/* ------------------------------------------------------------------ fakes */

typedef struct {
    uint8_t out[16384];
    size_t n;           /* bytes written by the link */
    size_t rd;          /* bytes already decoded by the test's "host" */
    size_t budget;      /* fault injection: bytes still accepted (SIZE_MAX = all) */
    uint32_t now;
    lgb_decoder_t host; /* decodes what the link wrote */
} fake_t;

static fake_t fk;

static size_t fake_write(void *ctx, const uint8_t *data, size_t n)
{
    fake_t *f = (fake_t *)ctx;
    size_t k = n < f->budget ? n : f->budget;
    if (k > sizeof(f->out) - f->n) {
        k = sizeof(f->out) - f->n;
    }
    memcpy(f->out + f->n, data, k);
    f->n += k;
    if (f->budget != (size_t)-1) {
        f->budget -= k;
    }
    return k;
}

static uint32_t fake_now(void *ctx)
{
    return ((fake_t *)ctx)->now;
}

typedef struct {
    uint8_t type, flags, seq;
    size_t len;
    uint8_t payload[LGB_MAX_PAYLOAD];
} pkt_t;

/* Decodes everything the link wrote since the last call; returns the count. */
static int host_read(pkt_t *out, int max)
{
    int n = 0;
    while (fk.rd < fk.n) {
        lgb_packet_t pk;
        lgb_ret_t r = lgb_decoder_feed(&fk.host, fk.out[fk.rd++], &pk);
        if (r == LGB_OK && n < max) {
            out[n].type = pk.type;
            out[n].flags = pk.flags;
            out[n].seq = pk.seq;
            out[n].len = pk.len;
            memcpy(out[n].payload, pk.payload, pk.len);
            n++;
        }
    }
    return n;
}

/* ------------------------------------------------------------------ device */

static int led_calls;
typedef struct {
    uint8_t type, seq;
    lgb_ret_t status;
} sent_t;
static sent_t sent[64];
static int nsent;

static lgb_ret_t fn_read_temp(lgb_call_t *c)
{
#if LGB_ENABLE_FLOAT
    return lgb_mp_write_float(&c->result, 21.5f);
#else
    return lgb_mp_write_int(&c->result, 21);
#endif
}

static lgb_ret_t fn_set_led(lgb_call_t *c)
{
    uint8_t on = 0;
    led_calls++;
    if (lgb_mp_read_bool(&c->args, &on) != LGB_OK) {
        return LGB_ERR_ARGS;
    }
    return lgb_mp_write_bool(&c->result, on);
}

static lgb_ret_t fn_fail(lgb_call_t *c)
{
    c->error = "boom";
    return LGB_ERR_FUNCTION;
}

static lgb_ret_t fn_big(lgb_call_t *c)
{
    static uint8_t zeros[4096];
    uint64_t n = 0;
    (void)lgb_mp_read_uint(&c->args, &n);
    return lgb_mp_write_bin(&c->result, zeros, (size_t)n);
}

static lgb_ret_t fn_add(lgb_call_t *c)
{
    int64_t a = 0, b = 0;
    (void)lgb_mp_read_int(&c->args, &a);
    (void)lgb_mp_read_int(&c->args, &b);
    return lgb_mp_write_int(&c->result, a + b);
}

static lgb_ret_t fn_nothing(lgb_call_t *c)
{
    (void)c;
    return LGB_OK; /* writes no value: the link sends nil */
}

static const lgb_function_t functions[] = {
    {"read_temp", "", "f", fn_read_temp}, {"set_led", "b", "b", fn_set_led}, {"fail", "", "n", fn_fail},
    {"big", "u", "y", fn_big},            {"add", "ii", "i", fn_add},        {"nothing", "n", "n", fn_nothing},
    {"missing", "", "n", NULL},
};
static const char *const events[] = {"button", "level"};

static void on_sent(void *user, uint8_t type, uint8_t seq, lgb_ret_t status)
{
    (void)user;
    if (nsent < 64) {
        sent[nsent].type = type;
        sent[nsent].seq = seq;
        sent[nsent].status = status;
        nsent++;
    }
}

static const lgb_device_t device = {"test-node", "9.9", functions, 7, events, 2, NULL, on_sent};

static lgb_link_t link_;

/* Fresh link + fakes; starts it (HELLO) and ACKs the HELLO unless told not to. */
static void setup(int ack_hello);

static void host_send(uint8_t type, uint8_t flags, uint8_t seq, const uint8_t *payload, size_t n)
{
    uint8_t pkt[LGB_PACKET_MAX + 64], frame[LGB_FRAME_ENCODED_MAX(LGB_PACKET_MAX + 64)];
    size_t pn = 0, fn = 0;
    /* Build by hand so tests can send payloads over the limit too. */
    pkt[0] = LGB_VERSION;
    pkt[1] = type;
    pkt[2] = flags;
    pkt[3] = seq;
    pkt[4] = (uint8_t)(n >> 8);
    pkt[5] = (uint8_t)n;
    if (n > 0u) {
        memcpy(pkt + 6, payload, n);
    }
    {
        uint16_t crc = lgb_crc16(pkt, n + 6u);
        pkt[n + 6u] = (uint8_t)(crc >> 8);
        pkt[n + 7u] = (uint8_t)crc;
    }
    pn = n + 8u;
    CHECK_EQ(lgb_frame_encode(pkt, pn, frame, sizeof(frame), &fn), LGB_OK);
    (void)lgb_link_input(&link_, frame, fn);
}

static void host_ack(uint8_t seq)
{
    static uint8_t host_seq = 100;
    host_send(LGB_MSG_ACK, 0, host_seq++, &seq, 1);
}

static void setup(int ack_hello)
{
    pkt_t p[4];
    memset(&fk, 0, sizeof(fk));
    fk.budget = (size_t)-1;
    fk.now = 1000;
    lgb_decoder_init(&fk.host);
    nsent = 0;
    led_calls = 0;
    CHECK_EQ(lgb_link_init(&link_, &(lgb_io_t){fake_write, fake_now, &fk}, &device, LGB_LINK_COBS), LGB_OK);
    CHECK_EQ(lgb_link_start(&link_), LGB_OK);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK_EQ(p[0].type, LGB_MSG_HELLO);
    if (ack_hello) {
        host_ack(p[0].seq);
        CHECK_EQ(nsent, 1);
        nsent = 0;
    }
}

/* msgpack helpers for CALL payloads */
static size_t call_payload(uint8_t *buf, size_t cap, uint16_t id, uint8_t fn, const uint8_t *args, size_t alen)
{
    lgb_mp_writer_t w;
    lgb_mp_writer_init(&w, buf, cap);
    lgb_mp_write_array(&w, 3);
    lgb_mp_write_uint(&w, id);
    lgb_mp_write_uint(&w, fn);
    lgb_mp_write_raw(&w, args, alen);
    return w.len;
}

static void host_call(uint8_t seq, uint16_t id, uint8_t fn, const uint8_t *args, size_t alen)
{
    uint8_t buf[300];
    size_t n = call_payload(buf, sizeof(buf), id, fn, args, alen);
    host_send(LGB_MSG_CALL, LGB_FLAG_ACK_REQ, seq, buf, n);
}

/* Parses a RESULT payload. */
static void parse_result(const pkt_t *p, uint64_t *id, uint64_t *status, lgb_mp_obj_t *value)
{
    lgb_mp_reader_t r;
    uint32_t n = 0;
    CHECK_EQ(p->type, LGB_MSG_RESULT);
    CHECK_EQ(lgb_msg_validate(p->type, p->payload, p->len), LGB_OK);
    lgb_mp_reader_init(&r, p->payload, p->len);
    CHECK_EQ(lgb_mp_read_array(&r, &n), LGB_OK);
    CHECK_EQ(lgb_mp_read_uint(&r, id), LGB_OK);
    CHECK_EQ(lgb_mp_read_uint(&r, status), LGB_OK);
    CHECK_EQ(lgb_mp_read(&r, value), LGB_OK);
}

static void advance(uint32_t ms)
{
    uint32_t i;
    for (i = 0; i < ms; i++) {
        fk.now++;
        (void)lgb_link_poll(&link_);
    }
}

/* ------------------------------------------------------------------ tests */

TEST(start_sends_zero_then_hello)
{
    lgb_mp_reader_t r;
    uint32_t n = 0;
    const uint8_t *s;
    lgb_packet_t pk;
    size_t used = 0;
    setup(0);
    CHECK_EQ(fk.out[0], 0x00); /* the leading delimiter */
    lgb_decoder_init(&fk.host);
    CHECK_EQ(lgb_decoder_feed_buf(&fk.host, fk.out + 1, fk.n - 1, &used, &pk), LGB_OK);
    CHECK_EQ(pk.type, LGB_MSG_HELLO);
    CHECK_EQ(pk.flags, LGB_FLAG_ACK_REQ);
    CHECK_EQ(pk.seq, 0);
    CHECK_EQ(lgb_msg_validate(LGB_MSG_HELLO, pk.payload, pk.len), LGB_OK);
    lgb_mp_reader_init(&r, pk.payload, pk.len);
    CHECK_EQ(lgb_mp_read_array(&r, &n), LGB_OK);
    CHECK_EQ(n, 5);
    CHECK_EQ(lgb_mp_read_str(&r, &s, &n), LGB_OK);
    CHECK(n == 9 && memcmp(s, "test-node", 9) == 0);
}

TEST(hello_retransmits_with_backoff_then_times_out)
{
    pkt_t p[8];
    uint32_t t0, times[8];
    int k = 0, i;
    setup(0);
    t0 = fk.now;
    while (fk.now - t0 < 5000u && k < 8) {
        fk.now++;
        if (lgb_link_poll(&link_) == LGB_ERR_TIMEOUT) {
            times[k++] = fk.now - t0;
            break;
        }
        i = host_read(p, 8);
        if (i > 0) {
            CHECK_EQ(i, 1);
            CHECK_EQ(p[0].type, LGB_MSG_HELLO);
            CHECK_EQ(p[0].seq, 0);
            CHECK_EQ(p[0].flags, LGB_FLAG_ACK_REQ | LGB_FLAG_RETRY);
            times[k++] = fk.now - t0;
        }
    }
    CHECK_EQ(k, LGB_RETRIES + 1);
    /* timeout T, then 2T, 4T, 8T: retransmissions at T, 3T, 7T; give-up at 15T */
    if (k == LGB_RETRIES + 1 && LGB_RETRIES == 3) {
        uint32_t t = times[0];
        CHECK(t >= LGB_ACK_TIMEOUT_MS && t <= LGB_ACK_TIMEOUT_MS + 20u); /* + airtime */
        CHECK_EQ(times[1], 3u * t);
        CHECK_EQ(times[2], 7u * t);
        CHECK_EQ(times[3], 15u * t);
    }
    CHECK_EQ(nsent, 1);
    CHECK_EQ(sent[0].status, LGB_ERR_TIMEOUT);
    CHECK_EQ(sent[0].type, LGB_MSG_HELLO);
#if LGB_ENABLE_STATS
    CHECK_EQ(link_.stats.timeouts, 1);
    CHECK_EQ(link_.stats.retransmissions, LGB_RETRIES);
#endif
    advance(2000);
    CHECK_EQ(host_read(p, 8), 0);
    CHECK(!lgb_link_busy(&link_));
}

TEST(ack_stops_retransmission)
{
    pkt_t p[4];
    setup(1);
    advance(3000);
    CHECK_EQ(host_read(p, 4), 0);
    /* An ACK for a seq not in flight is ignored. */
    host_ack(77);
    CHECK_EQ(nsent, 0);
}

TEST(timer_wraps)
{
    pkt_t p[4];
    setup(0);
    /* restart the link with the clock just before the 32-bit wrap */
    fk.now = 0xFFFFFFF0u;
    CHECK_EQ(lgb_link_start(&link_), LGB_OK); /* abandons the first HELLO: on_sent STATE */
    CHECK_EQ(nsent, 1);
    CHECK_EQ(sent[0].status, LGB_ERR_STATE);
    (void)host_read(p, 4);
    advance(LGB_ACK_TIMEOUT_MS - 1u);
    CHECK_EQ(host_read(p, 4), 0);
    advance(20);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK(p[0].flags & LGB_FLAG_RETRY);
}

TEST(call_read_temp_ack_then_result)
{
    pkt_t p[4];
    uint64_t id = 0, st = 9;
    lgb_mp_obj_t v;
    const uint8_t noargs[] = {0x90};
    setup(1);
    host_call(5, 1, 0, noargs, 1);
    CHECK_EQ(host_read(p, 4), 2);
    CHECK_EQ(p[0].type, LGB_MSG_ACK);
    CHECK_EQ(p[0].len, 1);
    CHECK_EQ(p[0].payload[0], 5);
    CHECK_EQ(p[1].flags, LGB_FLAG_ACK_REQ);
    parse_result(&p[1], &id, &st, &v);
    CHECK_EQ(id, 1);
    CHECK_EQ(st, 0);
#if LGB_ENABLE_FLOAT
    CHECK_EQ(v.kind, LGB_MP_FLOAT32);
    CHECK_EQ(v.v.f32, 0x41AC0000u);
#endif
    /* seqs: HELLO 0, ACK 1, RESULT 2 */
    CHECK_EQ(p[0].seq, 1);
    CHECK_EQ(p[1].seq, 2);
    host_ack(p[1].seq);
    CHECK_EQ(nsent, 1);
    CHECK_EQ(sent[0].type, LGB_MSG_RESULT);
    CHECK_EQ(sent[0].status, LGB_OK);
    CHECK(!lgb_link_busy(&link_));
}

TEST(duplicate_call_is_acked_not_rerun)
{
    pkt_t p[8];
    const uint8_t on[] = {0x91, 0xC3};
    setup(1);
    host_call(9, 2, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 2);
    CHECK_EQ(led_calls, 1);
    /* the ACK was "lost": the host retransmits with RETRY and the same seq */
    {
        uint8_t buf[32];
        size_t n = call_payload(buf, sizeof(buf), 2, 1, on, 2);
        host_send(LGB_MSG_CALL, LGB_FLAG_ACK_REQ | LGB_FLAG_RETRY, 9, buf, n);
    }
    CHECK_EQ(host_read(p, 8), 1);
    CHECK_EQ(p[0].type, LGB_MSG_ACK);
    CHECK_EQ(p[0].payload[0], 9);
    CHECK_EQ(led_calls, 1);
#if LGB_ENABLE_STATS
    CHECK_EQ(link_.stats.rx_duplicates, 1);
#endif
}

TEST(repeated_call_id_answered_from_cache)
{
    pkt_t p[8];
    uint64_t id = 0, st = 9;
    lgb_mp_obj_t v;
    const uint8_t on[] = {0x91, 0xC3};
    setup(1);
    host_call(3, 7, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 2);
    host_ack(p[1].seq);
    /* The host timed out waiting (the RESULT was lost for good) and repeats the
     * call with the same call_id, as a new packet. */
    host_call(4, 7, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 2);
    CHECK_EQ(p[0].type, LGB_MSG_ACK);
    parse_result(&p[1], &id, &st, &v);
    CHECK_EQ(id, 7);
    CHECK_EQ(led_calls, 1);
    /* While that RESULT is in flight, a third copy is ACKed without a second RESULT. */
    host_call(5, 7, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 1);
    CHECK_EQ(p[0].type, LGB_MSG_ACK);
    CHECK_EQ(led_calls, 1);
}

TEST(new_call_while_result_unacked_is_busy)
{
    pkt_t p[8];
    const uint8_t on[] = {0x91, 0xC3};
    setup(1);
    host_call(3, 1, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 2); /* ACK, RESULT (not ACKed yet) */
    host_call(4, 2, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 1);
    CHECK_EQ(p[0].type, LGB_MSG_NAK);
    CHECK_EQ(p[0].payload[0], 4);
    CHECK_EQ(p[0].payload[1], LGB_ERR_BUSY);
    CHECK_EQ(led_calls, 1);
    /* RESULT acknowledged; the host's retransmission of seq 4 is now processed. */
    host_ack(2);
    {
        uint8_t buf[32];
        size_t n = call_payload(buf, sizeof(buf), 2, 1, on, 2);
        host_send(LGB_MSG_CALL, LGB_FLAG_ACK_REQ | LGB_FLAG_RETRY, 4, buf, n);
    }
    CHECK_EQ(host_read(p, 8), 2);
    CHECK_EQ(p[0].type, LGB_MSG_ACK);
    CHECK_EQ(p[1].type, LGB_MSG_RESULT);
    CHECK_EQ(led_calls, 2);
}

static void expect_status(uint8_t fn, const uint8_t *args, size_t alen, uint64_t want, const char *text)
{
    pkt_t p[8];
    uint64_t id = 0, st = 0;
    lgb_mp_obj_t v;
    static uint16_t call_id = 100;
    static uint8_t seq = 0;
    setup(1);
    host_call(seq++, call_id, fn, args, alen);
    CHECK_EQ(host_read(p, 8), 2);
    parse_result(&p[1], &id, &st, &v);
    CHECK_EQ(id, call_id);
    CHECK_EQ(st, want);
    call_id++;
    if (want != 0u) {
        CHECK_EQ(v.kind, LGB_MP_STR);
#if LGB_ENABLE_ERRTEXT
        if (text != NULL) {
            CHECK(v.v.raw.len == strlen(text) && memcmp(v.v.raw.ptr, text, v.v.raw.len) == 0);
        }
#else
        /* the library's texts are compiled out; a handler's own text stays */
        CHECK(v.v.raw.len == 0 || (text != NULL && strcmp(text, "boom") == 0));
#endif
    }
}

TEST(call_errors_in_result_status)
{
    const uint8_t none[] = {0x90};
    const uint8_t one_int[] = {0x91, 0x05};
    const uint8_t two_bools[] = {0x92, 0xC3, 0xC2};
    const uint8_t ints[] = {0x92, 0xD0, 0x80, 0xCD, 0x01, 0x00};
    const uint8_t big_ok[] = {0x91, 0x10};
    const uint8_t big_too[] = {0x91, 0xCD, 0x10, 0x00};
    const uint8_t nil[] = {0x91, 0xC0};
    const uint8_t map_arg[] = {0x91, 0x80};
    const uint8_t huge_uint_for_int[] = {0x92, 0xCF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    expect_status(0, none, 1, 0, NULL);
    expect_status(9, none, 1, LGB_ERR_NO_FUNCTION, "no such function");
    expect_status(6, none, 1, LGB_ERR_NO_FUNCTION, "no such function"); /* NULL handler */
    expect_status(1, one_int, 2, LGB_ERR_ARGS, "wrong arguments");
    expect_status(1, two_bools, 3, LGB_ERR_ARGS, "wrong arguments");
    expect_status(1, none, 1, LGB_ERR_ARGS, "wrong arguments");
    expect_status(2, none, 1, LGB_ERR_FUNCTION, "boom");
    expect_status(3, big_ok, 2, 0, NULL);
    expect_status(3, big_too, 4, LGB_ERR_BUFFER, "result too large");
    expect_status(4, ints, 6, 0, NULL);
    expect_status(4, huge_uint_for_int, 11, LGB_ERR_ARGS, NULL);
    expect_status(5, nil, 2, 0, NULL);
    expect_status(5, map_arg, 2, LGB_ERR_ARGS, NULL);
    CHECK_EQ(led_calls, 0); /* set_led never ran with bad arguments */
}

TEST(add_result_value)
{
    pkt_t p[4];
    uint64_t id = 0, st = 0;
    lgb_mp_obj_t v;
    const uint8_t ints[] = {0x92, 0xD0, 0x80, 0xCD, 0x01, 0x00}; /* -128, 256 */
    setup(1);
    host_call(1, 1, 4, ints, sizeof(ints));
    CHECK_EQ(host_read(p, 4), 2);
    parse_result(&p[1], &id, &st, &v);
    CHECK_EQ(v.kind, LGB_MP_UINT);
    CHECK_EQ(v.v.u, 128);
}

TEST(naks_for_bad_packets)
{
    pkt_t p[8];
    uint8_t nine[9] = {0};
    const uint8_t bad_call[] = {0x92, 0x01, 0x00};
    const uint8_t big_id[] = {0x93, 0xCE, 0x00, 0x01, 0x00, 0x00, 0x00, 0x90};
    const uint8_t trailing[] = {0x93, 0x01, 0x00, 0x90, 0xC0};
    const uint8_t truncated[] = {0x93, 0x01, 0x00, 0x91, 0xA5, 'a'};
    setup(1);
    host_send(0x7F, 0, 20, NULL, 0);
    CHECK_EQ(host_read(p, 8), 1);
    CHECK(p[0].type == LGB_MSG_NAK && p[0].payload[0] == 20 && p[0].payload[1] == LGB_ERR_TYPE);
    host_send(LGB_MSG_HELLO, LGB_FLAG_ACK_REQ, 21, NULL, 0); /* wrong direction */
    CHECK_EQ(host_read(p, 8), 1);
    CHECK(p[0].type == LGB_MSG_NAK && p[0].payload[1] == LGB_ERR_TYPE);
    host_send(LGB_MSG_PING, 0, 22, nine, 9);
    CHECK_EQ(host_read(p, 8), 1);
    CHECK(p[0].type == LGB_MSG_NAK && p[0].payload[0] == 22 && p[0].payload[1] == LGB_ERR_LENGTH);
    host_send(LGB_MSG_HELLO_REQ, 0, 23, nine, 1);
    CHECK_EQ(host_read(p, 8), 1);
    CHECK(p[0].type == LGB_MSG_NAK && p[0].payload[1] == LGB_ERR_LENGTH);
    host_send(LGB_MSG_CALL, LGB_FLAG_ACK_REQ, 24, bad_call, sizeof(bad_call));
    host_send(LGB_MSG_CALL, LGB_FLAG_ACK_REQ, 25, big_id, sizeof(big_id));
    host_send(LGB_MSG_CALL, LGB_FLAG_ACK_REQ, 26, trailing, sizeof(trailing));
    host_send(LGB_MSG_CALL, LGB_FLAG_ACK_REQ, 27, truncated, sizeof(truncated));
    CHECK_EQ(host_read(p, 8), 4);
    CHECK(p[0].type == LGB_MSG_NAK && p[0].payload[0] == 24 && p[0].payload[1] == LGB_ERR_PAYLOAD);
    CHECK(p[1].type == LGB_MSG_NAK && p[1].payload[0] == 25 && p[1].payload[1] == LGB_ERR_PAYLOAD);
    CHECK(p[2].type == LGB_MSG_NAK && p[2].payload[0] == 26 && p[2].payload[1] == LGB_ERR_PAYLOAD);
    CHECK(p[3].type == LGB_MSG_NAK && p[3].payload[0] == 27 && p[3].payload[1] == LGB_ERR_PAYLOAD);
    /* Malformed ACK / NAK: dropped silently, never NAKed. */
    host_send(LGB_MSG_ACK, 0, 28, nine, 2);
    host_send(LGB_MSG_NAK, 0, 29, nine, 1);
    CHECK_EQ(host_read(p, 8), 0);
    /* A payload over the limit: TOO_LONG, dropped silently (seq not trusted). */
    {
        static uint8_t big[LGB_MAX_PAYLOAD + 1];
        host_send(LGB_MSG_PING, 0, 30, big, sizeof(big));
        CHECK_EQ(host_read(p, 8), 0);
    }
    CHECK_EQ(led_calls, 0);
}

TEST(naks_for_version_and_length_but_not_crc)
{
    pkt_t p[4];
    uint8_t pkt[16], frame[32];
    size_t pn = 0, fn = 0;
    uint16_t crc;
    setup(1);
    /* version 2, good CRC */
    lgb_packet_encode(LGB_MSG_PING, 0, 40, NULL, 0, pkt, sizeof(pkt), &pn);
    pkt[0] = 2;
    crc = lgb_crc16(pkt, pn - 2);
    pkt[pn - 2] = (uint8_t)(crc >> 8);
    pkt[pn - 1] = (uint8_t)crc;
    lgb_frame_encode(pkt, pn, frame, sizeof(frame), &fn);
    CHECK_EQ(lgb_link_input(&link_, frame, fn), LGB_ERR_VERSION);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK(p[0].type == LGB_MSG_NAK && p[0].payload[0] == 40 && p[0].payload[1] == LGB_ERR_VERSION);
    /* length field wrong, good CRC */
    pkt[0] = 1;
    pkt[5] = 3;
    crc = lgb_crc16(pkt, pn - 2);
    pkt[pn - 2] = (uint8_t)(crc >> 8);
    pkt[pn - 1] = (uint8_t)crc;
    lgb_frame_encode(pkt, pn, frame, sizeof(frame), &fn);
    CHECK_EQ(lgb_link_input(&link_, frame, fn), LGB_ERR_LENGTH);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK(p[0].type == LGB_MSG_NAK && p[0].payload[1] == LGB_ERR_LENGTH);
    /* bad CRC: silence */
    pkt[pn - 1] ^= 1;
    lgb_frame_encode(pkt, pn, frame, sizeof(frame), &fn);
    CHECK_EQ(lgb_link_input(&link_, frame, fn), LGB_ERR_CRC);
    CHECK_EQ(host_read(p, 4), 0);
}

TEST(ping_pong)
{
    pkt_t p[4];
    const uint8_t data[] = {1, 2, 3, 0, 5, 6, 7, 8};
    setup(1);
    host_send(LGB_MSG_PING, 0, 50, data, 8);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK_EQ(p[0].type, LGB_MSG_PONG);
    CHECK(p[0].len == 8 && memcmp(p[0].payload, data, 8) == 0);
    host_send(LGB_MSG_PING, 0, 51, NULL, 0);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK_EQ(p[0].len, 0);
    host_send(LGB_MSG_PONG, 0, 52, data, 3); /* unsolicited: ignored */
    CHECK_EQ(host_read(p, 4), 0);
    /* A PING with ACK_REQ is ACKed first, then PONGed. */
    host_send(LGB_MSG_PING, LGB_FLAG_ACK_REQ, 53, data, 2);
    CHECK_EQ(host_read(p, 4), 2);
    CHECK_EQ(p[0].type, LGB_MSG_ACK);
    CHECK_EQ(p[1].type, LGB_MSG_PONG);
}

TEST(events_busy_and_errors)
{
    pkt_t p[4];
    lgb_mp_reader_t r;
    uint32_t n = 0;
    uint64_t idx = 9, ts = 0;
    uint8_t big[LGB_MAX_PAYLOAD];
    const uint8_t two_values[] = {0xC3, 0xC3}; /* only the first is used */
    setup(1);
    fk.now = 12345;
    CHECK_EQ(lgb_link_send_event_bool(&link_, 0, 1), LGB_OK);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK_EQ(p[0].type, LGB_MSG_EVENT);
    CHECK_EQ(p[0].flags, LGB_FLAG_ACK_REQ);
    CHECK_EQ(lgb_msg_validate(LGB_MSG_EVENT, p[0].payload, p[0].len), LGB_OK);
    lgb_mp_reader_init(&r, p[0].payload, p[0].len);
    lgb_mp_read_array(&r, &n);
    lgb_mp_read_uint(&r, &idx);
    lgb_mp_read_uint(&r, &ts);
    CHECK_EQ(idx, 0);
    CHECK_EQ(ts, 12345);
    CHECK(lgb_link_busy(&link_));
    CHECK_EQ(lgb_link_send_event_int(&link_, 1, -5), LGB_ERR_BUSY);
    host_ack(p[0].seq);
    CHECK_EQ(nsent, 1);
    CHECK_EQ(sent[0].type, LGB_MSG_EVENT);
    CHECK_EQ(sent[0].status, LGB_OK);
    CHECK_EQ(lgb_link_send_event_int(&link_, 2, 1), LGB_ERR_ARGS);
    CHECK_EQ(lgb_link_send_event(&link_, 0, two_values, 0), LGB_ERR_PAYLOAD);
    memset(big, 0xC0, sizeof(big)); /* a value as long as a whole payload: too big */
    CHECK_EQ(lgb_link_send_event(&link_, 0, big, sizeof(big)), LGB_ERR_BUFFER);
    CHECK_EQ(lgb_link_send_event_int(&link_, 1, -5), LGB_OK);
    CHECK_EQ(host_read(p, 4), 1);
}

TEST(result_waits_behind_event)
{
    pkt_t p[4];
    const uint8_t none[] = {0x90};
    setup(1);
    CHECK_EQ(lgb_link_send_event_bool(&link_, 0, 1), LGB_OK);
    CHECK_EQ(host_read(p, 4), 1);
    host_call(60, 1, 0, none, 1);
    CHECK_EQ(host_read(p, 4), 1); /* the ACK only; the RESULT waits */
    CHECK_EQ(p[0].type, LGB_MSG_ACK);
    CHECK_EQ(lgb_link_send_event_bool(&link_, 0, 0), LGB_ERR_BUSY);
    host_ack((uint8_t)(p[0].seq - 1u)); /* the EVENT's seq (ACK came right after it) */
    CHECK_EQ(host_read(p, 4), 1);
    CHECK_EQ(p[0].type, LGB_MSG_RESULT);
}

TEST(result_after_event_times_out)
{
    pkt_t p[16];
    const uint8_t none[] = {0x90};
    setup(1);
    CHECK_EQ(lgb_link_send_event_bool(&link_, 0, 1), LGB_OK);
    host_call(61, 1, 0, none, 1);
    advance(5000); /* the EVENT gives up; then the RESULT goes and gives up too */
    CHECK_EQ(nsent, 2);
    CHECK_EQ(sent[0].type, LGB_MSG_EVENT);
    CHECK_EQ(sent[0].status, LGB_ERR_TIMEOUT);
    CHECK_EQ(sent[1].type, LGB_MSG_RESULT);
    CHECK_EQ(sent[1].status, LGB_ERR_TIMEOUT);
    CHECK(host_read(p, 16) >= 2 * (LGB_RETRIES + 1));
}

TEST(nak_from_host)
{
    pkt_t p[8];
    uint8_t nak[2];
    setup(1);
    CHECK_EQ(lgb_link_send_event_bool(&link_, 0, 1), LGB_OK);
    CHECK_EQ(host_read(p, 8), 1);
    nak[0] = p[0].seq;
    nak[1] = LGB_ERR_BUSY;
    host_send(LGB_MSG_NAK, 0, 70, nak, 2);
    CHECK_EQ(nsent, 0); /* BUSY: still in flight, retransmitted at the timeout */
    advance(LGB_ACK_TIMEOUT_MS + 20u);
    CHECK_EQ(host_read(p, 8), 1);
    CHECK(p[0].flags & LGB_FLAG_RETRY);
    nak[1] = LGB_ERR_TYPE;
    host_send(LGB_MSG_NAK, 0, 71, nak, 2);
    CHECK_EQ(nsent, 1);
    CHECK_EQ(sent[0].status, LGB_ERR_TYPE);
    advance(3000);
    CHECK_EQ(host_read(p, 8), 0);
}

TEST(hello_req_resets_session)
{
    pkt_t p[8];
    const uint8_t on[] = {0x91, 0xC3};
    setup(1);
    host_call(5, 7, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 2);
    host_ack(p[1].seq);
    /* The host restarts: HELLO_REQ, then the same seq and call_id as before. */
    host_send(LGB_MSG_HELLO_REQ, 0, 0, NULL, 0);
    CHECK_EQ(host_read(p, 8), 1);
    CHECK_EQ(p[0].type, LGB_MSG_HELLO);
    host_ack(p[0].seq);
    host_call(5, 7, 1, on, 2);
    CHECK_EQ(host_read(p, 8), 2);
    CHECK_EQ(p[1].type, LGB_MSG_RESULT);
    CHECK_EQ(led_calls, 2); /* not a duplicate, not cached: run again */
    /* HELLO_REQ while something is in flight abandons it. */
    nsent = 0;
    host_send(LGB_MSG_HELLO_REQ, 0, 1, NULL, 0);
    CHECK_EQ(nsent, 1);
    CHECK_EQ(sent[0].type, LGB_MSG_RESULT);
    CHECK_EQ(sent[0].status, LGB_ERR_STATE);
}

TEST(ackreq_seq_never_repeats_after_wrap)
{
    pkt_t p[300];
    int i;
    uint8_t first;
    setup(1);
    CHECK_EQ(lgb_link_send_event_bool(&link_, 0, 1), LGB_OK);
    CHECK_EQ(host_read(p, 4), 1);
    first = p[0].seq;
    host_ack(first);
    for (i = 0; i < 255; i++) { /* 255 PONGs: the counter comes round to `first` */
        host_send(LGB_MSG_PING, 0, (uint8_t)i, NULL, 0);
    }
    CHECK_EQ(host_read(p, 300), 255);
    CHECK_EQ(lgb_link_send_event_bool(&link_, 0, 1), LGB_OK);
    CHECK_EQ(host_read(p, 4), 1);
    CHECK(p[0].seq != first);
}

/* Output fault injection: the transport accepts k bytes then fails, for every
 * k through the HELLO frame; retransmission always delivers it afterwards. */
TEST(write_fault_after_every_byte)
{
    size_t k, hello_len;
    pkt_t p[8];
    setup(0);
    hello_len = fk.n;
    for (k = 0; k < hello_len; k++) {
        int got, i, hello = 0;
        setup(0);
        fk.n = 0;
        fk.rd = 0;
        lgb_decoder_init(&fk.host);
        fk.budget = k;
        lgb_link_start(&link_); /* truncated after k bytes */
        fk.budget = (size_t)-1;
        advance(LGB_ACK_TIMEOUT_MS + 20u);
        got = host_read(p, 8);
        for (i = 0; i < got; i++) {
            if (p[i].type == LGB_MSG_HELLO) {
                hello++;
            }
        }
        CHECK(hello >= 1);
    }
}

/* Input fault injection: garbage, cut frames and corrupted bytes between good
 * CALLs. Every good CALL gets its ACK and RESULT; nothing crashes. */
TEST(input_garbage_between_calls)
{
    static uint8_t stream[8192];
    size_t len = 0;
    int i, results = 0, j;
    pkt_t p[64];
    uint32_t s = 7;
    const uint8_t none[] = {0x90};
    setup(1);
    for (i = 0; i < 20; i++) {
        uint8_t buf[32], pkt[64];
        size_t n = call_payload(buf, sizeof(buf), (uint16_t)(200 + i), 0, none, 1), pn = 0, fn = 0;
        lgb_packet_encode(LGB_MSG_CALL, LGB_FLAG_ACK_REQ, (uint8_t)(i + 1), buf, n, pkt, sizeof(pkt), &pn);
        for (j = 0; j < 3 + i; j++) { /* garbage */
            s = s * 1103515245u + 12345u;
            stream[len++] = (uint8_t)(s >> 16);
        }
        stream[len++] = 0;
        lgb_frame_encode(pkt, pn, stream + len, sizeof(stream) - len, &fn);
        len += fn;
        /* and a corrupted copy of it */
        lgb_frame_encode(pkt, pn, stream + len, sizeof(stream) - len, &fn);
        stream[len + 3] ^= 0x10;
        len += fn;
    }
    for (i = 0; i < (int)len; i++) {
        (void)lgb_link_input(&link_, stream + i, 1);
        j = host_read(p, 64);
        while (j-- > 0) {
            if (p[j].type == LGB_MSG_RESULT) {
                results++;
                host_ack(p[j].seq);
            }
        }
    }
    CHECK_EQ(results, 20);
}

TEST(init_errors)
{
    lgb_link_t l;
    lgb_io_t io = {fake_write, fake_now, &fk};
    lgb_io_t bad = {NULL, fake_now, &fk};
    lgb_device_t many = device;
    lgb_device_t huge = device;
    static const char long_name[] = "a_very_long_function_name_that_is_repeated_to_fill_the_hello_payload_x";
    static lgb_function_t fns[LGB_MAX_FUNCTIONS];
    size_t i;
    CHECK_EQ(lgb_link_init(&l, &bad, &device, LGB_LINK_COBS), LGB_ERR_STATE);
    CHECK_EQ(lgb_link_init(&l, &io, NULL, LGB_LINK_COBS), LGB_ERR_STATE);
    CHECK_EQ(lgb_link_init(&l, &io, &device, 7), LGB_ERR_STATE);
    many.n_functions = LGB_MAX_FUNCTIONS + 1;
    CHECK_EQ(lgb_link_init(&l, &io, &many, LGB_LINK_COBS), LGB_ERR_ARGS);
    for (i = 0; i < LGB_MAX_FUNCTIONS; i++) {
        fns[i].name = long_name;
        fns[i].arg_types = "";
        fns[i].result_type = "n";
        fns[i].fn = fn_nothing;
    }
    huge.functions = fns;
    huge.n_functions = LGB_MAX_FUNCTIONS;
    CHECK_EQ(lgb_link_init(&l, &io, &huge, LGB_LINK_COBS), LGB_ERR_BUFFER);
    CHECK_EQ(lgb_link_start(&l), LGB_ERR_STATE);
    CHECK_EQ(lgb_link_poll(&l), LGB_ERR_STATE);
    CHECK_EQ(lgb_link_input(&l, NULL, 0), LGB_ERR_STATE);
    CHECK_EQ(lgb_link_init(&l, &io, &device, LGB_LINK_PACKET), LGB_OK);
    CHECK_EQ(lgb_link_input(&l, (const uint8_t *)"x", 1), LGB_ERR_STATE); /* packet mode */
}

/* ------------------------------------------------------------------ over ISO-TP */

typedef struct {
    uint32_t id[512];
    uint8_t data[512][8];
    uint8_t len[512];
    int head, tail;
} bus_t;

static bus_t bus;
static uint32_t bus_now;

static int bus_write(void *ctx, uint32_t id, const uint8_t *data, uint8_t len)
{
    (void)ctx;
    if (bus.tail - bus.head >= 512) {
        return 1;
    }
    bus.id[bus.tail % 512] = id;
    memcpy(bus.data[bus.tail % 512], data, len);
    bus.len[bus.tail % 512] = len;
    bus.tail++;
    return 0;
}

static uint32_t bus_clock(void *ctx)
{
    (void)ctx;
    return bus_now;
}

TEST(link_over_isotp)
{
    static lgb_isotp_t mcu_tp, host_tp;
    static lgb_link_t mcu;
    lgb_can_io_t cio = {bus_write, bus_clock, NULL};
    lgb_io_t io;
    int rounds, hellos = 0, acks = 0, results = 0;
    uint8_t pkt[64], buf[32];
    size_t pn = 0;
    const uint8_t on[] = {0x91, 0xC3};

    memset(&bus, 0, sizeof(bus));
    led_calls = 0;
    nsent = 0;
    CHECK_EQ(lgb_isotp_init(&mcu_tp, &cio, LGB_CAN_ID_MCU_TO_HOST, LGB_CAN_ID_HOST_TO_MCU), LGB_OK);
    CHECK_EQ(lgb_isotp_init(&host_tp, &cio, LGB_CAN_ID_HOST_TO_MCU, LGB_CAN_ID_MCU_TO_HOST), LGB_OK);
    io.write = lgb_isotp_write;
    io.now_ms = bus_clock;
    io.ctx = &mcu_tp;
    CHECK_EQ(lgb_link_init(&mcu, &io, &device, LGB_LINK_PACKET), LGB_OK);
    CHECK_EQ(lgb_link_start(&mcu), LGB_OK);
    lgb_packet_encode(LGB_MSG_CALL, LGB_FLAG_ACK_REQ, 1, buf, call_payload(buf, sizeof(buf), 9, 1, on, 2), pkt,
                      sizeof(pkt), &pn);
    CHECK_EQ(lgb_isotp_send(&host_tp, pkt, pn), LGB_OK);
    for (rounds = 0; rounds < 2000 && bus.head < bus.tail + 1; rounds++) {
        while (bus.head < bus.tail) {
            int i = bus.head++ % 512;
            const uint8_t *m;
            size_t mn;
            if (lgb_isotp_on_frame(&mcu_tp, bus.id[i], bus.data[i], bus.len[i], &m, &mn) == LGB_OK) {
                (void)lgb_link_input_packet(&mcu, m, mn);
            }
            if (lgb_isotp_on_frame(&host_tp, bus.id[i], bus.data[i], bus.len[i], &m, &mn) == LGB_OK) {
                lgb_packet_t pk;
                CHECK_EQ(lgb_packet_parse(m, mn, &pk), LGB_OK);
                if (pk.type == LGB_MSG_HELLO) {
                    uint8_t a[16];
                    size_t an = 0;
                    hellos++;
                    lgb_packet_encode(LGB_MSG_ACK, 0, 2, &pk.seq, 1, a, sizeof(a), &an);
                    lgb_isotp_send(&host_tp, a, an);
                } else if (pk.type == LGB_MSG_ACK) {
                    acks++;
                } else if (pk.type == LGB_MSG_RESULT) {
                    uint8_t a[16];
                    size_t an = 0;
                    results++;
                    lgb_packet_encode(LGB_MSG_ACK, 0, 3, &pk.seq, 1, a, sizeof(a), &an);
                    lgb_isotp_send(&host_tp, a, an);
                }
            }
        }
        bus_now++;
        (void)lgb_isotp_poll(&mcu_tp);
        (void)lgb_isotp_poll(&host_tp);
        (void)lgb_link_poll(&mcu);
        if (bus.head == bus.tail && lgb_isotp_idle(&mcu_tp) && lgb_isotp_idle(&host_tp) && !lgb_link_busy(&mcu) &&
            results > 0) {
            break;
        }
    }
    CHECK_EQ(hellos, 1);
    CHECK_EQ(acks, 1);
    CHECK_EQ(results, 1);
    CHECK_EQ(led_calls, 1);
    CHECK_EQ(nsent, 2); /* HELLO and RESULT acknowledged */
    CHECK(nsent == 2 && sent[0].status == LGB_OK && sent[1].status == LGB_OK);
}

int main(void)
{
    RUN(start_sends_zero_then_hello);
    RUN(hello_retransmits_with_backoff_then_times_out);
    RUN(ack_stops_retransmission);
    RUN(timer_wraps);
    RUN(call_read_temp_ack_then_result);
    RUN(duplicate_call_is_acked_not_rerun);
    RUN(repeated_call_id_answered_from_cache);
    RUN(new_call_while_result_unacked_is_busy);
    RUN(call_errors_in_result_status);
    RUN(add_result_value);
    RUN(naks_for_bad_packets);
    RUN(naks_for_version_and_length_but_not_crc);
    RUN(ping_pong);
    RUN(events_busy_and_errors);
    RUN(result_waits_behind_event);
    RUN(result_after_event_times_out);
    RUN(nak_from_host);
    RUN(hello_req_resets_session);
    RUN(ackreq_seq_never_repeats_after_wrap);
    RUN(write_fault_after_every_byte);
    RUN(input_garbage_between_calls);
    RUN(init_errors);
    RUN(link_over_isotp);
    return lgbt_summary("test_link");
}
