#include "ops/register_all.h"
#include "ops/registry.h"

namespace opscope {

void registerScalarOps(OpRegistry& r)
{
    (void)r;
}

} // namespace opscope
