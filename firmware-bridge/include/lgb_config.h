/*
 * lgb_config.h -- compile-time configuration of the lgembed firmware bridge.
 *
 * Why: the library allocates nothing at run time; every buffer is a fixed-size
 * array inside a context struct the application owns. These options fix those
 * sizes and a few behaviours. Define any of them before including an lgb_*.h
 * header (on the compiler command line: -DLGB_MAX_PAYLOAD=256) or in a file named
 * by LGB_CONFIG_FILE (-DLGB_CONFIG_FILE='"my_lgb_config.h"'); everything left
 * undefined gets the default below. Out-of-range values stop the build (#error).
 *
 * Options (default in brackets):
 *
 *   LGB_MAX_PAYLOAD [128]        Largest payload (bytes) a packet may carry, both
 *                                directions. Announced in HELLO. 16..4087 (4087 =
 *                                the largest packet ISO-TP's classic first frame
 *                                carries, 4095, minus 8). Sizes the decoder buffer,
 *                                the retransmission buffer and the RESULT cache.
 *   LGB_MAX_FUNCTIONS [16]       Most functions a device table may have. 1..127.
 *   LGB_MAX_EVENTS [16]          Most events a device table may have. 0..127.
 *   LGB_RX_RING_SIZE [64]        Bytes in an lgb_ring_t (the ISR -> main-loop byte
 *                                queue). A power of two, 2..32768.
 *   LGB_RETRIES [3]              Retransmissions of an unacknowledged ACK_REQ packet
 *                                before LGB_ERR_TIMEOUT. 0..8.
 *   LGB_ACK_TIMEOUT_MS [50]      Base ACK timeout (PROTOCOL.md §8.3), doubled per
 *                                retry. 1..10000.
 *   LGB_BYTE_TIME_US [87]        Default airtime of one byte in microseconds, added
 *                                to the ACK timeout (87 = 115200 baud 8N1). 0..100000.
 *                                A link can override it at run time.
 *   LGB_CRC16_TABLE [0]          1: table-driven CRC (512 bytes of flash, ~4x
 *                                faster); 0: bitwise (about 40 bytes of code).
 *   LGB_ENABLE_FLOAT [1]         0: no float support in lgb_mp (float32/float64 are
 *                                still skipped correctly when read, but cannot be
 *                                converted or written; type code 'f' is refused
 *                                with LGB_ERR_ARGS). Saves soft-float code on M0+.
 *   LGB_ENABLE_ERRTEXT [1]       0: RESULT error texts are "" and lgb_strerror()
 *                                returns "" (saves about 300 bytes of strings).
 *   LGB_ENABLE_STATS [1]         0: no counters in the decoder and link structs.
 *   LGB_ISOTP_BLOCK_SIZE [0]     BS this endpoint asks for in its flow control
 *                                frames (0 = no further flow control). 0..255.
 *   LGB_ISOTP_STMIN [0]          STmin this endpoint asks for (0x00..0x7F ms,
 *                                0xF1..0xF9 = 100..900 us).
 *   LGB_ISOTP_TIMEOUT_MS [1000]  N_Bs / N_Cr: wait for flow control / the next
 *                                consecutive frame. 1..60000.
 *   LGB_ISOTP_MAX_WFT [10]       Flow-control WAIT frames accepted in a row. 0..255.
 *   LGB_ISOTP_PADDING [1]        1: pad CAN frames to 8 bytes; 0: minimal length.
 *   LGB_ISOTP_PAD_BYTE [0xCC]    The padding byte.
 *   LGB_ISOTP_TX_QUEUE [2 * (LGB_MAX_PAYLOAD + 10)]
 *                                Bytes of the ISO-TP transmit queue (packets waiting
 *                                behind the one being segmented, 2 bytes of length
 *                                each). At least LGB_MAX_PAYLOAD + 10.
 *
 * RAM. The library has no static variables: all RAM is the context structs the
 * application declares, so a firmware's RAM use is fixed at link time (no heap,
 * no growth). How the figures are computed, for a 32-bit MCU:
 *
 *   lgb_link_t   LGB_LINK_RAM   = 3 * LGB_MAX_PAYLOAD + 16 + LGB_LINK_RAM_FIXED
 *                               = decoder buffer (LGB_MAX_PAYLOAD + 8)
 *                               + retransmission buffer (LGB_MAX_PAYLOAD + 8)
 *                               + RESULT cache (LGB_MAX_PAYLOAD)
 *                               + fixed fields, 104 bytes at most (io hooks,
 *                                 timers, seq numbers, state, 10 counters)
 *   lgb_ring_t   LGB_RING_RAM   = LGB_RX_RING_SIZE + 8
 *   lgb_isotp_t  LGB_ISOTP_RAM  = LGB_MAX_PAYLOAD + 8 (reassembly)
 *                               + LGB_ISOTP_TX_QUEUE + LGB_ISOTP_RAM_FIXED (72)
 *
 * With the defaults (LGB_MAX_PAYLOAD 128, LGB_RX_RING_SIZE 64) a UART firmware
 * needs LGB_LINK_RAM + LGB_RING_RAM = 504 + 72 = 576 bytes (measured on
 * Cortex-M: 488 + 70; 444 + 70 with LGB_ENABLE_STATS=0);
 * a CAN firmware adds LGB_ISOTP_RAM = 484 (measured: 480). Stack: no recursion
 * anywhere; the deepest path (lgb_link_input -> dispatch -> ACK -> COBS write)
 * takes about 350 bytes on Cortex-M0+ (gcc -Os -fstack-usage), plus what the
 * write hook and the function handlers use.
 *
 * The LGB_*_RAM macros below are upper bounds for 32-bit targets: the unit tests
 * check sizeof() against them in every build, and `make cortex-m` prints the
 * sizes measured with arm-none-eabi-gcc.
 */
