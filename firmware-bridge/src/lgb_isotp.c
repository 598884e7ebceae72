/*
 * lgb_isotp.c -- ISO-TP (ISO 15765-2) for classic CAN: SF/FF/CF/FC, block size,
 * STmin, WAIT, overflow and the N_Bs / N_Cr timeouts (PROTOCOL.md §5).
 *
 * Strategy: the transmit side is a byte FIFO of whole messages, so packets sent
 * while a long one is being segmented (ACKs behind an EVENT) wait their turn
 * instead of being lost; one pump function advances the head message as far as
 * flow control, STmin and the controller allow, and is called from send, from
 * FC reception and from poll.
 */
#include <string.h>

#include "lgb_isotp.h"

#if LGB_ENABLE_STATS
#define STAT(t, field) ((t)->stats.field++)
#else
#define STAT(t, field) ((void)0)
#endif

#define PCI_SF 0x0u
#define PCI_FF 0x1u
#define PCI_CF 0x2u
#define PCI_FC 0x3u

#define FS_CTS 0u
#define FS_WAIT 1u
#define FS_OVFLW 2u

/* Transmit states of the head message. */
#define TX_START 0u   /* nothing sent yet */
#define TX_WAIT_FC 1u /* FF (or a block) sent, waiting for flow control */
#define TX_SEND_CF 2u /* sending consecutive frames */

static uint32_t now_ms(const lgb_isotp_t *t)
{
    return t->io.now_ms(t->io.ctx);
}

/* Writes a frame of n data bytes, padded to 8 when LGB_ISOTP_PADDING. */
static int put_frame(lgb_isotp_t *t, uint32_t id, uint8_t *f, uint8_t n)
{
#if LGB_ISOTP_PADDING
    while (n < 8u) {
        f[n++] = (uint8_t)LGB_ISOTP_PAD_BYTE;
    }
#endif
    return t->io.write(t->io.ctx, id, f, n) == 0;
}

static int send_fc(lgb_isotp_t *t, uint8_t status)
{
    uint8_t f[8];
    f[0] = (uint8_t)((PCI_FC << 4) | status);
    f[1] = t->bs;
    f[2] = t->stmin;
    if (put_frame(t, t->tx_id, f, 3)) {
        t->fc_due = 0;
        return 1;
    }
    t->fc_due = (uint8_t)(status + 1u);
    return 0;
}

static uint16_t head_len(const lgb_isotp_t *t)
{
    return (uint16_t)((uint16_t)(t->txq[0] << 8) | t->txq[1]);
}

/* Removes the head message from the queue. */
static void pop(lgb_isotp_t *t)
{
    uint16_t rec = (uint16_t)(head_len(t) + 2u);
    memmove(t->txq, t->txq + rec, (size_t)(t->txq_used - rec));
    t->txq_used = (uint16_t)(t->txq_used - rec);
    t->tx_state = TX_START;
    t->tx_pos = 0;
}

static void abort_tx(lgb_isotp_t *t)
{
    STAT(t, tx_errors);
    pop(t);
}

/* STmin byte -> milliseconds (PROTOCOL.md §5.2). */
static uint8_t stmin_ms(uint8_t raw)
{
    if (raw <= 0x7Fu) {
        return raw;
    }
    if (raw >= 0xF1u && raw <= 0xF9u) {
        return 1; /* 100..900 us, with a millisecond clock */
    }
    return 0x7F;
}

/* Advances the head message as far as allowed now; starts the next ones.
 * Returns LGB_ERR_TIMEOUT when a message was aborted for lack of FC. */
