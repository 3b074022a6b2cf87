// GTK 4 and libadwaita (which brings GTK, GDK, GdkPixbuf and GIO); fenced behind GtkAdapter.
#include <adwaita.h>
