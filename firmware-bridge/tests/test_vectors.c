/*
 * test_vectors.c -- runs every line of the files in tests/vectors/ (PROTOCOL.md §13)
 * against the C library. The host side runs the same files
 * (tests/test_bridge_vectors.py), so both implementations agree byte for byte.
 *
 * Usage: test_vectors VECTORS_DIR
 *
 * Builds with a LGB_MAX_PAYLOAD other than the vectors' 128 adapt: frames whose
 * payload exceeds the build's limit are expected to fail with TOO_LONG, and the
 * invalid TOO_LONG vectors are skipped when the limit is larger.
 */
#include <stdio.h>
#include <string.h>

#include "lgb_frame.h"
#include "lgb_isotp.h"
#include "lgb_mp.h"
#include "lgb_msg.h"
#include "lgb_test.h"

#define VECTOR_MAX_PAYLOAD 128
#define MAXB 4096

static const char *dir;
static int skipped;

static const char *const err_names[] = {
    "LGB_OK",           "LGB_ERR_CRC",     "LGB_ERR_COBS",   "LGB_ERR_TOO_LONG",
    "LGB_ERR_VERSION",  "LGB_ERR_TYPE",    "LGB_ERR_LENGTH", "LGB_ERR_PAYLOAD",
    "LGB_ERR_NO_FUNCTION", "LGB_ERR_ARGS", "LGB_ERR_BUSY",   "LGB_ERR_FUNCTION",
    "LGB_ERR_BUFFER",   "LGB_ERR_TIMEOUT", "LGB_ERR_STATE",  "LGB_ERR_ISOTP",
};

