/*
 * lgb_link.c -- the MCU endpoint: HELLO, PING/PONG, CALL dispatch with a RESULT
 * cache, EVENTs, ACK/NAK, sequence numbers, duplicate detection and
 * retransmission (PROTOCOL.md §7-§9). See lgb_link.h for the API.
 *
 * Strategy: one retransmission buffer (tx) holds the single ACK_REQ packet in
 * flight (stop-and-wait, §8.3); HELLO and EVENT payloads are built directly in
 * it, RESULT payloads in the RESULT cache first (they must survive the packet
 * in flight and later retransmissions of the CALL, §8.6) and copied into tx
 * when the line is free. ACK, NAK and PONG are built on the stack and written at
 * once, so they never wait behind the packet in flight.
 *
 * Why one file over 600 lines: every handler reads and writes the same private
 * state (the packet in flight, the RESULT cache, the peer's last seq); keeping it
 * static to this file keeps it private, and lets the compiler inline the
 * single-use helpers (it matters for the Cortex-M0+ flash budget).
 */
#include <string.h>

#include "lgb_link.h"

#if LGB_ENABLE_STATS
#define STAT(l, field) ((l)->stats.field++)
#else
#define STAT(l, field) ((void)0)
#endif

/* Largest control packet: a PONG with an 8-byte payload. */
#define CTRL_MAX (LGB_PACKET_OVERHEAD + LGB_PING_MAX)

/* Bytes staged per write() call in COBS mode. */
#define CHUNK 32u

static uint32_t now_ms(const lgb_link_t *l)
{
    return l->io.now_ms(l->io.ctx);
}

/* The seq for a new packet (PROTOCOL.md §8.1): +1 per packet, and a new ACK_REQ
 * packet never reuses the previous ACK_REQ packet's seq. */
static uint8_t take_seq(lgb_link_t *l, int ackreq)
{
    uint8_t s = l->next_seq;
    if (ackreq && s == l->last_ackreq_seq) {
        s++;
    }
    l->next_seq = (uint8_t)(s + 1u);
    if (ackreq) {
        l->last_ackreq_seq = s;
    }
    return s;
}

/* ------------------------------------------------------------------ output */

typedef struct {
    lgb_link_t *l;
    uint8_t buf[CHUNK];
    size_t n;
} stage_t;

static void stage_flush(stage_t *s)
{
    if (s->n > 0u && s->l->io.write(s->l->io.ctx, s->buf, s->n) != s->n) {
        s->l->state |= LGB_LINK_ST_DIRTY;
    }
    s->n = 0;
}

static void stage_put(stage_t *s, uint8_t b)
{
    s->buf[s->n++] = b;
    if (s->n == CHUNK) {
        stage_flush(s);
    }
}

/* Writes one packet: whole in packet mode; COBS-encoded on the fly (no frame
 * buffer) plus the 0x00 delimiter in COBS mode. A short write loses the frame;
 * ACK_REQ packets are recovered by retransmission, the others by the peer's. */
static void write_packet(lgb_link_t *l, const uint8_t *p, size_t n)
{
    stage_t s;
    size_t i = 0;

    STAT(l, tx_packets);
    if (l->mode == LGB_LINK_PACKET) {
        (void)l->io.write(l->io.ctx, p, n);
        return;
    }
    s.l = l;
    s.n = 0;
    if (l->state & LGB_LINK_ST_DIRTY) {
        /* The last frame was cut short (or is being retransmitted): end whatever
         * the receiver holds, so this frame does not join it (PROTOCOL.md §4.3). */
        stage_put(&s, 0);
        l->state &= (uint8_t)~LGB_LINK_ST_DIRTY;
    }
    for (;;) {
        size_t k = 0;
        size_t j;
        while (i + k < n && p[i + k] != 0u && k < 254u) {
            k++;
        }
        stage_put(&s, (uint8_t)(k + 1u));
        for (j = 0; j < k; j++) {
            stage_put(&s, p[i + j]);
        }
        i += k;
        if (k == 254u) {
            continue; /* a 0xFF block implies no zero; the run goes on */
        }
        if (i >= n) {
            break;
        }
        i++; /* the zero this block implied */
    }
    stage_put(&s, 0);
    stage_flush(&s);
}

static void send_ctrl(lgb_link_t *l, uint8_t type, const uint8_t *payload, size_t n)
{
    uint8_t buf[CTRL_MAX];
    size_t len;
    if (lgb_packet_encode(type, 0, take_seq(l, 0), payload, n, buf, sizeof(buf), &len) == LGB_OK) {
        write_packet(l, buf, len);
    }
}

