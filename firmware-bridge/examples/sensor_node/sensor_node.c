/*
 * sensor_node.c -- the example firmware's application (see sensor_node.h).
 * Platform-independent: only the lgb_* library and the sn_hw_t hooks.
 */
#include "sensor_node.h"

static lgb_ret_t fn_read_temp(lgb_call_t *call)
{
    sensor_node_t *sn = (sensor_node_t *)call->user;
    return lgb_mp_write_float(&call->result, sn->hw.read_temp(sn->hw.ctx));
}

static lgb_ret_t fn_set_led(lgb_call_t *call)
{
    sensor_node_t *sn = (sensor_node_t *)call->user;
    uint8_t on = 0;
    (void)lgb_mp_read_bool(&call->args, &on); /* the link checked the type */
    sn->led = on;
    if (sn->hw.set_led != 0) {
        sn->hw.set_led(sn->hw.ctx, on);
    }
    return lgb_mp_write_bool(&call->result, sn->led);
}

static lgb_ret_t fn_echo(lgb_call_t *call)
{
    const uint8_t *p = 0;
    uint32_t n = 0;
    (void)lgb_mp_read_bin(&call->args, &p, &n);
    return lgb_mp_write_bin(&call->result, p, n);
}

static const lgb_function_t functions[] = {
    {"read_temp", "", "f", fn_read_temp},
    {"set_led", "b", "b", fn_set_led},
    {"echo", "y", "y", fn_echo},
};

static const char *const events[] = {"button"};

static void on_sent(void *user, uint8_t type, uint8_t seq, lgb_ret_t status)
{
    sensor_node_t *sn = (sensor_node_t *)user;
    (void)seq;
    if (type == LGB_MSG_EVENT) {
        if (status == LGB_OK) {
            sn->events_sent++;
        } else {
            sn->events_failed++;
        }
    }
}

lgb_ret_t sensor_node_init(sensor_node_t *sn, const lgb_io_t *io, const sn_hw_t *hw, unsigned mode,
                           const char *device_id)
{
    lgb_ret_t ret;
    sn->dev.device_id = (device_id != 0) ? device_id : "sensor-node";
    sn->dev.fw_version = "1.0.0";
    sn->dev.functions = functions;
    sn->dev.n_functions = (uint8_t)(sizeof(functions) / sizeof(functions[0]));
    sn->dev.events = events;
    sn->dev.n_events = 1;
    sn->dev.user = sn;
    sn->dev.on_sent = on_sent;
    sn->hw = *hw;
    sn->led = 0;
    sn->button_pending = 0;
    sn->button_value = 0;
    sn->events_sent = 0;
    sn->events_failed = 0;
    lgb_ring_init(&sn->rx);
    ret = lgb_link_init(&sn->link, io, &sn->dev, mode);
    if (ret == LGB_OK) {
        ret = lgb_link_start(&sn->link);
    }
    return ret;
}

void sensor_node_rx_byte(sensor_node_t *sn, uint8_t byte)
{
    (void)lgb_ring_put(&sn->rx, byte);
}

void sensor_node_button(sensor_node_t *sn, int pressed)
{
    sn->button_value = (uint8_t)(pressed != 0);
    sn->button_pending = 1;
}

void sensor_node_step(sensor_node_t *sn)
{
    uint8_t buf[32];
    size_t n;
    while ((n = lgb_ring_read(&sn->rx, buf, sizeof(buf))) > 0u) {
        (void)lgb_link_input(&sn->link, buf, n);
    }
    (void)lgb_link_poll(&sn->link);
    if (sn->button_pending && lgb_link_send_event_bool(&sn->link, SN_EVENT_BUTTON, sn->button_value) != LGB_ERR_BUSY) {
        sn->button_pending = 0; /* sent (or refused for good); BUSY: retry next step */
    }
}
