/*
 * sensor_node.h -- the example firmware's application: a sensor node with
 * read_temp() -> f, set_led(b) -> b, echo(y) -> y and a `button` event (bool).
 *
 * Why split from the mains: this file and sensor_node.c use only the lgb_*
 * library and two hardware hooks, so the same code builds for Cortex-M
 * (main_cortexm.c: UART registers, SysTick) and, unchanged, as a host program
 * (main_host.c: a pseudo-terminal) or a shared library (sn_api.c, for Python).
 *
 * Concurrency: sensor_node_rx_byte() and sensor_node_button() may be called
 * from interrupt handlers; everything else runs in the main loop.
 */
#ifndef SENSOR_NODE_H
#define SENSOR_NODE_H

#include <stdint.h>

#include "lgb_link.h"
#include "lgb_ring.h"

/* Function and event indexes (the order of HELLO's tables). */
#define SN_FN_READ_TEMP 0
#define SN_FN_SET_LED 1
#define SN_FN_ECHO 2
#define SN_EVENT_BUTTON 0

/** Hardware hooks the platform provides. */
typedef struct {
    float (*read_temp)(void *ctx);       /* degrees Celsius */
    void (*set_led)(void *ctx, int on);
    void *ctx;
} sn_hw_t;

typedef struct {
    lgb_link_t link;
    lgb_ring_t rx;                      /* UART bytes from the ISR */
    lgb_device_t dev;                   /* the table HELLO announces; user = this node */
    sn_hw_t hw;
    int led;
    volatile uint8_t button_pending;    /* set by sensor_node_button (ISR) */
    volatile uint8_t button_value;
    uint32_t events_sent;
    uint32_t events_failed;
} sensor_node_t;

/*
 * sensor_node_init
 *
 * Sets up the node over `io` (LGB_LINK_COBS for a UART, LGB_LINK_PACKET for
 * ISO-TP) and sends HELLO. device_id may be NULL ("sensor-node").
 *
 * Returns LGB_OK, or the error of lgb_link_init.
 */
lgb_ret_t sensor_node_init(sensor_node_t *sn, const lgb_io_t *io, const sn_hw_t *hw, unsigned mode,
                           const char *device_id);

/* ISR-safe: one received UART byte. */
void sensor_node_rx_byte(sensor_node_t *sn, uint8_t byte);

/* ISR-safe: the button changed; an EVENT goes out from sensor_node_step. */
void sensor_node_button(sensor_node_t *sn, int pressed);

/* Main loop: handles received bytes, timers, and a pending button EVENT. */
void sensor_node_step(sensor_node_t *sn);

#endif /* SENSOR_NODE_H */
