// opscope-cli info: what a model is, without running it (cli/model_info.h builds and prints it).

#include "cli/commands.h"
#include "cli/model_info.h"
#include "core/error.h"

#include <iostream>

namespace opscope::cli {

using namespace opscope::load;

int infoCommand(const std::string& model, const std::string& params, const std::vector<std::string>& inputSpecs)
{
    LoadedModel m;
    try {
        m = loadModel(model, params, 0, true);
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
    try {
        printModelInfo(std::cout, describeModel(m, inputSpecs));
        return kOk;
    } catch (const LoadError& e) {
        return fail(kBadFile, e.what());
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
}

} // namespace opscope::cli
