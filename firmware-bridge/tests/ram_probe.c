/*
 * ram_probe.c -- one instance of each context struct, so that `make cortex-m`
 * can print their sizes as the ARM compiler lays them out (arm-none-eabi-nm -S).
 * Not linked into anything.
 */
#include "lgb_isotp.h"
#include "lgb_link.h"
#include "lgb_ring.h"

lgb_link_t lgb_probe_link;
lgb_ring_t lgb_probe_ring;
lgb_isotp_t lgb_probe_isotp;
