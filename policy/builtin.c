/* SPDX-License-Identifier: MIT */
#include <stddef.h>

#include "builtin.h"

/* Every bit-15 control in ../shared/traces (PyTorch 2.11 and a driver-API
 * program, CUDA 13, driver 580, H200). No public name or struct exists for
 * them (docs/rm-tables.md); the driver forwards paramsSize opaque bytes, so
 * the supervisor can perform them from its own copy. */
static const uint32_t legacy_allowed[] = {
	0x20808159, 0x20808162, 0x20809001, 0x20809009,
	0x20809038, 0x20809064, 0x2080a026, 0x2080a084,
};

bool gs_legacy_control_allowed(uint32_t cmd)
{
	for (size_t i = 0; i < sizeof(legacy_allowed) / sizeof(legacy_allowed[0]); i++)
		if (legacy_allowed[i] == cmd)
			return true;
	return false;
}
