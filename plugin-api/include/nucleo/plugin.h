/* Nucleo plugin ABI v1 -- skeleton; the full header is being written (issue 2). */
#ifndef NUCLEO_PLUGIN_H
#define NUCLEO_PLUGIN_H
#define NUCLEO_PLUGIN_ABI_MAJOR 1
#define NUCLEO_PLUGIN_ABI_MINOR 0
#endif
