// Helpers shared by the conversation tests: a log capture and a response handler double.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nucleo/content.hpp"
#include "nucleo/log.hpp"
#include "nucleo/prepared.hpp"
#include "nucleo/response.hpp"

namespace nucleo::testing {

/// The two dialects: native tools (Anthropic, OpenAI) and inline text (Bedrock Converse), both
/// with explicit cache control.
inline const FixedContentFormatter kNative(true, true);
inline const FixedContentFormatter kText(false, true);

/// Captures every log record while alive (through nucleo::log::set_sink), restoring stderr after.
class LogCapture {
  public:
    struct Record {
        log::Level level;
        std::string message;
    };

    LogCapture() {
        previous_level_ = log::level();
        log::set_level(log::Level::kTrace);
        log::set_sink([this](log::Level level, std::string_view, std::string_view message) {
            records_.push_back(Record{level, std::string(message)});
        });
    }
    ~LogCapture() {
        log::set_sink({});
        log::set_level(previous_level_);
    }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    [[nodiscard]] std::vector<Record> errors() const {
        std::vector<Record> out;
        for (const Record& r : records_) {
            if (r.level == log::Level::kError) out.push_back(r);
        }
        return out;
    }

  private:
    std::vector<Record> records_;
    log::Level previous_level_;
};

/// A response handler that records the flags it was asked with and answers with fixed text.
class RecordingHandler final : public ResponseHandler {
  public:
    RecordingHandler(bool notation, std::string instructions)
        : notation_(notation), instructions_(std::move(instructions)) {}

    [[nodiscard]] bool uses_schema_notation() const override { return notation_; }
    [[nodiscard]] std::string response_instructions(bool native_tools_available,
                                                    bool thinking_active) const override {
        calls.emplace_back(native_tools_available, thinking_active);
        return instructions_;
    }

    mutable std::vector<std::pair<bool, bool>> calls;

  private:
    bool notation_;
    std::string instructions_;
};

/// An outgoing text message carrying `handler`.
inline Message asking(std::string text, std::shared_ptr<const ResponseHandler> handler) {
    Message m = Message::outgoing_text(std::move(text));
    m.response_handler = std::move(handler);
    return m;
}

inline ToolDefinitionBlock tool(std::string name, std::string description = "A tool.") {
    return ToolDefinitionBlock{std::move(name), std::move(description),
                               R"({"type": "object", "properties": {"q": {"type": "string"}}})"};
}

/// The text of a block when it is a TextBlock, else empty.
inline std::string text_of(const ContentBlock& block) {
    const auto* t = block.get_if<TextBlock>();
    return t ? t->text : std::string();
}

/// The keys of the objective, in order.
template <typename Slots>
std::vector<std::string> keys_of(const Slots& slots) {
    std::vector<std::string> keys;
    for (const auto& s : slots) keys.push_back(s.key);
    return keys;
}

}  // namespace nucleo::testing