static void send_ack(lgb_link_t *l, uint8_t seq)
{
    send_ctrl(l, LGB_MSG_ACK, &seq, 1);
}

static void send_nak(lgb_link_t *l, uint8_t seq, lgb_ret_t code)
{
    uint8_t p[2];
    p[0] = seq;
    p[1] = (uint8_t)code;
    STAT(l, naks_sent);
    send_ctrl(l, LGB_MSG_NAK, p, 2);
}

/* First timeout of the packet in tx: base + airtime of it and of its ACK. */
static uint32_t first_timeout(const lgb_link_t *l)
{
    uint32_t wire = (uint32_t)l->tx_len + LGB_PACKET_OVERHEAD + 1u;
    if (l->mode == LGB_LINK_COBS) {
        /* COBS overhead and the two delimiters, bounded from above without a
         * division: n/128 >= n/254. */
        wire += (wire >> 7) + 4u;
    }
    /* Airtime in ms, rounded up; /1024 instead of /1000 (no divide on M0+). */
    return (uint32_t)LGB_ACK_TIMEOUT_MS + ((wire * l->byte_time_us + 1023u) >> 10);
}

/* Sends the n-byte payload already at tx + LGB_HEADER_SIZE as an ACK_REQ packet. */
static void send_reliable(lgb_link_t *l, uint8_t type, size_t n)
{
    size_t len = 0;
    (void)lgb_packet_encode(type, LGB_FLAG_ACK_REQ, take_seq(l, 1), l->tx + LGB_HEADER_SIZE, n, l->tx,
                            sizeof(l->tx), &len);
    l->tx_len = (uint16_t)len;
    l->state |= LGB_LINK_ST_IN_FLIGHT;
    l->tries = 0;
    l->tx_timeout = first_timeout(l);
    l->tx_start = now_ms(l);
    write_packet(l, l->tx, len);
}

/* The packet in flight ended with `status`. */
static void finish(lgb_link_t *l, lgb_ret_t status)
{
    l->state &= (uint8_t)~LGB_LINK_ST_IN_FLIGHT;
    if (l->dev->on_sent != NULL) {
        l->dev->on_sent(l->dev->user, l->tx[LGB_OFF_TYPE], l->tx[LGB_OFF_SEQ], status);
    }
}

/* Sends the cached RESULT if it is due and the line is free. */
static void flush_result(lgb_link_t *l)
{
    if ((l->state & (LGB_LINK_ST_IN_FLIGHT | LGB_LINK_ST_RESULT_DUE)) == LGB_LINK_ST_RESULT_DUE) {
        l->state &= (uint8_t)~LGB_LINK_ST_RESULT_DUE;
        memcpy(l->tx + LGB_HEADER_SIZE, l->result, l->result_len);
        send_reliable(l, LGB_MSG_RESULT, l->result_len);
    }
}

static int result_in_flight(const lgb_link_t *l)
{
    return (l->state & LGB_LINK_ST_IN_FLIGHT) && l->tx[LGB_OFF_TYPE] == LGB_MSG_RESULT;
}

/* HELLO payload into tx (PROTOCOL.md §7.1). */
static lgb_ret_t build_hello(lgb_link_t *l, size_t *n)
{
    const lgb_device_t *d = l->dev;
    lgb_mp_writer_t w;
    uint8_t i;

    lgb_mp_writer_init(&w, l->tx + LGB_HEADER_SIZE, LGB_MAX_PAYLOAD);
    (void)lgb_mp_write_array(&w, 5);
    (void)lgb_mp_write_cstr(&w, d->device_id);
    (void)lgb_mp_write_cstr(&w, d->fw_version);
    (void)lgb_mp_write_uint(&w, LGB_MAX_PAYLOAD);
    (void)lgb_mp_write_array(&w, d->n_functions);
    for (i = 0; i < d->n_functions; i++) {
        (void)lgb_mp_write_array(&w, 3);
        (void)lgb_mp_write_cstr(&w, d->functions[i].name);
        (void)lgb_mp_write_cstr(&w, d->functions[i].arg_types);
        (void)lgb_mp_write_cstr(&w, d->functions[i].result_type);
    }
    (void)lgb_mp_write_array(&w, d->n_events);
    for (i = 0; i < d->n_events; i++) {
        (void)lgb_mp_write_cstr(&w, d->events[i]);
    }
    *n = w.len;
    return w.err;
}

