/*
 * lgb_ring.c -- SPSC byte ring for the UART ISR -> main loop path (see lgb_ring.h
 * for the concurrency argument).
 */
#include "lgb_ring.h"

#define RING_MASK ((uint16_t)(LGB_RX_RING_SIZE - 1))

void lgb_ring_init(lgb_ring_t *r)
{
    r->head = 0;
    r->tail = 0;
    r->dropped = 0;
}

lgb_ret_t lgb_ring_put(lgb_ring_t *r, uint8_t byte)
{
    uint16_t head = r->head;
    if ((uint16_t)(head - r->tail) >= (uint16_t)LGB_RX_RING_SIZE) {
        r->dropped = (uint16_t)(r->dropped + 1u);
        return LGB_ERR_BUFFER;
    }
    r->buf[head & RING_MASK] = byte;
    r->head = (uint16_t)(head + 1u); /* publish after the data (both volatile) */
    return LGB_OK;
}

lgb_ret_t lgb_ring_get(lgb_ring_t *r, uint8_t *byte)
{
    uint16_t tail = r->tail;
    if (r->head == tail) {
        return LGB_PENDING;
    }
    *byte = r->buf[tail & RING_MASK];
    r->tail = (uint16_t)(tail + 1u);
    return LGB_OK;
}

size_t lgb_ring_read(lgb_ring_t *r, uint8_t *dst, size_t max)
{
    uint16_t tail = r->tail;
    uint16_t avail = (uint16_t)(r->head - tail);
    size_t i;

    if ((size_t)avail > max) {
        avail = (uint16_t)max;
    }
    for (i = 0; i < avail; i++) {
        dst[i] = r->buf[(uint16_t)(tail + i) & RING_MASK];
    }
    r->tail = (uint16_t)(tail + avail);
    return avail;
}

size_t lgb_ring_count(const lgb_ring_t *r)
{
    return (uint16_t)(r->head - r->tail);
}
