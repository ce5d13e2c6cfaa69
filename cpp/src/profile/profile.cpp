#include "servelab/profile/profile.hpp"
