/*
 * lgb_frame.h -- CRC-16, COBS, packets and the streaming frame decoder.
 *
 * Why: these are the layers of PROTOCOL.md §3 and §4 that both transports share
 * (ISO-TP carries packets without COBS). Everything works on caller-owned
 * buffers and returns an lgb_ret_t; nothing allocates, nothing blocks.
 *
 *   lgb_crc16*            CRC-16/CCITT-FALSE (check value 0x29B1)
 *   lgb_cobs_encode/decode  COBS on whole buffers
 *   lgb_frame_encode      COBS(packet) + 0x00: what goes on the UART
 *   lgb_packet_encode     header + payload + CRC
 *   lgb_packet_parse      the receiver checks of PROTOCOL.md §3.4 (3..6)
 *   lgb_decoder_*         streaming decoder fed one byte at a time (from an ISR
 *                         ring buffer), resynchronising at every 0x00
 *
 * Options used (lgb_config.h): LGB_MAX_PAYLOAD (decoder buffer size),
 * LGB_CRC16_TABLE (table or bitwise CRC), LGB_ENABLE_STATS (decoder counters).
 */
#ifndef LGB_FRAME_H
#define LGB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "lgb_config.h"
#include "lgb_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Initial value of a CRC-16/CCITT-FALSE computation. */
#define LGB_CRC16_INIT 0xFFFFu

/** Largest COBS encoding of n bytes (without delimiter). */
#define LGB_COBS_ENCODED_MAX(n) ((n) + (n) / 254u + 1u)

/** Largest UART frame for an n-byte packet: COBS encoding plus the 0x00 delimiter. */
#define LGB_FRAME_ENCODED_MAX(n) (LGB_COBS_ENCODED_MAX(n) + 1u)

/*
 * lgb_crc16_update
 *
 * Continues a CRC-16/CCITT-FALSE computation over n bytes at data; start with
 * LGB_CRC16_INIT. Cannot fail; returns the updated CRC.
 */
uint16_t lgb_crc16_update(uint16_t crc, const void *data, size_t n);

/*
 * lgb_crc16
 *
 * CRC-16/CCITT-FALSE of n bytes at data (lgb_crc16("123456789", 9) == 0x29B1).
 * Cannot fail; returns the CRC.
 */
uint16_t lgb_crc16(const void *data, size_t n);

/*
 * lgb_cobs_encode
 *
 * COBS-encodes n bytes from src into dst (no delimiter is added). src and dst
 * must not overlap. Needs at most LGB_COBS_ENCODED_MAX(n) bytes of dst.
 *
 * Returns LGB_OK and sets *out_len to the encoded length.
 * Returns LGB_ERR_BUFFER when a pointer is NULL or dst_max is too small.
 */
lgb_ret_t lgb_cobs_encode(const void *src, size_t n, void *dst, size_t dst_max, size_t *out_len);

/*
 * lgb_cobs_decode
 *
 * Decodes n bytes of COBS (without the delimiter) from src into dst. dst may
 * equal src (in-place decoding); otherwise they must not overlap.
 *
 * Returns LGB_OK and sets *out_len to the decoded length.
 * Returns LGB_ERR_COBS when src contains a 0x00 or a block runs past the end.
 * Returns LGB_ERR_BUFFER when a pointer is NULL or dst_max is too small.
 */
lgb_ret_t lgb_cobs_decode(const void *src, size_t n, void *dst, size_t dst_max, size_t *out_len);

/*
 * lgb_frame_encode
 *
 * Writes one UART frame: COBS(src) followed by 0x00. src (n bytes) is normally
 * a packet from lgb_packet_encode. Needs LGB_FRAME_ENCODED_MAX(n) bytes of dst.
 *
 * Returns LGB_OK and sets *out_len to the frame length including the 0x00.
 * Returns LGB_ERR_BUFFER when a pointer is NULL or dst_max is too small.
 */
lgb_ret_t lgb_frame_encode(const void *src, size_t n, void *dst, size_t dst_max, size_t *out_len);

/*
 * lgb_packet_encode
 *
 * Builds a packet: the 6-byte header (version 1, type, flags, seq, length),
 * the payload (n bytes; may be NULL when n is 0) and the CRC. payload may
 * already sit at dst + LGB_HEADER_SIZE (it is then not copied); otherwise it
 * must not overlap dst.
 *
 * Returns LGB_OK and sets *out_len to n + 8.
 * Returns LGB_ERR_TOO_LONG when n > LGB_MAX_PAYLOAD.
 * Returns LGB_ERR_BUFFER when dst or out_len is NULL or dst_max < n + 8.
 */
