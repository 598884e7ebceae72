/*
 * lgb_isotp.h -- ISO-TP (ISO 15765-2) segmentation and reassembly over classic
 * CAN, for carrying bridge packets on a CAN bus (PROTOCOL.md §5).
 *
 * Why: a packet is at least 8 bytes and a classic CAN frame carries 8, so every
 * packet travels as a first frame, the receiver's flow control, and consecutive
 * frames. This module does both directions for one pair of CAN ids (normal
 * addressing): it queues packets to send (lgb_isotp_send, or lgb_isotp_write as
 * a link's write hook), segments them as flow control allows, and reassembles
 * received messages. It never blocks: the application gives it each received
 * CAN frame (lgb_isotp_on_frame) and calls lgb_isotp_poll() for STmin pacing
 * and timeouts.
 *
 * CAN hook, provided by the application:
 *   write(ctx, id, data, len)  queue one CAN frame (id | LGB_CAN_ID_EXT for a
 *                              29-bit id); return 0 when queued, non-zero when
 *                              the controller is full (the frame is retried at
 *                              the next lgb_isotp_poll)
 *   now_ms(ctx)                a millisecond clock (wrapping uint32)
 *
 * Wiring to a link (packet mode):
 *   lgb_io_t io = { lgb_isotp_write, my_now_ms, &tp };
 *   lgb_link_init(&link, &io, &dev, LGB_LINK_PACKET);
 *   on each CAN frame:  if (lgb_isotp_on_frame(&tp, id, d, n, &pkt, &len) == LGB_OK)
 *                           lgb_link_input_packet(&link, pkt, len);
 *   in the main loop:   lgb_isotp_poll(&tp); lgb_link_poll(&link);
 *
 * Options used (lgb_config.h): LGB_MAX_PAYLOAD (reassembly buffer:
 * LGB_PACKET_MAX), LGB_ISOTP_TX_QUEUE, LGB_ISOTP_BLOCK_SIZE, LGB_ISOTP_STMIN,
 * LGB_ISOTP_TIMEOUT_MS, LGB_ISOTP_MAX_WFT, LGB_ISOTP_PADDING, LGB_ISOTP_PAD_BYTE,
 * LGB_ENABLE_STATS. RAM: sizeof(lgb_isotp_t) <= LGB_ISOTP_RAM.
 */
#ifndef LGB_ISOTP_H
#define LGB_ISOTP_H

#include <stddef.h>
#include <stdint.h>

#include "lgb_config.h"
#include "lgb_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Set in a CAN id for a 29-bit (extended) identifier. */
#define LGB_CAN_ID_EXT 0x80000000u

/** Largest ISO-TP message with a classic 12-bit first frame. */
#define LGB_ISOTP_MAX_MESSAGE 4095u

struct lgb_can_io {
    int (*write)(void *ctx, uint32_t id, const uint8_t *data, uint8_t len);
    uint32_t (*now_ms)(void *ctx);
    void *ctx;
};
typedef struct lgb_can_io lgb_can_io_t;

#if LGB_ENABLE_STATS
typedef struct {
    uint32_t tx_messages; /* messages sent completely */
    uint32_t rx_messages; /* messages reassembled */
    uint32_t tx_errors;   /* messages aborted while sending */
    uint32_t rx_errors;   /* invalid frames and aborted receptions */
} lgb_isotp_stats_t;
#endif

/** One ISO-TP endpoint. Caller-allocated; all fields are private. */
typedef struct {
    lgb_can_io_t io;
    uint32_t tx_id;
    uint32_t rx_id;
    /* reassembly */
    uint8_t rx_buf[LGB_PACKET_MAX];
    uint16_t rx_size;   /* FF length */
    uint16_t rx_pos;    /* bytes received */
    uint32_t rx_time;   /* last frame of the message in progress */
    uint8_t rx_active;
    uint8_t rx_sn;      /* next expected sequence number */
    uint8_t rx_bs_left; /* CFs until our next FC (when bs > 0) */
    uint8_t fc_due;     /* FC status + 1 still to send (controller was full), 0 = none */
    uint8_t bs;         /* block size we ask for */
    uint8_t stmin;      /* STmin we ask for (raw byte) */
    /* transmission: a FIFO of [len_hi, len_lo, bytes...] records */
    uint16_t txq_used;
    uint16_t tx_pos;     /* bytes of the head message sent */
    uint32_t tx_time;    /* last frame sent / FC received */
    uint8_t tx_state;
    uint8_t tx_sn;
    uint8_t tx_bs;       /* block size granted by the receiver */
    uint8_t tx_bs_left;
    uint8_t tx_stmin_ms;
    uint8_t tx_wft;      /* WAIT frames received in a row */
#if LGB_ENABLE_STATS
    lgb_isotp_stats_t stats;
#endif
    uint8_t txq[LGB_ISOTP_TX_QUEUE];
} lgb_isotp_t;

