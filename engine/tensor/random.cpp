#include "tensor/random.h"

#include <cmath>

namespace opscope {

float Generator::uniform(float lo, float hi)
{
    // 24 random bits give every float in [0, 1) the same spacing; independent of the library's
    // distribution implementation, so results match across standard libraries.
    const float u = static_cast<float>(m_engine() >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

float Generator::normal(float mean, float stddev)
{
    // Box-Muller on two uniforms in (0, 1].
    const double u1 = (static_cast<double>(m_engine() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    const double u2 = static_cast<double>(m_engine() >> 11) * (1.0 / 9007199254740992.0);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return mean + stddev * static_cast<float>(z);
}

Generator& globalGenerator()
{
    static Generator g(0);
    return g;
}

} // namespace opscope
