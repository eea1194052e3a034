/* SPDX-License-Identifier: MIT */
/*
 * builtin.h - built-in policy facts, derived from real traces.
 */
#ifndef GPUSANDBOX_BUILTIN_H
#define GPUSANDBOX_BUILTIN_H

#include <stdbool.h>
#include <stdint.h>

/* Controls with bit 15 set go to the GSP as opaque bytes without the
 * CPU-side client check. They are refused unless listed here: the ones
 * CUDA 13 on driver 580 sends while creating a context. */
bool gs_legacy_control_allowed(uint32_t cmd);

#endif
