/*
 * test_units.c -- host unit tests of the C library: CRC, COBS, the streaming
 * decoder (one byte at a time, resynchronisation, a fault after every byte),
 * the ring buffer, the msgpack reader/writer, and sizes against the RAM figures
 * lgb_config.h states. The link state machine is in test_link.c.
 */
#include <stdio.h>
#include <string.h>

#include "lgb_frame.h"
#include "lgb_isotp.h"
#include "lgb_link.h"
#include "lgb_mp.h"
#include "lgb_ring.h"
#include "lgb_test.h"

/* A pseudo-random generator with a fixed seed, so failures reproduce. */
static uint32_t rng_state = 12345u;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

static size_t make_frame(uint8_t type, uint8_t seq, const uint8_t *payload, size_t n, uint8_t *out, size_t cap)
{
    uint8_t pkt[LGB_PACKET_MAX];
    size_t plen = 0, flen = 0;
    if (lgb_packet_encode(type, LGB_FLAG_ACK_REQ, seq, payload, n, pkt, sizeof(pkt), &plen) != LGB_OK ||
        lgb_frame_encode(pkt, plen, out, cap, &flen) != LGB_OK) {
        return 0;
    }
    return flen;
}

TEST(crc16_check_value)
{
    uint16_t c;
    CHECK_EQ(lgb_crc16("123456789", 9), 0x29B1);
    c = lgb_crc16_update(LGB_CRC16_INIT, "1234", 4);
    CHECK_EQ(lgb_crc16_update(c, "56789", 5), 0x29B1);
    CHECK_EQ(lgb_crc16(NULL, 0), 0xFFFF);
}

TEST(cobs_round_trip_random)
{
    static uint8_t raw[1200], enc[1300], dec[1300];
    int iter;
    for (iter = 0; iter < 2000; iter++) {
        size_t n = rnd() % sizeof(raw), en = 0, dn = 0, i;
        unsigned zeros = rnd() % 4; /* 0: no zeros at all .. 3: many */
        for (i = 0; i < n; i++) {
            raw[i] = (uint8_t)(zeros == 0 ? (rnd() % 255) + 1 : (rnd() % (zeros * 3) == 0 ? 0 : rnd()));
        }
        CHECK_EQ(lgb_cobs_encode(raw, n, enc, sizeof(enc), &en), LGB_OK);
        CHECK(en <= LGB_COBS_ENCODED_MAX(n));
        CHECK(memchr(enc, 0, en) == NULL);
        CHECK_EQ(lgb_cobs_decode(enc, en, dec, sizeof(dec), &dn), LGB_OK);
        CHECK(dn == n && memcmp(dec, raw, n) == 0);
    }
}

TEST(cobs_errors)
{
    uint8_t out[16];
    size_t n;
    const uint8_t has_zero[] = {0x02, 0x00};
    const uint8_t truncated[] = {0x05, 0x01, 0x02};
    const uint8_t ok[] = {0x03, 0x11, 0x22, 0x02, 0x33};
    CHECK_EQ(lgb_cobs_decode(has_zero, 2, out, sizeof(out), &n), LGB_ERR_COBS);
    CHECK_EQ(lgb_cobs_decode(truncated, 3, out, sizeof(out), &n), LGB_ERR_COBS);
    CHECK_EQ(lgb_cobs_decode(ok, 5, out, sizeof(out), &n), LGB_OK);
    CHECK_EQ(n, 4);
    CHECK_EQ(lgb_cobs_decode(ok, 5, out, 3, &n), LGB_ERR_BUFFER);
    CHECK_EQ(lgb_cobs_encode(ok, 5, NULL, 10, &n), LGB_ERR_BUFFER);
    CHECK_EQ(lgb_frame_encode(ok, 5, out, 6, &n), LGB_ERR_BUFFER);
    CHECK_EQ(lgb_frame_encode(ok, 5, out, 7, &n), LGB_OK);
    CHECK_EQ(out[n - 1], 0);
}

