# SPDX-License-Identifier: GPL-2.0
#
# nfence: top-level build and test entry points.
#
#   make                 build nfence.ko (for KVER), libnfence and every test
#   make check           lint + libnfence host tests + VM suites on every
#                        supported kernel and the debug kernel + KUnit; ends
#                        with "N passed, N failed, N skipped, N errors"
#   make check-vm KVER=  boot KVER in a VM and run IGT, kselftests and the demos
#   make check-virtio-gpu KVER=
#                        boot KVER with a virtio-gpu device and run the
#                        syncobj bridge's test against virtio-gpu's file
#   make stress          build tests/stress/nfence_stress, the random-ioctl
#                        stress tool (check-debug runs it; by hand where the
#                        driver is loaded: nfence_stress --help)
#   make check-kunit     KUnit suites with kunit.py (UML, linux-source-6.12)
#   make check-debug     the VM suites on a KASAN + lockdep + kmemleak 6.12,
#                        with the allocation-failure and stress loads, and
#                        the KUnit suites in the same guest
#   make check-mutants   mutation testing: each fault of tests/mutants.txt
#                        applied alone to the driver, the 6.12 VM suite run
#                        on each; ends with "N mutants, K killed (P%)" and
#                        the survivors. One VM run per mutant, so not part
#                        of make check. MUTANTS="name ..." selects mutants,
#                        MUTANTS_ARGS="--build-only" only builds them,
#                        MUTANTS_ARGS="--batch" runs each mutant's run:
#                        tests only, all in one VM
#   make coverage        line, function and branch coverage of nfence.ko
#                        (gcov, lcov) over the debug kernel's VM suite and
#                        the KUnit suites, in build/coverage; a report, not
#                        part of make check
#   make demo KVER=      boot KVER in a VM, load the driver, run the demos
#   make lint            checkpatch --strict, sparse and W=1 on both kernels,
#                        the driver's layering (scripts/arch-numbers.py),
#                        shellcheck on scripts/
#   make arch-numbers    rewrite architecture.rst's measured table from the
#                        driver as built for KVER
#   make htmldocs        Documentation/ as HTML in build/docs/html, the
#                        driver's and the uapi's kernel-doc pulled in,
#                        warning-free (make lint runs it); "make docs" too
#   make dkms-check      dkms add + build for every supported kernel in a
#                        scratch DKMS tree, then the newest one's module
#                        loaded by modprobe in a VM (make check's deb step
#                        builds and loads the same DKMS tree instead)
#   make dkms-source     the DKMS source tree in build/dkms/nfence-VERSION
#   make dkms-install    (root) the driver under DKMS for every kernel
#                        with headers, rebuilt on kernel upgrades
#   make install         (root, or DESTDIR=) libnfence: library, header,
#                        libnfence.pc, programs, man pages; PREFIX=/usr/local
#   make deb             the Debian packages (nfence-dkms, libnfence0,
#                        libnfence-dev, nfence-tools) built from the release
#                        tarball with dpkg-buildpackage, checked by lintian,
#                        in build/deb
#   make deb-check       make check's step: make deb, the packages installed
#                        with apt in a throwaway root, then a VM per kernel
#                        on it: modprobe, the tools, apt-get purge (root)
#   make dist            build/nfence-VERSION.tar.xz, the release tarball
#   make release-check   the numbers that must agree with VERSION
#                        (scripts/release.sh)
#   make bench-waiters   CPU waiter scaling benchmark (KUnit, UML)
#   make bench-gpu KVER= native fence vs legacy GPU sync, interrupts and
#                        submission rates: nfence-gpu-bench in a VM
#   make bench-cpu       CPU wake latency, fan-out, waiter scaling and memory
#                        of native fences against futex, drm_syncobj and
#                        eventfd: nfence-cpu-bench in a VM on the 6.12 LTS,
#                        then on 6.1; CSVs and a plot in build/
#   make deps            install every dependency on Debian 12 (idempotent)
#
# NFENCE_HARNESS_SELFTEST=1 with check-debug or check-kunit builds in a
# deliberate leak or WARN that the run must catch (and so must fail).
# NFENCE_KUNIT=y with module builds the KUnit suites into nfence.ko (for a
# kernel with CONFIG_KUNIT=y, the debug kernel): they run when it loads.