static lgb_ret_t pump(lgb_isotp_t *t)
{
    lgb_ret_t ret = LGB_OK;
    uint8_t f[8];

    while (t->txq_used > 0u) {
        uint16_t len = head_len(t);
        const uint8_t *data = t->txq + 2;
        uint32_t now = now_ms(t);

        if (t->tx_state == TX_START) {
            if (len <= 7u) {
                f[0] = (uint8_t)len;
                memcpy(f + 1, data, len);
                if (!put_frame(t, t->tx_id, f, (uint8_t)(len + 1u))) {
                    return ret;
                }
                STAT(t, tx_messages);
                pop(t);
                continue;
            }
            f[0] = (uint8_t)((PCI_FF << 4) | (uint8_t)(len >> 8));
            f[1] = (uint8_t)len;
            memcpy(f + 2, data, 6);
            if (!put_frame(t, t->tx_id, f, 8)) {
                return ret;
            }
            t->tx_pos = 6;
            t->tx_sn = 1;
            t->tx_wft = 0;
            t->tx_state = TX_WAIT_FC;
            t->tx_time = now;
            return ret;
        }
        if (t->tx_state == TX_WAIT_FC) {
            if ((uint32_t)(now - t->tx_time) >= (uint32_t)LGB_ISOTP_TIMEOUT_MS) {
                abort_tx(t); /* N_Bs */
                ret = LGB_ERR_TIMEOUT;
                continue;
            }
            return ret;
        }
        /* TX_SEND_CF */
        if ((uint32_t)(now - t->tx_time) < t->tx_stmin_ms) {
            return ret;
        }
        {
            uint16_t k = (uint16_t)(len - t->tx_pos);
            if (k > 7u) {
                k = 7;
            }
            f[0] = (uint8_t)((PCI_CF << 4) | t->tx_sn);
            memcpy(f + 1, data + t->tx_pos, k);
            if (!put_frame(t, t->tx_id, f, (uint8_t)(k + 1u))) {
                return ret;
            }
            t->tx_pos = (uint16_t)(t->tx_pos + k);
            t->tx_sn = (uint8_t)((t->tx_sn + 1u) & 0x0Fu);
            t->tx_time = now;
        }
        if (t->tx_pos >= len) {
            STAT(t, tx_messages);
            pop(t);
            continue;
        }
        if (t->tx_bs > 0u && --t->tx_bs_left == 0u) {
            t->tx_state = TX_WAIT_FC;
            return ret;
        }
    }
    return ret;
}

lgb_ret_t lgb_isotp_init(lgb_isotp_t *t, const lgb_can_io_t *io, uint32_t tx_id, uint32_t rx_id)
{
    if (t == NULL || io == NULL || io->write == NULL || io->now_ms == NULL) {
        return LGB_ERR_STATE;
    }
    memset(t, 0, sizeof(*t));
    t->io = *io;
    t->tx_id = tx_id;
    t->rx_id = rx_id;
    lgb_isotp_set_flow_control(t, LGB_ISOTP_BLOCK_SIZE, LGB_ISOTP_STMIN);
    return LGB_OK;
}

void lgb_isotp_set_flow_control(lgb_isotp_t *t, uint8_t block_size, uint8_t stmin)
{
    t->bs = block_size;
    t->stmin = (stmin <= 0x7Fu || (stmin >= 0xF1u && stmin <= 0xF9u)) ? stmin : 0x7Fu;
}

lgb_ret_t lgb_isotp_send(lgb_isotp_t *t, const uint8_t *data, size_t n)
{
    if (n == 0u || data == NULL) {
        return LGB_ERR_LENGTH;
    }
    if (n > LGB_ISOTP_MAX_MESSAGE) {
        return LGB_ERR_TOO_LONG;
    }
    if ((size_t)LGB_ISOTP_TX_QUEUE - t->txq_used < n + 2u) {
        return LGB_ERR_BUSY;
    }
    t->txq[t->txq_used] = (uint8_t)(n >> 8);
    t->txq[t->txq_used + 1u] = (uint8_t)n;
    memcpy(t->txq + t->txq_used + 2u, data, n);
    t->txq_used = (uint16_t)(t->txq_used + n + 2u);
    (void)pump(t);
    return LGB_OK;
}

size_t lgb_isotp_write(void *ctx, const uint8_t *data, size_t n)
{
    return lgb_isotp_send((lgb_isotp_t *)ctx, data, n) == LGB_OK ? n : 0u;
}

/* A data frame was invalid: count it, and abort the reception in progress when
 * `abort` is set. */
static lgb_ret_t rx_error(lgb_isotp_t *t, int abort)
{
    STAT(t, rx_errors);
    if (abort) {
        t->rx_active = 0;
    }
    return LGB_ERR_ISOTP;
}

static lgb_ret_t on_fc(lgb_isotp_t *t, const uint8_t *data, size_t len)
{
    if (t->txq_used == 0u || t->tx_state != TX_WAIT_FC) {
        return LGB_PENDING; /* not waiting for one: ignored */
    }
    switch (len < 3u ? 0x0Fu : data[0] & 0x0Fu) { /* a short FC is invalid */
    case FS_CTS:
        t->tx_bs = data[1];
        t->tx_bs_left = data[1];
        t->tx_stmin_ms = stmin_ms(data[2]);
        t->tx_state = TX_SEND_CF;
        t->tx_wft = 0;
        /* The first CF after an FC goes at once. */
        t->tx_time = (uint32_t)(now_ms(t) - t->tx_stmin_ms);
        (void)pump(t);
        return LGB_PENDING;
    case FS_WAIT:
        if (++t->tx_wft > LGB_ISOTP_MAX_WFT) {
            abort_tx(t);
            (void)pump(t);
            return LGB_ERR_ISOTP;
        }
        t->tx_time = now_ms(t);
        return LGB_PENDING;
    case FS_OVFLW:
        abort_tx(t);
        (void)pump(t);
        return LGB_ERR_TOO_LONG;
    default:
        abort_tx(t);
        (void)pump(t);
        return LGB_ERR_ISOTP;
    }
}