TEST(packet_encode_limits)
{
    static uint8_t buf[LGB_PACKET_MAX + 16], payload[LGB_MAX_PAYLOAD + 1];
    size_t n = 0;
    lgb_packet_t pk;
    CHECK_EQ(lgb_packet_encode(LGB_MSG_PING, 0, 1, payload, LGB_MAX_PAYLOAD + 1, buf, sizeof(buf), &n),
             LGB_ERR_TOO_LONG);
    CHECK_EQ(lgb_packet_encode(LGB_MSG_PING, 0, 1, payload, 4, buf, 11, &n), LGB_ERR_BUFFER);
    CHECK_EQ(lgb_packet_encode(LGB_MSG_PING, 0, 1, payload, 4, buf, 12, &n), LGB_OK);
    CHECK_EQ(n, 12);
    /* Payload already in place. */
    memcpy(buf + LGB_HEADER_SIZE, "abcd", 4);
    CHECK_EQ(lgb_packet_encode(LGB_MSG_PING, 0, 1, buf + LGB_HEADER_SIZE, 4, buf, sizeof(buf), &n), LGB_OK);
    CHECK_EQ(lgb_packet_parse(buf, n, &pk), LGB_OK);
    CHECK(pk.len == 4 && memcmp(pk.payload, "abcd", 4) == 0);
    CHECK_EQ(lgb_packet_parse(buf, LGB_PACKET_MAX + 1, &pk), LGB_ERR_TOO_LONG);
    CHECK_EQ(lgb_packet_parse(NULL, 8, &pk), LGB_ERR_BUFFER);
    /* CRC good, length bad: trusted, so the link can NAK. */
    buf[5] = 5;
    {
        uint16_t crc = lgb_crc16(buf, n - 2);
        buf[n - 2] = (uint8_t)(crc >> 8);
        buf[n - 1] = (uint8_t)crc;
    }
    CHECK_EQ(lgb_packet_parse(buf, n, &pk), LGB_ERR_LENGTH);
    CHECK_EQ(pk.trusted, 1);
    CHECK_EQ(pk.seq, 1);
}

/* A stream of frames with garbage between them decodes the same fed one byte at
 * a time or in random chunks; every good frame is recovered (resynchronisation). */
TEST(decoder_stream_resync)
{
    static uint8_t stream[64000];
    size_t len = 0;
    int expected_ok = 0, iter;
    lgb_decoder_t d;
    lgb_packet_t pk;
    int got_ok = 0, got_err = 0;
    size_t i = 0;

    for (iter = 0; iter < 200; iter++) {
        uint8_t payload[LGB_MAX_PAYLOAD];
        size_t n = rnd() % ((LGB_MAX_PAYLOAD < 200 ? LGB_MAX_PAYLOAD : 200) + 1), k;
        for (k = 0; k < n; k++) {
            payload[k] = (uint8_t)rnd();
        }
        if (iter % 3 == 0) { /* garbage, then a delimiter */
            size_t g = rnd() % 40;
            for (k = 0; k < g; k++) {
                stream[len++] = (uint8_t)((rnd() % 255) + 1);
            }
            stream[len++] = 0;
        }
        len += make_frame(LGB_MSG_EVENT, (uint8_t)iter, payload, n, stream + len, sizeof(stream) - len);
        expected_ok++;
    }
    lgb_decoder_init(&d);
    while (i < len) {
        size_t chunk = 1 + rnd() % 17, used = 0;
        lgb_ret_t r;
        if (chunk > len - i) {
            chunk = len - i;
        }
        r = lgb_decoder_feed_buf(&d, stream + i, chunk, &used, &pk);
        i += used;
        if (r == LGB_OK) {
            got_ok++;
            CHECK_EQ(pk.type, LGB_MSG_EVENT);
        } else if (r != LGB_PENDING) {
            got_err++;
        }
    }
    CHECK_EQ(got_ok, expected_ok);
    CHECK(got_err > 0);
#if LGB_ENABLE_STATS
    CHECK_EQ(d.frames, (uint32_t)expected_ok);
    CHECK_EQ(d.dropped, (uint32_t)got_err);
#endif
}

