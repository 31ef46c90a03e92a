# Builds, installs and packages the iconr command line. The binary links the Swift runtime,
# libstdc++, libgcc, libpng, zlib and libdeflate statically, so it needs only Debian's librsvg
# and cairo (with their libraries) and, for `iconr serve`, libmicrohttpd at run time.
#
#   make                         build .build/release/iconr
#   make bench                   build it and .build/release/iconr-bench (docs/benchmarks.md)
#   make install PREFIX=/usr/local [DESTDIR=...] [SYSCONFDIR=...]   install a stripped iconr into PREFIX/bin
#   make uninstall PREFIX=/usr/local
#   make deb                     build iconr_<version>_<arch>.deb (Debian 12)

PREFIX ?= /usr/local
DESTDIR ?=
# The settings (default/iconr): /etc for the system's own prefix, else beside the prefix
# (/usr/local/etc, /opt/x/etc), so that an install outside /usr never writes the file the
# .deb owns. Everything goes under DESTDIR.
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
BINARY := .build/release/iconr
VERSION := $(shell sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/IconrCore/IconrVersion.swift)
ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB := iconr_$(VERSION)_$(ARCH).deb

.PHONY: all bench install uninstall deb clean-package
all: $(BINARY)

# The C libraries a start loads go into the binary too: libstdc++ (the Swift runtime's C++),
# libgcc_s, and libpng with zlib and libdeflate. The Swift driver links them with `-l`, and
# the -L folder holds, for each, a linker script of the shared library's name that names the
# static archives instead. Loading them made every start bind their symbols: the shared
# libstdc++'s own bindings were 1.9 of `iconr --version`'s 3.0 million instructions, and
# the other four (and libgcc_s's CPU probe, a `cpuid` that traps to the hypervisor here)
# cost a cache hit a further fifth of its CPU (2.52-2.60 ms against 2.04-2.15 ms). A first
# render still loads the shared ones, for librsvg's libraries; the archives' symbols are
# not exported, so the two copies do not meet. A library whose archive is missing is linked
# shared, as before.
# --no-export-dynamic undoes the driver's -export-dynamic: nothing loads code that links
# against iconr's own symbols, and 2,500 fewer exported ones cost every start 8% fewer
# instructions (every symbol librsvg's tree binds looks in the executable first).
LINK_DIR := $(CURDIR)/.build/link
# <library>=<archive>[,<archive>...]: lib<library>.so names the archives, in link order.
STATIC_LIBRARIES := stdc++=libstdc++.a gcc_s=libgcc_eh.a png16=libpng16.a,libz.a z=libz.a deflate=libdeflate.a

# -disable-concrete-type-metadata-mangled-name-accessors: generic types are instantiated by
# their metadata accessors, not from mangled names that the runtime demangles and whose
# conformances it looks up by scanning every conformance record (2,249 here): a cache hit
# went from 2.56 to 1.75 million instructions and a cold render from 18.3 to 17.3 million.
# lld (the Swift toolchain's linker) packs the binary's 25,000 relative relocations into
# DT_RELR (-z pack-relative-relocs): the loader applies them from a 6 KB bitmap instead of a
# 660 KB table, and a cache hit takes 1.36 million instructions instead of 1.47 (`--version`
# 0.63 instead of 0.74) and 285 page faults instead of 300. gold, the driver's default,
# cannot. Where ld.lld is missing, or glibc is older than 2.36 (which reads DT_RELR), the
# driver's default links as before.
GLIBC_VERSION := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | cut -d' ' -f2)
PACKED_RELOCATIONS := $(shell command -v ld.lld >/dev/null 2>&1 && \
    [ "$$(printf '%s\n' 2.36 '$(GLIBC_VERSION)' | sort -V | head -n1)" = 2.36 ] && echo yes)
LINKER := $(if $(PACKED_RELOCATIONS),-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)

# --disable-local-rpath: no RUNPATH of $ORIGIN (the Swift libraries are linked in), which
# had every start look for libm and libc in 20 folders beside the binary, 40 failed system
# calls, and every `dlopen` (librsvg) look there too.
SWIFT_BUILD := swift build -c release --static-swift-stdlib --disable-local-rpath \
    -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
    -Xlinker -L"$(LINK_DIR)" -Xlinker --no-export-dynamic $(LINKER)

