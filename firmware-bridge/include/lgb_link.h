/*
 * lgb_link.h -- the MCU endpoint of the bridge (PROTOCOL.md §7-§9).
 *
 * Why: this is what a firmware uses. It owns the decoder, a retransmission
 * buffer and the RESULT cache, answers HELLO_REQ / PING / CALL, dispatches CALLs
 * to the application's function table, sends EVENTs with ACK and retries, and
 * detects duplicates. It never blocks and never allocates: the application
 * feeds it received bytes (lgb_link_input, usually drained from an lgb_ring_t)
 * and calls lgb_link_poll() from its main loop for timers.
 *
 * Transport. Everything leaves through the application's `struct lgb_io`:
 *   write(ctx, data, n)  sends bytes; returns how many were accepted (fewer than
 *                        n loses the frame, which the retry logic recovers)
 *   now_ms(ctx)          a millisecond clock (wrapping uint32; only differences
 *                        are used)
 * In LGB_LINK_COBS mode (UART) packets are COBS-framed and written in chunks of
 * up to 32 bytes. In LGB_LINK_PACKET mode (ISO-TP) each call of write() carries
 * exactly one whole packet, and received packets enter with
 * lgb_link_input_packet(); use lgb_isotp_write as the write hook.
 *
 * Functions. Each lgb_function_t has a name, its argument type codes (one
 * letter per argument, PROTOCOL.md §6.1), its result type code, and a handler
 * `lgb_ret_t fn(lgb_call_t *call)`. The link checks the number and types of the
 * arguments before calling; the handler reads them from call->args (lgb_mp
 * readers, in order), writes exactly one msgpack value to call->result and
 * returns LGB_OK, or returns an error code (LGB_ERR_FUNCTION or any other) and
 * may point call->error at a static string for the RESULT's error text.
 * Handlers run inside lgb_link_input() and must not call lgb_link_* functions.
 *
 * Options used (lgb_config.h): LGB_MAX_PAYLOAD, LGB_MAX_FUNCTIONS,
 * LGB_MAX_EVENTS, LGB_RETRIES, LGB_ACK_TIMEOUT_MS, LGB_BYTE_TIME_US,
 * LGB_ENABLE_FLOAT ('f' arguments), LGB_ENABLE_ERRTEXT (RESULT error texts),
 * LGB_ENABLE_STATS (lgb_link_stats_t). RAM: sizeof(lgb_link_t) <= LGB_LINK_RAM.
 */
#ifndef LGB_LINK_H
#define LGB_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "lgb_config.h"
#include "lgb_frame.h"
#include "lgb_mp.h"
#include "lgb_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The transport hook the application provides (STYLE §G). */
struct lgb_io {
    size_t (*write)(void *ctx, const uint8_t *data, size_t n);
    uint32_t (*now_ms)(void *ctx);
    void *ctx;
};
typedef struct lgb_io lgb_io_t;

/** What a function handler gets. */
typedef struct {
    lgb_mp_reader_t args;   /* positioned at the first argument */
    lgb_mp_writer_t result; /* write exactly one value on success */
    const char *error;      /* on failure: optional error text (static storage) */
    void *user;             /* lgb_device_t.user */
    uint16_t call_id;
    uint8_t fn_index;
} lgb_call_t;

typedef lgb_ret_t (*lgb_fn_t)(lgb_call_t *call);

typedef struct {
    const char *name;        /* e.g. "read_temp" */
    const char *arg_types;   /* e.g. "" or "if" */
    const char *result_type; /* e.g. "f" */
    lgb_fn_t fn;
} lgb_function_t;

/** The device description: what HELLO announces. Must outlive the link. */
typedef struct {
    const char *device_id;
    const char *fw_version;
    const lgb_function_t *functions;
    uint8_t n_functions;            /* <= LGB_MAX_FUNCTIONS */
    const char *const *events;      /* event names */
    uint8_t n_events;               /* <= LGB_MAX_EVENTS */
    void *user;                     /* passed to handlers and on_sent */
    /* Optional: told when an ACK_REQ packet (HELLO, RESULT, EVENT) ends: status
     * LGB_OK (acknowledged), LGB_ERR_TIMEOUT, the code of a NAK, or
     * LGB_ERR_STATE (abandoned by HELLO_REQ or lgb_link_start). */
    void (*on_sent)(void *user, uint8_t type, uint8_t seq, lgb_ret_t status);
} lgb_device_t;