static void send_hello(lgb_link_t *l)
{
    size_t n = 0;
    if (build_hello(l, &n) == LGB_OK) {
        send_reliable(l, LGB_MSG_HELLO, n);
    }
}

/* ------------------------------------------------------------------ calls */

/* RESULT error texts (PROTOCOL.md §7.5). Static strings: no formatting code. */
#if LGB_ENABLE_ERRTEXT
#define TEXT(s) s
#else
#define TEXT(s) ""
#endif

/* Whether value o is accepted for type code `code` (PROTOCOL.md §6.1). */
static int arg_ok(char code, const lgb_mp_obj_t *o)
{
    static const char codes[7] = {LGB_TYPE_INT,  LGB_TYPE_UINT,  LGB_TYPE_FLOAT, LGB_TYPE_BOOL,
                                  LGB_TYPE_STR,  LGB_TYPE_BYTES, LGB_TYPE_NIL};
    /* One bit per lgb_mp_kind_t that each code accepts. */
    static const uint16_t kinds[7] = {
        (1u << LGB_MP_INT) | (1u << LGB_MP_UINT),
        1u << LGB_MP_UINT,
#if LGB_ENABLE_FLOAT
        (1u << LGB_MP_FLOAT32) | (1u << LGB_MP_FLOAT64) | (1u << LGB_MP_INT) | (1u << LGB_MP_UINT),
#else
        0,
#endif
        1u << LGB_MP_BOOL,
        1u << LGB_MP_STR,
        1u << LGB_MP_BIN,
        1u << LGB_MP_NIL,
    };
    unsigned i;
    for (i = 0; i < 7u; i++) {
        if (codes[i] == code) {
            /* 'i' is int64: a uint above INT64_MAX does not fit */
            return ((kinds[i] >> o->kind) & 1u) && !(i == 0u && o->kind == LGB_MP_UINT && (o->v.u >> 63) != 0u);
        }
    }
    return 0;
}

/* Runs function fn with the msgpack array `args` (n bytes) and leaves the
 * RESULT payload [call_id, status, value] in the cache (PROTOCOL.md §7.4). */
static void run_call(lgb_link_t *l, uint16_t call_id, uint32_t fn, const uint8_t *args, size_t n)
{
    const lgb_device_t *d = l->dev;
    const lgb_function_t *f = NULL;
    lgb_call_t c;
    lgb_mp_obj_t o;
    size_t status_pos;
    size_t value_pos;
    size_t first;
    uint32_t nargs = 0;
    uint32_t i;
    lgb_ret_t status = LGB_OK;
    const char *msg = TEXT("no such function");
    const char *types;

    lgb_mp_writer_init(&c.result, l->result, LGB_MAX_PAYLOAD);
    (void)lgb_mp_write_array(&c.result, 3);
    (void)lgb_mp_write_uint(&c.result, call_id);
    status_pos = c.result.len;
    (void)lgb_mp_write_uint(&c.result, 0);
    value_pos = c.result.len;

    if (fn < d->n_functions) {
        f = &d->functions[fn];
    }
    if (f == NULL || f->fn == NULL) {
        status = LGB_ERR_NO_FUNCTION;
    } else {
        types = (f->arg_types != NULL) ? f->arg_types : "";
        lgb_mp_reader_init(&c.args, args, n);
        (void)lgb_mp_read_array(&c.args, &nargs); /* validated by the caller */
        first = c.args.pos;
        if (nargs != strlen(types)) {
            status = LGB_ERR_ARGS;
        }
        for (i = 0; status == LGB_OK && i < nargs; i++) {
            if (lgb_mp_read(&c.args, &o) != LGB_OK || !arg_ok(types[i], &o)) {
                status = LGB_ERR_ARGS;
            }
        }
        msg = TEXT("wrong arguments");
        if (status == LGB_OK) {
            c.args.pos = first; /* rewind to the first argument */
            c.error = NULL;
            c.user = d->user;
            c.call_id = call_id;
            c.fn_index = (uint8_t)fn;
            STAT(l, calls);
            status = f->fn(&c);
            msg = TEXT("result too large");
            if (c.result.err != LGB_OK) {
                status = LGB_ERR_BUFFER; /* whatever the handler returned */
            } else if (status == LGB_OK) {
                if (c.result.len == value_pos) {
                    (void)lgb_mp_write_nil(&c.result);
                }
            } else {
                if (status <= 0 || status >= 128) {
                    status = LGB_ERR_FUNCTION;
                }
                msg = (c.error != NULL) ? c.error : "";
            }
        }
    }
    if (status != LGB_OK) {
        c.result.len = value_pos;
        c.result.err = LGB_OK;
        if (lgb_mp_write_cstr(&c.result, msg) != LGB_OK) {
            c.result.err = LGB_OK;
            (void)lgb_mp_write_str(&c.result, "", 0); /* the text did not fit */
        }
    }
    l->result[status_pos] = (uint8_t)status; /* a positive fixint, < 128 */
    l->result_len = (uint16_t)c.result.len;
    l->result_call_id = call_id;
    l->state |= LGB_LINK_ST_RESULT | LGB_LINK_ST_RESULT_DUE;
}