# Always asks SwiftPM, which rebuilds only what changed (and relinks when a script changed).
$(BINARY): FORCE
	@mkdir -p "$(LINK_DIR)"; \
	for entry in $(STATIC_LIBRARIES); do \
	    script="$(LINK_DIR)/lib$${entry%%=*}.so"; archives=""; \
	    for archive in $$(echo "$${entry#*=}" | tr , ' '); do \
	        path=$$(clang -print-file-name=$$archive 2>/dev/null); \
	        case "$$path" in /*) ;; *) archives=""; break ;; esac; \
	        if [ ! -f "$$path" ]; then archives=""; break; fi; \
	        archives="$$archives $$path"; \
	    done; \
	    wanted=$${archives:+"INPUT($$archives )"}; \
	    if [ "$$wanted" != "$$(cat "$$script" 2>/dev/null)" ]; then \
	        rm -f "$(BINARY)"; \
	        if [ -n "$$wanted" ]; then echo "$$wanted" > "$$script"; else rm -f "$$script"; fi; \
	    fi; \
	done
	$(SWIFT_BUILD) --product iconr
FORCE:

# The benchmarks, built with the same flags (other flags would rebuild every module), and
# empty-swift, a Swift program that does nothing (a peer of a cache hit).
bench: $(BINARY)
	$(SWIFT_BUILD) --product iconr-bench
	$(SWIFT_BUILD) --product empty-swift


# The binary, its man page and shell completions (made by the binary, from the tables of its
# --help), the bundled icons, the README and docs, and the systemd unit with its settings in
# SYSCONFDIR/default/iconr (kept when it exists: it is the administrator's).
install: $(BINARY)
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" \
	    "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" "$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions" \
	    "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d" "$(DESTDIR)$(PREFIX)/share/iconr/icons" \
	    "$(DESTDIR)$(PREFIX)/share/doc/iconr/docs/images" \
	    "$(DESTDIR)$(PREFIX)/lib/systemd/system" "$(DESTDIR)$(SYSCONFDIR)/default"
	install -s -m 755 "$(BINARY)" "$(DESTDIR)$(PREFIX)/bin/iconr"
	"$(BINARY)" help --man | gzip -9n > "$(DESTDIR)$(PREFIX)/share/man/man1/iconr.1.gz"
	"$(BINARY)" help --completions bash > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/iconr"
	"$(BINARY)" help --completions zsh > "$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_iconr"
	"$(BINARY)" help --completions fish > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/iconr.fish"
	install -m 644 icons/*.svg "$(DESTDIR)$(PREFIX)/share/iconr/icons"
	install -m 644 README.md CHANGELOG.md "$(DESTDIR)$(PREFIX)/share/doc/iconr"
	install -m 644 docs/*.md "$(DESTDIR)$(PREFIX)/share/doc/iconr/docs"
	install -m 644 docs/images/*.png "$(DESTDIR)$(PREFIX)/share/doc/iconr/docs/images"
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' packaging/iconr.service.in \
	    > "$(DESTDIR)$(PREFIX)/lib/systemd/system/iconr.service"
	[ -e "$(DESTDIR)$(SYSCONFDIR)/default/iconr" ] || \
	    sed 's|@DATADIR@|$(PREFIX)/share/iconr|g' packaging/iconr.default > "$(DESTDIR)$(SYSCONFDIR)/default/iconr"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/iconr" "$(DESTDIR)$(PREFIX)/share/man/man1/iconr.1.gz" \
	    "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/iconr" \
	    "$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_iconr" \
	    "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/iconr.fish" \
	    "$(DESTDIR)$(PREFIX)/lib/systemd/system/iconr.service"
	rm -rf "$(DESTDIR)$(PREFIX)/share/iconr" "$(DESTDIR)$(PREFIX)/share/doc/iconr"

deb: $(BINARY)
	rm -rf .build/deb && mkdir -p .build/deb/DEBIAN
	$(MAKE) --no-print-directory install DESTDIR=.build/deb PREFIX=/usr BINARY=$(BINARY)
	install -m 644 LICENSE .build/deb/usr/share/doc/iconr/copyright
	install -d .build/deb/etc/logrotate.d
	install -m 644 packaging/iconr.logrotate .build/deb/etc/logrotate.d/iconr
	install -m 755 packaging/postinst packaging/postrm .build/deb/DEBIAN/
	printf '%s\n' /etc/default/iconr /etc/logrotate.d/iconr > .build/deb/DEBIAN/conffiles
	printf '%s\n' \
	    "Package: iconr" \
	    "Version: $(VERSION)" \
	    "Architecture: $(ARCH)" \
	    "Maintainer: iconr developers <iconr@localhost>" \
	    "Depends: librsvg2-2 (>= 2.54), libcairo2, libpng16-16, libdeflate0, libglib2.0-0, libgdk-pixbuf-2.0-0, libmicrohttpd12, libgcc-s1, libc6 (>= 2.36)" \
	    "Section: graphics" \
	    "Priority: optional" \
	    "Installed-Size: $$(du -sk .build/deb/usr | cut -f1)" \
	    "Description: parameterized SVG icons (Mapbox vector icons) to PNG and sprite sheets" \
	    " iconr renders SVG icons whose Mapbox metadata declares color parameters, builds" \
	    " MapLibre/Mapbox sprite sheets with every variant a style needs, and rewrites such" \
	    " styles so that MapLibre draws them." > .build/deb/DEBIAN/control
	dpkg-deb --root-owner-group --build .build/deb "$(DEB)"