/* Framing modes for lgb_link_init. */
#define LGB_LINK_COBS 0u   /* byte stream (UART): COBS + 0x00 */
#define LGB_LINK_PACKET 1u /* packet transport (ISO-TP): whole packets */

#if LGB_ENABLE_STATS
typedef struct {
    uint32_t rx_dropped;      /* packets dropped or NAKed by the checks */
    uint32_t rx_duplicates;   /* ACK_REQ packets re-ACKed as duplicates */
    uint32_t tx_packets;      /* packets written (retransmissions included) */
    uint32_t retransmissions;
    uint32_t timeouts;        /* ACK_REQ packets given up */
    uint32_t naks_sent;
    uint32_t naks_received;
    uint32_t calls;           /* functions run */
} lgb_link_stats_t;
#endif

/** The endpoint. Caller-allocated; all fields are private.
 * Why this order: small fields first, buffers last, so that Thumb-1 code
 * (Cortex-M0+) reaches the hot fields with short load/store offsets. */
typedef struct {
    lgb_io_t io;
    const lgb_device_t *dev;
    uint32_t tx_start;                  /* now_ms() of the last transmission */
    uint32_t tx_timeout;                /* current timeout (ms) */
    uint16_t tx_len;
    uint16_t result_len;
    uint16_t result_call_id;
    uint16_t byte_time_us;
    uint8_t next_seq;
    uint8_t last_ackreq_seq;            /* seq of our last ACK_REQ packet */
    uint8_t peer_seq;                   /* seq of the peer's last accepted ACK_REQ packet */
    uint8_t tries;                      /* retransmissions done */
    uint8_t state;                      /* LGB_LINK_ST_* bits */
    uint8_t mode;
#if LGB_ENABLE_STATS
    lgb_link_stats_t stats;
#endif
    lgb_decoder_t dec;
    uint8_t tx[LGB_PACKET_MAX];         /* the ACK_REQ packet in flight */
    uint8_t result[LGB_MAX_PAYLOAD];    /* the cached RESULT payload */
} lgb_link_t;

/* State bits (private). */
#define LGB_LINK_ST_INIT 0x01u        /* lgb_link_init succeeded */
#define LGB_LINK_ST_IN_FLIGHT 0x02u   /* tx holds an unacknowledged packet */
#define LGB_LINK_ST_PEER_SEQ 0x04u    /* peer_seq is valid */
#define LGB_LINK_ST_RESULT 0x08u      /* the RESULT cache is valid */
#define LGB_LINK_ST_RESULT_DUE 0x10u  /* the cached RESULT must be sent */
#define LGB_LINK_ST_DIRTY 0x20u       /* COBS mode: start the next frame with a 0x00 */

/*
 * lgb_link_init
 *
 * Sets up a link over `io` for the device `dev` (both copied by reference:
 * dev must outlive the link; *io is copied). mode is LGB_LINK_COBS or
 * LGB_LINK_PACKET. Encodes the HELLO once to check that it fits. Sends nothing:
 * call lgb_link_start() next.
 *
 * Returns LGB_OK on success.
 * Returns LGB_ERR_STATE when a pointer or hook is NULL, or mode is unknown.
 * Returns LGB_ERR_ARGS when the device has more than LGB_MAX_FUNCTIONS functions
 * or LGB_MAX_EVENTS events, or a table pointer is NULL with a count > 0. (NULL
 * strings are announced as "", and a function whose handler is NULL answers
 * LGB_ERR_NO_FUNCTION.)
 * Returns LGB_ERR_BUFFER when the HELLO does not fit in LGB_MAX_PAYLOAD.
 */
lgb_ret_t lgb_link_init(lgb_link_t *l, const lgb_io_t *io, const lgb_device_t *dev, unsigned mode);

/*
 * lgb_link_set_byte_time
 *
 * Sets the airtime of one byte (microseconds) used in ACK timeouts (PROTOCOL.md
 * §8.3); the default is LGB_BYTE_TIME_US. Cannot fail.
 */
