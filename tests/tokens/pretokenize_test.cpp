#include <gtest/gtest.h>
#include "tokens/pretokenize.hpp"