#ifndef LGB_CONFIG_H
#define LGB_CONFIG_H

#ifdef LGB_CONFIG_FILE
#include LGB_CONFIG_FILE
#endif

#ifndef LGB_MAX_PAYLOAD
#define LGB_MAX_PAYLOAD 128
#endif
#if LGB_MAX_PAYLOAD < 16 || LGB_MAX_PAYLOAD > 4087
#error "LGB_MAX_PAYLOAD must be 16..4087"
#endif

#ifndef LGB_MAX_FUNCTIONS
#define LGB_MAX_FUNCTIONS 16
#endif
#if LGB_MAX_FUNCTIONS < 1 || LGB_MAX_FUNCTIONS > 127
#error "LGB_MAX_FUNCTIONS must be 1..127"
#endif

#ifndef LGB_MAX_EVENTS
#define LGB_MAX_EVENTS 16
#endif
#if LGB_MAX_EVENTS < 0 || LGB_MAX_EVENTS > 127
#error "LGB_MAX_EVENTS must be 0..127"
#endif

#ifndef LGB_RX_RING_SIZE
#define LGB_RX_RING_SIZE 64
#endif
#if LGB_RX_RING_SIZE < 2 || LGB_RX_RING_SIZE > 32768 || (LGB_RX_RING_SIZE & (LGB_RX_RING_SIZE - 1)) != 0
#error "LGB_RX_RING_SIZE must be a power of two, 2..32768"
#endif

#ifndef LGB_RETRIES
#define LGB_RETRIES 3
#endif
#if LGB_RETRIES < 0 || LGB_RETRIES > 8
#error "LGB_RETRIES must be 0..8"
#endif

#ifndef LGB_ACK_TIMEOUT_MS
#define LGB_ACK_TIMEOUT_MS 50
#endif
#if LGB_ACK_TIMEOUT_MS < 1 || LGB_ACK_TIMEOUT_MS > 10000
#error "LGB_ACK_TIMEOUT_MS must be 1..10000"
#endif

#ifndef LGB_BYTE_TIME_US
#define LGB_BYTE_TIME_US 87
#endif
#if LGB_BYTE_TIME_US < 0 || LGB_BYTE_TIME_US > 100000
#error "LGB_BYTE_TIME_US must be 0..100000"
#endif

#ifndef LGB_CRC16_TABLE
#define LGB_CRC16_TABLE 0
#endif
#if LGB_CRC16_TABLE != 0 && LGB_CRC16_TABLE != 1
#error "LGB_CRC16_TABLE must be 0 or 1"
#endif

#ifndef LGB_ENABLE_FLOAT
#define LGB_ENABLE_FLOAT 1
#endif
#if LGB_ENABLE_FLOAT != 0 && LGB_ENABLE_FLOAT != 1
#error "LGB_ENABLE_FLOAT must be 0 or 1"
#endif

