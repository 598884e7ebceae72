/*
 * lgb_ring.h -- single-producer / single-consumer byte ring buffer.
 *
 * Why: a UART receive interrupt must never run the protocol. It pushes bytes
 * with lgb_ring_put(); the main loop drains them with lgb_ring_get() /
 * lgb_ring_read() into lgb_link_input(). One producer (the ISR) and one consumer
 * (the main loop) need no lock: the producer writes only `head` and `dropped`,
 * the consumer only `tail`, each a naturally aligned 16-bit store (atomic on
 * 32-bit MCUs), and the indexes are free-running counters masked on use.
 * The buffer and indexes are volatile so the compiler keeps the data write
 * before the index write. On a multi-core MCU (RP2040 with both cores) add a
 * memory barrier in your ISR after lgb_ring_put, or keep both ends on one core.
 *
 * Options used (lgb_config.h): LGB_RX_RING_SIZE (a power of two).
 */
#ifndef LGB_RING_H
#define LGB_RING_H

#include <stddef.h>
#include <stdint.h>

#include "lgb_config.h"
#include "lgb_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    volatile uint16_t head;    /* written by the producer: bytes put, mod 65536 */
    volatile uint16_t tail;    /* written by the consumer: bytes taken, mod 65536 */
    volatile uint16_t dropped; /* written by the producer: bytes lost to a full ring */
    volatile uint8_t buf[LGB_RX_RING_SIZE];
} lgb_ring_t;

/*
 * lgb_ring_init
 *
 * Empties the ring. Call before the producer starts. Cannot fail.
 */
void lgb_ring_init(lgb_ring_t *r);

/*
 * lgb_ring_put
 *
 * Producer side (ISR-safe): appends one byte.
 *
 * Returns LGB_OK when the byte was stored.
 * Returns LGB_ERR_BUFFER when the ring is full; the byte is dropped and counted.
 */
lgb_ret_t lgb_ring_put(lgb_ring_t *r, uint8_t byte);

/*
 * lgb_ring_get
 *
 * Consumer side: takes the oldest byte into *byte.
 *
 * Returns LGB_OK when a byte was taken.
 * Returns LGB_PENDING when the ring is empty.
 */
lgb_ret_t lgb_ring_get(lgb_ring_t *r, uint8_t *byte);

/*
 * lgb_ring_read
 *
 * Consumer side: takes up to max bytes into dst. Cannot fail; returns the number
 * of bytes taken (0 when empty).
 */
size_t lgb_ring_read(lgb_ring_t *r, uint8_t *dst, size_t max);

/*
 * lgb_ring_count
 *
 * Either side: bytes currently stored (a snapshot). Cannot fail.
 */
size_t lgb_ring_count(const lgb_ring_t *r);

#ifdef __cplusplus
}
#endif

#endif /* LGB_RING_H */