/* Fault injection (nanopb io_errors style): a frame cut after every byte, then
 * a good frame; and every single byte of a frame corrupted. The decoder never
 * delivers a wrong packet and always recovers at the next frame. */
TEST(decoder_fault_after_every_byte)
{
    uint8_t payload[40], frame[80], next[80];
    size_t fn, nn, cut, i;
    lgb_decoder_t d;
    lgb_packet_t pk;
    for (i = 0; i < sizeof(payload); i++) {
        payload[i] = (uint8_t)(i * 7);
    }
    fn = make_frame(LGB_MSG_CALL, 9, payload, sizeof(payload), frame, sizeof(frame));
    nn = make_frame(LGB_MSG_PING, 10, payload, 4, next, sizeof(next));
    CHECK(fn > 0 && nn > 0);
    for (cut = 0; cut < fn; cut++) {
        int oks = 0;
        lgb_decoder_init(&d);
        for (i = 0; i < cut; i++) {
            lgb_ret_t r = lgb_decoder_feed(&d, frame[i], &pk);
            CHECK(r == LGB_PENDING || cut == fn);
        }
        /* the line dropped the rest; the next frame's bytes follow */
        for (i = 0; i < nn; i++) {
            lgb_ret_t r = lgb_decoder_feed(&d, next[i], &pk);
            if (r == LGB_OK) {
                oks++;
                CHECK_EQ(pk.seq, 10);
            }
        }
        /* Joined to a partial frame, the next one may be lost once; then recovery. */
        for (i = 0; i < nn; i++) {
            if (lgb_decoder_feed(&d, next[i], &pk) == LGB_OK) {
                oks++;
                CHECK_EQ(pk.seq, 10);
            }
        }
        CHECK(oks >= 1);
    }
    for (cut = 0; cut + 1 < fn; cut++) {
        unsigned bit;
        for (bit = 0; bit < 8; bit++) {
            uint8_t bad[80];
            int oks = 0;
            memcpy(bad, frame, fn);
            bad[cut] ^= (uint8_t)(1u << bit);
            lgb_decoder_init(&d);
            for (i = 0; i < fn; i++) {
                if (lgb_decoder_feed(&d, bad[i], &pk) == LGB_OK) {
                    oks++; /* only possible if the flip made a 0x00: then a shorter frame must not pass */
                }
            }
            CHECK_EQ(oks, 0);
            for (i = 0; i < nn; i++) {
                if (lgb_decoder_feed(&d, next[i], &pk) == LGB_OK) {
                    oks++;
                }
            }
            CHECK_EQ(oks, 1);
        }
    }
}

TEST(decoder_empty_frames_and_overflow)
{
    lgb_decoder_t d;
    lgb_packet_t pk;
    int i;
    lgb_decoder_init(&d);
    CHECK_EQ(lgb_decoder_feed(&d, 0, &pk), LGB_PENDING);
    CHECK_EQ(lgb_decoder_feed(&d, 0, &pk), LGB_PENDING);
    for (i = 0; i < 5000; i++) {
        CHECK_EQ(lgb_decoder_feed(&d, 0x55, &pk), LGB_PENDING);
    }
    CHECK_EQ(lgb_decoder_feed(&d, 0, &pk), LGB_ERR_TOO_LONG);
    CHECK_EQ(pk.trusted, 0);
    CHECK_EQ(lgb_decoder_feed(&d, 0, &pk), LGB_PENDING);
}

/* ------------------------------------------------------------------ ring */

