// libsecret's client side (the Secret Service through D-Bus).
#include <libsecret/secret.h>
