/*
 * lgb_frame.c -- packets (PROTOCOL.md §3) and UART frames (§4): encoder and the
 * streaming decoder.
 *
 * Why a streaming decoder: on an MCU bytes arrive one at a time from a UART
 * interrupt (through lgb_ring_t); decoding COBS as they arrive needs only the
 * packet buffer, never the encoded frame, and bounds memory at LGB_PACKET_MAX
 * however long the garbage on the line is.
 */
#include <string.h>

#include "lgb_frame.h"

lgb_ret_t lgb_frame_encode(const void *src, size_t n, void *dst, size_t dst_max, size_t *out_len)
{
    size_t len = 0;
    lgb_ret_t ret;

    if (dst == NULL || out_len == NULL || dst_max < 2u) {
        return LGB_ERR_BUFFER;
    }
    ret = lgb_cobs_encode(src, n, dst, dst_max - 1u, &len);
    if (ret != LGB_OK) {
        return ret;
    }
    ((uint8_t *)dst)[len] = 0;
    *out_len = len + 1u;
    return LGB_OK;
}

lgb_ret_t lgb_packet_encode(uint8_t type, uint8_t flags, uint8_t seq, const void *payload, size_t n, void *dst,
                            size_t dst_max, size_t *out_len)
{
    uint8_t *d = (uint8_t *)dst;
    uint16_t crc;

    if (n > (size_t)LGB_MAX_PAYLOAD) {
        return LGB_ERR_TOO_LONG;
    }
    if (dst == NULL || out_len == NULL || (payload == NULL && n > 0u) || dst_max < n + LGB_PACKET_OVERHEAD) {
        return LGB_ERR_BUFFER;
    }
    d[LGB_OFF_VERSION] = LGB_VERSION;
    d[LGB_OFF_TYPE] = type;
    d[LGB_OFF_FLAGS] = flags;
    d[LGB_OFF_SEQ] = seq;
    d[LGB_OFF_LENGTH] = (uint8_t)(n >> 8);
    d[LGB_OFF_LENGTH + 1] = (uint8_t)n;
    if (n > 0u && (const uint8_t *)payload != d + LGB_HEADER_SIZE) {
        memcpy(d + LGB_HEADER_SIZE, payload, n);
    }
    crc = lgb_crc16(d, n + LGB_HEADER_SIZE);
    d[n + LGB_HEADER_SIZE] = (uint8_t)(crc >> 8);
    d[n + LGB_HEADER_SIZE + 1u] = (uint8_t)crc;
    *out_len = n + LGB_PACKET_OVERHEAD;
    return LGB_OK;
}

lgb_ret_t lgb_packet_parse(const void *src, size_t n, lgb_packet_t *out)
{
    const uint8_t *p = (const uint8_t *)src;
    uint16_t crc;

    if (src == NULL || out == NULL) {
        return LGB_ERR_BUFFER;
    }
    out->trusted = 0;
    if (n > (size_t)LGB_PACKET_MAX) {
        return LGB_ERR_TOO_LONG;
    }
    if (n < LGB_PACKET_OVERHEAD) {
        return LGB_ERR_LENGTH;
    }
    crc = (uint16_t)((uint16_t)(p[n - 2u] << 8) | p[n - 1u]);
    if (lgb_crc16(p, n - LGB_CRC_SIZE) != crc) {
        return LGB_ERR_CRC;
    }
    out->version = p[LGB_OFF_VERSION];
    out->type = p[LGB_OFF_TYPE];
    out->flags = p[LGB_OFF_FLAGS];
    out->seq = p[LGB_OFF_SEQ];
    out->len = (uint16_t)((uint16_t)(p[LGB_OFF_LENGTH] << 8) | p[LGB_OFF_LENGTH + 1]);
    out->payload = p + LGB_HEADER_SIZE;
    out->trusted = 1;
    if ((size_t)out->len != n - LGB_PACKET_OVERHEAD) {
        return LGB_ERR_LENGTH;
    }
    if (out->version != LGB_VERSION) {
        return LGB_ERR_VERSION;
    }
    return LGB_OK;
}

void lgb_decoder_init(lgb_decoder_t *d)
{
    memset(d, 0, sizeof(*d));
    d->code = 0xFF;
}

static void dec_put(lgb_decoder_t *d, uint8_t b)
{
    if (d->len < (uint16_t)LGB_PACKET_MAX) {
        d->buf[d->len++] = b;
    } else {
        d->state |= LGB_DEC_OVERFLOW;
    }
}

lgb_ret_t lgb_decoder_feed(lgb_decoder_t *d, uint8_t byte, lgb_packet_t *out)
{
    lgb_ret_t ret;

    if (byte != 0u) {
        d->state |= LGB_DEC_IN_FRAME;
        if (d->state & LGB_DEC_OVERFLOW) {
            return LGB_PENDING; /* discard until the delimiter */
        }
        if (d->remaining == 0u) {
            /* A code byte. The previous block implied a 0x00 unless it was a
             * 0xFF block (or there was none: code starts as 0xFF). */
            if (d->code != 0xFFu) {
                dec_put(d, 0);
            }
            d->code = byte;
            d->remaining = (uint8_t)(byte - 1u);
        } else {
            dec_put(d, byte);
            d->remaining--;
        }
        return LGB_PENDING;
    }

    /* Delimiter. */
    if (!(d->state & LGB_DEC_IN_FRAME)) {
        return LGB_PENDING; /* empty frame: ignored */
    }
    if (d->state & LGB_DEC_OVERFLOW) {
        ret = LGB_ERR_TOO_LONG;
        out->trusted = 0;
    } else if (d->remaining != 0u) {
        ret = LGB_ERR_COBS;
        out->trusted = 0;
    } else {
        ret = lgb_packet_parse(d->buf, d->len, out);
    }
#if LGB_ENABLE_STATS
    if (ret == LGB_OK) {
        d->frames++;
    } else {
        d->dropped++;
    }
#endif
    d->len = 0;
    d->code = 0xFF;
    d->remaining = 0;
    d->state = 0;
    return ret;
}

lgb_ret_t lgb_decoder_feed_buf(lgb_decoder_t *d, const uint8_t *src, size_t n, size_t *consumed, lgb_packet_t *out)
{
    lgb_ret_t ret = LGB_PENDING;
    size_t i = 0;

    while (i < n) {
        ret = lgb_decoder_feed(d, src[i++], out);
        if (ret != LGB_PENDING) {
            break;
        }
    }
    if (consumed != NULL) {
        *consumed = i;
    }
    return ret;
}