TEST(ring_fill_drain_wrap)
{
    lgb_ring_t r;
    uint8_t b = 0, buf[LGB_RX_RING_SIZE * 2];
    unsigned i, round;
    lgb_ring_init(&r);
    CHECK_EQ(lgb_ring_get(&r, &b), LGB_PENDING);
    for (i = 0; i < LGB_RX_RING_SIZE; i++) {
        CHECK_EQ(lgb_ring_put(&r, (uint8_t)i), LGB_OK);
    }
    CHECK_EQ(lgb_ring_count(&r), LGB_RX_RING_SIZE);
    CHECK_EQ(lgb_ring_put(&r, 0xEE), LGB_ERR_BUFFER);
    CHECK_EQ(r.dropped, 1);
    for (i = 0; i < LGB_RX_RING_SIZE; i++) {
        CHECK_EQ(lgb_ring_get(&r, &b), LGB_OK);
        CHECK_EQ(b, (uint8_t)i);
    }
    /* Many rounds through the 16-bit index wrap. */
    for (round = 0; round < 70000u / LGB_RX_RING_SIZE + 3u; round++) {
        unsigned n = 1 + rnd() % LGB_RX_RING_SIZE, got;
        for (i = 0; i < n; i++) {
            CHECK_EQ(lgb_ring_put(&r, (uint8_t)(round + i)), LGB_OK);
        }
        got = (unsigned)lgb_ring_read(&r, buf, sizeof(buf));
        CHECK_EQ(got, n);
        for (i = 0; i < n; i++) {
            CHECK_EQ(buf[i], (uint8_t)(round + i));
        }
    }
    CHECK_EQ(lgb_ring_count(&r), 0);
    CHECK_EQ(lgb_ring_read(&r, buf, 0), 0);
}

/* ------------------------------------------------------------------ msgpack */

TEST(mp_int_round_trips)
{
    static const int64_t ints[] = {0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295LL, 4294967296LL, INT64_MAX,
                                   -1, -32, -33, -128, -129, -32768, -32769, INT32_MIN, (int64_t)INT32_MIN - 1,
                                   INT64_MIN};
    static const size_t sizes[] = {1, 1, 1, 2, 2, 3, 3, 5, 5, 9, 9, 1, 1, 2, 2, 3, 3, 5, 5, 9, 9};
    uint8_t buf[16];
    size_t i;
    for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        lgb_mp_writer_t w;
        lgb_mp_reader_t r;
        int64_t v = 0;
        lgb_mp_obj_t o;
        lgb_mp_writer_init(&w, buf, sizeof(buf));
        CHECK_EQ(lgb_mp_write_int(&w, ints[i]), LGB_OK);
        CHECK_EQ(w.len, sizes[i]);
        lgb_mp_reader_init(&r, buf, w.len);
        CHECK_EQ(lgb_mp_read_int(&r, &v), LGB_OK);
        CHECK(v == ints[i]);
        CHECK_EQ(r.pos, w.len);
        lgb_mp_reader_init(&r, buf, w.len);
        CHECK_EQ(lgb_mp_read(&r, &o), LGB_OK);
        CHECK(o.kind == (ints[i] < 0 ? LGB_MP_INT : LGB_MP_UINT));
        /* Truncated: never reads past the end, position unchanged. */
        lgb_mp_reader_init(&r, buf, w.len - 1u);
        CHECK(w.len == 1 || lgb_mp_read_int(&r, &v) == LGB_ERR_PAYLOAD);
        CHECK_EQ(r.pos, 0);
    }
    {
        lgb_mp_writer_t w;
        lgb_mp_reader_t r;
        uint64_t u = 0;
        int64_t v = 0;
        lgb_mp_writer_init(&w, buf, sizeof(buf));
        lgb_mp_write_uint(&w, UINT64_MAX);
        CHECK_EQ(w.len, 9);
        lgb_mp_reader_init(&r, buf, w.len);
        CHECK_EQ(lgb_mp_read_int(&r, &v), LGB_ERR_PAYLOAD); /* > INT64_MAX */
        CHECK_EQ(lgb_mp_read_uint(&r, &u), LGB_OK);
        CHECK(u == UINT64_MAX);
        lgb_mp_writer_init(&w, buf, sizeof(buf));
        lgb_mp_write_int(&w, -5);
        lgb_mp_reader_init(&r, buf, w.len);
        CHECK_EQ(lgb_mp_read_uint(&r, &u), LGB_ERR_PAYLOAD);
    }
}