/* ------------------------------------------------------------------ input */

/* Accepts a packet: ACKs it if it asked for it and remembers its seq (§8.2, §8.4). */
static void accept(lgb_link_t *l, const lgb_packet_t *pk)
{
    if (pk->flags & LGB_FLAG_ACK_REQ) {
        send_ack(l, pk->seq);
        l->peer_seq = pk->seq;
        l->state |= LGB_LINK_ST_PEER_SEQ;
    }
}

static lgb_ret_t refuse(lgb_link_t *l, const lgb_packet_t *pk, lgb_ret_t code)
{
    STAT(l, rx_dropped);
    send_nak(l, pk->seq, code);
    return code;
}

/* Reads a uint, saturated to 32 bits. */
static int read_u32(lgb_mp_reader_t *r, uint32_t *out)
{
    uint64_t v;
    if (lgb_mp_read_uint(r, &v) != LGB_OK) {
        return 0;
    }
    *out = (v > 0xFFFFFFFFu) ? 0xFFFFFFFFu : (uint32_t)v;
    return 1;
}

static lgb_ret_t handle_call(lgb_link_t *l, const lgb_packet_t *pk)
{
    lgb_mp_reader_t r;
    uint32_t n = 0;
    uint32_t nargs = 0;
    uint32_t call_id = 0;
    uint32_t fn = 0;
    size_t args_pos;
    size_t args_end;

    /* 1. [uint16 call_id, uint fn_index, array args, extra...], all well-formed. */
    lgb_mp_reader_init(&r, pk->payload, pk->len);
    if (lgb_mp_read_array(&r, &n) != LGB_OK || n < 3u || !read_u32(&r, &call_id) || call_id > 0xFFFFu ||
        !read_u32(&r, &fn)) {
        return refuse(l, pk, LGB_ERR_PAYLOAD);
    }
    args_pos = r.pos;
    if (lgb_mp_read_array(&r, &nargs) != LGB_OK) {
        return refuse(l, pk, LGB_ERR_PAYLOAD);
    }
    r.pos = args_pos;
    if (lgb_mp_skip(&r) != LGB_OK) {
        return refuse(l, pk, LGB_ERR_PAYLOAD);
    }
    args_end = r.pos;
    for (; n > 3u; n--) {
        if (lgb_mp_skip(&r) != LGB_OK) {
            return refuse(l, pk, LGB_ERR_PAYLOAD);
        }
    }
    if (r.pos != r.len) {
        return refuse(l, pk, LGB_ERR_PAYLOAD);
    }
    /* 2. A repeated call_id: answer from the cache (§8.6). */
    if ((l->state & LGB_LINK_ST_RESULT) && (uint16_t)call_id == l->result_call_id) {
        accept(l, pk);
        if (!result_in_flight(l)) {
            l->state |= LGB_LINK_ST_RESULT_DUE;
            flush_result(l);
        }
        return LGB_OK;
    }
    /* 3. Another call's RESULT is still on its way. */
    if ((l->state & LGB_LINK_ST_RESULT_DUE) || result_in_flight(l)) {
        return refuse(l, pk, LGB_ERR_BUSY);
    }
    /* 4. ACK, run, RESULT. */
    accept(l, pk);
    run_call(l, (uint16_t)call_id, fn, pk->payload + args_pos, args_end - args_pos);
    flush_result(l);
    return LGB_OK;
}

