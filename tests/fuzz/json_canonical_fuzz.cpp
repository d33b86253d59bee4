// conversation.105 under libFuzzer: for any text, writing it as a JSON-valued field through the
// escaping Writer (which copies a canonical text as it is) gives exactly the bytes, or exactly the
// refusal, of the event-by-event path through RapidJSON's own Writer.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "nucleo/wire/json_escape.hpp"
#include "nucleo/errors.hpp"
#include "persistence/document_json.hpp"

namespace {

template <typename Writer>
std::string written(std::string_view json) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartArray();
    try {
        nucleo::internal::write_json_text(w, json, nucleo::internal::JsonPath("input"));
    } catch (const nucleo::Error& e) {
        return std::string("refused: ") + e.what();
    }
    w.EndArray();
    return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string by_copy = written<nucleo::json_escape::StringWriter>(text);
    const std::string by_events = written<rapidjson::Writer<rapidjson::StringBuffer>>(text);
    if (by_copy != by_events) std::abort();
    return 0;
}