TEST(mp_types_round_trip)
{
    static uint8_t buf[110000];
    static char big[66000];
    lgb_mp_writer_t w;
    lgb_mp_reader_t r;
    const uint8_t *p;
    uint32_t n = 0;
    uint8_t b = 0;
    size_t lens[] = {0, 31, 32, 255, 256, 65535, 65536};
    size_t i;

    memset(big, 'x', sizeof(big));
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        lgb_mp_writer_init(&w, buf, sizeof(buf));
        CHECK_EQ(lgb_mp_write_str(&w, big, lens[i]), LGB_OK);
        CHECK_EQ(lgb_mp_write_bin(&w, big, lens[i] / 2), LGB_OK);
        lgb_mp_reader_init(&r, buf, w.len);
        CHECK_EQ(lgb_mp_read_bin(&r, &p, &n), LGB_ERR_PAYLOAD);
        CHECK_EQ(lgb_mp_read_str(&r, &p, &n), LGB_OK);
        CHECK_EQ(n, lens[i]);
        CHECK_EQ(lgb_mp_read_bin(&r, &p, &n), LGB_OK);
        CHECK_EQ(n, lens[i] / 2);
        CHECK_EQ(r.pos, w.len);
    }
    lgb_mp_writer_init(&w, buf, sizeof(buf));
    lgb_mp_write_array(&w, 15);
    lgb_mp_write_array(&w, 16);
    lgb_mp_write_array(&w, 70000);
    lgb_mp_write_map(&w, 3);
    lgb_mp_write_map(&w, 300);
    lgb_mp_write_nil(&w);
    lgb_mp_write_bool(&w, 1);
    lgb_mp_write_bool(&w, 0);
    lgb_mp_write_cstr(&w, NULL);
    CHECK_EQ(w.err, LGB_OK);
    CHECK_EQ(w.len, 1 + 3 + 5 + 1 + 3 + 1 + 1 + 1 + 1);
    lgb_mp_reader_init(&r, buf, w.len);
    CHECK_EQ(lgb_mp_read_array(&r, &n), LGB_OK);
    CHECK_EQ(n, 15);
    CHECK_EQ(lgb_mp_read_array(&r, &n), LGB_OK);
    CHECK_EQ(n, 16);
    CHECK_EQ(lgb_mp_read_array(&r, &n), LGB_OK);
    CHECK_EQ(n, 70000);
    CHECK_EQ(lgb_mp_read_array(&r, &n), LGB_ERR_PAYLOAD);
    CHECK_EQ(lgb_mp_read_map(&r, &n), LGB_OK);
    CHECK_EQ(n, 3);
    CHECK_EQ(lgb_mp_read_map(&r, &n), LGB_OK);
    CHECK_EQ(n, 300);
    CHECK_EQ(lgb_mp_read_nil(&r), LGB_OK);
    CHECK_EQ(lgb_mp_read_bool(&r, &b), LGB_OK);
    CHECK_EQ(b, 1);
    CHECK_EQ(lgb_mp_read_bool(&r, &b), LGB_OK);
    CHECK_EQ(b, 0);
    CHECK_EQ(lgb_mp_read_str(&r, &p, &n), LGB_OK);
    CHECK_EQ(n, 0);
    CHECK_EQ(lgb_mp_read_nil(&r), LGB_ERR_PAYLOAD); /* at the end */
}

