/* SPDX-License-Identifier: MIT */
/*
 * test_switch.h - the test suite's switches: environment variables named
 * GPUSANDBOX_TEST_* that turn a defence off or change it, so that a
 * baseline case can show the attack the defence stops winning without it
 * (SECURITY.md: every adversarial test has one).
 *
 * They exist only in the test build. The Makefile compiles the files that
 * call gs_test_switch a second time with -DGS_TEST_SWITCHES, into
 * build/switches/, and links build/switches/gpusandbox and the unit tests
 * with those objects; build/gpusandbox, the binary `make install` ships,
 * is made from the objects without it, where every switch reads as unset
 * and its name is not even in the binary (tests/cli/switches.sh checks
 * that). A release binary a workload's owner can start with a defence off
 * through its environment would be a hole, however well named.
 *
 * gs_test_switch("GPUSANDBOX_TEST_NAME") is the variable's value, or NULL
 * when unset or in a release build. The name must be a string literal
 * ("" NAME does not compile otherwise), so that grep finds every switch by
 * its full name and a release build drops the string with the call.
 */
#ifndef GPUSANDBOX_GS_TEST_SWITCH_H
#define GPUSANDBOX_GS_TEST_SWITCH_H

#ifdef GS_TEST_SWITCHES
#include <stdlib.h>
#define gs_test_switch(name) ((const char *)getenv("" name))
#else
#define gs_test_switch(name) ((void)sizeof("" name), (const char *)0)
#endif

#endif