# Default kernel: the running one if its headers are installed, else the
# newest supported kernel installed (the sandbox's own kernel has none).
KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else scripts/kernels.sh | tr ' ' '\n' | tail -n1; fi)
KDIR ?= /lib/modules/$(KVER)/build
BUILD ?= $(CURDIR)/build
KMOD_DIR := $(BUILD)/kmod-$(KVER)
DRV_SRC := $(CURDIR)/drivers/gpu/drm/nfence
SELFTEST_DIR := tools/testing/selftests/drivers/gpu/nfence

# The kernels the project supports: Debian's 6.1 and the 6.12 LTS, whichever
# of them are installed with headers (make deps installs both).
KVERS ?= $(shell scripts/kernels.sh)

export BUILD

.PHONY: all module lib igt selftests stress check check-host check-vm \
	check-kunit check-debug check-mutants debug-kernel bench-waiters coverage \
	bench-gpu bench-cpu demo lint arch-numbers docs htmldocs deps clean \
	install \
	check-virtio-gpu \
	dkms-check dkms-source dkms-install deb deb-check dist release-check

all: module lib igt selftests stress

# The driver is built out of tree in a per-kernel copy of its sources, so
# that builds for several kernels never share objects.
module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at $(KDIR) (make deps, or set KVER/KDIR)"; exit 1; }
	@mkdir -p $(KMOD_DIR)
	@rsync -a --copy-links --checksum --delete \
		$(if $(NFENCE_KUNIT),,--exclude=tests) --exclude='*.o' \
		--exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod*' \
		--exclude='*.gcno' --exclude='*.gcda' \
		--exclude=Module.symvers --exclude=modules.order \
		$(DRV_SRC)/ $(KMOD_DIR)/
	$(MAKE) -C $(KDIR) M=$(KMOD_DIR) NFENCE_UAPI=$(CURDIR)/include/uapi \
		CONFIG_DRM_NFENCE=m W=1 \
		$(if $(NFENCE_HARNESS_SELFTEST),CONFIG_DRM_NFENCE_HARNESS_SELFTEST=y) \
		$(if $(NFENCE_KUNIT),CONFIG_DRM_NFENCE_KUNIT_TEST=y) \
		$(if $(NFENCE_GCOV),NFENCE_GCOV=y) \
		modules
	@echo "built $(KMOD_DIR)/nfence.ko"

lib:
	$(MAKE) -C libnfence

igt: lib
	$(MAKE) -C tests/igt

selftests: lib
	$(MAKE) -C $(SELFTEST_DIR)

stress:
	$(MAKE) -C tests/stress

check-host: lib
	$(MAKE) -C libnfence check

check-vm: module lib igt selftests stress
	scripts/check-vm.sh $(KVER)

# The syncobj bridge with another driver: a VM with a virtio-gpu device.
check-virtio-gpu: module igt
	scripts/virtio-gpu-check.sh $(KVER)

demo: module lib
	scripts/check-vm.sh --demo $(KVER)

check-kunit:
	scripts/kunit.sh

# scripts/mutants.sh --help says how mutants are run and judged.
check-mutants: module lib igt selftests stress
	scripts/mutants.sh $(MUTANTS_ARGS) $(MUTANTS)

bench-waiters:
	@KUNIT_FILTER='nfencebench_waitlist' KUNIT_SHOW='waiters +[0-9]+:' \
		scripts/kunit.sh | grep -E 'waiters +[0-9]+:|^kunit:'

