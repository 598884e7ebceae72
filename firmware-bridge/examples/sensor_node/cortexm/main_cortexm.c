/*
 * main_cortexm.c -- the sensor node on a Cortex-M0+/M4: vector table, reset
 * handler, SysTick millisecond clock, a UART receive interrupt feeding the ring
 * buffer, and the transport hook writing the UART data register.
 *
 * Why generic registers: the example must build for any Cortex-M with only
 * arm-none-eabi-gcc and newlib, without a vendor SDK. The peripheral addresses
 * below follow an STM32G0/F4-style USART, ADC and GPIO; on another MCU replace
 * the SN_* macros (or the three small functions that use them) with the SDK's
 * calls. The application, sensor_node.c, does not change.
 */
#include <stdint.h>

#include "sensor_node.h"

#ifndef SN_CPU_HZ
#define SN_CPU_HZ 16000000u /* core clock, for SysTick */
#endif
#ifndef SN_UART_BASE
#define SN_UART_BASE 0x40004400u /* USART2 */
#endif
#ifndef SN_UART_IRQ
#define SN_UART_IRQ 28 /* USART2 on STM32G0; 38 on STM32F4 */
#endif
#ifndef SN_ADC_DR
#define SN_ADC_DR 0x40012440u /* ADC data register: a temperature sensor channel */
#endif
#ifndef SN_LED_BSRR
#define SN_LED_BSRR 0x50000018u /* GPIOA set/reset register; LED on pin 5 */
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))
#define UART_ISR REG(SN_UART_BASE + 0x1Cu)
#define UART_RDR REG(SN_UART_BASE + 0x24u)
#define UART_TDR REG(SN_UART_BASE + 0x28u)
#define UART_ISR_RXNE (1u << 5)
#define UART_ISR_TXE (1u << 7)

#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define NVIC_ISER REG(0xE000E100u)

static sensor_node_t node;
static volatile uint32_t ticks_ms;

/* ------------------------------------------------------------------ hooks */

static uint32_t mcu_now_ms(void *ctx)
{
    (void)ctx;
    return ticks_ms;
}

static size_t mcu_uart_write(void *ctx, const uint8_t *data, size_t n)
{
    size_t i;
    (void)ctx;
    for (i = 0; i < n; i++) {
        uint32_t spin = 100000u;
        while (!(UART_ISR & UART_ISR_TXE)) {
            if (--spin == 0u) {
                return i; /* a stuck line: the protocol retries */
            }
        }
        UART_TDR = data[i];
    }
    return n;
}

static float mcu_read_temp(void *ctx)
{
    (void)ctx;
    /* 12-bit ADC of a 10 mV/degC sensor with a 500 mV offset at 3.3 V. */
    return (float)(REG(SN_ADC_DR) & 0xFFFu) * (3300.0f / 4095.0f / 10.0f) - 50.0f;
}

static void mcu_set_led(void *ctx, int on)
{
    (void)ctx;
    REG(SN_LED_BSRR) = on ? (1u << 5) : (1u << (5 + 16));
}

/* ------------------------------------------------------------------ interrupts */

void SysTick_Handler(void);
void UART_IRQHandler(void);
void Button_IRQHandler(void);

void SysTick_Handler(void)
{
    ticks_ms++;
}

void UART_IRQHandler(void)
{
    while (UART_ISR & UART_ISR_RXNE) {
        sensor_node_rx_byte(&node, (uint8_t)UART_RDR); /* ring buffer: ISR-safe */
    }
}

void Button_IRQHandler(void)
{
    sensor_node_button(&node, 1);
}

/* ------------------------------------------------------------------ main */

int main(void);

int main(void)
{
    lgb_io_t io;
    sn_hw_t hw;

    SYST_RVR = SN_CPU_HZ / 1000u - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* core clock, interrupt, enable */
    NVIC_ISER = 1u << (SN_UART_IRQ & 31);

    io.write = mcu_uart_write;
    io.now_ms = mcu_now_ms;
    io.ctx = 0;
    hw.read_temp = mcu_read_temp;
    hw.set_led = mcu_set_led;
    hw.ctx = 0;
    (void)sensor_node_init(&node, &io, &hw, LGB_LINK_COBS, 0);
    for (;;) {
        sensor_node_step(&node);
        __asm__ volatile("wfi"); /* SysTick wakes us every millisecond */
    }
}

/* ------------------------------------------------------------------ startup */

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;

void Reset_Handler(void);
void Default_Handler(void);

void Reset_Handler(void)
{
    uint32_t *src = &_sidata;
    uint32_t *dst = &_sdata;
    while (dst < &_edata) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss;) {
        *dst++ = 0;
    }
    (void)main();
    for (;;) {
    }
}

void Default_Handler(void)
{
    for (;;) {
    }
}

typedef void (*vector_t)(void);

/* 16 system exceptions + 32 interrupts; the button is on EXTI line 4_15 (IRQ 7). */
__attribute__((section(".isr_vector"), used)) static const vector_t vectors[16 + 32] = {
    [0] = (vector_t)&_estack,
    [1] = Reset_Handler,
    [2] = Default_Handler,  /* NMI */
    [3] = Default_Handler,  /* HardFault */
    [11] = Default_Handler, /* SVCall */
    [14] = Default_Handler, /* PendSV */
    [15] = SysTick_Handler,
    [16 + 7] = Button_IRQHandler,
    [16 + SN_UART_IRQ] = UART_IRQHandler,
};