lgb_ret_t lgb_packet_encode(uint8_t type, uint8_t flags, uint8_t seq, const void *payload, size_t n, void *dst,
                            size_t dst_max, size_t *out_len);

/** A parsed packet. payload points into the buffer that was parsed. */
typedef struct {
    uint8_t version;
    uint8_t type;
    uint8_t flags;
    uint8_t seq;
    uint16_t len;            /* payload length */
    uint8_t trusted;         /* 1 when the CRC matched: the header fields can be NAKed */
    const uint8_t *payload;  /* len bytes */
} lgb_packet_t;

/*
 * lgb_packet_parse
 *
 * Runs the checks of PROTOCOL.md §3.4 on a whole packet (n bytes, no COBS), in
 * order: too long, too short, CRC, length field, version. When the CRC matched,
 * out's header fields are filled and out->trusted is 1 even if a later check
 * fails, so the caller can NAK.
 *
 * Returns LGB_OK when the packet is valid (out describes it).
 * Returns LGB_ERR_TOO_LONG when n > LGB_PACKET_MAX.
 * Returns LGB_ERR_LENGTH when n < 8 or the length field is not n - 8.
 * Returns LGB_ERR_CRC when the CRC does not match.
 * Returns LGB_ERR_VERSION when the version byte is not 0x01.
 * Returns LGB_ERR_BUFFER when src or out is NULL.
 */
lgb_ret_t lgb_packet_parse(const void *src, size_t n, lgb_packet_t *out);

/** Streaming decoder state; caller-allocated, set up with lgb_decoder_init. */
typedef struct {
#if LGB_ENABLE_STATS
    uint32_t frames;  /* packets decoded */
    uint32_t dropped; /* frames dropped (any error: garbage, noise, bad CRC...) */
#endif
    uint16_t len;                /* decoded bytes in buf */
    uint8_t code;                /* code byte of the current COBS block */
    uint8_t remaining;           /* data bytes still expected in the current block */
    uint8_t state;               /* LGB_DEC_* bits */
    uint8_t buf[LGB_PACKET_MAX]; /* the packet being decoded */
} lgb_decoder_t;

/*
 * lgb_decoder_init
 *
 * Resets a decoder to "between frames". Cannot fail.
 */
void lgb_decoder_init(lgb_decoder_t *d);

/*
 * lgb_decoder_feed
 *
 * Feeds one byte from the line. At each 0x00 the frame received since the
 * previous 0x00 is decoded and checked (PROTOCOL.md §3.4, §4.3); an empty frame
 * is ignored. out->payload points into d->buf and stays valid until the next
 * call. On an error with out->trusted == 1 the header fields are valid (NAK).
 *
 * Returns LGB_PENDING when the byte was consumed and no frame ended.
 * Returns LGB_OK when a frame ended and *out is a valid packet.
 * Returns LGB_ERR_TOO_LONG when the frame decoded to more than LGB_PACKET_MAX bytes.
 * Returns LGB_ERR_COBS when the frame's last COBS block was incomplete.
 * Returns LGB_ERR_LENGTH, LGB_ERR_CRC or LGB_ERR_VERSION as lgb_packet_parse does.
 */
lgb_ret_t lgb_decoder_feed(lgb_decoder_t *d, uint8_t byte, lgb_packet_t *out);

/*
 * lgb_decoder_feed_buf
 *
 * Feeds bytes from src until a frame ends or the n bytes are used up; sets
 * *consumed to the bytes used. Call again with the rest to continue.
 *
 * Returns what lgb_decoder_feed returned for the last byte consumed (LGB_PENDING
 * when n is 0).
 */
lgb_ret_t lgb_decoder_feed_buf(lgb_decoder_t *d, const uint8_t *src, size_t n, size_t *consumed, lgb_packet_t *out);

/* Decoder state bits. */
#define LGB_DEC_IN_FRAME 0x01u /* bytes received since the last delimiter */
#define LGB_DEC_OVERFLOW 0x02u /* more than LGB_PACKET_MAX decoded bytes */

#ifdef __cplusplus
}
#endif

#endif /* LGB_FRAME_H */