/*
 * lgb_isotp_init
 *
 * Sets up an endpoint that sends on tx_id and receives on rx_id (each may carry
 * LGB_CAN_ID_EXT). Flow control asked of the peer: LGB_ISOTP_BLOCK_SIZE and
 * LGB_ISOTP_STMIN (change with lgb_isotp_set_flow_control).
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_STATE when t, io or a hook is NULL.
 */
lgb_ret_t lgb_isotp_init(lgb_isotp_t *t, const lgb_can_io_t *io, uint32_t tx_id, uint32_t rx_id);

/*
 * lgb_isotp_set_flow_control
 *
 * Sets the block size and STmin byte this endpoint sends in its flow-control
 * frames. STmin values outside 0x00..0x7F and 0xF1..0xF9 are sent as 0x7F.
 * Cannot fail.
 */
void lgb_isotp_set_flow_control(lgb_isotp_t *t, uint8_t block_size, uint8_t stmin);

/*
 * lgb_isotp_send
 *
 * Queues n bytes (a packet) as one ISO-TP message and starts sending if the
 * line is free. The bytes are copied.
 *
 * Returns LGB_OK when queued.
 * Returns LGB_ERR_LENGTH when n is 0.
 * Returns LGB_ERR_TOO_LONG when n > 4095.
 * Returns LGB_ERR_BUSY when the queue (LGB_ISOTP_TX_QUEUE) has no room now.
 */
lgb_ret_t lgb_isotp_send(lgb_isotp_t *t, const uint8_t *data, size_t n);

/*
 * lgb_isotp_write
 *
 * An lgb_io write hook (ctx = the lgb_isotp_t): queues one packet with
 * lgb_isotp_send. Returns n when queued, 0 when not.
 */
size_t lgb_isotp_write(void *ctx, const uint8_t *data, size_t n);

/*
 * lgb_isotp_on_frame
 *
 * Handles one received CAN frame (len data bytes). Frames on ids other than
 * rx_id are ignored. Data frames are reassembled (answering FF with flow
 * control); flow-control frames drive the message being sent. When a message
 * completes, *msg points at it (valid until the next call) and *msg_len is its
 * length.
 *
 * Returns LGB_OK when a message completed (*msg, *msg_len set).
 * Returns LGB_PENDING when the frame was used (or ignored) and nothing completed.
 * Returns LGB_ERR_ISOTP when the frame was invalid (bad PCI, length or sequence
 * number, CF without FF), or an FC had a bad status or was the (LGB_ISOTP_MAX_WFT
 * + 1)th WAIT in a row (our message is dropped); a reception in progress may be
 * aborted.
 * Returns LGB_ERR_TOO_LONG when an FF announced more than LGB_PACKET_MAX bytes
 * (answered with FC overflow) or the peer's FC said overflow (our message is
 * dropped).
 */
lgb_ret_t lgb_isotp_on_frame(lgb_isotp_t *t, uint32_t id, const uint8_t *data, size_t len, const uint8_t **msg,
                             size_t *msg_len);

/*
 * lgb_isotp_poll
 *
 * Sends what flow control and STmin allow now, retries frames the controller
 * refused, and runs the N_Bs / N_Cr timeouts.
 *
 * Returns LGB_OK normally.
 * Returns LGB_ERR_TIMEOUT when a message being sent (no FC) or received (no CF)
 * was aborted during this call.
 */
lgb_ret_t lgb_isotp_poll(lgb_isotp_t *t);

/*
 * lgb_isotp_idle
 *
 * Returns 1 when nothing is queued or being sent or received, else 0.
 */
int lgb_isotp_idle(const lgb_isotp_t *t);

#ifdef __cplusplus
}
#endif

#endif /* LGB_ISOTP_H */
