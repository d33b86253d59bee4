#include <gtest/gtest.h>
#include "nucleo/tokenizer.hpp"