#ifndef LGB_ENABLE_ERRTEXT
#define LGB_ENABLE_ERRTEXT 1
#endif
#if LGB_ENABLE_ERRTEXT != 0 && LGB_ENABLE_ERRTEXT != 1
#error "LGB_ENABLE_ERRTEXT must be 0 or 1"
#endif

#ifndef LGB_ENABLE_STATS
#define LGB_ENABLE_STATS 1
#endif
#if LGB_ENABLE_STATS != 0 && LGB_ENABLE_STATS != 1
#error "LGB_ENABLE_STATS must be 0 or 1"
#endif

#ifndef LGB_ISOTP_BLOCK_SIZE
#define LGB_ISOTP_BLOCK_SIZE 0
#endif
#if LGB_ISOTP_BLOCK_SIZE < 0 || LGB_ISOTP_BLOCK_SIZE > 255
#error "LGB_ISOTP_BLOCK_SIZE must be 0..255"
#endif

#ifndef LGB_ISOTP_STMIN
#define LGB_ISOTP_STMIN 0
#endif
#if !((LGB_ISOTP_STMIN >= 0 && LGB_ISOTP_STMIN <= 0x7F) || (LGB_ISOTP_STMIN >= 0xF1 && LGB_ISOTP_STMIN <= 0xF9))
#error "LGB_ISOTP_STMIN must be 0x00..0x7F or 0xF1..0xF9"
#endif

#ifndef LGB_ISOTP_TIMEOUT_MS
#define LGB_ISOTP_TIMEOUT_MS 1000
#endif
#if LGB_ISOTP_TIMEOUT_MS < 1 || LGB_ISOTP_TIMEOUT_MS > 60000
#error "LGB_ISOTP_TIMEOUT_MS must be 1..60000"
#endif

#ifndef LGB_ISOTP_MAX_WFT
#define LGB_ISOTP_MAX_WFT 10
#endif
#if LGB_ISOTP_MAX_WFT < 0 || LGB_ISOTP_MAX_WFT > 255
#error "LGB_ISOTP_MAX_WFT must be 0..255"
#endif

#ifndef LGB_ISOTP_PADDING
#define LGB_ISOTP_PADDING 1
#endif
#if LGB_ISOTP_PADDING != 0 && LGB_ISOTP_PADDING != 1
#error "LGB_ISOTP_PADDING must be 0 or 1"
#endif

#ifndef LGB_ISOTP_PAD_BYTE
#define LGB_ISOTP_PAD_BYTE 0xCC
#endif
#if LGB_ISOTP_PAD_BYTE < 0 || LGB_ISOTP_PAD_BYTE > 255
#error "LGB_ISOTP_PAD_BYTE must be 0..255"
#endif

#ifndef LGB_ISOTP_TX_QUEUE
#define LGB_ISOTP_TX_QUEUE (2 * (LGB_MAX_PAYLOAD + 10))
#endif
#if LGB_ISOTP_TX_QUEUE < LGB_MAX_PAYLOAD + 10 || LGB_ISOTP_TX_QUEUE > 65535
#error "LGB_ISOTP_TX_QUEUE must be LGB_MAX_PAYLOAD + 10 .. 65535"
#endif

/* Derived sizes. */

/** Largest packet: 6-byte header + payload + 2-byte CRC. */
#define LGB_PACKET_MAX (LGB_MAX_PAYLOAD + 8)

/** Fixed (size-independent) part of lgb_link_t on a 32-bit target, upper bound. */
#define LGB_LINK_RAM_FIXED 104
/** Upper bound of sizeof(lgb_link_t) on a 32-bit target. */
#define LGB_LINK_RAM (3 * LGB_MAX_PAYLOAD + 16 + LGB_LINK_RAM_FIXED)
/** Upper bound of sizeof(lgb_ring_t). */
#define LGB_RING_RAM (LGB_RX_RING_SIZE + 8)
/** Fixed part of lgb_isotp_t on a 32-bit target, upper bound. */
#define LGB_ISOTP_RAM_FIXED 72
/** Upper bound of sizeof(lgb_isotp_t) on a 32-bit target. */
#define LGB_ISOTP_RAM (LGB_PACKET_MAX + LGB_ISOTP_TX_QUEUE + LGB_ISOTP_RAM_FIXED)

#endif /* LGB_CONFIG_H */
