#pragma once
// Telling the service manager how the service is doing (systemd's sd_notify protocol: one datagram to
// $NOTIFY_SOCKET), so a Type=notify unit is started when the server is ready, not when it was forked.
// Without $NOTIFY_SOCKET (not started by systemd) it does nothing. No libsystemd needed.

#include <string_view>

namespace kotae {

// "READY=1", "RELOADING=1", "STOPPING=1", "STATUS=…" (several, one per line). False when a socket was
// named and the message could not be sent.
bool notify_service_manager(std::string_view state);

}  // namespace kotae