void lgb_link_set_byte_time(lgb_link_t *l, uint16_t us);

/*
 * lgb_link_start
 *
 * Announces the device: in COBS mode writes one 0x00 (ends any partial frame
 * at the receiver), then sends HELLO with ACK_REQ. Abandons a packet in flight.
 *
 * Returns LGB_OK when the HELLO was written.
 * Returns LGB_ERR_STATE when the link is not initialised.
 */
lgb_ret_t lgb_link_start(lgb_link_t *l);

/*
 * lgb_link_input
 *
 * COBS mode: processes n received bytes (decoding, ACK/NAK, replies, CALL
 * dispatch). Safe with any bytes.
 *
 * Returns LGB_PENDING when no frame ended in these bytes.
 * Returns LGB_OK when the last frame that ended was a valid packet.
 * Returns the error of the last frame that ended when it was dropped
 * (LGB_ERR_CRC, LGB_ERR_COBS, LGB_ERR_TOO_LONG, LGB_ERR_LENGTH, LGB_ERR_VERSION,
 * LGB_ERR_TYPE, LGB_ERR_PAYLOAD); dropped frames are also counted in stats.
 * Returns LGB_ERR_STATE when the link is not initialised or is in packet mode.
 */
lgb_ret_t lgb_link_input(lgb_link_t *l, const uint8_t *data, size_t n);

/*
 * lgb_link_input_packet
 *
 * Packet mode: processes one whole received packet (e.g. an ISO-TP message).
 *
 * Returns LGB_OK when the packet was valid and processed.
 * Returns the error when it was dropped or NAKed (as lgb_link_input).
 * Returns LGB_ERR_STATE when the link is not initialised or is in COBS mode.
 */
lgb_ret_t lgb_link_input_packet(lgb_link_t *l, const uint8_t *pkt, size_t n);

/*
 * lgb_link_poll
 *
 * Runs the timers: retransmits the packet in flight when its timeout expired
 * (with RETRY set, the timeout doubled), gives it up after LGB_RETRIES
 * retransmissions, and sends a RESULT that waited for the line. Call it often
 * (every few milliseconds, or from the main loop).
 *
 * Returns LGB_OK normally.
 * Returns LGB_ERR_TIMEOUT when a packet was given up during this call.
 * Returns LGB_ERR_STATE when the link is not initialised.
 */
lgb_ret_t lgb_link_poll(lgb_link_t *l);

/*
 * lgb_link_send_event
 *
 * Sends EVENT [index, now_ms(), value] with ACK_REQ. value is n bytes holding
 * exactly one msgpack value (build it with an lgb_mp_writer_t, or use the
 * helpers below); it is copied as is (a malformed value is the host's to
 * refuse: NAK LGB_ERR_PAYLOAD, reported to on_sent).
 *
 * Returns LGB_OK when the EVENT was written (its outcome goes to on_sent).
 * Returns LGB_ERR_BUSY when a packet is in flight or a RESULT waits; try again
 * after lgb_link_poll().
 * Returns LGB_ERR_ARGS when index >= the device's number of events.
 * Returns LGB_ERR_PAYLOAD when n is 0.
 * Returns LGB_ERR_BUFFER when the EVENT would exceed LGB_MAX_PAYLOAD.
 * Returns LGB_ERR_STATE when the link is not initialised.
 */
lgb_ret_t lgb_link_send_event(lgb_link_t *l, uint8_t index, const uint8_t *value, size_t n);

/*
 * lgb_link_send_event_bool / _int
 *
 * lgb_link_send_event with a bool (int) value. Same return codes.
 */
lgb_ret_t lgb_link_send_event_bool(lgb_link_t *l, uint8_t index, int value);
lgb_ret_t lgb_link_send_event_int(lgb_link_t *l, uint8_t index, int64_t value);

/*
 * lgb_link_busy
 *
 * Returns 1 when an ACK_REQ packet is in flight or a RESULT waits to be sent
 * (lgb_link_send_event would return LGB_ERR_BUSY), else 0.
 */
int lgb_link_busy(const lgb_link_t *l);

#ifdef __cplusplus
}
#endif

#endif /* LGB_LINK_H */
