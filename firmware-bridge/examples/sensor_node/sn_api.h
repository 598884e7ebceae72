/*
 * sn_api.h -- the sensor node as a shared library (build/host/libsensor_node.so)
 * for driving it in-process, e.g. from Python with ctypes: python-can's virtual
 * bus exists only inside one process, so the CAN / ISO-TP end-to-end tests run
 * the firmware here and move CAN frames between it and the bus themselves.
 *
 * Same application (sensor_node.c) and library as the firmware; the clock is
 * whatever the caller last passed to sn_tick (milliseconds, any origin).
 * Handles are independent (several nodes may coexist); a handle must be used
 * from one thread at a time.
 *
 *   sn_create(transport)            0 = UART (COBS bytes), 1 = CAN (ISO-TP, default
 *                                   ids: receives 0x7E0, sends 0x7E8). Sends HELLO.
 *   sn_create_can(rx_id, tx_id)     CAN with other ids (| 0x80000000 = 29-bit)
 *   sn_destroy(h)
 *   sn_tick(h, now_ms)              set the clock, run timers (retransmissions,
 *                                   ISO-TP pacing), send a pending button EVENT
 *   sn_feed_bytes(h, data, n)       UART: bytes from the host
 *   sn_read_bytes(h, out, max)      UART: bytes to the host (returns the count)
 *   sn_feed_can(h, id, data, len)   CAN: one frame from the bus (frames on other
 *                                   ids are ignored)
 *   sn_poll_can(h, &id, data, &len) CAN: next frame to put on the bus; returns 1
 *                                   and fills id/data[8]/len, or 0 when none
 *   sn_set_temp(h, celsius)         what read_temp returns
 *   sn_get_led(h)                   the LED state set_led left
 *   sn_press_button(h, pressed)     queue a `button` EVENT (value: pressed != 0)
 *   sn_calls(h)                     functions run so far (for tests)
 *
 * Every function taking a handle returns -1 (or does nothing) when h is NULL or
 * of the wrong transport.
 */
#ifndef SN_API_H
#define SN_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sn_handle sn_handle_t;

#define SN_TRANSPORT_UART 0
#define SN_TRANSPORT_CAN 1

sn_handle_t *sn_create(int transport);
sn_handle_t *sn_create_can(uint32_t rx_id, uint32_t tx_id);
void sn_destroy(sn_handle_t *h);
int sn_tick(sn_handle_t *h, uint32_t now_ms);
int sn_feed_bytes(sn_handle_t *h, const uint8_t *data, size_t n);
size_t sn_read_bytes(sn_handle_t *h, uint8_t *out, size_t max);
int sn_feed_can(sn_handle_t *h, uint32_t id, const uint8_t *data, size_t len);
int sn_poll_can(sn_handle_t *h, uint32_t *id, uint8_t *data, size_t *len);
int sn_set_temp(sn_handle_t *h, float celsius);
int sn_get_led(sn_handle_t *h);
int sn_press_button(sn_handle_t *h, int pressed);
long sn_calls(sn_handle_t *h);

#ifdef __cplusplus
}
#endif

#endif /* SN_API_H */
