# Ferry: build, install, test, demo. `make help` says what each target does.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c

PREFIX ?= /usr/local
DESTDIR ?=
CONFIG ?= release
SWIFT ?= swift

# A release build carries its own Swift runtime, so the installed binary (and the .deb)
# needs nothing from /opt/swift.
# Release links with lld: relative relocations packed (DT_RELR, glibc 2.36), and the functions a
# cold start runs laid out together (scripts/link-order.py says why and how to refresh the list):
# each function in a section of its own (-function-sections), or the linker can only move whole
# source files.
# No dynamic symbol table beyond what the libraries need (--no-export-dynamic): Swift's driver
# exports every symbol of our modules, 2 MB of tables that the loader's symbol lookups read at
# every start and that stayed resident. Nothing looks our symbols up by name (no dlsym, no
# GtkBuilder callbacks).
# Concrete generic types' metadata is made by direct accessors, not demangled from their mangled
# names (-disable-concrete-type-metadata-mangled-name-accessors): demangling checks each generic
# requirement (String: Hashable for a [String: String]) by looking the conformance up, and the first
# lookup of each scans every conformance record of this large binary, ~0.4 M instructions each,
# four of them on a cold start's path to its first reply (callgrind), more in GRDB after it.
# The stripped binary grows by 0.2 %.
# libstdc++ (the Swift runtime's) is linked statically: the shared one was 1.4 MB of resident
# pages, most of it its own relocation and symbol tables, for the few functions the runtime uses.
# build/static-cxx holds only libstdc++.a and is searched first, so `-lstdc++` finds the archive.
# SQLite too: Debian's libsqlite3.so is linked with -z now and calls its own exported functions
# through its PLT, so the loader resolved ~1,600 of its symbols at every start, ~2 M instructions
# before a cold start's first reply (callgrind), a fifth of that whole path. GRDB's
# module map asks for -lsqlite3, which finds the shared library first (pkg-config puts the system
# directory ahead of ours), so that request is dropped (-disable-autolink-library) and the archive
# named instead. The binary then carries the SQLite it was built with: a fix to Debian's SQLite
# reaches Ferry with Ferry's next build, not with the library's update.
STATIC_CXX_DIR := $(CURDIR)/build/static-cxx
RELEASE_LINK_FLAGS := -Xswiftc -Xfrontend -Xswiftc -function-sections \
    -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
    -Xswiftc -Xfrontend -Xswiftc -disable-autolink-library -Xswiftc -Xfrontend -Xswiftc sqlite3 -Xlinker -l:libsqlite3.a \
    -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
    -Xlinker --symbol-ordering-file=$(CURDIR)/scripts/link-order.txt -Xlinker --no-warn-symbol-ordering \
    -Xlinker --no-export-dynamic -Xswiftc -L$(STATIC_CXX_DIR)
# No $ORIGIN run path either: nothing is loaded from beside the binary, and the loader looked
# for each of its libraries there first (a dozen failed opens per library at every start).
SWIFT_BUILD_FLAGS := -c $(CONFIG) $(if $(filter release,$(CONFIG)),--static-swift-stdlib --disable-local-rpath $(RELEASE_LINK_FLAGS))
VENV := .venv-test
CHECK_PREFIX := $(CURDIR)/build/check-prefix

.PHONY: docs fuzz tsan-tests all build install uninstall deps check unit-tests check-desktop integration-tests \
        demo bench bench-check mime-types deb check-deb clean distclean help pot format check-format

all: build

help:
	@echo "make              build Ferry (CONFIG=release|debug, default release)"
	@echo "make install      install into PREFIX (default /usr/local), under DESTDIR when packaging"
	@echo "make uninstall    remove what make install installed"
	@echo "make demo         share a file, a text and a link through a private session bus"
	@echo "make check        install what is missing, build, run every test (about 25 minutes on 2 cores)"
	@echo "make tsan-tests   the unit tests again under ThreadSanitizer, in a build of their own (CI runs it too)"
	@echo "make bench        print the performance figures"
	@echo "make bench-check  fail when a figure of Tests/bench/budget.json got heavier (BENCH_CHECK_FLAGS=--deterministic: instructions only)"
	@echo "make fuzz         fuzz every parser of outside input (FUZZ_SECONDS each, default 600)"
	@echo "make docs         DocC for FerryCore and FerryContract into build/docs"
	@echo "make deb          build the Debian package dist/ferry_VERSION_ARCH.deb and lint it"
	@echo "make check-deb    build the package, install, use and purge it in a clean Debian 12 chroot"
	@echo "make deps         install the Debian packages and the test virtualenv"
	@echo "make format       lay the Swift code out as .swift-format says (make check-format: check only; make check runs it)"
	@echo "make pot          refresh po/ferry.pot from the sources and merge it into each po/LANG.po"
	@echo "make mime-types   refresh the desktop file's MimeType list from shared-mime-info"
	@echo "make clean        remove build products (distclean: also dependencies and the venv)"

build: $(if $(filter release,$(CONFIG)),$(STATIC_CXX_DIR)/libstdc++.a)
	@# The link order is the linker's input, which SwiftPM does not know of: programs linked
	@# before the list changed are removed, so that they are linked again with it.
	@if [[ "$(CONFIG)" == release && -d .build/release ]]; then \
	    find -L .build/release -maxdepth 1 -type f -perm -u+x ! -newer scripts/link-order.txt -delete; fi
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)
	scripts/build-kde-plugin.sh

