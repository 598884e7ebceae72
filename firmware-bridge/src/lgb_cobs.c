/*
 * lgb_cobs.c -- Consistent Overhead Byte Stuffing on whole buffers (PROTOCOL.md §4.2).
 *
 * Why here and not only in the streaming decoder: the encoder is used for every
 * frame sent, and whole-buffer decoding serves tests, tools and hosts. The
 * streaming decoder (lgb_frame.c) decodes as bytes arrive instead.
 * Strategy: the final block is always written, even when empty (code 0x01 after a
 * 0xFF block), as PROTOCOL.md specifies; the decoder accepts both forms.
 */
#include "lgb_frame.h"

lgb_ret_t lgb_cobs_encode(const void *src, size_t n, void *dst, size_t dst_max, size_t *out_len)
{
    const uint8_t *s = (const uint8_t *)src;
    uint8_t *d = (uint8_t *)dst;
    size_t code_idx = 0; /* where the current block's code byte goes */
    size_t o = 1;        /* next output position */
    uint8_t code = 1;    /* 1 + data bytes in the current block */
    size_t i;

    if ((src == NULL && n > 0u) || dst == NULL || out_len == NULL || dst_max < 1u) {
        return LGB_ERR_BUFFER;
    }
    for (i = 0; i < n; i++) {
        uint8_t b = s[i];
        if (b == 0u) {
            d[code_idx] = code;
            if (o >= dst_max) {
                return LGB_ERR_BUFFER;
            }
            code_idx = o++;
            code = 1;
        } else {
            if (o >= dst_max) {
                return LGB_ERR_BUFFER;
            }
            d[o++] = b;
            code++;
            if (code == 0xFFu) {
                d[code_idx] = code;
                if (o >= dst_max) {
                    return LGB_ERR_BUFFER;
                }
                code_idx = o++;
                code = 1;
            }
        }
    }
    d[code_idx] = code;
    *out_len = o;
    return LGB_OK;
}

lgb_ret_t lgb_cobs_decode(const void *src, size_t n, void *dst, size_t dst_max, size_t *out_len)
{
    /* Why in-place works: each block reads 1 + k bytes and writes at most k + 1,
     * so the write position never passes the read position. */
    const uint8_t *s = (const uint8_t *)src;
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    size_t o = 0;

    if ((src == NULL && n > 0u) || dst == NULL || out_len == NULL) {
        return LGB_ERR_BUFFER;
    }
    while (i < n) {
        uint8_t code = s[i++];
        uint8_t k;
        if (code == 0u) {
            return LGB_ERR_COBS;
        }
        for (k = 1; k < code; k++) {
            uint8_t b;
            if (i >= n) {
                return LGB_ERR_COBS;
            }
            b = s[i++];
            if (b == 0u) {
                return LGB_ERR_COBS;
            }
            if (o >= dst_max) {
                return LGB_ERR_BUFFER;
            }
            d[o++] = b;
        }
        if (code != 0xFFu && i < n) {
            if (o >= dst_max) {
                return LGB_ERR_BUFFER;
            }
            d[o++] = 0;
        }
    }
    *out_len = o;
    return LGB_OK;
}
