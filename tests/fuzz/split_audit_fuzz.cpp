// The audit of a split body (wire.173, wire.174, wire.214) under libFuzzer, against the whole
// audit: the input is cut at each byte 0x01 into the head's open, the first run's turns, the close
// and the chunks (the first byte picks the family and where the chunks are kept: kept from the call
// before, or read anew); both audits must reach the same verdict, text included, or the harness
// aborts. Any bytes are audited or refused, never a crash (limits.120).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nucleo/wire/contract.hpp"

namespace {

using nucleo::contract::audit_request;
using nucleo::contract::audit_split_request;
using nucleo::contract::CallPlan;
using nucleo::contract::MessageChunk;
using nucleo::contract::OutgoingRequest;
using nucleo::contract::SplitBody;
using nucleo::contract::Violation;
using nucleo::contract::WireFamily;

std::string verdict(const std::optional<Violation>& v) {
    return v ? v->line() : std::string("accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const WireFamily families[] = {WireFamily::kAnthropicMessages, WireFamily::kOpenAIChat,
                                   WireFamily::kBedrockConverse};
    // wire.214: a first byte whose bit of 24 is set picks a family of items (Gemini contents on
    // an even byte, Responses input items on an odd one).
    const bool items = (data[0] / 24) % 2 == 1;
    const WireFamily family = !items             ? families[data[0] % 3]
                              : data[0] % 2 == 0 ? WireFamily::kGeminiGenerate
                                                 : WireFamily::kOpenAIResponses;
    // The plan: the system text and the breakpoints the bodies of the seed corpus carry.
    CallPlan plan;
    plan.max_tokens = 100;
    plan.breakpoints = (data[0] / 3) % 4;
    if ((data[0] / 12) % 2 == 1) plan.system_texts = {"You are terse."};
    std::vector<std::string> parts;
    parts.emplace_back();
    for (std::size_t i = 1; i < size; ++i) {
        if (data[i] == 0x01) {
            parts.emplace_back();
        } else {
            parts.back() += static_cast<char>(data[i]);
        }
    }
    if (parts.size() < 3) return 0;
    std::vector<MessageChunk> chunks;
    chunks.reserve(parts.size() - 3);
    for (std::size_t i = 3; i < parts.size(); ++i) chunks.emplace_back(family, parts[i]);
    SplitBody split{parts[0], parts[1], parts[2], {}};
    for (const MessageChunk& c : chunks) split.chunks.push_back(&c);
    const std::string body = split.join();
    const std::vector<std::pair<std::string, std::string>> headers = {
        {"content-type", "application/json"}};
    OutgoingRequest request;
    request.method = "POST";
    request.path = "/v1/messages";
    request.headers = &headers;
    request.body = body;
    request.readable = body.capacity();
    const std::string whole = verdict(audit_request(family, request, plan));
    // Twice: the second time every chunk's summary and memo are those of the call before.
    for (int pass = 0; pass < 2; ++pass) {
        const std::string split_verdict =
            verdict(audit_split_request(family, request, split, plan));
        if (split_verdict != whole) {
            std::fprintf(stderr, "split audit: %s\nwhole audit: %s\n", split_verdict.c_str(),
                         whole.c_str());
            std::abort();
        }
    }
    return 0;
}
