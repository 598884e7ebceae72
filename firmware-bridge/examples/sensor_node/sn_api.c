/*
 * sn_api.c -- the sensor node as a shared library (see sn_api.h). Host-only
 * glue: allocates handles, queues output bytes / CAN frames for the caller, and
 * keeps a settable clock. The firmware logic is sensor_node.c, unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "lgb_isotp.h"
#include "sensor_node.h"
#include "sn_api.h"

#define OUT_BYTES 65536u
#define OUT_FRAMES 1024u

struct sn_handle {
    sensor_node_t node;
    lgb_isotp_t tp;
    int transport;
    uint32_t now;
    float temp;
    /* UART output */
    uint8_t out[OUT_BYTES];
    size_t out_head, out_len;
    /* CAN output */
    uint32_t can_id[OUT_FRAMES];
    uint8_t can_data[OUT_FRAMES][8];
    uint8_t can_len[OUT_FRAMES];
    size_t can_head, can_count;
};

static uint32_t api_now(void *ctx)
{
    return ((sn_handle_t *)ctx)->now;
}

static size_t api_write(void *ctx, const uint8_t *data, size_t n)
{
    sn_handle_t *h = (sn_handle_t *)ctx;
    size_t i;
    for (i = 0; i < n && h->out_len < OUT_BYTES; i++) {
        h->out[(h->out_head + h->out_len) % OUT_BYTES] = data[i];
        h->out_len++;
    }
    return i;
}

static int api_can_write(void *ctx, uint32_t id, const uint8_t *data, uint8_t len)
{
    sn_handle_t *h = (sn_handle_t *)ctx;
    size_t slot;
    if (h->can_count >= OUT_FRAMES) {
        return 1; /* "controller full": ISO-TP retries at the next tick */
    }
    slot = (h->can_head + h->can_count) % OUT_FRAMES;
    h->can_id[slot] = id;
    memcpy(h->can_data[slot], data, len);
    h->can_len[slot] = len;
    h->can_count++;
    return 0;
}

/* Packet-mode write hook: one packet into the ISO-TP queue (lgb_isotp_write,
 * with the handle as ctx so that now_ms shares it). */
static size_t api_tp_write(void *ctx, const uint8_t *data, size_t n)
{
    return lgb_isotp_write(&((sn_handle_t *)ctx)->tp, data, n);
}

static float api_read_temp(void *ctx)
{
    return ((sn_handle_t *)ctx)->temp;
}

static sn_handle_t *create(int transport, uint32_t rx_id, uint32_t tx_id)
{
    sn_handle_t *h;
    lgb_io_t io;
    sn_hw_t hw;
    if (transport != SN_TRANSPORT_UART && transport != SN_TRANSPORT_CAN) {
        return NULL;
    }
    h = (sn_handle_t *)calloc(1, sizeof(*h));
    if (h == NULL) {
        return NULL;
    }
    h->transport = transport;
    h->temp = 21.5f;
    hw.read_temp = api_read_temp;
    hw.set_led = NULL;
    hw.ctx = h;
    io.now_ms = api_now;
    if (transport == SN_TRANSPORT_CAN) {
        lgb_can_io_t cio;
        cio.write = api_can_write;
        cio.now_ms = api_now;
        cio.ctx = h;
        if (lgb_isotp_init(&h->tp, &cio, tx_id, rx_id) != LGB_OK) {
            free(h);
            return NULL;
        }
        io.write = api_tp_write;
    } else {
        io.write = api_write;
    }
    io.ctx = h;
    if (sensor_node_init(&h->node, &io, &hw, transport == SN_TRANSPORT_CAN ? LGB_LINK_PACKET : LGB_LINK_COBS,
                         NULL) != LGB_OK) {
        free(h);
        return NULL;
    }
    return h;
}

sn_handle_t *sn_create(int transport)
{
    return create(transport, LGB_CAN_ID_HOST_TO_MCU, LGB_CAN_ID_MCU_TO_HOST);
}

sn_handle_t *sn_create_can(uint32_t rx_id, uint32_t tx_id)
{
    return create(SN_TRANSPORT_CAN, rx_id, tx_id);
}

void sn_destroy(sn_handle_t *h)
{
    free(h);
}

int sn_tick(sn_handle_t *h, uint32_t now_ms)
{
    if (h == NULL) {
        return -1;
    }
    h->now = now_ms;
    if (h->transport == SN_TRANSPORT_CAN) {
        (void)lgb_isotp_poll(&h->tp);
    }
    sensor_node_step(&h->node);
    if (h->transport == SN_TRANSPORT_CAN) {
        (void)lgb_isotp_poll(&h->tp);
    }
    return 0;
}

int sn_feed_bytes(sn_handle_t *h, const uint8_t *data, size_t n)
{
    if (h == NULL || h->transport != SN_TRANSPORT_UART || (data == NULL && n > 0u)) {
        return -1;
    }
    /* Straight into the link (no ISR here); the ring is for firmware ISRs. */
    (void)lgb_link_input(&h->node.link, data, n);
    return 0;
}

size_t sn_read_bytes(sn_handle_t *h, uint8_t *out, size_t max)
{
    size_t i;
    if (h == NULL || h->transport != SN_TRANSPORT_UART || out == NULL) {
        return 0;
    }
    for (i = 0; i < max && h->out_len > 0u; i++) {
        out[i] = h->out[h->out_head];
        h->out_head = (h->out_head + 1u) % OUT_BYTES;
        h->out_len--;
    }
    return i;
}

int sn_feed_can(sn_handle_t *h, uint32_t id, const uint8_t *data, size_t len)
{
    const uint8_t *pkt = NULL;
    size_t n = 0;
    lgb_ret_t r;
    if (h == NULL || h->transport != SN_TRANSPORT_CAN || data == NULL || len > 8u) {
        return -1;
    }
    r = lgb_isotp_on_frame(&h->tp, id, data, len, &pkt, &n);
    if (r == LGB_OK) {
        (void)lgb_link_input_packet(&h->node.link, pkt, n);
    }
    return 0;
}

int sn_poll_can(sn_handle_t *h, uint32_t *id, uint8_t *data, size_t *len)
{
    if (h == NULL || h->transport != SN_TRANSPORT_CAN || id == NULL || data == NULL || len == NULL) {
        return -1;
    }
    if (h->can_count == 0u) {
        return 0;
    }
    *id = h->can_id[h->can_head];
    memcpy(data, h->can_data[h->can_head], h->can_len[h->can_head]);
    *len = h->can_len[h->can_head];
    h->can_head = (h->can_head + 1u) % OUT_FRAMES;
    h->can_count--;
    return 1;
}

int sn_set_temp(sn_handle_t *h, float celsius)
{
    if (h == NULL) {
        return -1;
    }
    h->temp = celsius;
    return 0;
}

int sn_get_led(sn_handle_t *h)
{
    return h == NULL ? -1 : h->node.led;
}

int sn_press_button(sn_handle_t *h, int pressed)
{
    if (h == NULL) {
        return -1;
    }
    sensor_node_button(&h->node, pressed);
    sensor_node_step(&h->node);
    return 0;
}

long sn_calls(sn_handle_t *h)
{
    return h == NULL ? -1 : (long)h->node.link.stats.calls;
}
