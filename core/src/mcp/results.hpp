// A `tools/call` result as blocks (mcp.30 to mcp.33), and the tools of a `tools/list` page.
#pragma once

#include <vector>

#include <rapidjson/document.h>

#include "nucleo/mcp.hpp"

namespace nucleo::mcp_internal {

/// The result object of `tools/call`. Throws Error(kProtocol) when it has no content array.
mcp::CallResult read_call_result(const rapidjson::Value& result);

/// The tools of one `tools/list` result, appended to `out`; an entry without a name or an object
/// inputSchema is left out and logged (mcp.7). Throws Error(kProtocol) when `tools` is not an
/// array.
void read_tools(const rapidjson::Value& result, std::string_view server,
                std::vector<mcp::Tool>& out);

}  // namespace nucleo::mcp_internal