lgb_ret_t lgb_isotp_on_frame(lgb_isotp_t *t, uint32_t id, const uint8_t *data, size_t len, const uint8_t **msg,
                             size_t *msg_len)
{
    uint8_t pci;

    if (id != t->rx_id || data == NULL) {
        return LGB_PENDING;
    }
    if (len < 1u) {
        return rx_error(t, 0);
    }
    pci = (uint8_t)(data[0] >> 4);
    if (pci == PCI_FC) {
        return on_fc(t, data, len);
    }
    if (pci == PCI_SF) {
        uint8_t dl = (uint8_t)(data[0] & 0x0Fu);
        if (dl == 0u || (size_t)dl > len - 1u) {
            return rx_error(t, 0);
        }
        if (t->rx_active) {
            (void)rx_error(t, 1); /* the SF replaces the message in progress */
        }
        memcpy(t->rx_buf, data + 1, dl);
        STAT(t, rx_messages);
        *msg = t->rx_buf;
        *msg_len = dl;
        return LGB_OK;
    }
    if (pci == PCI_FF) {
        uint16_t size;
        if (len < 8u) {
            return rx_error(t, 0);
        }
        if (t->rx_active) {
            (void)rx_error(t, 1); /* the FF replaces the message in progress */
        }
        size = (uint16_t)((uint16_t)((data[0] & 0x0Fu) << 8) | data[1]);
        if (size == 0u || size > (uint16_t)LGB_PACKET_MAX) {
            STAT(t, rx_errors);
            (void)send_fc(t, FS_OVFLW);
            return LGB_ERR_TOO_LONG;
        }
        if (size < 8u) {
            return rx_error(t, 0);
        }
        memcpy(t->rx_buf, data + 2, 6);
        t->rx_size = size;
        t->rx_pos = 6;
        t->rx_sn = 1;
        t->rx_active = 1;
        t->rx_bs_left = t->bs;
        t->rx_time = now_ms(t);
        (void)send_fc(t, FS_CTS);
        return LGB_PENDING;
    }
    if (pci == PCI_CF) {
        uint16_t need;
        if (!t->rx_active) {
            return rx_error(t, 0);
        }
        if ((data[0] & 0x0Fu) != t->rx_sn) {
            return rx_error(t, 1);
        }
        need = (uint16_t)(t->rx_size - t->rx_pos);
        if (need > 7u) {
            need = 7;
        }
        if (len - 1u < (size_t)need) {
            return rx_error(t, 1);
        }
        memcpy(t->rx_buf + t->rx_pos, data + 1, need);
        t->rx_pos = (uint16_t)(t->rx_pos + need);
        t->rx_sn = (uint8_t)((t->rx_sn + 1u) & 0x0Fu);
        t->rx_time = now_ms(t);
        if (t->rx_pos >= t->rx_size) {
            t->rx_active = 0;
            STAT(t, rx_messages);
            *msg = t->rx_buf;
            *msg_len = t->rx_size;
            return LGB_OK;
        }
        if (t->bs > 0u && --t->rx_bs_left == 0u) {
            t->rx_bs_left = t->bs;
            (void)send_fc(t, FS_CTS);
        }
        return LGB_PENDING;
    }
    return rx_error(t, 0); /* PCI types 4..15 */
}

lgb_ret_t lgb_isotp_poll(lgb_isotp_t *t)
{
    lgb_ret_t ret = LGB_OK;

    if (t->fc_due != 0u) {
        (void)send_fc(t, (uint8_t)(t->fc_due - 1u));
    }
    if (t->rx_active && (uint32_t)(now_ms(t) - t->rx_time) >= (uint32_t)LGB_ISOTP_TIMEOUT_MS) {
        STAT(t, rx_errors); /* N_Cr */
        t->rx_active = 0;
        ret = LGB_ERR_TIMEOUT;
    }
    if (pump(t) == LGB_ERR_TIMEOUT) {
        ret = LGB_ERR_TIMEOUT;
    }
    return ret;
}

int lgb_isotp_idle(const lgb_isotp_t *t)
{
    return t->txq_used == 0u && !t->rx_active && t->fc_due == 0u;
}