static lgb_ret_t handle(lgb_link_t *l, lgb_ret_t ret, const lgb_packet_t *pk)
{
    if (ret != LGB_OK) {
        STAT(l, rx_dropped);
        if (pk->trusted && pk->type != LGB_MSG_ACK && pk->type != LGB_MSG_NAK) {
            send_nak(l, pk->seq, ret);
        }
        return ret;
    }

    /* ACK and NAK: never answered (§7.7, §7.8). */
    if (pk->type == LGB_MSG_ACK || pk->type == LGB_MSG_NAK) {
        int ours;
        if (pk->len != (pk->type == LGB_MSG_ACK ? 1u : 2u)) {
            STAT(l, rx_dropped);
            return LGB_ERR_LENGTH;
        }
        ours = (l->state & LGB_LINK_ST_IN_FLIGHT) && pk->payload[0] == l->tx[LGB_OFF_SEQ];
        if (pk->type == LGB_MSG_ACK) {
            if (ours) {
                finish(l, LGB_OK);
            }
        } else {
            STAT(l, naks_received);
            /* BUSY: keep waiting, the timeout retransmits (§8.3). */
            if (ours && pk->payload[1] != LGB_ERR_BUSY) {
                finish(l, (lgb_ret_t)pk->payload[1]);
            }
        }
        flush_result(l);
        return LGB_OK;
    }

    /* A duplicate of the last accepted ACK_REQ packet: ACK again, do not process (§8.4). */
    if ((pk->flags & LGB_FLAG_ACK_REQ) && (l->state & LGB_LINK_ST_PEER_SEQ) && pk->seq == l->peer_seq) {
        STAT(l, rx_duplicates);
        send_ack(l, pk->seq);
        return LGB_OK;
    }

    switch (pk->type) {
    case LGB_MSG_HELLO_REQ:
        if (pk->len != 0u) {
            return refuse(l, pk, LGB_ERR_LENGTH);
        }
        /* Session reset (§9). */
        if (l->state & LGB_LINK_ST_IN_FLIGHT) {
            finish(l, LGB_ERR_STATE);
        }
        l->state &= (uint8_t)~(LGB_LINK_ST_PEER_SEQ | LGB_LINK_ST_RESULT | LGB_LINK_ST_RESULT_DUE);
        accept(l, pk);
        send_hello(l);
        return LGB_OK;
    case LGB_MSG_PING:
    case LGB_MSG_PONG: /* a PONG matching no PING of ours: accepted, ignored */
        if (pk->len > LGB_PING_MAX) {
            return refuse(l, pk, LGB_ERR_LENGTH);
        }
        accept(l, pk);
        if (pk->type == LGB_MSG_PING) {
            send_ctrl(l, LGB_MSG_PONG, pk->payload, pk->len);
        }
        return LGB_OK;
    case LGB_MSG_CALL:
        return handle_call(l, pk);
    default: /* unknown, or MCU -> host only (HELLO, RESULT, EVENT) */
        return refuse(l, pk, LGB_ERR_TYPE);
    }
}

/* ------------------------------------------------------------------ API */

lgb_ret_t lgb_link_init(lgb_link_t *l, const lgb_io_t *io, const lgb_device_t *dev, unsigned mode)
{
    size_t n = 0;

    if (l == NULL || io == NULL || io->write == NULL || io->now_ms == NULL || dev == NULL ||
        mode > LGB_LINK_PACKET) {
        return LGB_ERR_STATE;
    }
    memset(l, 0, sizeof(*l));
    /* NULL strings are announced as "" and a NULL handler answers
     * LGB_ERR_NO_FUNCTION; only the table sizes need checking here. */
    if (dev->n_functions > LGB_MAX_FUNCTIONS || dev->n_events > LGB_MAX_EVENTS ||
        (dev->functions == NULL && dev->n_functions > 0u) || (dev->events == NULL && dev->n_events > 0u)) {
        return LGB_ERR_ARGS;
    }
    l->io = *io;
    l->dev = dev;
    l->mode = (uint8_t)mode;
    l->byte_time_us = LGB_BYTE_TIME_US;
    l->last_ackreq_seq = 0xFF;
    lgb_decoder_init(&l->dec);
    if (build_hello(l, &n) != LGB_OK) {
        return LGB_ERR_BUFFER;
    }
    l->state = LGB_LINK_ST_INIT;
    return LGB_OK;
}

void lgb_link_set_byte_time(lgb_link_t *l, uint16_t us)
{
    l->byte_time_us = us;
}

lgb_ret_t lgb_link_start(lgb_link_t *l)
{
    if (l == NULL || !(l->state & LGB_LINK_ST_INIT)) {
        return LGB_ERR_STATE;
    }
    if (l->mode == LGB_LINK_COBS) {
        uint8_t zero = 0;
        (void)l->io.write(l->io.ctx, &zero, 1);
    }
    if (l->state & LGB_LINK_ST_IN_FLIGHT) {
        finish(l, LGB_ERR_STATE);
    }
    send_hello(l);
    return LGB_OK;
}

