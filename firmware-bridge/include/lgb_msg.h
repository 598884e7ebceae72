/*
 * lgb_msg.h -- the numbers of the wire protocol (PROTOCOL.md §3, §7, §10).
 *
 * Why: one place for every constant that travels on the wire. lgembed's host side
 * mirrors them in lgembed/bridge/messages.py, and a pytest test parses the
 * `#define LGB_MSG_* / LGB_FLAG_* / LGB_ERR_* 0x..` lines below and compares, so
 * keep each of them on one line in that form.
 *
 * Also declares lgb_msg_validate(), a schema check of any message's payload
 * (src/lgb_msg.c; the MCU endpoint does not need it, tests and tools do), and
 * lgb_strerror().
 *
 * No compile-time options.
 */
#ifndef LGB_MSG_H
#define LGB_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "lgb_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Protocol version (header byte 0). */
#define LGB_VERSION 0x01

/* Message types (header byte 1). */
#define LGB_MSG_HELLO 0x01     /* MCU -> host, ACK_REQ: [device_id, fw_version, max_payload, functions, events] */
#define LGB_MSG_HELLO_REQ 0x02 /* host -> MCU: empty; "send your HELLO", resets the MCU's session */
#define LGB_MSG_PING 0x03      /* either: 0..8 bytes */
#define LGB_MSG_PONG 0x04      /* either: echoes the PING's payload */
#define LGB_MSG_CALL 0x10      /* host -> MCU, ACK_REQ: [call_id, fn_index, args] */
#define LGB_MSG_RESULT 0x11    /* MCU -> host, ACK_REQ: [call_id, status, value_or_error_text] */
#define LGB_MSG_EVENT 0x20     /* MCU -> host, ACK_REQ: [event_index, timestamp_ms, value] */
#define LGB_MSG_ACK 0x30       /* either: 1 byte, the seq acknowledged */
#define LGB_MSG_NAK 0x31       /* either: 2 bytes, seq and error code */

/* Header flags (header byte 2). */
#define LGB_FLAG_ACK_REQ 0x01 /* the receiver must ACK (or NAK) this packet */
#define LGB_FLAG_RETRY 0x02   /* a retransmission (same seq as the original) */

/* Error codes: lgb_ret_t values, also the codes in NAK and RESULT (PROTOCOL.md §10). */
#define LGB_OK 0x00              /* success */
#define LGB_ERR_CRC 0x01         /* CRC mismatch */
#define LGB_ERR_COBS 0x02        /* malformed COBS: a block runs past the delimiter */
#define LGB_ERR_TOO_LONG 0x03    /* packet longer than LGB_PACKET_MAX (or ISO-TP overflow) */
#define LGB_ERR_VERSION 0x04     /* unknown protocol version */
#define LGB_ERR_TYPE 0x05        /* unknown message type, or wrong direction */
#define LGB_ERR_LENGTH 0x06      /* packet < 8 bytes, length field mismatch, bad fixed-size payload */
#define LGB_ERR_PAYLOAD 0x07     /* payload is not valid msgpack / does not match the schema */
#define LGB_ERR_NO_FUNCTION 0x08 /* CALL's fn_index not in the function table */
#define LGB_ERR_ARGS 0x09        /* wrong number or types of arguments */
#define LGB_ERR_BUSY 0x0A        /* cannot take it now; retry later */
#define LGB_ERR_FUNCTION 0x0B    /* the function ran and failed */
#define LGB_ERR_BUFFER 0x0C      /* a buffer is too small */
#define LGB_ERR_TIMEOUT 0x0D     /* no ACK after all retries; ISO-TP timeout */
#define LGB_ERR_STATE 0x0E       /* called in the wrong state */
#define LGB_ERR_ISOTP 0x0F       /* ISO-TP segmentation error */

/** Local status, never on the wire: "consumed, nothing complete yet". */
#define LGB_PENDING 0x80

/** Status code returned by every lgb_* function that can fail (LGB_OK or an LGB_ERR_*). */
typedef int lgb_ret_t;

/* Sizes (bytes). */
#define LGB_HEADER_SIZE 6 /* version, type, flags, seq, length (2) */
#define LGB_CRC_SIZE 2
#define LGB_PACKET_OVERHEAD 8 /* header + CRC */
#define LGB_PING_MAX 8        /* largest PING payload */

/* Header byte offsets. */
#define LGB_OFF_VERSION 0
#define LGB_OFF_TYPE 1
#define LGB_OFF_FLAGS 2
#define LGB_OFF_SEQ 3
#define LGB_OFF_LENGTH 4

/* Default CAN ids (11-bit), PROTOCOL.md §5.1. */
#define LGB_CAN_ID_HOST_TO_MCU 0x7E0
#define LGB_CAN_ID_MCU_TO_HOST 0x7E8

/* Argument / result type codes in HELLO's function table (PROTOCOL.md §6.1). */
#define LGB_TYPE_INT 'i'
#define LGB_TYPE_UINT 'u'
#define LGB_TYPE_FLOAT 'f'
#define LGB_TYPE_BOOL 'b'
#define LGB_TYPE_STR 's'
#define LGB_TYPE_BYTES 'y'
#define LGB_TYPE_NIL 'n'

/*
 * lgb_msg_validate
 *
 * Checks that `payload` (n bytes) is a valid payload for message type `type`
 * in either direction (PROTOCOL.md §7): the fixed sizes of HELLO_REQ, PING,
 * PONG, ACK and NAK, and the msgpack schemas of HELLO, CALL, RESULT and EVENT
 * (extra trailing array elements allowed, §11).
 *
 * Returns LGB_OK when the payload is valid.
 * Returns LGB_ERR_TYPE when `type` is not a version-1 message type.
 * Returns LGB_ERR_LENGTH when a fixed-size payload has the wrong size.
 * Returns LGB_ERR_PAYLOAD when a msgpack payload is malformed, has trailing
 * bytes, or does not match the schema.
 */
lgb_ret_t lgb_msg_validate(uint8_t type, const uint8_t *payload, size_t n);

/*
 * lgb_strerror
 *
 * Returns the name of an lgb_ret_t ("LGB_ERR_CRC"), "LGB_PENDING", or "?" for
 * an unknown code. With LGB_ENABLE_ERRTEXT=0 it returns "".
 */
const char *lgb_strerror(lgb_ret_t ret);

#ifdef __cplusplus
}
#endif

#endif /* LGB_MSG_H */
