#ifndef ICONR_CRSVG_SHIM_H
#define ICONR_CRSVG_SHIM_H
#include <librsvg/rsvg.h>
#include <cairo.h>
#endif