lgb_ret_t lgb_link_input(lgb_link_t *l, const uint8_t *data, size_t n)
{
    lgb_ret_t ret = LGB_PENDING;
    size_t i;

    if (l == NULL || !(l->state & LGB_LINK_ST_INIT) || l->mode != LGB_LINK_COBS || (data == NULL && n > 0u)) {
        return LGB_ERR_STATE;
    }
    for (i = 0; i < n; i++) {
        lgb_packet_t pk;
        lgb_ret_t r = lgb_decoder_feed(&l->dec, data[i], &pk);
        if (r != LGB_PENDING) {
            ret = handle(l, r, &pk);
        }
    }
    return ret;
}

lgb_ret_t lgb_link_input_packet(lgb_link_t *l, const uint8_t *pkt, size_t n)
{
    lgb_packet_t pk;
    lgb_ret_t r;

    if (l == NULL || !(l->state & LGB_LINK_ST_INIT) || l->mode != LGB_LINK_PACKET || pkt == NULL) {
        return LGB_ERR_STATE;
    }
    r = lgb_packet_parse(pkt, n, &pk);
    return handle(l, r, &pk);
}

lgb_ret_t lgb_link_poll(lgb_link_t *l)
{
    lgb_ret_t ret = LGB_OK;

    if (l == NULL || !(l->state & LGB_LINK_ST_INIT)) {
        return LGB_ERR_STATE;
    }
    if ((l->state & LGB_LINK_ST_IN_FLIGHT) && (uint32_t)(now_ms(l) - l->tx_start) >= l->tx_timeout) {
        if (l->tries >= LGB_RETRIES) {
            STAT(l, timeouts);
            finish(l, LGB_ERR_TIMEOUT);
            ret = LGB_ERR_TIMEOUT;
        } else {
            uint16_t crc;
            size_t body = (size_t)l->tx_len - LGB_CRC_SIZE;
            l->tries++;
            l->tx[LGB_OFF_FLAGS] |= LGB_FLAG_RETRY;
            crc = lgb_crc16(l->tx, body);
            l->tx[body] = (uint8_t)(crc >> 8);
            l->tx[body + 1u] = (uint8_t)crc;
            l->tx_timeout *= 2u;
            l->tx_start = now_ms(l);
            l->state |= LGB_LINK_ST_DIRTY;
            STAT(l, retransmissions);
            write_packet(l, l->tx, l->tx_len);
        }
    }
    flush_result(l);
    return ret;
}

lgb_ret_t lgb_link_send_event(lgb_link_t *l, uint8_t index, const uint8_t *value, size_t n)
{
    lgb_mp_writer_t w;

    if (l == NULL || !(l->state & LGB_LINK_ST_INIT)) {
        return LGB_ERR_STATE;
    }
    if (index >= l->dev->n_events) {
        return LGB_ERR_ARGS;
    }
    if (lgb_link_busy(l)) {
        return LGB_ERR_BUSY;
    }
    if (n == 0u) {
        return LGB_ERR_PAYLOAD;
    }
    lgb_mp_writer_init(&w, l->tx + LGB_HEADER_SIZE, LGB_MAX_PAYLOAD);
    (void)lgb_mp_write_array(&w, 3);
    (void)lgb_mp_write_uint(&w, index);
    (void)lgb_mp_write_uint(&w, now_ms(l));
    if (lgb_mp_write_raw(&w, value, n) != LGB_OK) {
        return LGB_ERR_BUFFER;
    }
    send_reliable(l, LGB_MSG_EVENT, w.len);
    return LGB_OK;
}

lgb_ret_t lgb_link_send_event_bool(lgb_link_t *l, uint8_t index, int value)
{
    uint8_t v = value ? 0xC3u : 0xC2u;
    return lgb_link_send_event(l, index, &v, 1);
}

lgb_ret_t lgb_link_send_event_int(lgb_link_t *l, uint8_t index, int64_t value)
{
    uint8_t buf[9];
    lgb_mp_writer_t w;
    lgb_mp_writer_init(&w, buf, sizeof(buf));
    (void)lgb_mp_write_int(&w, value);
    return lgb_link_send_event(l, index, buf, w.len);
}

int lgb_link_busy(const lgb_link_t *l)
{
    return (l->state & (LGB_LINK_ST_IN_FLIGHT | LGB_LINK_ST_RESULT_DUE)) != 0u;
}
