// GIO, including the Unix-only parts (GUnixFDList, g_unix_signal_add).
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