$(STATIC_CXX_DIR)/libstdc++.a:
	@archive=$$(clang -print-file-name=libstdc++.a); \
	if [[ $$archive != /* ]]; then echo "libstdc++.a not found: install libstdc++-12-dev" >&2; exit 1; fi; \
	mkdir -p "$(STATIC_CXX_DIR)" && ln -sf "$$archive" "$@"

install: build
	scripts/install-files.sh --prefix "$(PREFIX)" --destdir "$(DESTDIR)" \
	    --bin-dir "$$($(SWIFT) build -c $(CONFIG) --show-bin-path)"
	$(update_desktop_database)

uninstall:
	scripts/install-files.sh --prefix "$(PREFIX)" --destdir "$(DESTDIR)" --uninstall
	$(update_desktop_database)

# GIO finds MimeType= handlers only through mimeinfo.cache. Packages leave this to the
# desktop-file-utils trigger, so it runs only for a direct install (no DESTDIR).
define update_desktop_database
@if [[ -z "$(DESTDIR)" ]] && command -v update-desktop-database >/dev/null; then \
    echo "update-desktop-database $(PREFIX)/share/applications"; \
    update-desktop-database "$(PREFIX)/share/applications"; \
fi
endef

deps:
	scripts/deps.sh

# The ThreadSanitizer pass (tsan-tests) is a second full build, as long as this whole target: CI
# runs it after `make check` (.ci/run), and so can anyone who changed something that runs on two threads.
check: deps
	$(MAKE) --no-print-directory check-format
	$(SWIFT) build
	$(MAKE) --no-print-directory unit-tests
	scripts/build-kde-plugin.sh --with-driver
	@test -f build/kde-purpose/ferryplugin.so -a -x build/kde-purpose/purpose-driver || \
	    { echo "make check: KDE's plugin was not built (make deps installs what it needs)"; exit 1; }
	$(MAKE) --no-print-directory install PREFIX="$(CHECK_PREFIX)" CONFIG=debug
	$(MAKE) --no-print-directory check-desktop
	$(MAKE) --no-print-directory integration-tests

unit-tests:
	$(SWIFT) test

# The unit tests once more under ThreadSanitizer, in a build folder of their own (its runtime
# changes every object file): a data race in the sender, the outbox or the staging fails the check.
format:
	$(SWIFT) format format --in-place --recursive --parallel Sources Tests Package.swift

check-format:
	scripts/check-format.sh

tsan-tests:
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --sanitize=thread --scratch-path .build-tsan

check-desktop:
	scripts/check-desktop-integration.sh "$(CHECK_PREFIX)"
	@scripts/update-mime-types.sh --check || echo "(a newer or older shared-mime-info than the list was made from; not an error)"

integration-tests:
	@if [[ -d Tests/integration ]]; then \
	    echo "FERRY_PREFIX=$(CHECK_PREFIX) $(VENV)/bin/python -m pytest -v Tests/integration"; \
	    FERRY_PREFIX="$(CHECK_PREFIX)" FERRY_CRYPTO_PROBE="$$($(SWIFT) build --show-bin-path)/ferry-crypto-probe" \
	        $(VENV)/bin/python -m pytest -v Tests/integration; \
	    echo "The UI tests once more in German (FERRY_UI_LANGUAGE=de): names found through the translations"; \
	    FERRY_PREFIX="$(CHECK_PREFIX)" FERRY_UI_LANGUAGE=de $(VENV)/bin/python -m pytest -v Tests/integration/ui; \
	else \
	    echo "No Tests/integration yet: no integration tests to run."; \
	fi

# Coverage-guided fuzzing of every parser of outside input (Tests/fuzz), FUZZ_SECONDS each.
FUZZ_SECONDS ?= 600
FUZZ_JOBS ?= 2
FUZZ_TARGETS ?= ferry-uri share-dictionary sso-redirect image-size server-error well-known retry-after \
    olm-message megolm-message canonical-json sas-message
fuzz: deps
	$(SWIFT) build --product ferry-fuzz --scratch-path .build-fuzz --sanitize=fuzzer --sanitize=address \
	    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFERRY_LIBFUZZER
	scripts/fuzz.sh .build-fuzz/debug/ferry-fuzz $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

demo:
	scripts/demo.sh

# DocC for FerryCore, FerryContract and FerryCrypto into build/docs; fails on an undocumented public symbol.
docs:
	scripts/docs.sh

bench:
	@if [[ -x scripts/bench.sh ]]; then scripts/bench.sh; else echo "No benchmarks yet (scripts/bench.sh)."; fi

# The figures of Tests/bench/budget.json against a release install, failing when one is over its
# ceiling by more than its margin (the issue's goals are printed, not enforced). CI runs only the
# instruction counts (BENCH_CHECK_FLAGS=--deterministic): callgrind repeats them, timings would not.
# --write records the figures measured in budget.json. Never part of `make check`.
BENCH_PREFIX := $(CURDIR)/build/bench-prefix
BENCH_CHECK_FLAGS ?=
bench-check: deps
	$(MAKE) --no-print-directory install PREFIX="$(BENCH_PREFIX)" CONFIG=release
	$(VENV)/bin/python Tests/bench/bench_check.py "$(BENCH_PREFIX)" \
	    "$$($(SWIFT) build -c release --show-bin-path)/bare-gapplication" $(BENCH_CHECK_FLAGS)

mime-types:
	scripts/update-mime-types.sh

# The translations' template from every file in po/POTFILES, merged into each po/LANG.po.
pot:
	scripts/update-pot.sh

# Both build in a copy of the tree under build/deb, with its own SwiftPM build directory.
deb:
	scripts/build-deb.sh

check-deb:
	scripts/check-deb.sh

clean:
	$(SWIFT) package clean
	rm -rf build dist .build-tsan .build-fuzz

distclean: clean
	rm -rf .build $(VENV)
