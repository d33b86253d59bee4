// Shared by the MCP tests: the hostile fixture server and the official npm servers.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "nucleo/content.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

namespace mcp_test {

/// The fixture server in `mode`, its tools `first` listed first (comma-separated).
inline nucleo::mcp::ServerSpec hostile(const std::string& mode, const std::string& first = {}) {
    nucleo::mcp::ServerSpec spec;
    spec.name = "hostile";
    spec.command = {HOSTILE_MCP_SERVER, mode};
    if (!first.empty()) spec.command.push_back(first);
    // Under AddressSanitizer the fixture's abort must stay a death by SIGABRT, as in a release
    // build, whatever ASAN_OPTIONS the test run was given.
    spec.env = {{"ASAN_OPTIONS", "handle_abort=0:handle_segv=0"}};
    return spec;
}

/// The entry script of an npm server that scripts/fetch-mcp-servers installs, or empty when it is
/// not installed.
inline std::string npm_server(const std::string& package) {
    const std::filesystem::path script = std::filesystem::path(NUCLEO_SOURCE_DIR) / ".cache" /
                                         "mcp" / "npm" / "node_modules" / "@modelcontextprotocol" /
                                         package / "dist" / "index.js";
    return std::filesystem::exists(script) ? script.string() : std::string();
}

/// The text of a result's text blocks, one per line.
inline std::string text_of(const std::vector<nucleo::ContentBlock>& blocks) {
    std::string out;
    for (const auto& b : blocks) {
        if (const auto* t = b.get_if<nucleo::TextBlock>())
            out += (out.empty() ? "" : "\n") + t->text;
    }
    return out;
}

using test_support::error_of;

/// server-everything's trigger-long-running-operation, cancelled and then past its timeout: both
/// fail with what happened, and the server answers the next call (mcp.12).
inline void expect_long_operation_cancelled(nucleo::mcp::McpClient& client) {
    const auto long_call = R"({"duration":600,"steps":2})";
    nucleo::CancellationToken cancel;
    cancel.cancel();
    const nucleo::Error cancelled =
        error_of([&] { client.call_tool("trigger-long-running-operation", long_call, &cancel); });
    EXPECT_EQ(cancelled.kind(), nucleo::ErrorKind::kTransport);
    EXPECT_THAT(cancelled.what(),
                ::testing::HasSubstr("tools/call 'trigger-long-running-operation': cancelled"));
    const nucleo::Error late = error_of([&] {
        client.call_tool("trigger-long-running-operation", long_call, nullptr,
                         std::chrono::milliseconds(300));
    });
    EXPECT_THAT(late.what(), ::testing::HasSubstr("no answer within 300 ms"));
    EXPECT_TRUE(client.alive());
    EXPECT_THAT(text_of(client.call_tool("echo", R"({"message":"after"})").content),
                ::testing::HasSubstr("after"));
}

/// server-everything's get-tiny-image result: a PNG image block of some size.
inline void expect_png(const nucleo::mcp::CallResult& image) {
    const auto png = std::find_if(
        image.content.begin(), image.content.end(),
        [](const nucleo::ContentBlock& b) { return b.get_if<nucleo::ImageBlock>() != nullptr; });
    ASSERT_NE(png, image.content.end());
    EXPECT_EQ(png->get_if<nucleo::ImageBlock>()->media_type, "image/png");
    EXPECT_GT(png->get_if<nucleo::ImageBlock>()->data.size(), 100U);
}

}  // namespace mcp_test

/// Skips the test when scripts/fetch-mcp-servers has not installed the official servers.
#define MCP_REQUIRE_NPM_SERVER(path, package)               \
    const std::string path = mcp_test::npm_server(package); \
    if (path.empty())                                       \
    GTEST_SKIP() << "@modelcontextprotocol/" << package     \
                 << " is not installed: run scripts/fetch-mcp-servers (scripts/bootstrap does)"
