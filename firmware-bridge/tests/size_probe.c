/*
 * size_probe.c -- the smallest firmware that uses the whole MCU endpoint over a
 * UART (HELLO, CALL dispatch, EVENTs, retransmission, the ISR ring buffer), so
 * that `make cortex-m` can measure the flash the library really costs once
 * linked with --gc-sections (object sizes include functions a firmware never
 * links). The hooks are stubs; this never runs.
 */
#include "lgb_link.h"
#include "lgb_ring.h"

static size_t probe_write(void *ctx, const uint8_t *data, size_t n)
{
    (void)ctx;
    (void)data;
    return n;
}

static uint32_t probe_now(void *ctx)
{
    (void)ctx;
    return 0;
}

static lgb_ret_t probe_fn(lgb_call_t *call)
{
    return lgb_mp_write_bool(&call->result, 1);
}

static const lgb_function_t probe_functions[] = {{"f", "b", "b", probe_fn}};
static const char *const probe_events[] = {"e"};
static const lgb_device_t probe_device = {"d", "1", probe_functions, 1, probe_events, 1, 0, 0};

lgb_link_t probe_link;
lgb_ring_t probe_ring;

void Reset_Handler(void);
void Reset_Handler(void)
{
    lgb_io_t io;
    uint8_t buf[16];
    size_t n;
    io.write = probe_write;
    io.now_ms = probe_now;
    io.ctx = 0;
    (void)lgb_link_init(&probe_link, &io, &probe_device, LGB_LINK_COBS);
    (void)lgb_link_start(&probe_link);
    lgb_ring_init(&probe_ring);
    (void)lgb_ring_put(&probe_ring, 0);
    for (;;) {
        n = lgb_ring_read(&probe_ring, buf, sizeof(buf));
        (void)lgb_link_input(&probe_link, buf, n);
        (void)lgb_link_poll(&probe_link);
        (void)lgb_link_send_event_bool(&probe_link, 0, 1);
    }
}

extern uint32_t _estack;
typedef void (*vector_t)(void);
/* The ISO C cast from an object to a function pointer is what every Cortex-M
 * vector table does; keep it out of -pedantic's sight with a union. */
static const union {
    uint32_t *sp;
    vector_t fn;
} probe_vectors[2] __attribute__((section(".isr_vector"), used)) = {{&_estack}, {.fn = Reset_Handler}};