#if LGB_ENABLE_FLOAT
TEST(mp_float_round_trip)
{
    uint8_t buf[32];
    lgb_mp_writer_t w;
    lgb_mp_reader_t r;
    float f = 0;
    double d = 0;
    lgb_mp_writer_init(&w, buf, sizeof(buf));
    lgb_mp_write_float(&w, 21.5f);
    lgb_mp_write_double(&w, -0.1);
    lgb_mp_write_uint(&w, 3);
    lgb_mp_write_int(&w, -7);
    lgb_mp_write_nil(&w);
    CHECK_EQ(w.len, 5 + 9 + 1 + 1 + 1);
    CHECK_EQ(buf[0], 0xCA);
    CHECK_EQ(buf[1], 0x41);
    CHECK_EQ(buf[2], 0xAC);
    lgb_mp_reader_init(&r, buf, w.len);
    CHECK_EQ(lgb_mp_read_float(&r, &f), LGB_OK);
    CHECK(f == 21.5f);
    CHECK_EQ(lgb_mp_read_double(&r, &d), LGB_OK);
    {
        volatile double want = -0.1; /* no x87 excess precision in the comparison (-m32) */
        CHECK(d == want);
    }
    CHECK_EQ(lgb_mp_read_float(&r, &f), LGB_OK);
    CHECK(f == 3.0f);
    CHECK_EQ(lgb_mp_read_double(&r, &d), LGB_OK);
    CHECK(d == -7.0);
    CHECK_EQ(lgb_mp_read_float(&r, &f), LGB_ERR_PAYLOAD);
    CHECK_EQ(r.pos, w.len - 1u);
}
#endif

TEST(mp_writer_sticky_errors)
{
    uint8_t buf[4];
    lgb_mp_writer_t w;
    lgb_mp_writer_init(&w, buf, sizeof(buf));
    CHECK_EQ(lgb_mp_write_uint(&w, 1000), LGB_OK); /* 3 bytes */
    CHECK_EQ(lgb_mp_write_str(&w, "ab", 2), LGB_ERR_BUFFER);
    CHECK_EQ(w.len, 3); /* nothing of the failed value */
    CHECK_EQ(lgb_mp_write_nil(&w), LGB_ERR_BUFFER); /* sticky, though it would fit */
    CHECK_EQ(w.len, 3);
    lgb_mp_writer_init(&w, NULL, 10);
    CHECK_EQ(lgb_mp_write_nil(&w), LGB_ERR_BUFFER);
    lgb_mp_writer_init(&w, buf, sizeof(buf));
    CHECK_EQ(lgb_mp_write_raw(&w, "\x93\x01\x02\x03", 4), LGB_OK);
    CHECK_EQ(lgb_mp_write_raw(&w, "\xc0", 1), LGB_ERR_BUFFER);
}

