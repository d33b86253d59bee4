// Conversation documents that are not UTF-8 in one place each (conversation.106), shared by the
// reader's tests and the CLI's: the document, and the path and byte offset its refusal names.
#pragma once

#include <string>
#include <vector>

namespace nucleo::utf8_cases {

/// The fields of the one document every case starts from; each case replaces one of them with
/// text that is not UTF-8. Every value is JSON text put in as it is.
struct Fields {
    std::string system = R"("Answer questions about orders.")";
    std::string description = R"("Search orders by text.")";
    std::string message_member = R"("cache": false)";
    std::string text = R"("Where is order 42?")";
    std::string input = R"({"query": "42"})";
    std::string result = R"("Order 42 shipped on Monday.")";
};

inline std::string document(const Fields& f) {
    return R"({"schema_version": 1, "conversation_id": "c-utf8", "user_id": "alice",
 "objective": [{"key": "task", "value": )" +
           f.system + R"(}],
 "tools": [{"name": "search_orders", "description": )" +
           f.description + R"(,
            "schema": {"type": "object", "properties": {"query": {"type": "string"}}}}],
 "messages": [
  {"id": "m1", "direction": "outgoing", )" +
           f.message_member + R"(, "blocks": [{"type": "text", "text": )" + f.text + R"(}]},
  {"id": "m2", "direction": "incoming",
   "blocks": [{"type": "tool_use", "id": "toolu_1", "name": "search_orders", "input": )" +
           f.input + R"(}]},
  {"id": "m3", "direction": "outgoing",
   "blocks": [{"type": "tool_result", "tool_use_id": "toolu_1",
               "content": [{"type": "text", "text": )" +
           f.result + R"(}]}]}]}
)";
}

struct Case {
    std::string name;      ///< a test-friendly name
    std::string document;  ///< the whole document
    std::string where;     ///< what the refusal must say, path and byte offset
};

/// One case per place text can hide in a document, with a different fault each time.
inline std::vector<Case> invalid_documents() {
    struct Edit {
        const char* name;
        std::string Fields::*field;
        std::string value;
        const char* where;
    };
    const std::vector<Edit> edits = {
        {"message_text", &Fields::text, "\"\xffhi\"",
         "messages[0].blocks[0].text: not valid UTF-8 at byte 0 of the string"},
        {"message_text_midway", &Fields::text, "\"ab\xc3\xa9\xff\x63\x64\"",
         "messages[0].blocks[0].text: not valid UTF-8 at byte 4 of the string"},
        {"tool_input_string", &Fields::input, "{\"query\": \"4\xc3\x28\"}",
         "messages[1].blocks[0].input.query: not valid UTF-8 at byte 1 of the string"},
        {"tool_result", &Fields::result, "\"ok \xed\xa0\x80\"",
         "messages[2].blocks[0].content[0].text: not valid UTF-8 at byte 3 of the string"},
        {"system", &Fields::system, "\"Be \xf4\x90\x80\x80 brief\"",
         "objective[0].value: not valid UTF-8 at byte 3 of the string"},
        {"tool_description", &Fields::description, "\"Search \xc0\xaf\"",
         "tools[0].description: not valid UTF-8 at byte 7 of the string"},
        {"message_key", &Fields::message_member, "\"x\xff\": false",
         "messages[0]: the key of member 2 is not valid UTF-8 at byte 1"},
        {"tool_input_key", &Fields::input, "{\"\xfe\": \"42\"}",
         "messages[1].blocks[0].input: the key of member 0 is not valid UTF-8 at byte 0"},
        {"cut_short", &Fields::text, "\"abc\xe2\x82\"",
         "messages[0].blocks[0].text: not valid UTF-8 at byte 3 of the string"},
        // Valid UTF-8 text that reads as invalid: a lone low surrogate escape (RapidJSON 1.1
        // decodes it into the three bytes of U+DC00).
        {"lone_surrogate_escape", &Fields::text, R"("a\udc00")",
         "messages[0].blocks[0].text: not valid UTF-8 at byte 1 of the string"},
    };
    std::vector<Case> cases;
    for (const Edit& e : edits) {
        Fields f;
        f.*e.field = e.value;
        cases.push_back({e.name, document(f), e.where});
    }
    return cases;
}

/// Text in every width of UTF-8, which every reader and command must take and give back as is:
/// Latin with accents (2 bytes), CJK (3 bytes), an emoji and a CJK extension B ideograph (4 bytes).
inline const std::string kWideText =
    "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 \xf0\xa0\x80\x80 \xf0\x9d\x84\x9e";

inline std::string valid_wide_document() {
    Fields f;
    f.system = "\"" + kWideText + "\"";
    f.text = "\"" + kWideText + "\"";
    f.input = "{\"query\": \"" + kWideText + "\", \"" + kWideText + "\": 1}";
    f.result = "\"" + kWideText + "\"";
    return document(f);
}

}  // namespace nucleo::utf8_cases