static int err_code(const char *name)
{
    int i;
    for (i = 0; i < (int)(sizeof(err_names) / sizeof(err_names[0])); i++) {
        if (strcmp(err_names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

/* Opens DIR/name; calls fn for each non-comment line with its fields. */
static int for_lines(const char *name, void (*fn)(char **f, int n))
{
    char path[512];
    static char line[65536];
    FILE *fp;
    int count = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fp = fopen(path, "r");
    if (fp == NULL) {
        printf("cannot open %s\n", path);
        return -1;
    }
    while (fgets(line, sizeof(line), fp) != NULL) {
        char *f[64];
        int n;
        if (line[0] == '#') {
            continue;
        }
        n = lgbt_split(line, f, 64);
        if (n == 0) {
            continue;
        }
        fn(f, n);
        count++;
    }
    fclose(fp);
    return count;
}

/* ------------------------------------------------------------------ frames */

static void frame_line(char **f, int n)
{
    static unsigned char wire[MAXB];
    long wn;
    lgb_decoder_t d;
    lgb_packet_t pk;
    lgb_ret_t last = LGB_PENDING;
    int ends = 0;
    long i;

    wn = lgbt_hex(f[2], wire, sizeof(wire));
    CHECK(wn > 0);
    lgb_decoder_init(&d);
    /* One byte at a time (h11 style): only the delimiter ends the frame. */
    for (i = 0; i < wn; i++) {
        lgb_ret_t r = lgb_decoder_feed(&d, wire[i], &pk);
        if (r != LGB_PENDING) {
            ends++;
            last = r;
            CHECK_EQ(i, wn - 1);
        }
    }
    CHECK_EQ(ends, 1);
    if (strcmp(f[0], "valid") == 0 && n == 7) {
        static unsigned char payload[MAXB], pkt[MAXB], enc[MAXB];
        long pn = lgbt_hex(f[6], payload, sizeof(payload));
        unsigned type = (unsigned)strtoul(f[3], NULL, 16);
        unsigned seq = (unsigned)strtoul(f[4], NULL, 10);
        unsigned flags = (unsigned)strtoul(f[5], NULL, 16);
        size_t plen = 0, elen = 0;
        if (pn > LGB_MAX_PAYLOAD) {
            CHECK_EQ(last, LGB_ERR_TOO_LONG);
            return;
        }
        CHECK_EQ(last, LGB_OK);
        if (last != LGB_OK) {
            printf("  vector %s: %s\n", f[1], lgb_strerror(last));
            return;
        }
        CHECK_EQ(pk.type, type);
        CHECK_EQ(pk.seq, seq);
        CHECK_EQ(pk.flags, flags);
        CHECK_EQ(pk.version, LGB_VERSION);
        CHECK_EQ(pk.len, pn);
        CHECK(pn == 0 || memcmp(pk.payload, payload, (size_t)pn) == 0);
        /* And the encoder produces the same wire bytes. */
        CHECK_EQ(lgb_packet_encode((uint8_t)type, (uint8_t)flags, (uint8_t)seq, payload, (size_t)pn, pkt,
                                   sizeof(pkt), &plen),
                 LGB_OK);
        CHECK_EQ(lgb_frame_encode(pkt, plen, enc, sizeof(enc), &elen), LGB_OK);
        CHECK_EQ(elen, wn);
        CHECK(elen == (size_t)wn && memcmp(enc, wire, elen) == 0);
        /* Whole-buffer COBS agrees with the streaming decoder. */
        CHECK_EQ(lgb_cobs_decode(wire, (size_t)wn - 1u, enc, sizeof(enc), &elen), LGB_OK);
        CHECK(elen == plen && memcmp(enc, pkt, plen) == 0);
    } else if (strcmp(f[0], "invalid") == 0 && n == 4) {
        int want = err_code(f[3]);
        CHECK(want > 0);
        if (want == LGB_ERR_TOO_LONG && LGB_MAX_PAYLOAD > VECTOR_MAX_PAYLOAD) {
            skipped++;
            return;
        }
        if (last != want) {
            printf("  vector %s: got %s, expected %s\n", f[1], lgb_strerror(last), f[3]);
        }
        CHECK_EQ(last, want);
    } else {
        printf("  bad line: %s\n", f[1]);
        CHECK(0);
    }
}

TEST(frames_txt)
{
    CHECK(for_lines("frames.txt", frame_line) > 30);
}

/* ------------------------------------------------------------------ payloads */

/* Re-encodes every value read from r into w (msgpack is canonical here). */
static lgb_ret_t walk(lgb_mp_reader_t *r, lgb_mp_writer_t *w)
{
    size_t pending = 1;
    lgb_mp_obj_t o;
    while (pending > 0u) {
        if (lgb_mp_read(r, &o) != LGB_OK) {
            return LGB_ERR_PAYLOAD;
        }
        pending--;
        switch (o.kind) {
        case LGB_MP_NIL:
            lgb_mp_write_nil(w);
            break;
        case LGB_MP_BOOL:
            lgb_mp_write_bool(w, o.v.b);
            break;
        case LGB_MP_UINT:
            lgb_mp_write_uint(w, o.v.u);
            break;
        case LGB_MP_INT:
            lgb_mp_write_int(w, o.v.i);
            break;
#if LGB_ENABLE_FLOAT
        case LGB_MP_FLOAT32: {
            float x;
            memcpy(&x, &o.v.f32, sizeof(x));
            lgb_mp_write_float(w, x);
            break;
        }
        case LGB_MP_FLOAT64: {
            double x;
            memcpy(&x, &o.v.f64, sizeof(x));
            lgb_mp_write_double(w, x);
            break;
        }
#else
        case LGB_MP_FLOAT32:
        case LGB_MP_FLOAT64: {
            /* No float API in this build: the raw bits were still read. */
            uint8_t tmp[9];
            int k, nb = o.kind == LGB_MP_FLOAT32 ? 4 : 8;
            uint64_t bits = o.kind == LGB_MP_FLOAT32 ? o.v.f32 : o.v.f64;
            tmp[0] = o.kind == LGB_MP_FLOAT32 ? 0xCA : 0xCB;
            for (k = 0; k < nb; k++) {
                tmp[1 + k] = (uint8_t)(bits >> (8 * (nb - 1 - k)));
            }
            lgb_mp_write_raw(w, tmp, (size_t)nb + 1u);
            break;
        }
#endif
        case LGB_MP_STR:
            lgb_mp_write_str(w, (const char *)o.v.raw.ptr, o.v.raw.len);
            break;
        case LGB_MP_BIN:
            lgb_mp_write_bin(w, o.v.raw.ptr, o.v.raw.len);
            break;
        case LGB_MP_ARRAY:
            lgb_mp_write_array(w, o.v.count);
            pending += o.v.count;
            break;
        case LGB_MP_MAP:
            lgb_mp_write_map(w, o.v.count);
            pending += 2u * o.v.count;
            break;
        }
    }
    return w->err;
}

static void payload_line(char **f, int n)
{
    static unsigned char payload[MAXB], out[MAXB];
    long pn = lgbt_hex(f[3], payload, sizeof(payload));
    uint8_t type = (uint8_t)strtoul(f[2], NULL, 16);
    lgb_ret_t r;

    CHECK(pn >= 0 && n >= 5);
    r = lgb_msg_validate(type, payload, (size_t)pn);
    if (strcmp(f[0], "valid") == 0) {
        if (r != LGB_OK) {
            printf("  vector %s: %s\n", f[1], lgb_strerror(r));
        }
        CHECK_EQ(r, LGB_OK);
        if (type == LGB_MSG_HELLO || type == LGB_MSG_CALL || type == LGB_MSG_RESULT || type == LGB_MSG_EVENT) {
            lgb_mp_reader_t rd;
            lgb_mp_writer_t w;
            lgb_mp_reader_init(&rd, payload, (size_t)pn);
            lgb_mp_writer_init(&w, out, sizeof(out));
            CHECK_EQ(walk(&rd, &w), LGB_OK);
            CHECK_EQ(rd.pos, pn);
            if (strstr(f[1], "non_minimal") == NULL) {
                CHECK_EQ(w.len, pn);
                CHECK(w.len == (size_t)pn && memcmp(out, payload, w.len) == 0);
            }
        }
    } else {
        int want = err_code(f[4]);
        if (r != want) {
            printf("  vector %s: got %s, expected %s\n", f[1], lgb_strerror(r), f[4]);
        }
        CHECK_EQ(r, want);
    }
}

TEST(payloads_txt)
{
    CHECK(for_lines("payloads.txt", payload_line) > 50);
}

/* ------------------------------------------------------------------ ISO-TP */

typedef struct {
    unsigned char data[64][8];
    uint8_t len[64];
    uint32_t at[64];
    int n;
    uint32_t now;
} canlog_t;

static canlog_t clog_;

static int can_write(void *ctx, uint32_t id, const uint8_t *data, uint8_t len)
{
    canlog_t *c = (canlog_t *)ctx;
    (void)id;
    if (c->n < 64) {
        memcpy(c->data[c->n], data, len);
        c->len[c->n] = len;
        c->at[c->n] = c->now;
        c->n++;
    }
    return 0;
}

static uint32_t can_now(void *ctx)
{
    return ((canlog_t *)ctx)->now;
}

/* Data bytes of a frame as its PCI defines them; `remaining` = message bytes
 * still to come for a CF. */
static size_t pci_len(const unsigned char *fr, size_t len, size_t remaining)
{
    switch (fr[0] >> 4) {
    case 0:
        return (size_t)(fr[0] & 0x0F) + 1u;
    case 1:
        return 8;
    case 2:
        return 1u + (remaining < 7u ? remaining : 7u);
    case 3:
        return 3;
    default:
        return len;
    }
}

/* Compares an emitted frame with an expected one (padded with 0xCC in the
 * vectors): the PCI's data bytes exactly, then this build's padding. */
static int same_frame(const unsigned char *got, size_t gn, const unsigned char *want, size_t wn, size_t remaining)
{
    size_t n = pci_len(want, wn, remaining), i;
    if (n > wn) {
        n = wn;
    }
    if (memcmp(got, want, n < gn ? n : gn) != 0) {
        return 0;
    }
#if LGB_ISOTP_PADDING
    if (gn != 8u) {
        return 0;
    }
    for (i = n; i < gn; i++) {
        if (got[i] != (unsigned char)LGB_ISOTP_PAD_BYTE) {
            return 0;
        }
    }
    return 1;
#else
    (void)i;
    return gn == n;
#endif
}

#define TX_ID 0x7E8u
#define RX_ID 0x7E0u

static void isotp_sender(char **frames, int nf, const unsigned char *pkt, size_t pn, lgb_ret_t want_err)
{
    lgb_isotp_t t;
    lgb_can_io_t io;
    int i, seen = 0;
    size_t sent = 0;
    lgb_ret_t last = LGB_OK;
    const uint8_t *m;
    size_t mn;
    uint8_t stmin = 0;

    memset(&clog_, 0, sizeof(clog_));
    io.write = can_write;
    io.now_ms = can_now;
    io.ctx = &clog_;
    CHECK_EQ(lgb_isotp_init(&t, &io, TX_ID, RX_ID), LGB_OK);
    CHECK_EQ(lgb_isotp_send(&t, pkt, pn), LGB_OK);
    for (i = 0; i < nf; i++) {
        unsigned char fr[8];
        long fl = lgbt_hex(frames[i] + 1, fr, sizeof(fr));
        if (frames[i][0] == '>') {
            int waited = 0;
            while (clog_.n <= seen && waited < 2000) {
                clog_.now++;
                waited++;
                (void)lgb_isotp_poll(&t);
            }
            CHECK(clog_.n > seen);
            if (clog_.n <= seen) {
                return;
            }
            CHECK(same_frame(clog_.data[seen], clog_.len[seen], fr, (size_t)fl, pn - sent));
            /* STmin between consecutive frames of one block */
            if ((fr[0] >> 4) == 2 && i > 0 && frames[i - 1][0] == '>' && (clog_.data[seen - 1][0] >> 4) == 2 &&
                stmin > 0) {
                uint32_t gap = clog_.at[seen] - clog_.at[seen - 1];
                CHECK(gap >= (stmin <= 0x7F ? stmin : 1u));
            }
            sent += (fr[0] >> 4) == 1 ? 6u : ((fr[0] >> 4) == 2 ? (pn - sent < 7u ? pn - sent : 7u) : 0u);
            if ((fr[0] >> 4) == 1) {
                sent = 6;
            }
            seen++;
        } else {
            if (fl >= 3) {
                stmin = fr[2];
            }
            lgb_ret_t r = lgb_isotp_on_frame(&t, RX_ID, fr, (size_t)fl, &m, &mn);
            if (want_err == LGB_OK) {
                CHECK_EQ(r, LGB_PENDING);
            } else if (r == want_err) {
                last = r; /* (with LGB_ISOTP_MAX_WFT < 10 a WAIT aborts earlier) */
            }
        }
    }
    /* Nothing more is sent. */
    for (i = 0; i < 50; i++) {
        clog_.now++;
        (void)lgb_isotp_poll(&t);
    }
    CHECK_EQ(clog_.n, seen);
    if (want_err != LGB_OK) {
        CHECK_EQ(last, want_err);
    }
    CHECK(lgb_isotp_idle(&t));
}

static void isotp_receiver(char **frames, int nf, const unsigned char *pkt, size_t pn, lgb_ret_t want_err)
{
    lgb_isotp_t t;
    lgb_can_io_t io;
    int i, seen = 0, got_msg = 0, got_err = 0;
    const uint8_t *m = NULL;
    size_t mn = 0;

    memset(&clog_, 0, sizeof(clog_));
    io.write = can_write;
    io.now_ms = can_now;
    io.ctx = &clog_;
    CHECK_EQ(lgb_isotp_init(&t, &io, TX_ID, RX_ID), LGB_OK);
    for (i = 0; i < nf; i++) {
        if (frames[i][0] == '<') {
            unsigned char fr[8];
            lgbt_hex(frames[i] + 1, fr, sizeof(fr));
            lgb_isotp_set_flow_control(&t, fr[1], fr[2]);
            break;
        }
    }
    for (i = 0; i < nf; i++) {
        unsigned char fr[8];
        long fl = lgbt_hex(frames[i] + 1, fr, sizeof(fr));
        if (frames[i][0] == '>') {
            lgb_ret_t r = lgb_isotp_on_frame(&t, RX_ID, fr, (size_t)(fl < 0 ? 0 : fl), &m, &mn);
            clog_.now += 1;
            if (r == LGB_OK) {
                got_msg++;
            } else if (r != LGB_PENDING) {
                got_err++;
                CHECK_EQ(r, want_err);
            }
        } else {
            CHECK(clog_.n > seen);
            if (clog_.n > seen) {
                CHECK(same_frame(clog_.data[seen], clog_.len[seen], fr, (size_t)fl, 0));
            }
            seen++;
        }
    }
    CHECK_EQ(clog_.n, seen);
    if (want_err == LGB_OK) {
        CHECK_EQ(got_msg, 1);
        CHECK_EQ(got_err, 0);
        CHECK(got_msg == 1 && mn == pn && memcmp(m, pkt, pn) == 0);
    } else {
        CHECK_EQ(got_msg, 0);
        CHECK(got_err >= 1);
    }
}

static void isotp_line(char **f, int n)
{
    static unsigned char pkt[MAXB];
    long pn;
    if (strcmp(f[0], "valid") == 0) {
        pn = lgbt_hex(f[2], pkt, sizeof(pkt));
        CHECK(pn > 0);
        if (pn > LGB_PACKET_MAX) {
            skipped++;
            return;
        }
        isotp_sender(f + 3, n - 3, pkt, (size_t)pn, LGB_OK);
        isotp_receiver(f + 3, n - 3, pkt, (size_t)pn, LGB_OK);
    } else if (strcmp(f[0], "invalid-rx") == 0) {
        int want = err_code(f[2]);
        if (want == LGB_ERR_TOO_LONG && LGB_MAX_PAYLOAD > VECTOR_MAX_PAYLOAD && strstr(f[1], "escape") == NULL) {
            skipped++;
            return;
        }
        isotp_receiver(f + 3, n - 3, NULL, 0, want);
    } else if (strcmp(f[0], "invalid-tx") == 0) {
        pn = lgbt_hex(f[3], pkt, sizeof(pkt));
        isotp_sender(f + 4, n - 4, pkt, (size_t)pn, err_code(f[2]));
    } else {
        CHECK(0);
    }
}

TEST(isotp_txt)
{
    CHECK(for_lines("isotp.txt", isotp_line) > 20);
}

/* ------------------------------------------------------------------ primitives */

static void primitive_line(char **f, int n)
{
    static unsigned char a[MAXB], b[MAXB], out[MAXB];
    long an = lgbt_hex(f[2], a, sizeof(a));
    long bn = lgbt_hex(f[3], b, sizeof(b));
    size_t on = 0;
    CHECK(n == 4 && an >= 0 && bn >= 0);
    if (strcmp(f[0], "crc16") == 0) {
        CHECK_EQ(lgb_crc16(a, (size_t)an), ((unsigned)b[0] << 8) | b[1]);
    } else {
        CHECK_EQ(lgb_cobs_encode(a, (size_t)an, out, sizeof(out), &on), LGB_OK);
        CHECK(on == (size_t)bn && memcmp(out, b, on) == 0);
        CHECK(on <= LGB_COBS_ENCODED_MAX((size_t)an));
        CHECK_EQ(lgb_cobs_decode(b, (size_t)bn, out, sizeof(out), &on), LGB_OK);
        CHECK(on == (size_t)an && memcmp(out, a, on) == 0);
        /* In place. */
        memcpy(out, b, (size_t)bn);
        CHECK_EQ(lgb_cobs_decode(out, (size_t)bn, out, sizeof(out), &on), LGB_OK);
        CHECK(on == (size_t)an && memcmp(out, a, on) == 0);
        /* Exact-size and one-short destination buffers. */
        CHECK_EQ(lgb_cobs_encode(a, (size_t)an, out, (size_t)bn, &on), LGB_OK);
        CHECK_EQ(lgb_cobs_encode(a, (size_t)an, out, (size_t)bn - 1u, &on), LGB_ERR_BUFFER);
    }
}

TEST(primitives_txt)
{
    CHECK(for_lines("primitives.txt", primitive_line) > 15);
}

int main(int argc, char **argv)
{
    dir = argc > 1 ? argv[1] : "tests/vectors";
    RUN(frames_txt);
    RUN(payloads_txt);
    RUN(isotp_txt);
    RUN(primitives_txt);
    if (skipped > 0) {
        printf("(%d vectors skipped: LGB_MAX_PAYLOAD=%d differs from the vectors' %d)\n", skipped, LGB_MAX_PAYLOAD,
               VECTOR_MAX_PAYLOAD);
    }
    return lgbt_summary("test_vectors");
}
