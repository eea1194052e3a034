# tests/fakedrv/fakedrv.mk - the fake NVIDIA driver (FUSE) and its self-test.
# Included by the top-level Makefile. Only the fake needs libfuse3, so its
# flags are kept in FAKEDRV_* variables and never leak into other targets.

FAKEDRV_DIR      := tests/fakedrv
FAKEDRV_BIN      := $(FAKEDRV_DIR)/gs-fakedrv
FAKEDRV_SELFTEST := $(FAKEDRV_DIR)/fake_selftest
FAKEDRV_SRCS     := $(FAKEDRV_DIR)/fake_fuse.c $(FAKEDRV_DIR)/fake_rm.c $(FAKEDRV_DIR)/fake_objects.c $(FAKEDRV_DIR)/fake_ctrl.c \
                    $(FAKEDRV_DIR)/fake_busy.c $(FAKEDRV_DIR)/fake_share.c $(FAKEDRV_DIR)/fake_p2p.c \
                    $(FAKEDRV_DIR)/fake_nodes.c $(FAKEDRV_DIR)/fake_uvm.c $(FAKEDRV_DIR)/fake_uvm_chan.c \
                    $(FAKEDRV_DIR)/fake_uvm_gpu.c $(FAKEDRV_DIR)/fake_chgrp.c $(FAKEDRV_DIR)/fake_semsurf.c \
                    $(FAKEDRV_DIR)/fake_export.c $(FAKEDRV_DIR)/fake_engines.c $(FAKEDRV_DIR)/fake_smi.c include/rm_tables.c
# The fake plays a driver branch with gpusandbox's own per-version tables.
FAKEDRV_HDRS     := $(FAKEDRV_DIR)/fake_rm.h $(FAKEDRV_DIR)/fake_rm_int.h include/nvrm_abi.h include/nvuvm_abi.h include/nvrm_monitoring.h \
                    include/rm_tables.h include/test_clock.h \
                    include/nvrm/rm_abi.h $(wildcard include/nvrm/*.def include/nvrm/v*/*.def)

FAKEDRV_WARN     := -std=gnu11 -Wall -Wextra $(GS_WERROR) -O2 -g -Iinclude
# Deferred (=) so pkg-config runs only when the fake is actually built.
FAKEDRV_CFLAGS    = $(GS_FORTIFY) $(CFLAGS) $(FAKEDRV_WARN) $(shell pkg-config --cflags fuse3)
FAKEDRV_LIBS      = $(shell pkg-config --libs fuse3)

$(FAKEDRV_BIN): $(FAKEDRV_SRCS) $(FAKEDRV_HDRS) $(FAKEDRV_DIR)/fakedrv.mk
	$(CC) $(FAKEDRV_CFLAGS) $(CPPFLAGS) -o $@ $(FAKEDRV_SRCS) $(LDFLAGS) $(FAKEDRV_LIBS) -pthread

# tests/sm's stalling file system (tests/sm/stallfs.c), also a FUSE server.
STALLFS_BIN      := tests/sm/stallfs
$(STALLFS_BIN): tests/sm/stallfs.c $(FAKEDRV_DIR)/fakedrv.mk
	$(CC) $(FAKEDRV_CFLAGS) $(CPPFLAGS) -o $@ $< $(LDFLAGS) $(FAKEDRV_LIBS)

FAKEDRV_SELFTEST_SRCS := $(FAKEDRV_DIR)/fake_selftest.c $(FAKEDRV_DIR)/fake_selftest_uvmmap.c \
                         $(FAKEDRV_DIR)/fake_selftest_uvmchan.c \
                         $(FAKEDRV_DIR)/fake_selftest_semsurf.c $(FAKEDRV_DIR)/fake_selftest_engines.c \
                         $(FAKEDRV_DIR)/fake_selftest_token.c
$(FAKEDRV_SELFTEST): $(FAKEDRV_SELFTEST_SRCS) $(FAKEDRV_DIR)/fake_selftest.h tests/lib/uuid_text.h $(FAKEDRV_HDRS) $(FAKEDRV_DIR)/fakedrv.mk
	$(CC) $(GS_FORTIFY) $(CFLAGS) $(FAKEDRV_WARN) $(CPPFLAGS) -o $@ $(FAKEDRV_SELFTEST_SRCS) $(LDFLAGS)

.PHONY: fakedrv fakedrv-selftest fakedrv-clean
fakedrv: $(FAKEDRV_BIN) $(FAKEDRV_SELFTEST) $(STALLFS_BIN)

# Needs root and /dev/fuse; exits 125 (skip) without them.
fakedrv-selftest: fakedrv
	$(FAKEDRV_DIR)/run-selftest.sh --no-build

fakedrv-clean:
	rm -f $(FAKEDRV_BIN) $(FAKEDRV_SELFTEST) $(STALLFS_BIN)