# BENCH_GPU_ARGS: e.g. "-t 3" for 3 s per measurement (default 1.5).
# Three adapters, one per interrupt payload, for its part e), and two more
# for part h) (3 with peer signals like adapter 0, 4 without); the other
# parts run on adapter 0, as with one adapter.
bench-gpu: module lib
	scripts/vm-exec.sh --insmod "num_adapters=5 interrupt_payload=0,1,2,0,0 peer_signals=1,0,0,1,0" \
		$(KVER) $(BUILD)/libnfence/nfence-gpu-bench $(BENCH_GPU_ARGS)

# BENCH_CPU_ARGS: e.g. "-t 2" for 2 s per measurement (default 1), "-q"
# for a smoke run. The newest kernel first, then the others.
BENCH_CPU_KVERS ?= $(shell echo $(KVERS) | tr ' ' '\n' | sort -rV)

bench-cpu: lib
	@for k in $(BENCH_CPU_KVERS); do \
		$(MAKE) -s module KVER=$$k || exit 1; \
	done
	scripts/bench-cpu.sh $(BENCH_CPU_KVERS) -- $(BENCH_CPU_ARGS)

# KVER=debug builds nfence.ko against the debug kernel tree.
debug-kernel:
	@scripts/debug-kernel.sh >/dev/null

# make coverage: nfence.ko with gcov on the debug kernel through its whole
# VM suite, then a second one with the KUnit suites built in, an lcov
# report of both in build/coverage (scripts/coverage.sh).
coverage: debug-kernel lib igt selftests stress
	$(MAKE) module KVER=coverage KDIR=$$(scripts/debug-kernel.sh | tail -n1) \
		NFENCE_GCOV=y
	$(MAKE) module KVER=coverage-kunit \
		KDIR=$$(scripts/debug-kernel.sh | tail -n1) NFENCE_GCOV=y NFENCE_KUNIT=y
	scripts/coverage.sh

# The VM suite on the debug kernel, then the KUnit suites there too: a
# second nfence.ko with them built in, loaded last (under KASAN and
# kmemleak, which UML does not have, besides lockdep).
check-debug: debug-kernel lib igt selftests stress
	$(MAKE) module KVER=debug KDIR=$$(scripts/debug-kernel.sh | tail -n1)
	$(MAKE) module KVER=debug-kunit NFENCE_KUNIT=y NFENCE_HARNESS_SELFTEST= \
		KDIR=$$(scripts/debug-kernel.sh | tail -n1)
	NFENCE_KUNIT_KO=$(BUILD)/kmod-debug-kunit/nfence.ko \
		scripts/check-vm.sh debug

lint:
	scripts/lint.sh $(KVERS)

arch-numbers: module
	python3 scripts/arch-numbers.py drivers/gpu/drm/nfence \
		$(KMOD_DIR) --update Documentation/architecture.rst

docs htmldocs:
	BUILD=$(BUILD) scripts/docs.sh

# libnfence's install (libnfence/Makefile: DESTDIR, PREFIX, LIBDIR, ...).
install: lib
	$(MAKE) -C libnfence install

# The driver under DKMS (scripts/dkms.sh, Documentation/installation.rst).
dkms-source:
	scripts/dkms.sh source $(BUILD)/dkms/nfence-$$(scripts/dkms.sh version)

dkms-install:
	scripts/dkms.sh install

dkms-check: lib
	scripts/dkms.sh check $(KVERS)

# Debian packages and the release (scripts/deb.sh, scripts/release.sh,
# Documentation/installation.rst).
deb:
	scripts/deb.sh build

deb-check:
	scripts/deb.sh check $(KVERS)

dist:
	scripts/release.sh dist

release-check:
	scripts/release.sh check

# Everything, summed into one closing line.
check:
	scripts/check.sh $(KVERS)

deps:
	scripts/deps.sh

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C libnfence clean
	-$(MAKE) -C tests/igt clean
	-$(MAKE) -C tests/stress clean
	-$(MAKE) -C $(SELFTEST_DIR) clean
