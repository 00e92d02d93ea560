#pragma once

#include "cli/commands.h"

#include <string>

namespace opscope::cli {

/// The server refused: unreachable, no or a wrong token, another protocol version, or another
/// client holds control (scripts tell this from a failed run).
constexpr int kRefused = 5;

/// Where `--connect` goes, and how it proves itself.
struct ConnectArgs {
    std::string address; ///< HOST:PORT
    std::string tokenFile; ///< the token the server printed (its --token-file)
    std::string tlsCa; ///< PEM: connect with TLS, trusting this certificate
};

/// `info --connect`: the server's model, printed as `info` prints a local one.
int infoRemote(const ConnectArgs& connect);
/// `run --connect`: the run happens on the server (its model and inputs); breakpoints, watchpoints,
/// op-hook lines (from the run record), dumped tensors and outputs come back. Same output and exit
/// statuses as a local run, and kRefused when the server will not talk.
int runRemote(const RunOptions& options, const ConnectArgs& connect);

} // namespace opscope::cli
