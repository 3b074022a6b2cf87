// GdkPixbuf and its loaders: for ferry-thumbnail alone, the one process that decodes pictures.
#include <gdk-pixbuf/gdk-pixbuf.h>

// setrlimit(2): the helper bounds its own memory and time before it reads a picture.
#include <sys/resource.h>
