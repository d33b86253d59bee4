// ${VAR} and ${VAR:-default} expansion of configuration strings.
#include <gtest/gtest.h>

#include <map>

#include "config/env_expand.hpp"

namespace nucleo::config_internal {
namespace {

std::string expand(std::string_view text) {
    static const std::map<std::string, std::string, std::less<>> env = {
        {"HOST", "example.com"}, {"EMPTY", ""}, {"PORT", "8080"}, {"REGION", "eu-west-1"}};
    return expand_env(text, [](std::string_view name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
    });
}

TEST(EnvExpand, SetVariableIsSubstituted) {
    EXPECT_EQ(expand("https://${HOST}:${PORT}/v1"), "https://example.com:8080/v1");
}

TEST(EnvExpand, UnsetVariableWithoutDefaultIsEmptyAsInAShell) {
    EXPECT_EQ(expand("key=${NOT_SET}."), "key=.");
}

TEST(EnvExpand, DefaultAppliesWhenUnsetOrEmpty) {
    EXPECT_EQ(expand("${NOT_SET:-https://api.anthropic.com}"), "https://api.anthropic.com");
    EXPECT_EQ(expand("${EMPTY:-fallback}"), "fallback");
    EXPECT_EQ(expand("${HOST:-fallback}"), "example.com");
    EXPECT_EQ(expand("${NOT_SET:-}"), "");
}

TEST(EnvExpand, DefaultMayHoldReferences) {
    EXPECT_EQ(expand("${NOT_SET:-https://bedrock-runtime.${REGION:-us-east-1}.amazonaws.com}"),
              "https://bedrock-runtime.eu-west-1.amazonaws.com");
    EXPECT_EQ(expand("${NOT_SET:-${ALSO_NOT:-x}}"), "x");
}

TEST(EnvExpand, DollarEscapesAndLoneDollars) {
    EXPECT_EQ(expand("$${HOST}"), "${HOST}");
    EXPECT_EQ(expand("cost $5 and $"), "cost $5 and $");
    EXPECT_EQ(expand("$$"), "$");
}

TEST(EnvExpand, MalformedReferencesAreRefused) {
    EXPECT_THROW(expand("${HOST"), ExpandError);
    EXPECT_THROW(expand("${}"), ExpandError);
    EXPECT_THROW(expand("${1ABC}"), ExpandError);
    EXPECT_THROW(expand("${HOST:=x}"), ExpandError);
    try {
        expand("abc ${HOST");
        FAIL() << "no error";
    } catch (const ExpandError& e) {
        EXPECT_STREQ(e.what(), "unterminated \"${\" at character 5");
    }
}

}  // namespace
}  // namespace nucleo::config_internal
