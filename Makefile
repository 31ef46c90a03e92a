# Builds, installs and packages the iconr command line. The binary links the Swift runtime and
# libstdc++ statically, so it needs only Debian's librsvg, cairo, libpng and (for `iconr serve`)
# libmicrohttpd at run time.
#
#   make                         build .build/release/iconr
#   make install PREFIX=/usr/local [DESTDIR=...]   install a stripped iconr into PREFIX/bin
#   make uninstall PREFIX=/usr/local
#   make deb                     build iconr_<version>_<arch>.deb (Debian 12)

PREFIX ?= /usr/local
DESTDIR ?=
BINARY := .build/release/iconr
VERSION := $(shell sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/IconrCore/IconrVersion.swift)
ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB := iconr_$(VERSION)_$(ARCH).deb

.PHONY: all install uninstall deb clean-package
all: $(BINARY)

# libstdc++ goes into the binary too: the Swift driver links `-lstdc++`, and the -L folder
# holds a linker script of that name that names the static archive instead. Loading the
# shared libstdc++ made every start bind some 1,700 of its own symbols: 1.9 of `iconr
# --version`'s 3.0 million instructions. (librsvg's ICU still loads the shared one when a
# process first renders; the archive's symbols are not exported, so the two do not meet.)
# Without the archive (libstdc++-12-dev), the shared one is linked, as before.
# --no-export-dynamic undoes the driver's -export-dynamic: nothing loads code that links
# against iconr's own symbols, and 2,500 fewer exported ones cost every start 8% fewer
# instructions (every symbol librsvg's tree binds looks in the executable first).
LINK_DIR := $(CURDIR)/.build/link
LIBSTDCXX_A := $(shell clang -print-file-name=libstdc++.a 2>/dev/null)
STATIC_LIBSTDCXX := $(if $(filter /%,$(LIBSTDCXX_A)),$(if $(wildcard $(LIBSTDCXX_A)),yes))

# Always asks SwiftPM, which rebuilds only what changed.
$(BINARY): FORCE
ifeq ($(STATIC_LIBSTDCXX),yes)
	@mkdir -p "$(LINK_DIR)" && echo 'INPUT($(LIBSTDCXX_A))' > "$(LINK_DIR)/libstdc++.so"
	swift build -c release --static-swift-stdlib --product iconr -Xlinker -L"$(LINK_DIR)" -Xlinker --no-export-dynamic
else
	swift build -c release --static-swift-stdlib --product iconr -Xlinker --no-export-dynamic
endif
FORCE:


install: $(BINARY)
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -s -m 755 "$(BINARY)" "$(DESTDIR)$(PREFIX)/bin/iconr"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/iconr"

deb: $(BINARY)
	rm -rf .build/deb && mkdir -p .build/deb/DEBIAN
	$(MAKE) --no-print-directory install DESTDIR=.build/deb PREFIX=/usr BINARY=$(BINARY)
	install -d .build/deb/usr/share/doc/iconr
	install -m 644 LICENSE .build/deb/usr/share/doc/iconr/copyright
	printf '%s\n' \
	    "Package: iconr" \
	    "Version: $(VERSION)" \
	    "Architecture: $(ARCH)" \
	    "Maintainer: iconr developers <iconr@localhost>" \
	    "Depends: librsvg2-2 (>= 2.54), libcairo2, libpng16-16, libdeflate0, libglib2.0-0, libgdk-pixbuf-2.0-0, libmicrohttpd12, libgcc-s1, libc6" \
	    "Section: graphics" \
	    "Priority: optional" \
	    "Installed-Size: $$(du -sk .build/deb/usr | cut -f1)" \
	    "Description: parameterized SVG icons (Mapbox vector icons) to PNG and sprite sheets" \
	    " iconr renders SVG icons whose Mapbox metadata declares color parameters, builds" \
	    " MapLibre/Mapbox sprite sheets with every variant a style needs, and rewrites such" \
	    " styles so that MapLibre draws them." > .build/deb/DEBIAN/control
	dpkg-deb --root-owner-group --build .build/deb "$(DEB)"