TEST(mp_skip_nested_and_hostile)
{
    /* [1, [2, {"a": [nil, true]}], "s"] */
    const uint8_t ok[] = {0x93, 0x01, 0x92, 0x02, 0x81, 0xA1, 'a', 0x92, 0xC0, 0xC3, 0xA1, 's'};
    const uint8_t huge_array[] = {0xDD, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    const uint8_t huge_map[] = {0xDF, 0x80, 0x00, 0x00, 0x00, 0x01, 0x01};
    const uint8_t ext[] = {0xD4, 0x01, 0x02};
    static uint8_t deep[20000];
    lgb_mp_reader_t r;
    size_t i;
    lgb_mp_reader_init(&r, ok, sizeof(ok));
    CHECK_EQ(lgb_mp_skip(&r), LGB_OK);
    CHECK_EQ(r.pos, sizeof(ok));
    for (i = 0; i < sizeof(ok); i++) { /* every truncation fails cleanly */
        lgb_mp_reader_init(&r, ok, i);
        CHECK_EQ(lgb_mp_skip(&r), LGB_ERR_PAYLOAD);
    }
    lgb_mp_reader_init(&r, huge_array, sizeof(huge_array));
    CHECK_EQ(lgb_mp_skip(&r), LGB_ERR_PAYLOAD);
    lgb_mp_reader_init(&r, huge_map, sizeof(huge_map));
    CHECK_EQ(lgb_mp_skip(&r), LGB_ERR_PAYLOAD);
    lgb_mp_reader_init(&r, ext, sizeof(ext));
    CHECK_EQ(lgb_mp_skip(&r), LGB_ERR_PAYLOAD);
    /* 19999 nested arrays: no recursion, no stack overflow. */
    memset(deep, 0x91, sizeof(deep));
    deep[sizeof(deep) - 1] = 0xC0;
    lgb_mp_reader_init(&r, deep, sizeof(deep));
    CHECK_EQ(lgb_mp_skip(&r), LGB_OK);
    lgb_mp_reader_init(&r, deep, sizeof(deep) - 1);
    CHECK_EQ(lgb_mp_skip(&r), LGB_ERR_PAYLOAD);
}

/* Every single byte value as the first byte: read never crashes, and accepts
 * exactly the supported formats. */
TEST(mp_every_format_byte)
{
    uint8_t buf[64];
    unsigned b;
    int accepted = 0;
    for (b = 0; b < 256; b++) {
        lgb_mp_reader_t r;
        lgb_mp_obj_t o;
        memset(buf, 0, sizeof(buf));
        buf[0] = (uint8_t)b;
        lgb_mp_reader_init(&r, buf, sizeof(buf));
        if (lgb_mp_read(&r, &o) == LGB_OK) {
            accepted++;
        }
    }
    CHECK_EQ(accepted, 256 - 1 - 3 - 5); /* not c1, c7..c9, d4..d8 */
}

/* ------------------------------------------------------------------ sizes */

TEST(ram_figures_hold)
{
    /* lgb_config.h states upper bounds for 32-bit targets; 64-bit hosts have
     * 8-byte pointers in the fixed parts, so allow 32 more bytes there. */
    size_t slack = sizeof(void *) > 4 ? 32u : 0u;
    CHECK(sizeof(lgb_link_t) <= LGB_LINK_RAM + slack);
    CHECK(sizeof(lgb_ring_t) <= LGB_RING_RAM);
    CHECK(sizeof(lgb_isotp_t) <= LGB_ISOTP_RAM + slack);
    printf("  sizeof: lgb_link_t %u (bound %u), lgb_ring_t %u (bound %u), lgb_isotp_t %u (bound %u)\n",
           (unsigned)sizeof(lgb_link_t), (unsigned)LGB_LINK_RAM, (unsigned)sizeof(lgb_ring_t), (unsigned)LGB_RING_RAM,
           (unsigned)sizeof(lgb_isotp_t), (unsigned)LGB_ISOTP_RAM);
}

TEST(strerror_names)
{
#if LGB_ENABLE_ERRTEXT
    CHECK(strcmp(lgb_strerror(LGB_OK), "LGB_OK") == 0);
    CHECK(strcmp(lgb_strerror(LGB_ERR_ISOTP), "LGB_ERR_ISOTP") == 0);
    CHECK(strcmp(lgb_strerror(LGB_PENDING), "LGB_PENDING") == 0);
    CHECK(strcmp(lgb_strerror(99), "?") == 0);
#else
    CHECK(strcmp(lgb_strerror(LGB_OK), "") == 0);
#endif
}

int main(void)
{
    RUN(crc16_check_value);
    RUN(cobs_round_trip_random);
    RUN(cobs_errors);
    RUN(packet_encode_limits);
    RUN(decoder_stream_resync);
    RUN(decoder_fault_after_every_byte);
    RUN(decoder_empty_frames_and_overflow);
    RUN(ring_fill_drain_wrap);
    RUN(mp_int_round_trips);
    RUN(mp_types_round_trip);
#if LGB_ENABLE_FLOAT
    RUN(mp_float_round_trip);
#endif
    RUN(mp_writer_sticky_errors);
    RUN(mp_skip_nested_and_hostile);
    RUN(mp_every_format_byte);
    RUN(ram_figures_hold);
    RUN(strerror_names);
    return lgbt_summary("test_units");
}
