// The objective map and its freeze (conversation.10-16).
#include <cxxabi.h>
#include <execinfo.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/log_internal.hpp"
#include "common/utf8.hpp"
#include "conversation/utf8_check.hpp"
#include "nucleo/conversation.hpp"
#include "render/render_internal.hpp"

namespace nucleo {
namespace {

/// One backtrace_symbols line ("lib.so(_ZN...+0x3c) [0x...]") with its symbol demangled, so the
/// reader of the log sees the C++ function that tried.
std::string demangled_frame(const char* frame) {
    std::string line(frame);
    const auto open = line.find('(');
    const auto plus = line.find('+', open);
    if (open == std::string::npos || plus == std::string::npos || plus == open + 1) return line;
    const std::string mangled = line.substr(open + 1, plus - open - 1);
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> name(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
    if (status != 0 || !name) return line;
    return line.substr(0, open + 1) + name.get() + line.substr(plus);
}

/// The caller's stack, one frame per line: conversation.14 wants the refused put logged with a
/// stack trace so the code that tried is found.
std::string stack_trace() {
    std::array<void*, 48> frames{};
    const int count = ::backtrace(frames.data(), static_cast<int>(frames.size()));
    std::unique_ptr<char*, decltype(&std::free)> symbols(::backtrace_symbols(frames.data(), count),
                                                         &std::free);
    std::string out;
    for (int i = 1; i < count; ++i) {  // frame 0 is this function
        out.append("  #").append(std::to_string(i - 1)).append(" ");
        out.append(symbols ? demangled_frame(symbols.get()[i]) : "?").append("\n");
    }
    return out;
}

}  // namespace

bool ConversationContext::refuse_frozen(std::string_view what,
                                        const std::source_location& where) const {
    NUCLEO_LOG_ERROR(
        "conversation '{}': {} ignored at {}:{} in {}: the main objective froze at this "
        "instance's first render, and changing it would silently invalidate the cached prefix. "
        "A mid-conversation instruction change belongs in the message stream.\nStack trace:\n{}",
        state_.conversation_id, what, where.file_name(), where.line(), where.function_name(),
        stack_trace());
    return false;
}

bool ConversationContext::put_main_objective(std::string_view key, ContentBlock value,
                                             std::source_location where) {
    // conversation.107: the system content is UTF-8, refused before the freeze is even asked.
    if (const std::size_t at = internal::first_invalid_utf8(key); at != std::string_view::npos)
        internal::refuse_invalid_utf8("put_main_objective", internal::Utf8Fault{"key", at});
    internal::refuse_invalid_utf8("put_main_objective",
                                  internal::find_invalid_utf8(value, "value"));
    auto slot = std::find_if(state_.objective.begin(), state_.objective.end(),
                             [&](const ObjectiveSlot& s) { return s.key == key; });
    if (frozen_) {
        // "a put whose value renders identically to the slot's is a silent no-op"
        if (slot != state_.objective.end() &&
            render::rendered_text(slot->value) == render::rendered_text(value)) {
            return true;
        }
        const std::string what =
            slot == state_.objective.end()
                ? "put of new objective key '" + std::string(key) + "'"
                : "put of a divergent value under objective key '" + std::string(key) + "'";
        return refuse_frozen(what, where);
    }
    // artifacts.4: an objective's artifacts are registered as it is put, like a message's, so
    // the registry, and the objective's count on the string it is sent as (tokens.101), are
    // complete before anything is rendered.
    if (const auto* pojo = value.get_if<PojoBlock>()) state_.artifacts.register_artifacts_in(*pojo);
    if (slot != state_.objective.end()) {
        slot->value = std::move(value);  // in place: "a re-put keeps the slot's original position"
    } else {
        state_.objective.push_back(ObjectiveSlot{std::string(key), std::move(value)});
    }
    return true;
}

bool ConversationContext::put_main_objective(std::string_view key, std::string text,
                                             std::source_location where) {
    return put_main_objective(key, ContentBlock(TextBlock{std::move(text)}), where);
}

bool ConversationContext::nuke_main_objective(std::source_location where) {
    if (frozen_) return refuse_frozen("nuke of the main objective", where);
    state_.objective.clear();
    return true;
}

const ContentBlock* ConversationContext::objective_slot(std::string_view key) const noexcept {
    for (const ObjectiveSlot& s : state_.objective) {
        if (s.key == key) return &s.value;
    }
    return nullptr;
}

}  // namespace nucleo
